//! `tessera-examples`: runs Tessera's kernels on a GPU (or the CPU emulator), checks them
//! against CPU references, and benchmarks them in the protocol of `triton_ref.py`.
//!
//! The kernels' PTX is embedded at build time (see `build.rs`), so the binary runs on any machine
//! with an NVIDIA driver, no Rust or CUDA toolkit needed.

mod bench;
mod checks;
mod data;

use std::process::ExitCode;
use tessera::launch::{Device, DeviceKind, Module, DEVICE_ENV};

/// The kernels' PTX, built by `build.rs` for `PTX_SM`.
const PTX: &str = tessera::include_ptx!("tessera_kernels");
/// The SM the embedded PTX targets.
const PTX_SM: &str = env!("TESSERA_EXAMPLES_PTX_SM");

const USAGE: &str = "\
usage: tessera-examples                      run every kernel on the device, verify, report
       tessera-examples --bench NAME [--json] [--sizes N[,N...]]
                                             benchmark family NAME (copy, add) in the protocol
                                             of shared/bench/triton_ref.py (--json: one JSON
                                             object per line); --sizes replaces its shapes
       tessera-examples --help
environment: TESSERA_DEVICE=gpu|emulator|auto (default auto: the GPU when a driver and a device
             are present, else the CPU emulator)";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Command {
    Run,
    Bench {
        name: String,
        json: bool,
        sizes: Option<Vec<usize>>,
    },
    Help,
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    if args.is_empty() {
        return Ok(Command::Run);
    }
    let mut name = None;
    let mut json = false;
    let mut sizes = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--json" => json = true,
            "--bench" => {
                name = Some(rest.next().ok_or("--bench needs a family name")?.clone());
            }
            "--sizes" => {
                let list = rest.next().ok_or("--sizes needs a comma-separated list")?;
                let parsed: Result<Vec<usize>, _> =
                    list.split(',').map(|s| s.trim().parse::<usize>()).collect();
                match parsed {
                    Ok(values) if !values.is_empty() && values.iter().all(|&n| n > 0) => {
                        sizes = Some(values)
                    }
                    _ => {
                        return Err(format!(
                            "--sizes {list:?}: expected positive integers like 4096,100000"
                        ))
                    }
                }
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    match name {
        Some(name) => Ok(Command::Bench { name, json, sizes }),
        None => Err("--json and --sizes go with --bench NAME".to_string()),
    }
}

/// Opens the device and the embedded module, printing what was chosen to `log`.
fn open(log: &mut dyn FnMut(String)) -> Result<(Device, Module), String> {
    let device = Device::new().map_err(|err| err.to_string())?;
    let detail = match device.compute_capability() {
        Some((major, minor)) => format!("gpu, compute capability {major}.{minor}"),
        None => "CPU emulator: one host thread per GPU thread".to_string(),
    };
    log(format!("device:  {} ({detail})", device.name()));
    log(format!(
        "         why: {} (set {DEVICE_ENV}=gpu|emulator to choose)",
        device.selection_note()
    ));
    let module = device
        .load_ptx(PTX)
        .map_err(|err| format!("loading the embedded PTX: {err}"))?;
    log(format!(
        "kernels: tessera_kernels, PTX for {PTX_SM} embedded ({} bytes, {} entries: {})",
        PTX.len(),
        module.entry_names().len(),
        module.entry_names().join(", ")
    ));
    Ok((device, module))
}

fn run_examples() -> ExitCode {
    println!("Tessera examples");
    let (device, module) = match open(&mut |line| println!("{line}")) {
        Ok(opened) => opened,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut checks = checks::Checks::new(&device, &module);
    println!("checks (outputs compared bit for bit with the CPU; canaries after each output):");
    if let Err(err) = checks.run_all() {
        eprintln!("error: {err}");
        println!(
            "result: {} passed, {} failed (stopped by the error above)",
            checks.outcomes.len() - checks.failures(),
            checks.failures() + 1
        );
        return ExitCode::FAILURE;
    }
    if device.kind() == DeviceKind::Emulator {
        println!("emulator shared-memory report (per warp access: 32 banks x 4 bytes; ideal = conflict free):");
        for (kernel, report) in &checks.reports {
            println!(
                "  {kernel:<24} {:>7} accesses {:>8} wavefronts (ideal {:>7}): {:.1}x",
                report.shared_accesses,
                report.shared_wavefronts,
                report.shared_ideal_wavefronts,
                report.bank_conflict_factor()
            );
        }
    }
    let failed = checks.failures();
    println!(
        "result: {} passed, {failed} failed",
        checks.outcomes.len() - failed
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_bench(name: &str, json: bool, sizes: Option<Vec<usize>>) -> ExitCode {
    let Some(family) = bench::Family::parse(name) else {
        if bench::FAMILIES.contains(&name) {
            eprintln!("tessera-examples: benchmark family `{name}` is not implemented yet (implemented: copy, add)");
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "error: unknown benchmark family `{name}` (known: {})\n{USAGE}",
            bench::FAMILIES.join(", ")
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
    let sizes = match sizes {
        Some(sizes) => sizes,
        None if device.kind() == DeviceKind::Emulator => {
            eprintln!(
                "error: the `{}` benchmark shapes ({:?} elements) are sized for a GPU; the \
                 emulator would take hours. Run on a GPU, or pass --sizes N[,N...] for an \
                 emulator run (its times are host wall time, not GPU time)",
                family.name(),
                family.default_sizes()
            );
            return ExitCode::FAILURE;
        }
        None => family.default_sizes(),
    };
    let mut all_ok = true;
    let result = family.run(&device, &module, &sizes, |row| {
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Command::Run) => run_examples(),
        Ok(Command::Bench { name, json, sizes }) => run_bench(&name, json, sizes),
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}\n{USAGE}");
            ExitCode::from(2)
        }
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
        assert_eq!(parse_args(&[]), Ok(Command::Run));
        assert_eq!(
            parse_args(&args(&["--bench", "add", "--json"])),
            Ok(Command::Bench {
                name: "add".into(),
                json: true,
                sizes: None
            })
        );
        assert_eq!(
            parse_args(&args(&["--json", "--bench", "copy", "--sizes", "4096, 10"])),
            Ok(Command::Bench {
                name: "copy".into(),
                json: true,
                sizes: Some(vec![4096, 10])
            })
        );
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
        let module = device.load_ptx(PTX).unwrap();
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
    }

    /// The benchmark path on the emulator with small sizes: rows verified, protocol keys.
    #[test]
    fn bench_rows_on_the_emulator() {
        let device = Device::emulator();
        let module = device.load_ptx(PTX).unwrap();
        let mut rows = Vec::new();
        for family in [bench::Family::Copy, bench::Family::Add] {
            family
                .run(&device, &module, &[4099, 1024], |row| {
                    rows.push(row.clone())
                })
                .unwrap();
        }
        assert_eq!(rows.len(), 4);
        for row in &rows {
            assert!(row.ok, "{row:?}");
            assert!(row.ms > 0.0 && row.gbps > 0.0);
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
        assert_eq!(rows[2].gbps, 12.0 * 4099.0 / rows[2].ms / 1e6);
    }
}
