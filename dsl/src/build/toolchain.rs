//! The toolchain of the nested device build: its checks, its rustflags and its environment.

use super::error::BuildError;
use super::sm::Sm;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nightly toolchain the device build runs with (rustup's name). Host crates build with any
/// stable Rust; only the nested device build (`-Zbuild-std=core`, `asm_experimental_arch`) needs
/// nightly, and this one is the one the project is tested with.
pub const DEVICE_TOOLCHAIN: &str = "nightly-2026-05-20";

/// `rustc -V` of [`DEVICE_TOOLCHAIN`]. An installed toolchain of another name (e.g. `nightly`)
/// whose compiler is exactly this one is used in its place, so a machine that cannot download
/// the dated name still builds with the pinned compiler.
pub const DEVICE_RUSTC_VERSION: &str = "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)";

/// Environment variable naming the device build's toolchain instead of [`DEVICE_TOOLCHAIN`]
/// (any rustup toolchain name, e.g. `nightly`; it must be a nightly).
pub const DEVICE_TOOLCHAIN_ENV: &str = "TESSERA_DEVICE_TOOLCHAIN";

/// The toolchain the nested device build runs with.
#[derive(Clone, Debug)]
pub(super) struct DeviceToolchain {
    /// rustup's name of it, or `None` where rustup is not installed (then the outer build's).
    pub name: Option<String>,
    /// Its `cargo` and `rustc`.
    pub cargo: PathBuf,
    pub rustc: PathBuf,
    /// Its sysroot (which has `rust-src`).
    pub sysroot: PathBuf,
    /// Its `rustc -V`.
    pub version: String,
}

/// How [`choose_toolchain`] gets the device toolchain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ToolchainChoice {
    /// This installed toolchain; the string says why it was taken.
    Installed { name: String, why: String },
    /// The toolchain is not installed: rustup installs it.
    Install { name: String },
}

/// Chooses the device toolchain: `requested` (from [`DEVICE_TOOLCHAIN_ENV`]) if given, else
/// [`DEVICE_TOOLCHAIN`] if installed, else an installed toolchain (of rustup's list
/// `installed`) whose `rustc -V` is [`DEVICE_RUSTC_VERSION`], else [`DEVICE_TOOLCHAIN`] to
/// install. `version_of(name)` is the toolchain's `rustc -V`, `None` when not installed.
pub(super) fn choose_toolchain(
    requested: Option<&str>,
    installed: &[String],
    version_of: impl Fn(&str) -> Option<String>,
) -> ToolchainChoice {
    let wanted = requested.unwrap_or(DEVICE_TOOLCHAIN);
    if version_of(wanted).is_some() {
        let why = match requested {
            Some(_) => format!("${DEVICE_TOOLCHAIN_ENV}"),
            None => "the pinned device toolchain".to_string(),
        };
        return ToolchainChoice::Installed {
            name: wanted.to_string(),
            why,
        };
    }
    if requested.is_none() {
        for name in installed {
            if version_of(name).as_deref() == Some(DEVICE_RUSTC_VERSION) {
                return ToolchainChoice::Installed {
                    name: name.clone(),
                    why: format!(
                        "its compiler is {DEVICE_RUSTC_VERSION}, the one {DEVICE_TOOLCHAIN} pins"
                    ),
                };
            }
        }
    }
    ToolchainChoice::Install {
        name: wanted.to_string(),
    }
}

/// `rustup toolchain list` → the toolchain names (without ` (default)`, ` (active)`, …).
pub(super) fn parse_toolchain_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| !name.is_empty() && *name != "no")
        .map(str::to_string)
        .collect()
}

