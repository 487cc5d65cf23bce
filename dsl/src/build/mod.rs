//! Build helper for a host crate's `build.rs`: compiles a kernel crate to PTX for several GPU
//! targets and hands the set to the host crate to embed with [`include_ptx!`](crate::include_ptx).
//!
//! ```no_run
//! // In the host crate's build.rs (`fn main`):
//! if let Err(err) = tessera::build::PtxBuild::new("../kernels").build() {
//!     eprintln!("error: {err}");
//!     std::process::exit(1);
//! }
//! // In its main.rs:
//! // const PTX: tessera::build::PtxSet = tessera::include_ptx!("tessera_kernels");
//! // let module = device.load_ptx_set(&PTX)?; // the best target for the device
//! ```
//!
//! The targets are [`Sm::DEFAULT_TARGETS`] (`sm_80` and `sm_90a`) unless set with
//! [`PtxBuild::sm`] or [`PtxBuild::sms`]; the environment variable `TESSERA_SM` (one name or a
//! comma-separated list, e.g. `TESSERA_SM=sm_80,sm_90a`) overrides both.
//!
//! What [`PtxBuild::build`] does:
//! 1. finds the device toolchain: the pinned nightly [`DEVICE_TOOLCHAIN`] (or
//!    `$TESSERA_DEVICE_TOOLCHAIN`), whatever toolchain builds the host crate (stable is fine);
//!    through rustup it installs the toolchain, or adds its `rust-src`, when missing, and says so
//!    (`cargo:warning` lines);
//! 2. for every target at once, runs that toolchain's `cargo build --release --target nvptx64-nvidia-cuda
//!    -Zbuild-std=core --message-format=json-render-diagnostics` in the kernel crate's directory,
//!    with rustflags `-Ctarget-cpu=<sm> --emit=asm -Zunstable-options -Cpanic=immediate-abort
//!    -Zmir-enable-passes=-GVN`
//!    and the target's own target directory (`<target>/tessera-ptx/<sm>`), so the nested cargos
//!    never wait on the outer build's lock nor on each other; each target's diagnostics go to
//!    `<target>/tessera-ptx/<sm>/device-build.log`, and one `cargo:warning` line says what was
//!    built (crate, target, SMs, toolchain, time);
//! 3. takes the kernel crate's `compiler-artifact` message from that JSON (matched by manifest path),
//!    reads the metadata hash off its `deps/lib<crate>-<hash>.rlib` file name and picks exactly
//!    `deps/<crate>-<hash>.s`, the PTX of that compilation (checking its `.target` line);
//!    each other library crate of the build (outside the toolchain's sysroot) whose PTX has a
//!    kernel entry is a kernel crate it depends on, and its PTX joins the kernel crate's in one
//!    module (a symbol two of them define is an error naming both crates);
//! 4. writes that module to `$OUT_DIR/<crate>/<sm>.ptx`, writes the set file
//!    `$OUT_DIR/<crate>.ptx-set.rs` that [`include_ptx!`](crate::include_ptx) includes, sets
//!    `TESSERA_PTX_<CRATE>` (upper case) to the set file's path for the host crate's rustc, and
//!    prints `cargo:rerun-if-changed` for every source file of every local (path) package in
//!    the kernel crate's build, as listed in rustc's dep-info files.
//!
//! A kernel crate's own build script should call [`track_explain_env`], so that cargo re-expands
//! its kernels when `TESSERA_EXPLAIN` changes (see [`EXPLAIN_ENV`]):
//!
//! ```no_run
//! // In the kernel crate's build.rs (`tessera` as a build-dependency):
//! tessera::build::track_explain_env();
//! ```

mod artifacts;
mod barrier_scope;
mod code_objects;
mod code_set;
mod error;
mod llvm_tools;
mod merge;
mod nested;
mod ptx_set;
mod sm;
mod toolchain;
mod workgroup_bounds;

