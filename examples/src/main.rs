//! `tessera-examples`: runs Tessera's kernels on a GPU (or the CPU emulator), checks them
//! against CPU references, and benchmarks them in the protocol of `triton_ref.py`.
//!
//! The kernels' PTX is embedded at build time for several targets (see `tessera-kernels-ptx`:
//! `sm_80` and `sm_90a`), and the one the GPU runs best is loaded, so the binary runs at full
//! speed on an A100 and an H100 and on any machine with an NVIDIA driver, no Rust or CUDA toolkit
//! needed.

mod autotune_demo;
mod bench;
mod bench_attention;
mod bench_launch;
mod bench_tiled;
mod checks;
mod cli;
mod data;
mod explain;
mod random_dump;
mod tiled;

use std::process::ExitCode;
use tessera::launch::{Device, DeviceKind, Module, PtxSet, DEVICE_ENV};

/// The kernels' PTX for every target `tessera-kernels-ptx` built.
const PTX: PtxSet = tessera_kernels_ptx::PTX;

const USAGE: &str = "\
usage: tessera-examples [--verbose]          run every kernel on the device, verify, report
                                             (one line per kernel; --verbose: every check,
                                             the inferred layouts, every kernel's
                                             shared-memory wavefronts on the emulator)
       tessera-examples --bench NAME [--json] [--sizes SHAPE[,SHAPE...] | --small]
                                             benchmark family NAME (copy, add, softmax,
                                             layernorm, matmul, transpose, gather,
                                             attention, attention_causal, launch) in the
                                             protocol of shared/bench/triton_ref.py, with its
                                             shapes and dtypes (--json: one JSON object per
                                             line). --sizes replaces the shapes: N for copy and
                                             add, MxN for softmax, layernorm, transpose and
                                             gather, S or MxNxK for matmul, BHxNxD for
                                             attention; --small takes small
                                             shapes of each kind (for the emulator)
       tessera-examples --autotune-demo [--sizes MxNxK[,...]]
                                             the autotuned matmul (launch_tuned) twice per
                                             shape, f16 and bf16: the choice, each candidate's
                                             time on a GPU, and a check of every output
                                             (TESSERA_AUTOTUNE_CACHE=PATH keeps the choices
                                             for the next run, TESSERA_AUTOTUNE_LOG=1 prints
                                             each tuning)
       tessera-examples --random-dump SEED N OUT
                                             write randint/rand/randn of SEED at offsets 0..N
                                             to OUT.randint.u32, OUT.rand.f32, OUT.randn.f32
                                             (little-endian), to compare with Triton
       tessera-examples --help
environment: TESSERA_DEVICE=gpu|emulator|emulator-amd|auto (default auto: the GPU when a driver
             and a device are present, else the CPU emulator; emulator-amd: the emulator running
             each kernel's AMD code, kernels with none listed as not run)";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Command {
    Run {
        verbose: bool,
    },
    Bench {
        name: String,
        json: bool,
        shapes: Shapes,
    },
    AutotuneDemo {
        shapes: Shapes,
    },
    RandomDump {
        seed: i64,
        n: usize,
        out: String,
    },
    Help,
}

/// Which shapes a benchmark runs.
#[derive(Debug, PartialEq)]
enum Shapes {
    /// The shapes of `triton_ref.py`.
    Default,
    /// The family's small shapes (`--small`).
    Small,
    /// `--sizes`: each item's dimensions.
    Given(Vec<Vec<usize>>),
}

