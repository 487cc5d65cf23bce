//! The toolchain of the nested device build: its checks, its rustflags and its environment.

use super::error::BuildError;
use super::sm::Sm;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

/// Checks the toolchain behind `rustc`: nightly, with `rust-src`. Returns the sysroot.
pub(super) fn check_toolchain(rustc: &str) -> Result<PathBuf, BuildError> {
    let run = |args: &[&str]| -> Result<String, BuildError> {
        let output =
            Command::new(rustc)
                .args(args)
                .output()
                .map_err(|error| BuildError::Spawn {
                    program: rustc.to_string(),
                    error,
                })?;
        if !output.status.success() {
            return Err(BuildError::CargoFailed {
                status: output.status.to_string(),
                command: format!("{rustc} {}", args.join(" ")),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let version = run(&["-vV"])?;
    let release = version
        .lines()
        .find_map(|line| line.strip_prefix("release: "))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    if !(release.contains("nightly") || release.contains("-dev")) {
        return Err(BuildError::NotNightly {
            rustc: rustc.to_string(),
            version: release,
        });
    }
    let sysroot = PathBuf::from(run(&["--print", "sysroot"])?.trim());
    let core_manifest = sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml");
    if !core_manifest.is_file() {
        let toolchain = std::env::var("RUSTUP_TOOLCHAIN").unwrap_or_else(|_| "nightly".into());
        return Err(BuildError::MissingRustSrc { sysroot, toolchain });
    }
    Ok(sysroot)
}

/// The device rustflags: the same as the workspace's `.cargo/config.toml` for nvptx64.
pub(super) fn device_rustflags(sm: Sm, extra: &[String]) -> Vec<String> {
    let mut flags: Vec<String> = [
        format!("-Ctarget-cpu={}", sm.name()),
        "--emit=asm".to_string(),
        "-Zunstable-options".to_string(),
        "-Cpanic=immediate-abort".to_string(),
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
/// names of the inherited variables.
///
/// The nested build gets the device rustflags and none of the outer build's settings: no host
/// rustflags (`CARGO_ENCODED_RUSTFLAGS`, which cargo would apply to the device crates), no
/// wrapper such as clippy-driver, no target directory, and no build-script variables.
pub(super) fn nested_cargo_env(
    sm: Sm,
    extra: &[String],
    inherited: impl Iterator<Item = String>,
) -> Vec<(String, Option<OsString>)> {
    let mut env: Vec<(String, Option<OsString>)> = vec![(
        "CARGO_ENCODED_RUSTFLAGS".to_string(),
        Some(device_rustflags(sm, extra).join("\u{1f}").into()),
    )];
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