pub use code_objects::{
    code_object_set_path, code_objects_env_var, parse_processor, write_code_object_set,
    BuiltCodeObject, BuiltCodeObjects, CodeObjectBuild, AMDGPU_ASM_ENV, AMDGPU_ENV, AMDGPU_TARGET,
    AMDGPU_TARGET_DIR_ENV, DEFAULT_PROCESSORS,
};
pub use code_set::{CodeObjectSet, DeviceCode};
pub use error::BuildError;
pub use ptx_set::{ptx_set_path, write_ptx_set, PtxSet};
pub use sm::{Sm, UnknownSm, SM_ENV};

use crate::launch::ptx::target_name;
use artifacts::{parse_artifacts, ptx_of_artifact, tracked_sources, Artifact, Sysroot};
use merge::{merge_ptx, CratePtx};
use nested::{kernel_artifact, kernel_crate_setters, CrateBuild, KernelCrate, NestedCargo, Places};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use toolchain::{device_rustflags, device_toolchain};
pub use toolchain::{
    DEVICE_RUSTC_VERSION, DEVICE_TOOLCHAIN, DEVICE_TOOLCHAIN_ENV, EXPAND_TARGET_ENV,
};

/// The device target triple.
pub const NVPTX_TARGET: &str = "nvptx64-nvidia-cuda";

/// Environment variable that makes `#[tile_kernel]` print its layout inference at expansion
/// time (`1`, or a comma-separated list of kernel names).
pub const EXPLAIN_ENV: &str = "TESSERA_EXPLAIN";

/// Prints `cargo:rerun-if-env-changed=TESSERA_EXPLAIN`. The macro reads [`EXPLAIN_ENV`] with
/// `std::env::var`, which cargo does not track: a crate that defines `#[tile_kernel]`s calls
/// this from its build script so that changing the variable re-expands (and explains) its
/// kernels. [`PtxBuild::build`] prints it too, so the host crate reruns the nested build.
pub fn track_explain_env() {
    println!("cargo:rerun-if-env-changed={EXPLAIN_ENV}");
}

/// Environment variable that overrides the nested build's target directory.
pub const TARGET_DIR_ENV: &str = "TESSERA_PTX_TARGET_DIR";

/// One target's PTX of a [`PtxBuild`].
#[derive(Clone, Debug)]
pub struct BuiltPtx {
    /// The kernel crate's Rust crate name (`tessera_kernels`).
    pub crate_name: String,
    /// The SM the PTX targets.
    pub sm: Sm,
    /// The PTX as copied to the output directory: `<out_dir>/<crate_name>/<sm>.ptx`.
    pub ptx_path: PathBuf,
    /// The nested build's `.s` files merged into `ptx_path`, the kernel crate's first.
    pub built_ptx_paths: Vec<PathBuf>,
    /// Every file the PTX depends on (what `cargo:rerun-if-changed` was printed for).
    pub tracked_files: Vec<PathBuf>,
}

/// The result of a [`PtxBuild`]: one [`BuiltPtx`] per target and the set file that embeds them.
#[derive(Clone, Debug)]
pub struct BuiltPtxSet {
    /// The kernel crate's Rust crate name (`tessera_kernels`).
    pub crate_name: String,
    /// The targets' builds, in the order of [`PtxBuild::sms`].
    pub targets: Vec<BuiltPtx>,
    /// The file [`include_ptx!`](crate::include_ptx) includes: `<out_dir>/<crate_name>.ptx-set.rs`.
    pub set_path: PathBuf,
}

impl BuiltPtxSet {
    /// The environment variable set for the host crate's rustc: `TESSERA_PTX_<CRATE_NAME>`.
    pub fn env_var(&self) -> String {
        format!("TESSERA_PTX_{}", self.crate_name.to_ascii_uppercase())
    }

    /// The build for exactly `sm`.
    pub fn get(&self, sm: Sm) -> Option<&BuiltPtx> {
        self.targets.iter().find(|built| built.sm == sm)
    }
}

/// Builds one kernel crate to PTX; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct PtxBuild {
    sms: Vec<Sm>,
    settings: KernelCrate,
}