/// Runs `program args`, returning its stdout, or an error carrying its stderr.
fn run(program: &Path, args: &[&str]) -> Result<String, BuildError> {
    let output = Command::new(program)
        .args(args)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC")
        .output()
        .map_err(|error| BuildError::Spawn {
            program: program.display().to_string(),
            error,
        })?;
    if !output.status.success() {
        return Err(BuildError::CargoFailed {
            status: output.status.to_string(),
            command: format!("{} {}", program.display(), args.join(" ")),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Finds (installing through rustup where missing, and saying so through `say`) the nightly
/// toolchain of the device build, with `rust-src`.
///
/// With rustup: the toolchain of [`choose_toolchain`]; `rustup toolchain install <name>
/// --profile minimal --component rust-src` when it is missing, `rustup component add rust-src`
/// when it lacks `rust-src`. Without rustup: the outer build's `rustc` (`$RUSTC`), which must
/// then be a nightly with `rust-src`.
pub(super) fn device_toolchain(say: &dyn Fn(&str)) -> Result<DeviceToolchain, BuildError> {
    let rustup = PathBuf::from("rustup");
    let requested = std::env::var(DEVICE_TOOLCHAIN_ENV)
        .ok()
        .filter(|name| !name.trim().is_empty());
    let Ok(list) = run(&rustup, &["toolchain", "list"]) else {
        let rustc = PathBuf::from(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()));
        say(&format!(
            "rustup not found: the device build uses `{}` and the cargo beside it",
            rustc.display()
        ));
        return checked_toolchain(None, &rustc, say, &rustup);
    };
    let installed = parse_toolchain_list(&list);
    let version_of = |name: &str| {
        run(&rustup, &["run", name, "rustc", "-V"])
            .ok()
            .map(|text| text.trim().to_string())
    };
    let name = match choose_toolchain(requested.as_deref(), &installed, version_of) {
        ToolchainChoice::Installed { name, why } => {
            if name != DEVICE_TOOLCHAIN {
                say(&format!("device toolchain `{name}` ({why})"));
            }
            name
        }
        ToolchainChoice::Install { name } => {
            say(&format!(
                "installing the device toolchain `{name}` with rust-src \
                 (`rustup toolchain install {name} --profile minimal --component rust-src`)"
            ));
            run(
                &rustup,
                &[
                    "toolchain",
                    "install",
                    &name,
                    "--profile",
                    "minimal",
                    "--component",
                    "rust-src",
                ],
            )
            .map_err(|error| BuildError::ToolchainInstall {
                toolchain: name.clone(),
                detail: error.to_string(),
            })?;
            name
        }
    };
    let rustc_path = run(&rustup, &["which", "--toolchain", &name, "rustc"])?;
    checked_toolchain(Some(name), Path::new(rustc_path.trim()), say, &rustup)
}

/// Checks that `rustc` is a nightly and that its sysroot has `rust-src` (adding it through
/// rustup to the toolchain `name`).
fn checked_toolchain(
    name: Option<String>,
    rustc: &Path,
    say: &dyn Fn(&str),
    rustup: &Path,
) -> Result<DeviceToolchain, BuildError> {
    let verbose = run(rustc, &["-vV"])?;
    let release = verbose
        .lines()
        .find_map(|line| line.strip_prefix("release: "))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    if !(release.contains("nightly") || release.contains("-dev")) {
        return Err(BuildError::NotNightly {
            rustc: rustc.display().to_string(),
            version: release,
        });
    }
    let version = run(rustc, &["-V"])?.trim().to_string();
    let sysroot = PathBuf::from(run(rustc, &["--print", "sysroot"])?.trim());
    let core_manifest = sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml");
    if !core_manifest.is_file() {
        let toolchain = name.clone().unwrap_or_else(|| "nightly".to_string());
        if name.is_none() {
            return Err(BuildError::MissingRustSrc { sysroot, toolchain });
        }
        say(&format!(
            "adding rust-src to `{toolchain}` (`rustup component add rust-src --toolchain {toolchain}`)"
        ));
        run(
            rustup,
            &["component", "add", "rust-src", "--toolchain", &toolchain],
        )
        .map_err(|_| BuildError::MissingRustSrc {
            sysroot: sysroot.clone(),
            toolchain: toolchain.clone(),
        })?;
    }
    let cargo = match sysroot.join("bin/cargo") {
        cargo if cargo.is_file() => cargo,
        _ => PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())),
    };
    Ok(DeviceToolchain {
        name,
        cargo,
        rustc: rustc.to_path_buf(),
        sysroot,
        version,
    })
}

/// The variable each nested build sets to tell `#[tile_kernel]` its target, so that the macro
/// infers and lowers only the bodies that target compiles (the others are `cfg`-ed out of it):
/// `nvptx64` (PTX other than sm_90a: the Ampere bodies), `nvptx64-sm_90a` (the Hopper bodies, and
/// the Ampere body of a kernel without one), `amdgpu`. The macro reads the same name
/// (`tessera-gpu-macros`, `expand::variants::EXPAND_TARGET_ENV`); a crate compiled for another
/// target than the one named fails with a `compile_error!` saying so.
pub const EXPAND_TARGET_ENV: &str = "TESSERA_EXPAND_TARGET";

/// The value of [`EXPAND_TARGET_ENV`] for the PTX of `sm` (`target_feature = "sm_90a"` is set
/// for sm_90a alone).
pub(super) fn ptx_expand_target(sm: Sm) -> &'static str {
    if sm == Sm::SM_90A {
        "nvptx64-sm_90a"
    } else {
        "nvptx64"
    }
}