/// `--sizes` items: comma-separated shapes, each positive dimensions joined by `x`
/// (`4096`, `4096x1024`, `512x256x128`).
fn parse_shapes(list: &str) -> Result<Vec<Vec<usize>>, String> {
    let shapes: Option<Vec<Vec<usize>>> = list
        .split(',')
        .map(|item| {
            item.trim()
                .split('x')
                .map(|d| d.trim().parse::<usize>().ok().filter(|&d| d > 0))
                .collect()
        })
        .collect();
    match shapes {
        Some(shapes) if !shapes.is_empty() => Ok(shapes),
        _ => Err(format!(
            "--sizes {list:?}: expected shapes of positive integers like 4096,100000 or \
             4096x1024,8x1000 or 512x512x256"
        )),
    }
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    match args {
        [] => return Ok(Command::Run { verbose: false }),
        [flag] if flag == "--verbose" || flag == "-v" => return Ok(Command::Run { verbose: true }),
        _ => {}
    }
    let mut name = None;
    let mut autotune_demo = false;
    let mut json = false;
    let mut shapes = Shapes::Default;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--random-dump" => {
                let mut next = |what: &str| {
                    rest.next()
                        .ok_or(format!("--random-dump needs SEED N OUT (missing {what})"))
                };
                let seed = next("SEED")?;
                let seed = seed
                    .parse()
                    .map_err(|_| format!("--random-dump SEED {seed:?}: expected an integer"))?;
                let n = next("N")?;
                let n = n
                    .parse()
                    .map_err(|_| format!("--random-dump N {n:?}: expected a count"))?;
                let out = next("OUT")?.clone();
                return Ok(Command::RandomDump { seed, n, out });
            }
            "--json" => json = true,
            "--autotune-demo" => autotune_demo = true,
            "--bench" => {
                name = Some(rest.next().ok_or("--bench needs a family name")?.clone());
            }
            "--sizes" | "--small" if shapes != Shapes::Default => {
                return Err("give one of --sizes and --small, once".to_string())
            }
            "--sizes" => {
                let list = rest.next().ok_or("--sizes needs a comma-separated list")?;
                shapes = Shapes::Given(parse_shapes(list)?);
            }
            "--small" => shapes = Shapes::Small,
            "--verbose" | "-v" => return Err("--verbose goes alone (the main example)".to_string()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    match name {
        Some(_) if autotune_demo => Err("give one of --bench and --autotune-demo".to_string()),
        None if autotune_demo && !json && shapes != Shapes::Small => {
            Ok(Command::AutotuneDemo { shapes })
        }
        None if autotune_demo => Err("--autotune-demo takes only --sizes".to_string()),
        Some(name) => Ok(Command::Bench { name, json, shapes }),
        None => Err("--json, --sizes and --small go with --bench NAME".to_string()),
    }
}

/// Opens the device and the embedded module, printing what was chosen to `log`.
fn open(log: &mut dyn FnMut(String)) -> Result<(Device, Module), String> {
    let device = Device::new().map_err(|err| err.to_string())?;
    let detail = match device.compute_capability() {
        Some((major, minor)) => format!("gpu, compute capability {major}.{minor}"),
        None => match device.emulated_target() {
            Some(Ok(target)) => format!(
                "CPU emulator: one host thread per GPU thread, running the {} code",
                target.name()
            ),
            Some(Err(err)) => return Err(err.to_string()),
            None => "HIP GPU".to_string(),
        },
    };
    log(format!("device:  {} ({detail})", device.name()));
    log(format!(
        "         why: {} (set {DEVICE_ENV}=gpu|emulator|emulator-amd to choose)",
        device.selection_note()
    ));
    let module = device
        .load_ptx_set(&PTX)
        .map_err(|err| format!("loading the embedded PTX: {err}"))?;
    log(format!(
        "kernels: tessera_kernels ({} entries)",
        module.entry_names().len()
    ));
    log(format!(
        "         PTX loaded: {}",
        module.selection().unwrap_or("?")
    ));
    Ok((device, module))
}

/// The hand-written kernel whose shared-memory tile has row stride 32, run on purpose beside
/// its padded twin (stride 33) to show what the emulator's bank report measures.
const DELIBERATE_CONFLICTS: &str = "transpose32 stride 32";