impl PtxBuild {
    /// A build of the kernel crate in `kernel_crate_dir` (the directory of its `Cargo.toml`;
    /// relative paths are relative to `$CARGO_MANIFEST_DIR`, i.e. the host crate).
    pub fn new(kernel_crate_dir: impl Into<PathBuf>) -> Self {
        PtxBuild {
            sms: Sm::DEFAULT_TARGETS.to_vec(),
            settings: KernelCrate::new(kernel_crate_dir.into()),
        }
    }

    /// Only this SM; `$TESSERA_SM` overrides it.
    pub fn sm(self, sm: Sm) -> Self {
        self.sms([sm])
    }

    /// These SMs (default [`Sm::DEFAULT_TARGETS`]), in any order: the set lists them oldest
    /// first, each once. `$TESSERA_SM` overrides them.
    pub fn sms(mut self, sms: impl IntoIterator<Item = Sm>) -> Self {
        self.sms = sorted_targets(sms);
        self
    }

    kernel_crate_setters!(
        /// The nested builds' target directory. Default: `$TESSERA_PTX_TARGET_DIR`, else
        /// `<target>/tessera-ptx` where `<target>` is the outer build's target directory, else
        /// `$OUT_DIR/tessera-ptx`; each target builds in its subdirectory `<sm>`.
    );

    /// The SMs that will be built: `$TESSERA_SM` (a comma-separated list) if set, else the
    /// configured ones; oldest first.
    pub fn effective_sms(&self) -> Result<Vec<Sm>, BuildError> {
        match std::env::var(SM_ENV) {
            Ok(text) if !text.trim().is_empty() => parse_sm_list(&text),
            _ => Ok(self.sms.clone()),
        }
    }

    /// Runs the build; see the [module docs](self).
    pub fn build(&self) -> Result<BuiltPtxSet, BuildError> {
        let Places {
            crate_dir,
            manifest,
            out_dir,
        } = self
            .settings
            .prepare(&[SM_ENV, TARGET_DIR_ENV, DEVICE_TOOLCHAIN_ENV])?;
        let sms = self.effective_sms()?;
        let say = |message: &str| self.settings.say(message);
        let toolchain = device_toolchain(&say)?;
        let target = CrateBuild {
            crate_dir: &crate_dir,
            manifest: &manifest,
            out_dir: &out_dir,
            toolchain: &toolchain,
            extra_rustflags: &self.settings.extra_rustflags,
        };
        let target_dirs = sms
            .iter()
            .map(|&sm| self.resolved_target_dir(sm, &out_dir))
            .collect::<Result<Vec<_>, _>>()?;
        let sm_names = sms
            .iter()
            .map(|sm| sm.name())
            .collect::<Vec<_>>()
            .join(", ");
        let toolchain_name = toolchain
            .name
            .as_deref()
            .unwrap_or("the outer build's toolchain");
        let logs = target_dirs
            .first()
            .and_then(|dir| dir.parent())
            .map(|dir| dir.join("<sm>").join(DEVICE_LOG).display().to_string())
            .unwrap_or_default();
        eprintln!(
            "tessera: building {} for {NVPTX_TARGET} ({sm_names}) with {toolchain_name} ({}); log: {logs}",
            crate_dir.display(),
            toolchain.version
        );
        let started = std::time::Instant::now();
        let jobs: Vec<_> = sms.iter().copied().zip(&target_dirs).collect();
        let targets = build_each_at_once(
            &jobs,
            |&(sm, target_dir)| target.build_ptx(sm, target_dir),
            || BuildError::PtxNotFound {
                crate_dir: crate_dir.clone(),
                detail: "the thread of a target's build panicked".to_string(),
            },
        )?;
        if let Some(first) = targets.first() {
            say(&format!(
                "built the PTX of {} for {NVPTX_TARGET} ({sm_names}) with {toolchain_name} in {:.0} s (log: {logs})",
                first.crate_name,
                started.elapsed().as_secs_f64()
            ));
        }
        let crate_name = match targets.first() {
            Some(first) => first.crate_name.clone(),
            None => {
                return Err(BuildError::BadPath {
                    what: "target list",
                    path: crate_dir,
                    reason: "is empty: give PtxBuild::sms at least one SM".into(),
                })
            }
        };
        let ptx_files: Vec<(Sm, PathBuf)> = targets
            .iter()
            .map(|built| (built.sm, built.ptx_path.clone()))
            .collect();
        let set_path = write_ptx_set(&out_dir, &crate_name, &ptx_files)?;
        let built = BuiltPtxSet {
            crate_name,
            targets,
            set_path,
        };
        self.settings.print_outputs(
            built
                .targets
                .iter()
                .flat_map(|target| &target.tracked_files),
            &built.env_var(),
            &built.set_path,
        );
        Ok(built)
    }