/// The value of [`EXPAND_TARGET_ENV`] for AMD code objects.
pub(super) const AMDGPU_EXPAND_TARGET: &str = "amdgpu";

/// The device rustflags: the same as the workspace's `.cargo/config.toml` for nvptx64.
///
/// `-Zmir-enable-passes=-GVN` keeps a tile's registers in registers: a tile is an array, and
/// MIR's GVN turns an array literal of one repeated value (a splat, a zero accumulator) into
/// `[x; N]`, which rustc emits as a store loop; LLVM unrolls it for small tiles only, and from
/// about 128 registers a thread the whole tile stays in local memory (a 128 × 256 f32
/// accumulator over 8 warps: 512 bytes of stack per thread, 248 registers instead of 208).
pub(super) fn device_rustflags(sm: Sm, extra: &[String]) -> Vec<String> {
    let mut flags: Vec<String> = [
        format!("-Ctarget-cpu={}", sm.name()),
        "--emit=asm".to_string(),
        "-Zunstable-options".to_string(),
        "-Cpanic=immediate-abort".to_string(),
        "-Zmir-enable-passes=-GVN".to_string(),
    ]
    .into();
    flags.extend(extra.iter().cloned());
    flags
}

/// Variables cargo sets for a build script, which the nested cargo must not inherit: its own
/// build scripts (compiler_builtins' among them) would read the host's `CARGO_CFG_*` (`unix`,
/// x86 target features, …) wherever cargo leaves a variable unset for nvptx64, and build core
/// wrongly.
pub(super) const BUILD_SCRIPT_ENV_PREFIXES: [&str; 5] = [
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "DEP_",
];
pub(super) const BUILD_SCRIPT_ENV: [&str; 14] = [
    "TARGET",
    "HOST",
    "OUT_DIR",
    "OPT_LEVEL",
    "DEBUG",
    "PROFILE",
    "NUM_JOBS",
    "RUSTC_LINKER",
    "RUSTDOC",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_CRATE_NAME",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "CARGO_BIN_NAME",
];

/// Environment changes for the nested cargo (`Some(value)` sets, `None` removes), given the
/// device build's rustflags ([`device_rustflags`] for PTX, `amdgpu_rustflags` for AMD) and the
/// names of the inherited variables.
///
/// The nested build gets the device rustflags and none of the outer build's settings: no host
/// rustflags (`CARGO_ENCODED_RUSTFLAGS`, which cargo would apply to the device crates), no
/// wrapper such as clippy-driver, no target directory, and no build-script variables. The
/// release profile's codegen units are set to one, whatever the kernel crate's profile says:
/// `--emit=asm` gives one PTX file per codegen unit, and the PTX is that of the one unit (an
/// AMD code object is linked either way).
pub(super) fn nested_cargo_env(
    rustflags: &[String],
    inherited: impl Iterator<Item = String>,
) -> Vec<(String, Option<OsString>)> {
    let mut env: Vec<(String, Option<OsString>)> = vec![
        (
            "CARGO_ENCODED_RUSTFLAGS".to_string(),
            Some(rustflags.join("\u{1f}").into()),
        ),
        (
            "CARGO_PROFILE_RELEASE_CODEGEN_UNITS".to_string(),
            Some("1".into()),
        ),
    ];
    for name in [
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
    ]
    .into_iter()
    .chain(BUILD_SCRIPT_ENV)
    {
        env.push((name.to_string(), None));
    }
    for name in inherited {
        if BUILD_SCRIPT_ENV_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            env.push((name, None));
        }
    }
    env
}
