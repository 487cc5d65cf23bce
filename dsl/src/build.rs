//! Build helper for a host crate's `build.rs`: compiles a kernel crate to PTX and hands the PTX
//! to the host crate to embed with [`include_ptx!`](crate::include_ptx).
//!
//! ```no_run
//! // In the host crate's build.rs (`fn main`):
//! if let Err(err) = tessera::build::PtxBuild::new("../kernels").build() {
//!     eprintln!("error: {err}");
//!     std::process::exit(1);
//! }
//! // In its main.rs: `const PTX: &str = tessera::include_ptx!("tessera_kernels");`
//! ```
//!
//! What [`PtxBuild::build`] does:
//! 1. checks that the toolchain is nightly and has `rust-src` (`-Zbuild-std` needs both);
//! 2. runs `cargo build --release --target nvptx64-nvidia-cuda -Zbuild-std=core
//!    --message-format=json-render-diagnostics` in the kernel crate's directory, with rustflags
//!    `-Ctarget-cpu=<sm> --emit=asm -Zunstable-options -Cpanic=immediate-abort` and its own target
//!    directory (`<target>/tessera-ptx/<sm>`), so the nested cargo never waits on the outer build's
//!    lock;
//! 3. takes the kernel crate's `compiler-artifact` message from that JSON (matched by manifest path),
//!    reads the metadata hash off its `deps/lib<crate>-<hash>.rlib` file name and picks exactly
//!    `deps/<crate>-<hash>.s`, the PTX of that compilation (checking its `.target` line);
//! 4. copies it to `$OUT_DIR/<crate>.ptx`, sets `TESSERA_PTX_<CRATE>` (upper case) for the host
//!    crate's rustc, and prints `cargo:rerun-if-changed` for every source file of every local
//!    (path) package in the kernel crate's build, as listed in rustc's dep-info files.
//!
//! The SM target is `sm_80` unless set with [`PtxBuild::sm`]; the environment variable
//! `TESSERA_SM` (e.g. `TESSERA_SM=sm_90a`) overrides both.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

/// The device target triple.
pub const NVPTX_TARGET: &str = "nvptx64-nvidia-cuda";

/// Environment variable that overrides the SM target of every [`PtxBuild`].
pub const SM_ENV: &str = "TESSERA_SM";

/// Environment variable that overrides the nested build's target directory.
pub const TARGET_DIR_ENV: &str = "TESSERA_PTX_TARGET_DIR";

/// A GPU architecture to generate PTX for (`-Ctarget-cpu=sm_XX`, PTX `.target sm_XX`).
///
/// Only architectures the device runtime layer supports (cp.async, ldmatrix and bf16 mma need
/// sm_80 or newer) are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sm {
    name: &'static str,
}

/// Accepted SM names, oldest first.
const KNOWN_SMS: [&str; 10] = [
    "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120", "sm_120a",
];

impl Sm {
    /// Ampere (A100): the default.
    pub const SM_80: Sm = Sm { name: "sm_80" };
    /// Hopper (H100), portable subset.
    pub const SM_90: Sm = Sm { name: "sm_90" };
    /// Hopper with the architecture-specific features (wgmma, setmaxnreg).
    pub const SM_90A: Sm = Sm { name: "sm_90a" };

    /// Parses `sm_80`, `sm_90a`, … (also accepts `80`, `90a`, `SM_90`).
    pub fn parse(text: &str) -> Result<Sm, BuildError> {
        let lower = text.trim().to_ascii_lowercase();
        let wanted = if lower.starts_with("sm_") {
            lower.clone()
        } else {
            format!("sm_{lower}")
        };
        KNOWN_SMS
            .iter()
            .find(|known| **known == wanted)
            .map(|known| Sm { name: known })
            .ok_or_else(|| BuildError::UnknownSm {
                given: text.to_string(),
            })
    }