    fn resolved_target_dir(&self, sm: Sm, out_dir: &Path) -> Result<PathBuf, BuildError> {
        let dir = self
            .settings
            .nested_target_dir(TARGET_DIR_ENV, "tessera-ptx", out_dir)?
            .join(sm.name());
        std::fs::create_dir_all(&dir).map_err(|error| BuildError::Io {
            path: dir.clone(),
            error,
        })?;
        Ok(dir)
    }
}

/// The file in each target's directory that holds the nested build's command and diagnostics.
pub const DEVICE_LOG: &str = "device-build.log";

impl CrateBuild<'_> {
    /// Builds the PTX for `sm` in `target_dir` and copies it to `<out_dir>/<crate>/<sm>.ptx`.
    fn build_ptx(&self, sm: Sm, target_dir: &Path) -> Result<BuiltPtx, BuildError> {
        let crate_dir = self.crate_dir.to_path_buf();
        let rustflags = device_rustflags(sm, self.extra_rustflags);
        let shown = format!(
            "(cd {} && {} build --release --target {NVPTX_TARGET} -Zbuild-std=core \
             --target-dir {} --message-format=json-render-diagnostics) with rustflags `{}`",
            crate_dir.display(),
            self.toolchain.cargo.display(),
            target_dir.display(),
            rustflags.join(" ")
        );
        let args = [
            "build",
            "--release",
            "--target",
            NVPTX_TARGET,
            "-Zbuild-std=core",
        ]
        .into_iter()
        .map(OsString::from)
        .chain([
            "--manifest-path".into(),
            self.manifest.into(),
            "--target-dir".into(),
            target_dir.into(),
            "--message-format=json-render-diagnostics".into(),
        ])
        .collect();
        let stdout = NestedCargo {
            toolchain: self.toolchain,
            crate_dir: self.crate_dir,
            args,
            rustflags: &rustflags,
            expand_target: toolchain::ptx_expand_target(sm),
            shown,
            log_path: target_dir.join(DEVICE_LOG),
        }
        .run()?;

        let artifacts = parse_artifacts(&stdout);
        let kernel_artifact =
            kernel_artifact(&artifacts, self.manifest)?.ok_or_else(|| BuildError::PtxNotFound {
                crate_dir: crate_dir.clone(),
                detail: format!(
                    "no lib `compiler-artifact` message for {} among {} artifacts (is it a library \
                     crate?)",
                    self.manifest.display(),
                    artifacts.len()
                ),
            })?;
        let kernel_ptx_path =
            ptx_of_artifact(kernel_artifact).map_err(|detail| BuildError::PtxNotFound {
                crate_dir: crate_dir.clone(),
                detail,
            })?;
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|error| BuildError::Io {
                path: path.to_path_buf(),
                error,
            })
        };
        let kernel_ptx = CratePtx {
            crate_name: kernel_artifact.crate_name(),
            text: read(&kernel_ptx_path)?,
        };
        let found = target_name(&kernel_ptx.text)
            .unwrap_or("<no .target line>")
            .to_string();
        if found != sm.name() {
            return Err(BuildError::WrongTarget {
                ptx: kernel_ptx_path,
                expected: sm,
                found,
            });
        }
        // The kernel crates it depends on: the other library crates built for the device,
        // outside the toolchain's sysroot, whose PTX has an entry; by crate name, after the
        // kernel crate.
        let mut parts = vec![kernel_ptx];
        let mut built_ptx_paths = vec![kernel_ptx_path];
        let sysroot = Sysroot::new(&self.toolchain.sysroot);
        let mut dependencies: Vec<&Artifact> = artifacts
            .iter()
            .filter(|artifact| {
                artifact.is_lib()
                    && artifact.is_for_target(NVPTX_TARGET)
                    && artifact.manifest_path != kernel_artifact.manifest_path
                    && !sysroot.contains(Path::new(&artifact.manifest_path))
            })
            .collect();
        dependencies.sort_by_key(|artifact| artifact.crate_name());
        for artifact in dependencies {
            let path = ptx_of_artifact(artifact).map_err(|detail| BuildError::PtxNotFound {
                crate_dir: crate_dir.clone(),
                detail,
            })?;
            let part = CratePtx {
                crate_name: artifact.crate_name(),
                text: read(&path)?,
            };
            if part.has_entry() {
                parts.push(part);
                built_ptx_paths.push(path);
            }
        }
        let ptx = merge_ptx(&parts).map_err(|detail| BuildError::PtxMerge {
            crate_dir: crate_dir.clone(),
            detail,
        })?;

        let crate_name = kernel_artifact.crate_name();
        let ptx_dir = self.out_dir.join(&crate_name);
        std::fs::create_dir_all(&ptx_dir).map_err(|error| BuildError::Io {
            path: ptx_dir.clone(),
            error,
        })?;
        let ptx_path = ptx_dir.join(format!("{sm}.ptx"));
        write_if_changed(&ptx_path, &ptx)?;

        let tracked_files = tracked_sources(
            &artifacts,
            kernel_artifact,
            &self.toolchain.sysroot,
            self.crate_dir,
        );
        Ok(BuiltPtx {
            crate_name,
            sm,
            ptx_path,
            built_ptx_paths,
            tracked_files,
        })
    }
}

