//! `tessera-parity`: runs every probe and hand-written kernel with the same inputs on the GPU
//! and on the CPU emulator and compares the outputs (bit for bit, or for tensor-core float sums
//! of random inputs within a stated bound), and compares both with the CPU references of the
//! kernel tests. The emulator is what CI runs; this is the check that it behaves as the GPU.
//!
//! The kernels' PTX set is embedded (see `tessera-kernels-ptx`: `sm_80` and `sm_90a` unless
//! `TESSERA_SM` said otherwise at build): every member the GPU runs is checked, so on compute capability 9.0
//! also the `sm_90a` build (stmatrix and the hardware f8 conversions). No Rust or CUDA toolkit is
//! needed where it runs; `libcuda` is loaded at run time. Without a GPU only
//! the emulator-vs-CPU comparisons run, and the program says so.

mod checks;
#[path = "../../cli.rs"]
mod cli;
mod compare;
mod inputs;

use checks::Check;
use compare::{compare, summary, Compare};
use std::process::ExitCode;
use std::time::Instant;
use tessera::launch::{Device, DeviceKind, LaunchError, Module, PtxSet, DEVICE_ENV};

/// The kernels' PTX for every target of the build, oldest first.
const PTX: PtxSet = tessera_kernels_ptx::PTX;

const USAGE: &str = "\
usage: tessera-parity [--only TEXT]...   run the checks (those whose name contains a TEXT)
       tessera-parity --list             list the checks
       tessera-parity --help
Runs every kernel on the GPU and on the CPU emulator with the same inputs and compares the
outputs with each other and with the CPU references; one line per comparison, then
`N passed, M failed`. Exit status 0 only if every comparison that ran passed (and at least one
ran). Without a GPU only the emulator-vs-CPU comparisons run.
environment: TESSERA_DEVICE=gpu|emulator|auto (default auto: the GPU when a driver and a device
             are present; emulator: compare the emulator with the CPU only)";

/// A PTX build loaded on the GPU.
struct GpuTarget {
    sm: String,
    module: Module,
}

/// What one report line is about: the check, the SM of the GPU's PTX (`host` for the
/// emulator, which runs the kernels' host build) and the comparison.
#[derive(Clone, Copy)]
struct Subject<'a> {
    name: &'a str,
    sm: &'a str,
    what: &'a str,
}

/// Pass/fail counts.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    /// Prints one comparison line (and, on failure, the details) and counts it.
    fn line(&mut self, subject: Subject, ok: bool, detail: &str, extra: &[String]) {
        let result = if ok { "PASS" } else { "FAIL" };
        let Subject { name, sm, what } = subject;
        println!("{name:<66} {sm:<6} {what:<16} {result}  {detail}");
        for line in extra {
            println!("      {line}");
        }
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }

    /// Compares `got` with `want` and prints the line.
    fn compare(
        &mut self,
        subject: Subject,
        check: &Check,
        got: &[u32],
        want: &[u32],
        how: &Compare,
    ) {
        let diff = compare(got, want, how);
        let mut detail = format!("[{}] {}", how.name(), summary(&diff, check.f32_words, how));
        let mut extra = Vec::new();
        if let Some(i) = diff.first_failing {
            detail.push_str(&format!("; first at word {i}"));
            extra.push(format!(
                "first: {}: got {:#010x}, want {:#010x}",
                (check.label)(i),
                got[i],
                want[i]
            ));
            if let Some(breakdown) = &check.breakdown {
                extra.extend(breakdown(got, want));
            }
        }
        self.line(subject, diff.ok(), &detail, &extra);
    }
}

enum Command {
    Run { only: Vec<String> },
    List,
    Help,
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut only = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--list" => return Ok(Command::List),
            "--only" => only.push(rest.next().ok_or("--only needs a text to match")?.clone()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run { only })
}

fn has_entry(module: &Module, kernel: &str) -> bool {
    module.entries().iter().any(|entry| entry.name == kernel)
}