fn run_examples(verbose: bool) -> ExitCode {
    println!(
        "Tessera examples{}",
        if verbose {
            ""
        } else {
            " (--verbose for every check and layout)"
        }
    );
    let (device, module) = match open(&mut |line| println!("{line}")) {
        Ok(opened) => opened,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    if verbose {
        println!("         entries: {}", module.entry_names().join(", "));
    }
    let mut checks = checks::Checks::new(&device, &module);
    checks.verbose = verbose;
    println!(
        "checks (outputs compared with a CPU reference: bit for bit, or within the stated \
         tolerance; canaries after each output){}",
        if verbose { ":" } else { ", per kernel:" }
    );
    let run = checks.run_all();
    if !verbose {
        for (kernel, passed, failed) in per_kernel(&checks.outcomes) {
            let failed = if failed > 0 {
                format!(", {failed} FAILED")
            } else {
                String::new()
            };
            println!("  {kernel:<32} {passed:>3} passed{failed}");
        }
    }
    if let Err(err) = run {
        eprintln!("error: {err}");
        println!(
            "result: {} passed, {} failed (stopped by the error above)",
            checks.outcomes.len() - checks.failures(),
            checks.failures() + 1
        );
        return ExitCode::FAILURE;
    }
    if verbose {
        print_layouts(&checks);
    }
    if device.kind() == DeviceKind::Emulator {
        print_bank_report(&checks, verbose);
    }
    let failed = checks.failures();
    let not_run = if checks.not_run.is_empty() {
        String::new()
    } else {
        // Per kernel (its entries' name before the first `__`): checks, and what keeps it off
        // AMD.
        let mut kernels: Vec<(&str, usize, &[String])> = Vec::new();
        for (entry, instructions) in &checks.not_run {
            let kernel = entry.split("__").next().unwrap_or(entry);
            match kernels.iter_mut().find(|k| k.0 == kernel) {
                Some(k) => k.1 += 1,
                None => kernels.push((kernel, 1, instructions)),
            }
        }
        println!("not run while the emulator emulates amdgpu (kernels with no AMD code):");
        for (kernel, count, instructions) in kernels {
            println!(
                "  {kernel:<32} {count:>3} checks (NVIDIA-only: {})",
                instructions.join(", ")
            );
        }
        format!(", {} not run (NVIDIA-only)", checks.not_run.len())
    };
    println!(
        "result: {} passed, {failed} failed{not_run}",
        checks.outcomes.len() - failed
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Passed and failed checks per kernel (the first word of each label), in the order run.
fn per_kernel(outcomes: &[checks::Outcome]) -> Vec<(&str, usize, usize)> {
    let mut rows: Vec<(&str, usize, usize)> = Vec::new();
    for outcome in outcomes {
        let kernel = outcome.label.split_whitespace().next().unwrap_or("");
        let index = match rows.iter().position(|row| row.0 == kernel) {
            Some(index) => index,
            None => {
                rows.push((kernel, 0, 0));
                rows.len() - 1
            }
        };
        if outcome.ok {
            rows[index].1 += 1;
        } else {
            rows[index].2 += 1;
        }
    }
    rows
}

/// The emulator's shared-memory wavefronts: per kernel with `verbose`, else one line for the
/// kernels at the ideal and one per kernel above it. [`DELIBERATE_CONFLICTS`] is labelled.
fn print_bank_report(checks: &checks::Checks, verbose: bool) {
    let label = |kernel: &str| {
        if kernel == DELIBERATE_CONFLICTS {
            "  <- deliberate: a 32-float row stride puts a column in one bank (stride 33 is its fix)"
        } else {
            ""
        }
    };
    println!(
        "emulator shared-memory report (per warp access: 32 banks x 4 bytes; ideal = conflict free):"
    );
    let mut at_ideal = Vec::new();
    for (kernel, report) in &checks.reports {
        let conflicted = report.shared_wavefronts != report.shared_ideal_wavefronts;
        if verbose || conflicted {
            println!(
                "  {kernel:<24} {:>7} accesses {:>8} wavefronts (ideal {:>7}): {:.1}x{}",
                report.shared_accesses,
                report.shared_wavefronts,
                report.shared_ideal_wavefronts,
                report.bank_conflict_factor(),
                label(kernel)
            );
        } else if report.shared_accesses > 0 {
            at_ideal.push(kernel.as_str());
        }
    }
    if !verbose {
        println!(
            "  at the ideal (1.0x): {} kernels using shared memory ({})",
            at_ideal.len(),
            at_ideal.join(", ")
        );
    }
}

/// The inferred layouts of every `#[tile_kernel]` run, in brief: for each kernel, its first
/// entry launched that assumes aligned arguments (vectorized), else its first entry; the other
/// entries launched are named with their shared memory.
fn print_layouts(checks: &checks::Checks) {
    println!(
        "inferred layouts, in brief (from each kernel module's EXPLAIN; the full text: \
         TESSERA_EXPLAIN=1 at build time):"
    );
    for run in &checks.tile_runs {
        let aligned = run.entries.iter().find(|e| !e.0.ends_with("__unaligned"));
        let Some(&(entry, warps, shared)) = aligned.or(run.entries.first()) else {
            continue;
        };
        println!(
            "  {}: entry {entry} ({warps} warps, {shared} bytes of shared memory)",
            run.kernel
        );
        match explain::entry_section(run.explain, entry) {
            Some(section) => {
                for line in explain::brief(section) {
                    println!("    {line}");
                }
            }
            None => println!("    (no report for this entry in EXPLAIN)"),
        }
        let others: Vec<String> = run
            .entries
            .iter()
            .filter(|e| e.0 != entry)
            .map(|(name, _, shared)| format!("{name} ({shared} B shared)"))
            .collect();
        if !others.is_empty() {
            println!("    also launched: {}", others.join(", "));
        }
    }
}

fn run_bench(name: &str, json: bool, shapes: Shapes) -> ExitCode {
    if name == bench_launch::NAME {
        return run_bench_launch(json, shapes);
    }
    let Some(family) = bench::Family::parse(name) else {
        eprintln!(
            "error: unknown benchmark family `{name}` (known: {}, {})\n{USAGE}",
            bench::FAMILIES.join(", "),
            bench_launch::NAME
        );
        return ExitCode::from(2);
    };
    let (device, module) = match open(&mut |line| eprintln!("{line}")) {
        Ok(opened) => opened,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let shapes = match shapes {
        Shapes::Given(shapes) => shapes,
        Shapes::Small => family.small_shapes(),
        Shapes::Default if device.kind() == DeviceKind::Emulator => {
            eprintln!(
                "error: the `{}` benchmark shapes ({:?}) are sized for a GPU; the emulator \
                 would take hours. Run on a GPU, or pass --small or --sizes SHAPE[,SHAPE...] \
                 for an emulator run (its times are host wall time, not GPU time)",
                family.name(),
                family.default_shapes()
            );
            return ExitCode::FAILURE;
        }
        Shapes::Default => family.default_shapes(),
    };
    let mut all_ok = true;
    let result = family.run(&device, &module, &shapes, |row| {
        all_ok &= row.ok;
        if json {
            println!("{}", row.to_json());
        } else {
            println!("{}", row.to_text());
        }
    });
    match result {
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
        Ok(()) if !all_ok => {
            eprintln!("error: a benchmark output did not match the CPU reference");
            ExitCode::FAILURE
        }
        Ok(()) => ExitCode::SUCCESS,
    }
}

/// `--bench launch`: see [`bench_launch`] (one shape, `[1024]`; `--sizes` is refused).
fn run_bench_launch(json: bool, shapes: Shapes) -> ExitCode {
    if let Shapes::Given(_) = shapes {
        eprintln!("error: `--bench launch` has one shape ([1024]); --sizes does not apply");
        return ExitCode::from(2);
    }
    let result = open(&mut |line| eprintln!("{line}")).and_then(|(device, module)| {
        let counts = bench_launch::Counts::for_device(&device);
        bench_launch::run(&device, &module, counts).map_err(|err| err.to_string())
    });
    match result {
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
        Ok(rows) => {
            for row in &rows {
                if json {
                    println!("{}", row.to_json());
                } else {
                    println!("{}", row.to_text());
                }
            }
            if rows.iter().all(|row| row.ok) {
                ExitCode::SUCCESS
            } else {
                eprintln!("error: a launch benchmark's tensor did not hold its launch count");
                ExitCode::FAILURE
            }
        }
    }
}

/// `--autotune-demo`: see [`autotune_demo`].
fn run_autotune_demo(shapes: Shapes) -> ExitCode {
    let result = open(&mut |line| eprintln!("{line}")).and_then(|(device, module)| {
        let shapes = match shapes {
            Shapes::Given(given) => given
                .iter()
                .map(|s| match s[..] {
                    [m, n, k] => Ok([m, n, k]),
                    [s] => Ok([s, s, s]),
                    _ => Err(format!("--autotune-demo: {s:?} is not S or MxNxK")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => autotune_demo::default_shapes(&device),
        };
        autotune_demo::run(&device, &module, &shapes)
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: an autotuned output did not match the CPU reference");
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Command::Run { verbose }) => run_examples(verbose),
        Ok(Command::Bench { name, json, shapes }) => run_bench(&name, json, shapes),
        Ok(Command::AutotuneDemo { shapes }) => run_autotune_demo(shapes),
        Ok(Command::RandomDump { seed, n, out }) => {
            let result = open(&mut |line| eprintln!("{line}"))
                .and_then(|(device, module)| random_dump::dump(&device, &module, seed, n, &out));
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("error: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        Ok(Command::Help) => cli::help(USAGE),
        Err(err) => cli::usage_error(&err, USAGE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_line() {
        assert_eq!(parse_args(&[]), Ok(Command::Run { verbose: false }));
        assert_eq!(
            parse_args(&args(&["--verbose"])),
            Ok(Command::Run { verbose: true })
        );
        assert!(parse_args(&args(&["--bench", "add", "--verbose"])).is_err());
        assert_eq!(
            parse_args(&args(&["--bench", "add", "--json"])),
            Ok(Command::Bench {
                name: "add".into(),
                json: true,
                shapes: Shapes::Default
            })
        );
        assert_eq!(
            parse_args(&args(&["--json", "--bench", "copy", "--sizes", "4096, 10"])),
            Ok(Command::Bench {
                name: "copy".into(),
                json: true,
                shapes: Shapes::Given(vec![vec![4096], vec![10]])
            })
        );
        assert_eq!(
            parse_args(&args(&["--bench", "matmul", "--sizes", "64,100x70x45"])),
            Ok(Command::Bench {
                name: "matmul".into(),
                json: false,
                shapes: Shapes::Given(vec![vec![64], vec![100, 70, 45]])
            })
        );
        assert_eq!(
            parse_args(&args(&["--bench", "gather", "--small"])),
            Ok(Command::Bench {
                name: "gather".into(),
                json: false,
                shapes: Shapes::Small
            })
        );
        assert!(parse_args(&args(&["--bench", "add", "--small", "--sizes", "4"])).is_err());
        assert!(parse_args(&args(&["--bench", "add", "--sizes", "4x"])).is_err());
        assert!(parse_args(&args(&["--bench", "add", "--sizes", "4x0"])).is_err());
        assert_eq!(
            parse_args(&args(&["--random-dump", "-3", "1000", "/tmp/r"])),
            Ok(Command::RandomDump {
                seed: -3,
                n: 1000,
                out: "/tmp/r".to_string()
            })
        );
        assert!(parse_args(&args(&["--random-dump", "1.5", "10", "o"])).is_err());
        assert!(parse_args(&args(&["--random-dump", "1", "10"])).is_err());
        assert!(parse_args(&args(&["--small"])).is_err());
        assert_eq!(
            parse_args(&args(&["--autotune-demo", "--sizes", "64x80x96"])),
            Ok(Command::AutotuneDemo {
                shapes: Shapes::Given(vec![vec![64, 80, 96]])
            })
        );
        assert_eq!(
            parse_args(&args(&["--autotune-demo"])),
            Ok(Command::AutotuneDemo {
                shapes: Shapes::Default
            })
        );
        assert!(parse_args(&args(&["--autotune-demo", "--bench", "add"])).is_err());
        assert!(parse_args(&args(&["--autotune-demo", "--json"])).is_err());
        assert_eq!(parse_args(&args(&["-h"])), Ok(Command::Help));
        assert!(parse_args(&args(&["--bench"])).is_err());
        assert!(parse_args(&args(&["--json"])).is_err());
        assert!(parse_args(&args(&["--bench", "add", "--sizes", "0"])).is_err());
        assert!(parse_args(&args(&["--bench", "add", "--sizes", "x"])).is_err());
        assert!(parse_args(&args(&["--frobnicate"])).is_err());
    }

    /// The whole example on the emulator: every kernel, every size, exact results, and the
    /// transpose's bank conflicts as the wavefront model predicts.
    #[test]
    fn every_check_passes_on_the_emulator() {
        let device = Device::emulator();
        let module = device.load_ptx_set(&PTX).unwrap();
        let mut checks = checks::Checks::new(&device, &module);
        checks.run_all().unwrap();
        let failed: Vec<_> = checks.outcomes.iter().filter(|o| !o.ok).collect();
        assert!(failed.is_empty(), "{failed:#?}");
        assert!(checks.outcomes.len() >= 30);
        let conflicted = &checks.reports["transpose32 stride 32"];
        let padded = &checks.reports["transpose32 stride 33"];
        assert_eq!(padded.shared_wavefronts, padded.shared_ideal_wavefronts);
        assert!(padded.shared_accesses > 0);
        // Half the accesses are row stores (conflict free in both), half column loads: one
        // wavefront each with stride 33, 32 (every lane in one bank) with stride 32.
        assert_eq!(conflicted.shared_accesses, padded.shared_accesses);
        let loads = padded.shared_accesses / 2;
        assert_eq!(conflicted.shared_wavefronts, loads + 32 * loads);
        assert_eq!(checks.reports["vec_add"].shared_accesses, 0);
        // The tile kernels: all ran, their shared memory is conflict-free (as planned), and
        // the layout report of every entry launched is in its module's EXPLAIN.
        let kernels: Vec<&str> = checks.tile_runs.iter().map(|r| r.kernel).collect();
        assert_eq!(
            kernels,
            [
                "tile_softmax::T_f32",
                "tile_softmax::T_f16",
                "tile_layernorm",
                "tile_transpose",
                "tile_gather_cols",
                "tile_cumsum_cols::T_f32",
                "tile_cumsum_blocks::T_i32",
                "tile_matmul::T_f16",
                "tile_matmul::T_bf16",
                "tile_attention_d64::T_f16",
                "tile_attention_d128_w4::T_f16"
            ]
        );
        for run in &checks.tile_runs {
            let report = &checks.reports[run.kernel];
            assert_eq!(
                report.shared_wavefronts, report.shared_ideal_wavefronts,
                "{}",
                run.kernel
            );
            for (entry, _, _) in &run.entries {
                let section = explain::entry_section(run.explain, entry).unwrap();
                let brief = explain::brief(section);
                assert!(brief.iter().any(|l| l.starts_with("load ")), "{brief:?}");
                assert!(brief.iter().any(|l| l.starts_with("store ")), "{brief:?}");
            }
        }
        assert!(checks.reports["tile_transpose"].shared_accesses > 0);
        assert!(checks.reports["tile_matmul::T_f16"].shared_accesses > 0);
        assert_eq!(checks.reports["tile_gather_cols"].shared_accesses, 0);
    }

    /// The benchmark path on the emulator with small sizes: rows verified, protocol keys.
    #[test]
    fn bench_rows_on_the_emulator() {
        let device = Device::emulator();
        let module = device.load_ptx_set(&PTX).unwrap();
        let mut rows = Vec::new();
        for family in [bench::Family::Copy, bench::Family::Add] {
            family
                .run(&device, &module, &[vec![4099], vec![1024]], |row| {
                    rows.push(row.clone())
                })
                .unwrap();
        }
        assert_eq!(rows.len(), 4);
        for row in &rows {
            assert!(row.ok, "{row:?}");
            let bench::Figure::Gbps(gbps) = row.figure else {
                panic!("{row:?}")
            };
            assert!(row.ms > 0.0 && gbps > 0.0);
            let json = row.to_json();
            assert!(
                json.starts_with(&format!(
                    "{{\"name\":\"{}\",\"shape\":[{}],\"dtype\":\"float32\",\"ms\":",
                    row.name, row.shape[0]
                )),
                "{json}"
            );
            assert!(json.contains("\"clock\":\"emulator_wall_time\""));
        }
        assert_eq!(
            rows[2].figure,
            bench::Figure::Gbps(12.0 * 4099.0 / rows[2].ms / 1e6)
        );
    }
}