    /// The name as rustc and ptxas spell it, e.g. `sm_90a`.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// Compute capability `(major, minor)`: `sm_90a` → `(9, 0)`.
    pub fn compute_capability(self) -> (u32, u32) {
        let digits: String = self.name[3..]
            .chars()
            .filter(|c| c.is_ascii_digit())
            .collect();
        let number: u32 = digits.parse().unwrap_or(0);
        (number / 10, number % 10)
    }
}

impl Default for Sm {
    fn default() -> Self {
        Sm::SM_80
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl FromStr for Sm {
    type Err = BuildError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Sm::parse(s)
    }
}

/// Why a PTX build failed.
#[derive(Debug)]
pub enum BuildError {
    /// `TESSERA_SM` or [`Sm::parse`] got a name that is not a supported SM.
    UnknownSm { given: String },
    /// The toolchain is not nightly (`-Zbuild-std` is unstable).
    NotNightly { rustc: String, version: String },
    /// The `rust-src` component is missing (`-Zbuild-std` compiles `core` from it).
    MissingRustSrc { sysroot: PathBuf, toolchain: String },
    /// A path the build needs is missing or not what it should be.
    BadPath {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// A tool could not be started.
    Spawn {
        program: String,
        error: std::io::Error,
    },
    /// The nested `cargo build` failed; `stderr` holds its diagnostics.
    CargoFailed {
        status: String,
        command: String,
        stderr: String,
    },
    /// The nested build succeeded but its output did not name the kernel crate's PTX.
    PtxNotFound { crate_dir: PathBuf, detail: String },
    /// The PTX is not for the requested SM (rustflags did not apply).
    WrongTarget {
        ptx: PathBuf,
        expected: Sm,
        found: String,
    },
    /// Reading, writing or copying a file failed.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnknownSm { given } => write!(
                f,
                "unknown SM target `{given}` (from the build script or ${SM_ENV}); supported: {}",
                KNOWN_SMS.join(", ")
            ),
            BuildError::NotNightly { rustc, version } => write!(
                f,
                "the PTX build needs a nightly toolchain (it uses -Zbuild-std=core), but `{rustc}` is \
                 `{version}`; add a rust-toolchain.toml with `channel = \"nightly\"` and \
                 `components = [\"rust-src\"]`"
            ),
            BuildError::MissingRustSrc { sysroot, toolchain } => write!(
                f,
                "the rust-src component is missing from {} (-Zbuild-std=core compiles core from it); \
                 run `rustup component add rust-src --toolchain {toolchain}`",
                sysroot.display()
            ),
            BuildError::BadPath { what, path, reason } => {
                write!(f, "{what} `{}`: {reason}", path.display())
            }
            BuildError::Spawn { program, error } => write!(f, "could not run `{program}`: {error}"),
            BuildError::CargoFailed { status, command, stderr } => write!(
                f,
                "the kernel crate's PTX build failed ({status}): {command}\n{}",
                summarize_stderr(stderr)
            ),
            BuildError::PtxNotFound { crate_dir, detail } => write!(
                f,
                "the PTX build of {} finished but its PTX was not found: {detail}",
                crate_dir.display()
            ),
            BuildError::WrongTarget { ptx, expected, found } => write!(
                f,
                "{} is for `{found}`, not `{expected}`: the nested build's rustflags did not apply",
                ptx.display()
            ),
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn { error, .. } | BuildError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The last 60 non-empty lines of a cargo stderr, each cut to 300 characters (cargo prints
/// whole rustc command lines on failure, which would bury the diagnostics).
fn summarize_stderr(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(60);
    lines[start..]
        .iter()
        .map(|line| match line.char_indices().nth(300) {
            Some((cut, _)) => format!("{} …", &line[..cut]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The result of a [`PtxBuild`].
#[derive(Clone, Debug)]
pub struct BuiltPtx {
    /// The kernel crate's Rust crate name (`tessera_kernels`).
    pub crate_name: String,
    /// The SM the PTX targets.
    pub sm: Sm,
    /// The PTX as copied to the output directory: `<out_dir>/<crate_name>.ptx`.
    pub ptx_path: PathBuf,
    /// The PTX as the nested build left it: `<target>/nvptx64-nvidia-cuda/release/deps/<crate>-<hash>.s`.
    pub built_ptx_path: PathBuf,
    /// Every file the PTX depends on (what `cargo:rerun-if-changed` was printed for).
    pub tracked_files: Vec<PathBuf>,
}

impl BuiltPtx {
    /// The environment variable set for the host crate's rustc: `TESSERA_PTX_<CRATE_NAME>`.
    pub fn env_var(&self) -> String {
        format!("TESSERA_PTX_{}", self.crate_name.to_ascii_uppercase())
    }
}

/// Builds one kernel crate to PTX; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct PtxBuild {
    crate_dir: PathBuf,
    sm: Sm,
    target_dir: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    extra_rustflags: Vec<String>,
    cargo_directives: bool,
}

impl PtxBuild {
    /// A build of the kernel crate in `kernel_crate_dir` (the directory of its `Cargo.toml`;
    /// relative paths are relative to `$CARGO_MANIFEST_DIR`, i.e. the host crate).
    pub fn new(kernel_crate_dir: impl Into<PathBuf>) -> Self {
        PtxBuild {
            crate_dir: kernel_crate_dir.into(),
            sm: Sm::default(),
            target_dir: None,
            out_dir: None,
            extra_rustflags: Vec::new(),
            cargo_directives: true,
        }
    }

    /// The SM to target (default `sm_80`); `$TESSERA_SM` overrides it.
    pub fn sm(mut self, sm: Sm) -> Self {
        self.sm = sm;
        self
    }

    /// The nested build's target directory. Default: `$TESSERA_PTX_TARGET_DIR`, else
    /// `<target>/tessera-ptx/<sm>` where `<target>` is the outer build's target directory,
    /// else `$OUT_DIR/tessera-ptx/<sm>`.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Where the PTX is copied (default `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// One more rustflag for the device build (after the defaults).
    pub fn rustflag(mut self, flag: impl Into<String>) -> Self {
        self.extra_rustflags.push(flag.into());
        self
    }

    /// Whether to print `cargo:` directives (default true; turn off outside a build script).
    pub fn cargo_directives(mut self, on: bool) -> Self {
        self.cargo_directives = on;
        self
    }

    /// The SM that will be used: `$TESSERA_SM` if set, else the configured one.
    pub fn effective_sm(&self) -> Result<Sm, BuildError> {
        match std::env::var(SM_ENV) {
            Ok(text) if !text.trim().is_empty() => Sm::parse(&text),
            _ => Ok(self.sm),
        }
    }

    /// Runs the build; see the [module docs](self).
    pub fn build(&self) -> Result<BuiltPtx, BuildError> {
        if self.cargo_directives {
            println!("cargo:rerun-if-env-changed={SM_ENV}");
            println!("cargo:rerun-if-env-changed={TARGET_DIR_ENV}");
        }
        let sm = self.effective_sm()?;
        let crate_dir = self.resolved_crate_dir()?;
        let manifest = crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::BadPath {
                what: "kernel crate",
                path: crate_dir,
                reason: "has no Cargo.toml".into(),
            });
        }
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => env_path("OUT_DIR").ok_or_else(|| BuildError::BadPath {
                what: "output directory",
                path: PathBuf::new(),
                reason: "OUT_DIR is not set: call this from a build script or set .out_dir(..)"
                    .into(),
            })?,
        };
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
        let sysroot = check_toolchain(&rustc)?;
        let target_dir = self.resolved_target_dir(sm, &out_dir)?;

        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut command = Command::new(&cargo);
        command
            .current_dir(&crate_dir)
            .arg("build")
            .arg("--release")
            .arg("--target")
            .arg(NVPTX_TARGET)
            .arg("-Zbuild-std=core")
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target_dir)
            .arg("--message-format=json-render-diagnostics");
        let inherited = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
        for (key, value) in nested_cargo_env(sm, &self.extra_rustflags, inherited) {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let shown = format!(
            "(cd {} && {cargo} build --release --target {NVPTX_TARGET} -Zbuild-std=core \
             --target-dir {} --message-format=json-render-diagnostics) with rustflags `{}`",
            crate_dir.display(),
            target_dir.display(),
            device_rustflags(sm, &self.extra_rustflags).join(" ")
        );
        let output = command.output().map_err(|error| BuildError::Spawn {
            program: cargo.clone(),
            error,
        })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            return Err(BuildError::CargoFailed {
                status: output.status.to_string(),
                command: shown,
                stderr: stderr.into_owned(),
            });
        }

        let artifacts = parse_artifacts(&stdout);
        let canonical_manifest = canonical(&manifest)?;
        let kernel_artifact = artifacts
            .iter()
            .find(|artifact| {
                artifact.is_lib()
                    && Path::new(&artifact.manifest_path)
                        .canonicalize()
                        .ok()
                        .as_deref()
                        == Some(canonical_manifest.as_path())
            })
            .ok_or_else(|| BuildError::PtxNotFound {
                crate_dir: crate_dir.clone(),
                detail: format!(
                    "no lib `compiler-artifact` message for {} among {} artifacts (is it a library \
                     crate?)",
                    manifest.display(),
                    artifacts.len()
                ),
            })?;
        let built_ptx_path =
            ptx_of_artifact(kernel_artifact).map_err(|detail| BuildError::PtxNotFound {
                crate_dir: crate_dir.clone(),
                detail,
            })?;
        let ptx = std::fs::read_to_string(&built_ptx_path).map_err(|error| BuildError::Io {
            path: built_ptx_path.clone(),
            error,
        })?;
        let found = ptx_target(&ptx).unwrap_or("<no .target line>").to_string();
        if found != sm.name() {
            return Err(BuildError::WrongTarget {
                ptx: built_ptx_path,
                expected: sm,
                found,
            });
        }

        let crate_name = kernel_artifact.crate_name();
        std::fs::create_dir_all(&out_dir).map_err(|error| BuildError::Io {
            path: out_dir.clone(),
            error,
        })?;
        let ptx_path = out_dir.join(format!("{crate_name}.ptx"));
        write_if_changed(&ptx_path, &ptx)?;

        let tracked_files = tracked_sources(&artifacts, kernel_artifact, &sysroot, &crate_dir);
        let built = BuiltPtx {
            crate_name,
            sm,
            ptx_path,
            built_ptx_path,
            tracked_files,
        };
        if self.cargo_directives {
            for file in &built.tracked_files {
                println!("cargo:rerun-if-changed={}", file.display());
            }
            println!(
                "cargo:rustc-env={}={}",
                built.env_var(),
                built.ptx_path.display()
            );
        }
        Ok(built)
    }

    fn resolved_crate_dir(&self) -> Result<PathBuf, BuildError> {
        let dir = if self.crate_dir.is_absolute() {
            self.crate_dir.clone()
        } else {
            match env_path("CARGO_MANIFEST_DIR") {
                Some(base) => base.join(&self.crate_dir),
                None => std::env::current_dir()
                    .map_err(|error| BuildError::Io {
                        path: PathBuf::from("."),
                        error,
                    })?
                    .join(&self.crate_dir),
            }
        };
        canonical(&dir)
    }

    fn resolved_target_dir(&self, sm: Sm, out_dir: &Path) -> Result<PathBuf, BuildError> {
        let base = if let Some(dir) = &self.target_dir {
            dir.clone()
        } else if let Some(dir) = env_path(TARGET_DIR_ENV) {
            dir
        } else if let Some(outer) = outer_target_dir(out_dir) {
            outer.join("tessera-ptx")
        } else {
            out_dir.join("tessera-ptx")
        };
        let dir = base.join(sm.name());
        std::fs::create_dir_all(&dir).map_err(|error| BuildError::Io {
            path: dir.clone(),
            error,
        })?;
        Ok(dir)
    }
}

/// `$name` as a path, if set and non-empty.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

fn canonical(path: &Path) -> Result<PathBuf, BuildError> {
    path.canonicalize().map_err(|error| BuildError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Writes `text` to `path` unless it already holds exactly that (keeps the mtime stable).
fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|error| BuildError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// The outer build's target directory, from `OUT_DIR` =
/// `<target>[/<triple>]/<profile>/build/<package>-<hash>/out`: the directory above `<profile>`
/// (or above `<triple>` when that holds a `CACHEDIR.TAG`-marked target root above it).
fn outer_target_dir(out_dir: &Path) -> Option<PathBuf> {
    let package_dir = out_dir.parent()?;
    let build_dir = package_dir.parent()?;
    if build_dir.file_name()? != "build" {
        return None;
    }
    let profile_dir = build_dir.parent()?;
    let above_profile = profile_dir.parent()?;
    if above_profile
        .file_name()
        .is_some_and(|name| name.to_string_lossy().contains('-'))
        && above_profile
            .parent()
            .is_some_and(|root| root.join("CACHEDIR.TAG").is_file())
    {
        // `<target>/<triple>/<profile>`: a cross build of the host crate.
        return above_profile.parent().map(Path::to_path_buf);
    }
    Some(above_profile.to_path_buf())
}

/// Checks the toolchain behind `rustc`: nightly, with `rust-src`. Returns the sysroot.
fn check_toolchain(rustc: &str) -> Result<PathBuf, BuildError> {
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
fn device_rustflags(sm: Sm, extra: &[String]) -> Vec<String> {
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
const BUILD_SCRIPT_ENV_PREFIXES: [&str; 5] = [
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "DEP_",
];
const BUILD_SCRIPT_ENV: [&str; 14] = [
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
fn nested_cargo_env(
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

/// One `compiler-artifact` message of `cargo --message-format=json`.
#[derive(Clone, Debug, PartialEq)]
struct Artifact {
    package_id: String,
    manifest_path: String,
    target_name: String,
    kinds: Vec<String>,
    src_path: String,
    filenames: Vec<String>,
}

impl Artifact {
    fn is_lib(&self) -> bool {
        self.kinds
            .iter()
            .any(|kind| kind == "lib" || kind == "rlib")
    }

    /// The crate name: the target name with `-` replaced by `_`.
    fn crate_name(&self) -> String {
        self.target_name.replace('-', "_")
    }

    fn is_path_package(&self) -> bool {
        self.package_id.starts_with("path+file://")
    }
}

/// The `compiler-artifact` messages in cargo's JSON output (other lines are skipped).
fn parse_artifacts(stdout: &str) -> Vec<Artifact> {
    let field = |value: &serde_json::Value, key: &str| -> String {
        value
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let strings = |value: Option<&serde_json::Value>| -> Vec<String> {
        value
            .and_then(|v| v.as_array())
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message.get("reason").and_then(|r| r.as_str()) == Some("compiler-artifact")
        })
        .map(|message| {
            let target = message.get("target").cloned().unwrap_or_default();
            Artifact {
                package_id: field(&message, "package_id"),
                manifest_path: field(&message, "manifest_path"),
                target_name: field(&target, "name"),
                kinds: strings(target.get("kind")),
                src_path: field(&target, "src_path"),
                filenames: strings(message.get("filenames")),
            }
        })
        .collect()
}

/// `deps/lib<crate>-<hash>.rlib` (or `.rmeta`) → `deps/<crate>-<hash>.s`, which must exist.
fn ptx_of_artifact(artifact: &Artifact) -> Result<PathBuf, String> {
    let crate_name = artifact.crate_name();
    let prefix = format!("lib{crate_name}-");
    for file in &artifact.filenames {
        let path = Path::new(file);
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let Some(hash) = stem.strip_prefix(&prefix) else {
            continue;
        };
        let ptx = path.with_file_name(format!("{crate_name}-{hash}.s"));
        return if ptx.is_file() {
            Ok(ptx)
        } else {
            Err(format!(
                "{} does not exist (was --emit=asm dropped?)",
                ptx.display()
            ))
        };
    }
    Err(format!(
        "no `lib{crate_name}-<hash>.rlib` among the artifact's files {:?}",
        artifact.filenames
    ))
}

/// The `.target` of a PTX module (`sm_80`, `sm_90a`, …), if it has one.
pub(crate) fn ptx_target(ptx: &str) -> Option<&str> {
    ptx.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(".target")?;
        rest.split(|c: char| c == ',' || c.is_whitespace())
            .find(|word| !word.is_empty())
    })
}

/// The files listed in a Makefile-style dep-info file (`out: dep dep ...`; `\ ` escapes a space).
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let Some(first_rule) = text
        .lines()
        .find(|line| !line.starts_with('#') && line.contains(": "))
    else {
        return Vec::new();
    };
    let mut deps = Vec::new();
    let mut current = String::new();
    let mut chars = first_rule
        .split_once(": ")
        .map_or("", |(_, deps)| deps)
        .chars()
        .peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    deps.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        deps.push(PathBuf::from(current));
    }
    deps
}

/// Cargo's own dep-info of the kernel crate: for `<dir>/deps/lib<crate>-<hash>.rlib`, the file
/// `<dir>/lib<crate>.d` cargo writes next to the uplifted library. It lists, with absolute paths,
/// every source file of the crate and of all its local (path) dependencies.
fn cargo_dep_info_of(artifact: &Artifact) -> Option<PathBuf> {
    let prefix = format!("lib{}-", artifact.crate_name());
    artifact.filenames.iter().find_map(|file| {
        let path = Path::new(file);
        path.file_stem()?.to_str()?.strip_prefix(&prefix)?;
        let deps_dir = path.parent()?;
        Some(
            deps_dir
                .parent()?
                .join(format!("lib{}.d", artifact.crate_name())),
        )
    })
}

/// What the PTX depends on, for `cargo:rerun-if-changed`: the manifest of every local package
/// in the build (not the sysroot's `core`), every source file cargo's dep-info lists for the
/// kernel crate (its own and its local dependencies'), and the kernel crate's
/// `.cargo/config.toml`; sorted and deduplicated. Without a usable dep-info file, each local
/// package's `src/` directory is tracked instead (cargo scans directories recursively).
fn tracked_sources(
    artifacts: &[Artifact],
    kernel_artifact: &Artifact,
    sysroot: &Path,
    crate_dir: &Path,
) -> Vec<PathBuf> {
    let sysroot = sysroot
        .canonicalize()
        .unwrap_or_else(|_| sysroot.to_path_buf());
    let local_manifests: Vec<PathBuf> = artifacts
        .iter()
        .filter(|artifact| artifact.is_path_package())
        .map(|artifact| PathBuf::from(&artifact.manifest_path))
        .filter(|manifest| {
            !manifest
                .canonicalize()
                .unwrap_or_else(|_| manifest.clone())
                .starts_with(&sysroot)
        })
        .collect();
    let listed = cargo_dep_info_of(kernel_artifact)
        .and_then(|dep_info| std::fs::read_to_string(dep_info).ok())
        .map(|text| parse_dep_info(&text))
        .unwrap_or_default();
    let mut files = local_manifests.clone();
    if !listed.is_empty() && listed.iter().all(|file| file.is_absolute()) {
        files.extend(
            listed
                .into_iter()
                .filter(|file| !file.starts_with(&sysroot)),
        );
    } else {
        files.extend(
            local_manifests
                .iter()
                .filter_map(|manifest| manifest.parent().map(|dir| dir.join("src"))),
        );
    }
    let config = crate_dir.join(".cargo/config.toml");
    if config.is_file() {
        files.push(config);
    }
    files.sort();
    files.dedup();
    files
}

/// Embeds the PTX that [`PtxBuild::build`] wrote for the kernel crate named `$crate_name` (its
/// Rust crate name, e.g. `"tessera_kernels"`): `include_str!("$OUT_DIR/<crate_name>.ptx")`.
#[macro_export]
macro_rules! include_ptx {
    ($crate_name:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/", $crate_name, ".ptx"))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_parsing_accepts_known_names_and_rejects_others() {
        assert_eq!(Sm::parse("sm_80").unwrap(), Sm::SM_80);
        assert_eq!(Sm::parse("90a").unwrap(), Sm::SM_90A);
        assert_eq!(Sm::parse(" SM_90 ").unwrap(), Sm::SM_90);
        assert_eq!(Sm::SM_90A.compute_capability(), (9, 0));
        assert_eq!(Sm::parse("sm_86").unwrap().compute_capability(), (8, 6));
        assert_eq!(Sm::parse("sm_120a").unwrap().compute_capability(), (12, 0));
        for bad in ["sm_75", "sm_9", "gfx90a", "", "sm_90b"] {
            let err = Sm::parse(bad).unwrap_err();
            assert!(
                err.to_string().contains("unknown SM target"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn artifact_json_selects_the_hashed_asm_file() {
        let dir = std::env::temp_dir().join(format!("tessera-build-test-{}", std::process::id()));
        let deps = dir.join("nvptx64-nvidia-cuda/release/deps");
        std::fs::create_dir_all(&deps).unwrap();
        // A stale PTX of an older build with another hash must not be picked.
        std::fs::write(deps.join("my_kernels-0000000000000000.s"), "stale").unwrap();
        std::fs::write(
            deps.join("my_kernels-1234abcd5678ef90.s"),
            ".target sm_80\n",
        )
        .unwrap();
        // Cargo's dep-info next to the uplifted library: absolute paths of the crate's and its
        // local dependencies' sources.
        let dep_info = dir.join("nvptx64-nvidia-cuda/release/libmy_kernels.d");
        std::fs::write(
            &dep_info,
            "/t/libmy_kernels.rlib: /k/src/lib.rs /k/src/a\\ b.rs /dsl/src/lib.rs\n",
        )
        .unwrap();
        let line = format!(
            r#"{{"reason":"compiler-artifact","package_id":"path+file:///k#my-kernels@0.1.0","manifest_path":"/k/Cargo.toml","target":{{"kind":["lib"],"crate_types":["lib"],"name":"my-kernels","src_path":"/k/src/lib.rs"}},"filenames":["{0}/libmy_kernels-1234abcd5678ef90.rlib","{0}/libmy_kernels-1234abcd5678ef90.rmeta"],"fresh":true}}"#,
            deps.display()
        );
        let stdout =
            format!("{{\"reason\":\"build-finished\",\"success\":true}}\nnot json\n{line}\n");
        let artifacts = parse_artifacts(&stdout);
        assert_eq!(artifacts.len(), 1);
        let artifact = &artifacts[0];
        assert!(artifact.is_lib() && artifact.is_path_package());
        assert_eq!(artifact.crate_name(), "my_kernels");
        assert_eq!(
            ptx_of_artifact(artifact).unwrap(),
            deps.join("my_kernels-1234abcd5678ef90.s")
        );
        assert_eq!(cargo_dep_info_of(artifact).unwrap(), dep_info);
        let no_sysroot = Path::new("/nonexistent-sysroot");
        let tracked = tracked_sources(&artifacts, artifact, no_sysroot, &dir);
        let expected = [
            "/dsl/src/lib.rs",
            "/k/Cargo.toml",
            "/k/src/a b.rs",
            "/k/src/lib.rs",
        ];
        assert_eq!(tracked, expected.map(PathBuf::from));
        // Without cargo's dep-info, every local package's src/ directory is tracked.
        std::fs::remove_file(&dep_info).unwrap();
        let tracked = tracked_sources(&artifacts, artifact, no_sysroot, &dir);
        assert_eq!(tracked, ["/k/Cargo.toml", "/k/src"].map(PathBuf::from));
        // Without the .s file the error names the exact file expected.
        std::fs::remove_file(deps.join("my_kernels-1234abcd5678ef90.s")).unwrap();
        let err = ptx_of_artifact(artifact).unwrap_err();
        assert!(err.contains("my_kernels-1234abcd5678ef90.s"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dep_info_and_ptx_target_parsing() {
        let text = "# env-dep:X=1\n/t/deps/k-1.d: /a/src/lib.rs /a/src/m.rs\n\n/a/src/lib.rs:\n";
        assert_eq!(
            parse_dep_info(text),
            vec![PathBuf::from("/a/src/lib.rs"), PathBuf::from("/a/src/m.rs")]
        );
        assert_eq!(parse_dep_info("no rules here"), Vec::<PathBuf>::new());
        let ptx = "//\n.version 7.0\n.target sm_90a\n.address_size 64\n";
        assert_eq!(ptx_target(ptx), Some("sm_90a"));
        assert_eq!(ptx_target(".target sm_80, debug\n"), Some("sm_80"));
        assert_eq!(ptx_target(".version 7.0\n"), None);
    }

    #[test]
    fn outer_target_dir_is_found_from_out_dir() {
        assert_eq!(
            outer_target_dir(Path::new("/w/target/release/build/ex-0123/out")),
            Some(PathBuf::from("/w/target"))
        );
        assert_eq!(outer_target_dir(Path::new("/somewhere/else/out")), None);
    }

    #[test]
    fn nested_build_gets_device_rustflags_and_no_host_settings() {
        let inherited = [
            "CARGO_CFG_UNIX",
            "CARGO_CFG_TARGET_FEATURE",
            "DEP_Z_INCLUDE",
            "PATH",
            "CARGO_HOME",
        ];
        let env = nested_cargo_env(
            Sm::SM_90A,
            &["-Cdebuginfo=0".to_string()],
            inherited.iter().map(|name| name.to_string()),
        );
        let flags = env
            .iter()
            .find(|(key, _)| *key == "CARGO_ENCODED_RUSTFLAGS")
            .and_then(|(_, value)| value.clone())
            .unwrap();
        assert_eq!(
            flags.to_str().unwrap().split('\u{1f}').collect::<Vec<_>>(),
            [
                "-Ctarget-cpu=sm_90a",
                "--emit=asm",
                "-Zunstable-options",
                "-Cpanic=immediate-abort",
                "-Cdebuginfo=0"
            ]
        );
        for removed in [
            "RUSTFLAGS",
            "RUSTC_WORKSPACE_WRAPPER",
            "CARGO_TARGET_DIR",
            "TARGET",
            "OUT_DIR",
            "CARGO_CFG_UNIX",
            "CARGO_CFG_TARGET_FEATURE",
            "DEP_Z_INCLUDE",
        ] {
            assert!(
                env.iter()
                    .any(|(key, value)| *key == removed && value.is_none()),
                "{removed}"
            );
        }
        for kept in ["PATH", "CARGO_HOME"] {
            assert!(env.iter().all(|(key, _)| key != kept), "{kept}");
        }
    }

    #[test]
    fn missing_crate_dir_is_a_clear_error() {
        let err = PtxBuild::new("/nonexistent/kernel-crate")
            .out_dir(std::env::temp_dir())
            .cargo_directives(false)
            .build()
            .unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/kernel-crate"),
            "{err}"
        );
    }
}