/// Loads every PTX build of the set that the GPU runs. Failures to load are counted as failed
/// comparisons.
fn gpu_targets(device: &Device, tally: &mut Tally) -> Vec<GpuTarget> {
    let (major, minor) = device.compute_capability().unwrap_or((0, 0));
    let (builds, skipped): (Vec<_>, Vec<_>) = PTX
        .targets()
        .iter()
        .partition(|(sm, _)| sm.runs_on((major, minor)));
    for (sm, _) in skipped {
        println!(
            "note:   the {sm} PTX is not run: the device is compute capability {major}.{minor}, \
             so the entries only it has get no GPU comparison"
        );
    }
    let mut targets = Vec::new();
    for (sm, ptx) in builds {
        let sm = sm.name();
        match device.load_ptx(ptx) {
            Ok(module) => targets.push(GpuTarget {
                sm: sm.to_string(),
                module,
            }),
            Err(err) => {
                let name = format!("load the {sm} PTX on the GPU");
                let subject = Subject {
                    name: &name,
                    sm,
                    what: "driver JIT",
                };
                tally.line(subject, false, &err.to_string(), &[]);
            }
        }
    }
    targets
}

fn run_checks(only: &[String]) -> ExitCode {
    let started = Instant::now();
    let selected: Vec<checks::Planned> = checks::all()
        .into_iter()
        .filter(|planned| {
            only.is_empty() || only.iter().any(|text| planned.name.contains(text.as_str()))
        })
        .collect();
    if selected.is_empty() {
        eprintln!("error: no check matches {only:?} (see --list)");
        return ExitCode::from(2);
    }
    println!("Tessera parity: the same launches on the GPU and on the CPU emulator, and both against the CPU references");
    let device = match Device::new() {
        Ok(device) => device,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
    };
    let emulator = Device::emulator();
    let mut tally = Tally::default();
    let emulator_modules: Vec<Module> = match PTX
        .targets()
        .iter()
        .map(|(_, ptx)| emulator.load_ptx(ptx))
        .collect()
    {
        Ok(modules) => modules,
        Err(err) => {
            eprintln!("error: reading the embedded PTX: {err}");
            return ExitCode::FAILURE;
        }
    };
    let targets = match device.kind() {
        DeviceKind::Gpu => {
            let (major, minor) = device.compute_capability().unwrap_or((0, 0));
            println!(
                "device: {} (compute capability {major}.{minor}); PTX embedded: {}",
                device.name(),
                PTX.sms()
                    .iter()
                    .map(|sm| sm.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            gpu_targets(&device, &mut tally)
        }
        DeviceKind::Emulator => {
            println!(
                "NO GPU: {} ({DEVICE_ENV}=gpu demands one).",
                device.selection_note()
            );
            println!(
                "This run compares the EMULATOR WITH THE CPU REFERENCES ONLY; the GPU comparisons are \
                 not run and not counted as passed."
            );
            Vec::new()
        }
    };
    println!(
        "tensor-core float checks on random inputs: |Δ| ≤ 2^{} · (|c| + Σ|a·b|) per element \
         (Δ between GPU, emulator and CPU); every other comparison is bit for bit, except that \
         CPU references computed with host f32/f64 arithmetic match any NaN with any NaN \
         (\"NaN~NaN\": x86 keeps NaN payloads; the GPU and the emulator give 0x7fffffff)",
        checks::MMA_RELATIVE_BOUND_LOG2
    );
    println!("{:<66} {:<6} {:<16} result", "check", "sm", "comparison");
    for planned in selected {
        let (name, check) = (planned.name, (planned.build)());
        let emulated = match emulator_modules.iter().find(|m| has_entry(m, check.kernel)) {
            Some(module) => (check.run)(&emulator, module),
            None => Err(LaunchError::KernelNotFound {
                kernel: check.kernel.to_string(),
                entries: emulator_modules
                    .first()
                    .map(Module::entry_names)
                    .unwrap_or_default(),
            }),
        };
        let on_host = Subject {
            name: &name,
            sm: "host",
            what: "emulator vs cpu",
        };
        match &emulated {
            Ok(words) => tally.compare(on_host, &check, words, &check.reference, &check.vs_cpu),
            Err(err) => {
                let detail = format!("emulator launch failed: {err}");
                tally.line(on_host, false, &detail, &[]);
            }
        }
        for target in targets
            .iter()
            .filter(|t| has_entry(&t.module, check.kernel))
        {
            let vs_emulator = Subject {
                name: &name,
                sm: &target.sm,
                what: "gpu vs emulator",
            };
            let vs_cpu = Subject {
                what: "gpu vs cpu",
                ..vs_emulator
            };
            match (check.run)(&device, &target.module) {
                Ok(words) => {
                    match &emulated {
                        Ok(emulated) => {
                            tally.compare(vs_emulator, &check, &words, emulated, &check.vs_emulator)
                        }
                        Err(_) => tally.line(
                            vs_emulator,
                            false,
                            "no emulator output to compare with",
                            &[],
                        ),
                    }
                    tally.compare(vs_cpu, &check, &words, &check.reference, &check.vs_cpu);
                }
                Err(err) => {
                    let detail = format!("GPU launch failed: {err}");
                    tally.line(vs_emulator, false, &detail, &[]);
                    tally.line(vs_cpu, false, &detail, &[]);
                }
            }
        }
    }
    println!("time: {:.1} s", started.elapsed().as_secs_f64());
    if targets.is_empty() {
        println!("GPU comparisons: NOT RUN (no GPU); the counts below are emulator vs CPU only");
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed == 0 && tally.passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Command::Run { only }) => run_checks(&only),
        Ok(Command::List) => {
            for planned in checks::all() {
                println!("{}", planned.name);
            }
            ExitCode::SUCCESS
        }
        Ok(Command::Help) => cli::help(USAGE),
        Err(err) => cli::usage_error(&err, USAGE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line() {
        let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(matches!(parse_args(&[]), Ok(Command::Run { only }) if only.is_empty()));
        assert!(
            matches!(parse_args(&args(&["--only", "mma", "--only", "convert"])), Ok(Command::Run { only }) if only == ["mma", "convert"])
        );
        assert!(matches!(parse_args(&args(&["--list"])), Ok(Command::List)));
        assert!(parse_args(&args(&["--only"])).is_err());
        assert!(parse_args(&args(&["--gpu"])).is_err());
    }

    /// The smaller checks on the emulator: each matches its CPU reference, and a changed
    /// canary word (a write past the end) fails every kind of comparison.
    #[test]
    fn small_checks_pass_on_the_emulator_and_a_changed_word_fails() {
        let emulator = Device::emulator();
        // The newest build has every entry (stmatrix_probe included); one module keeps the
        // test fast (reading a PTX module's entries is slow in a debug build).
        let (_, newest) = PTX.targets().last().expect("the PTX set is not empty");
        let module = emulator.load_ptx(newest).unwrap();
        let mut ran = 0;
        // Building the large conversion checks (hundreds of thousands of references) is slow
        // in a debug build; they run in the binary.
        const LARGE: [&str; 5] = [
            "16-bit pattern",
            "every bf16",
            "f16 rounding",
            "bf16 rounding",
            "random words",
        ];
        for planned in checks::all()
            .into_iter()
            .filter(|planned| !LARGE.iter().any(|large| planned.name.contains(large)))
        {
            let (name, check) = (planned.name, (planned.build)());
            if check.reference.len() > 20_000 {
                continue;
            }
            assert!(has_entry(&module, check.kernel), "{name}");
            let mut got = (check.run)(&emulator, &module).unwrap();
            assert!(
                compare(&got, &check.reference, &check.vs_cpu).ok(),
                "{name}"
            );
            assert!(compare(&got, &got, &check.vs_emulator).ok(), "{name}");
            *got.last_mut().unwrap() ^= 1;
            assert!(
                !compare(&got, &check.reference, &check.vs_cpu).ok(),
                "{name}"
            );
            assert!(
                !compare(&got, &check.reference, &check.vs_emulator).ok(),
                "{name}"
            );
            ran += 1;
        }
        assert!(ran >= 30, "{ran}");
    }
}