/// `sms` oldest first (by compute capability, portable before arch-specific), each once.
fn sorted_targets(sms: impl IntoIterator<Item = Sm>) -> Vec<Sm> {
    let mut sms: Vec<Sm> = sms.into_iter().collect();
    sms.sort_by_key(|sm| (sm.compute_capability(), sm.is_arch_specific()));
    sms.dedup();
    sms
}

/// `sm_80,sm_90a` (commas or spaces between names) → the SMs, oldest first.
fn parse_sm_list(text: &str) -> Result<Vec<Sm>, BuildError> {
    let sms = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|name| !name.is_empty())
        .map(Sm::parse)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(sorted_targets(sms))
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
/// Runs `build` on every job at once, a thread each (the nested device builds of several
/// targets); their results in the jobs' order, the first error if any (`panicked` for a thread
/// that panicked).
pub(super) fn build_each_at_once<J: Sync, T: Send>(
    jobs: &[J],
    build: impl Fn(&J) -> Result<T, BuildError> + Sync,
    panicked: impl Fn() -> BuildError,
) -> Result<Vec<T>, BuildError> {
    let build = &build;
    std::thread::scope(|scope| {
        let running: Vec<_> = jobs
            .iter()
            .map(|job| scope.spawn(move || build(job)))
            .collect();
        running
            .into_iter()
            .map(|thread| thread.join().unwrap_or_else(|_| Err(panicked())))
            .collect()
    })
}

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

/// Embeds the PTX set that [`PtxBuild::build`] wrote for the kernel crate named `$crate_name`
/// (its Rust crate name, e.g. `"tessera_kernels"`): a [`PtxSet`] of every target's PTX,
/// included from `$OUT_DIR/<crate_name>.ptx-set.rs`. Usable in a constant:
/// `const PTX: tessera::build::PtxSet = tessera::include_ptx!("tessera_kernels");`.
#[macro_export]
macro_rules! include_ptx {
    ($crate_name:literal) => {{
        const NAMED: &[(&str, &str)] =
            include!(concat!(env!("OUT_DIR"), "/", $crate_name, ".ptx-set.rs"));
        const TARGETS: [($crate::build::Sm, &str); NAMED.len()] =
            $crate::build::PtxSet::targets_named(NAMED);
        $crate::build::PtxSet::new(&TARGETS)
    }};
}

#[cfg(test)]
mod tests;
