//! Why a PTX build failed, and how its nested cargo's diagnostics are shown.

use super::sm::{Sm, UnknownSm};
use std::fmt;
use std::path::PathBuf;

/// Why a PTX build failed.
#[derive(Debug)]
pub enum BuildError {
    /// `TESSERA_SM` or [`Sm::parse`] got a name that is not a supported SM.
    UnknownSm {
        /// The name given.
        given: String,
    },
    /// `TESSERA_AMDGPU` or [`CodeObjectBuild::processors`](super::CodeObjectBuild::processors)
    /// named something that is not an AMD processor (`gfx942`, `gfx90a`, …).
    UnknownProcessor {
        /// The name given.
        given: String,
    },
    /// The toolchain is not nightly (`-Zbuild-std` is unstable).
    NotNightly {
        /// The `rustc` run.
        rustc: String,
        /// What its `--version` printed.
        version: String,
    },
    /// rustup could not install the device toolchain.
    ToolchainInstall {
        /// The toolchain being installed.
        toolchain: String,
        /// What rustup said.
        detail: String,
    },
    /// The `rust-src` component is missing (`-Zbuild-std` compiles `core` from it).
    MissingRustSrc {
        /// The toolchain's sysroot.
        sysroot: PathBuf,
        /// The toolchain.
        toolchain: String,
    },
    /// A path the build needs is missing or not what it should be.
    BadPath {
        /// What the path is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A tool could not be started.
    Spawn {
        /// The program.
        program: String,
        /// Why it could not start.
        error: std::io::Error,
    },
    /// The nested `cargo build` failed; `stderr` holds its diagnostics.
    CargoFailed {
        /// Its exit status.
        status: String,
        /// The command line.
        command: String,
        /// Its diagnostics.
        stderr: String,
    },
    /// The nested build succeeded but its output did not name the kernel crate's PTX.
    PtxNotFound {
        /// The kernel crate's directory.
        crate_dir: PathBuf,
        /// What the build's output named instead.
        detail: String,
    },
    /// The nested AMD build succeeded but did not give the kernel crate's code object for the
    /// processor.
    CodeObjectNotFound {
        /// The kernel crate's directory.
        crate_dir: PathBuf,
        /// What the build gave instead.
        detail: String,
    },
    /// The PTX is not for the requested SM (rustflags did not apply).
    WrongTarget {
        /// The PTX file.
        ptx: PathBuf,
        /// The SM it was built for.
        expected: Sm,
        /// Its `.target` line.
        found: String,
    },
    /// The PTX of the kernel crate and of the kernel crates it depends on cannot be one module
    /// (two of them define the same symbol, or they are for different targets).
    PtxMerge {
        /// The kernel crate's directory.
        crate_dir: PathBuf,
        /// Which crates, and why.
        detail: String,
    },
    /// The kernels' workgroup-size markers in the module's LLVM IR could not be applied
    /// (`build::workgroup_bounds`).
    WorkgroupBounds {
        /// The module's IR file.
        ir: PathBuf,
        /// Which marker, and why.
        detail: String,
    },
    /// Reading, writing or copying a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnknownSm { given } => UnknownSm {
                given: given.clone(),
            }
            .fmt(f),
            BuildError::UnknownProcessor { given } => write!(
                f,
                "`{given}` is not an AMD processor name: use LLVM's, e.g. gfx942 (MI300), gfx90a \
                 (MI200) or gfx1100 (RDNA3), or `none` in TESSERA_AMDGPU"
            ),
            BuildError::NotNightly { rustc, version } => write!(
                f,
                "the PTX build needs a nightly toolchain (it uses -Zbuild-std=core), but `{rustc}` is \
                 `{version}`; install rustup (the build then installs the pinned nightly itself) or \
                 name a nightly in TESSERA_DEVICE_TOOLCHAIN"
            ),
            BuildError::ToolchainInstall { toolchain, detail } => write!(
                f,
                "could not install the device toolchain `{toolchain}` (the PTX build needs a nightly \
                 with rust-src): {detail}\nInstall it by hand (`rustup toolchain install {toolchain} \
                 --component rust-src`) or name an installed nightly in TESSERA_DEVICE_TOOLCHAIN"
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
                "the kernel crate's device build failed ({status}): {command}\n{}",
                summarize_stderr(stderr)
            ),
            BuildError::PtxNotFound { crate_dir, detail } => write!(
                f,
                "the PTX build of {} finished but its PTX was not found: {detail}",
                crate_dir.display()
            ),
            BuildError::CodeObjectNotFound { crate_dir, detail } => write!(
                f,
                "the AMD build of {} finished but its code object was not found: {detail}",
                crate_dir.display()
            ),
            BuildError::WrongTarget { ptx, expected, found } => write!(
                f,
                "{} is for `{found}`, not `{expected}`: the nested build's rustflags did not apply",
                ptx.display()
            ),
            BuildError::WorkgroupBounds { ir, detail } => write!(
                f,
                "the workgroup sizes of the amdgpu kernels in {} cannot be bounded: {detail}",
                ir.display()
            ),
            BuildError::PtxMerge { crate_dir, detail } => write!(
                f,
                "the PTX of {} and of the kernel crates it depends on cannot be merged: {detail}",
                crate_dir.display()
            ),
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl From<UnknownSm> for BuildError {
    fn from(error: UnknownSm) -> Self {
        BuildError::UnknownSm { given: error.given }
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

/// Lines of a failed build's output shown from its end.
const TAIL_LINES: usize = 60;
/// Lines of the first error's diagnostic shown at most.
const FIRST_ERROR_LINES: usize = 30;
/// Characters of one shown line at most (cargo prints whole rustc command lines on failure,
/// which would bury the diagnostics).
const LINE_CHARS: usize = 300;

/// What a failed nested cargo printed, shortened: the first error's diagnostic (the root cause,
/// e.g. "can't find crate for `std`", which later errors follow from), then the last
/// [`TAIL_LINES`] non-empty lines. The first error is shown once when the tail already holds it.
pub(super) fn summarize_stderr(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let tail_start = lines.len().saturating_sub(TAIL_LINES);
    let tail = shown_lines(&lines[tail_start..]);
    match first_error(stderr) {
        Some((index, block)) if index < tail_start => {
            format!(
                "first error:\n{}\n…\nlast lines:\n{tail}",
                shown_lines(&block)
            )
        }
        _ => tail,
    }
}

/// The first error diagnostic of a cargo/rustc output: the index of its `error:` / `error[E…]`
/// line among the non-empty lines, and its lines up to the blank line that ends a rustc
/// diagnostic (at most [`FIRST_ERROR_LINES`]).
pub(super) fn first_error(stderr: &str) -> Option<(usize, Vec<&str>)> {
    let is_error = |line: &str| {
        let line = line.trim_start();
        line.starts_with("error:") || line.starts_with("error[")
    };
    let start = stderr.lines().position(is_error)?;
    let index = stderr
        .lines()
        .take(start)
        .filter(|line| !line.trim().is_empty())
        .count();
    let block = stderr
        .lines()
        .skip(start)
        .take_while(|line| !line.trim().is_empty())
        .take(FIRST_ERROR_LINES)
        .collect();
    Some((index, block))
}

/// `lines` joined, each cut to [`LINE_CHARS`] characters.
fn shown_lines(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|line| match line.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) => format!("{} …", &line[..cut]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
