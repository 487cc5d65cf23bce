//! What the PTX build ([`PtxBuild`](super::PtxBuild)) and the AMD build
//! ([`CodeObjectBuild`](super::CodeObjectBuild)) share: the kernel crate and where its outputs
//! go ([`KernelCrate`]), and the nested cargo run with the device toolchain ([`run_nested_cargo`]).

use super::artifacts::Artifact;
use super::error::BuildError;
use super::toolchain::{nested_cargo_env, DeviceToolchain, EXPAND_TARGET_ENV};
use super::{canonical, env_path, outer_target_dir, track_explain_env};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kernel crate to build for a device, and the settings every device build takes.
#[derive(Clone, Debug)]
pub(super) struct KernelCrate {
    /// The kernel crate's directory (relative to `$CARGO_MANIFEST_DIR` unless absolute).
    pub(super) crate_dir: PathBuf,
    /// The nested builds' target directory, when set.
    pub(super) target_dir: Option<PathBuf>,
    /// Where the outputs and the set file go (default `$OUT_DIR`).
    pub(super) out_dir: Option<PathBuf>,
    /// Rustflags after the device build's own.
    pub(super) extra_rustflags: Vec<String>,
    /// Whether `cargo:` directives are printed.
    pub(super) cargo_directives: bool,
}

/// The resolved places of one build: the crate's directory and manifest, the output directory.
pub(super) struct Places {
    pub(super) crate_dir: PathBuf,
    pub(super) manifest: PathBuf,
    pub(super) out_dir: PathBuf,
}

impl KernelCrate {
    pub(super) fn new(crate_dir: PathBuf) -> Self {
        KernelCrate {
            crate_dir,
            target_dir: None,
            out_dir: None,
            extra_rustflags: Vec::new(),
            cargo_directives: true,
        }
    }

    /// Prints the `rerun-if-env-changed` directives of `env_vars` (and `TESSERA_EXPLAIN`'s),
    /// then resolves the crate's directory (which must hold a `Cargo.toml`) and the output
    /// directory.
    pub(super) fn prepare(&self, env_vars: &[&str]) -> Result<Places, BuildError> {
        if self.cargo_directives {
            for name in env_vars {
                println!("cargo:rerun-if-env-changed={name}");
            }
            track_explain_env();
        }
        let crate_dir = resolve_crate_dir(&self.crate_dir)?;
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
        Ok(Places {
            crate_dir,
            manifest,
            out_dir,
        })
    }

    /// Says `message` as a `cargo:warning` (when printing directives) and on stderr.
    pub(super) fn say(&self, message: &str) {
        if self.cargo_directives {
            println!("cargo:warning=tessera: {message}");
        }
        eprintln!("tessera: {message}");
    }

    /// Prints `cargo:rerun-if-changed` for each of `tracked` (once) and
    /// `cargo:rustc-env=<env_var>=<set_path>` (when printing directives).
    pub(super) fn print_outputs<'p>(
        &self,
        tracked: impl IntoIterator<Item = &'p PathBuf>,
        env_var: &str,
        set_path: &Path,
    ) {
        if !self.cargo_directives {
            return;
        }
        let mut tracked: Vec<&PathBuf> = tracked.into_iter().collect();
        tracked.sort();
        tracked.dedup();
        for file in tracked {
            println!("cargo:rerun-if-changed={}", file.display());
        }
        println!("cargo:rustc-env={env_var}={}", set_path.display());
    }

    /// The nested builds' base target directory, created: the one set, else `$env`, else
    /// `<target>/<name>` where `<target>` is the outer build's target directory, else
    /// `$OUT_DIR/<name>`.
    pub(super) fn nested_target_dir(
        &self,
        env: &str,
        name: &str,
        out_dir: &Path,
    ) -> Result<PathBuf, BuildError> {
        let base = if let Some(dir) = &self.target_dir {
            dir.clone()
        } else if let Some(dir) = env_path(env) {
            dir
        } else if let Some(outer) = outer_target_dir(out_dir) {
            outer.join(name)
        } else {
            out_dir.join(name)
        };
        std::fs::create_dir_all(&base).map_err(|error| BuildError::Io {
            path: base.clone(),
            error,
        })?;
        Ok(base)
    }
}

/// What every target's nested build of one kernel crate shares (`PtxBuild` builds one per SM,
/// `CodeObjectBuild` one per processor).
#[derive(Clone, Copy)]
pub(super) struct CrateBuild<'a> {
    pub(super) crate_dir: &'a Path,
    pub(super) manifest: &'a Path,
    pub(super) out_dir: &'a Path,
    pub(super) toolchain: &'a DeviceToolchain,
    pub(super) extra_rustflags: &'a [String],
}

/// One nested cargo run of the device toolchain.
pub(super) struct NestedCargo<'a> {
    pub(super) toolchain: &'a DeviceToolchain,
    /// The kernel crate's directory (the run's working directory).
    pub(super) crate_dir: &'a Path,
    /// cargo's arguments after the program.
    pub(super) args: Vec<OsString>,
    /// The device build's rustflags.
    pub(super) rustflags: &'a [String],
    /// The target the macro expands for ([`EXPAND_TARGET_ENV`]).
    pub(super) expand_target: &'static str,
    /// The command as the log and errors show it.
    pub(super) shown: String,
    /// Where the command, its status and its diagnostics are written.
    pub(super) log_path: PathBuf,
}

impl NestedCargo<'_> {
    /// Runs cargo with the device rustflags, the device toolchain's compiler, the macro told its
    /// target ([`EXPAND_TARGET_ENV`]) and none of the outer build's settings
    /// ([`nested_cargo_env`]); writes the log; its stdout (cargo's JSON
    /// messages) on success, [`BuildError::CargoFailed`] with the diagnostics otherwise.
    pub(super) fn run(&self) -> Result<String, BuildError> {
        let cargo = self.toolchain.cargo.display().to_string();
        let mut command = Command::new(&cargo);
        command.current_dir(self.crate_dir).args(&self.args);
        let inherited = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
        for (key, value) in nested_cargo_env(self.rustflags, inherited) {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command.env(EXPAND_TARGET_ENV, self.expand_target);
        // The device toolchain's compiler, not the outer build's (which may be stable).
        command.env("RUSTC", &self.toolchain.rustc);
        match &self.toolchain.name {
            Some(name) => command.env("RUSTUP_TOOLCHAIN", name),
            None => command.env_remove("RUSTUP_TOOLCHAIN"),
        };
        let output = command.output().map_err(|error| BuildError::Spawn {
            program: cargo.clone(),
            error,
        })?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let log = format!(
            "{EXPAND_TARGET_ENV}={} {}\n{}\n{stderr}",
            self.expand_target, self.shown, output.status
        );
        std::fs::write(&self.log_path, log).map_err(|error| BuildError::Io {
            path: self.log_path.clone(),
            error,
        })?;
        if !output.status.success() {
            return Err(BuildError::CargoFailed {
                status: output.status.to_string(),
                command: self.shown.clone(),
                stderr: stderr.into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// The library artifact of the crate whose manifest is `manifest` among a build's artifacts.
pub(super) fn kernel_artifact<'a>(
    artifacts: &'a [Artifact],
    manifest: &Path,
) -> Result<Option<&'a Artifact>, BuildError> {
    let manifest = canonical(manifest)?;
    Ok(artifacts.iter().find(|artifact| {
        artifact.is_lib()
            && Path::new(&artifact.manifest_path)
                .canonicalize()
                .ok()
                .as_deref()
                == Some(manifest.as_path())
    }))
}

/// The kernel crate's directory: `dir`, relative to `$CARGO_MANIFEST_DIR` (else the current
/// directory) unless absolute, canonical.
fn resolve_crate_dir(dir: &Path) -> Result<PathBuf, BuildError> {
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        match env_path("CARGO_MANIFEST_DIR") {
            Some(base) => base.join(dir),
            None => std::env::current_dir()
                .map_err(|error| BuildError::Io {
                    path: PathBuf::from("."),
                    error,
                })?
                .join(dir),
        }
    };
    canonical(&dir)
}

/// The Rust crate name of the library in `manifest`: its `[lib]` `name`, else its `[package]`
/// `name` with `-` as `_` (read line by line: `name = "…"` in those sections).
pub(super) fn package_crate_name(manifest: &Path) -> Result<String, BuildError> {
    let text = std::fs::read_to_string(manifest).map_err(|error| BuildError::Io {
        path: manifest.to_path_buf(),
        error,
    })?;
    let (mut section, mut package, mut lib) = ("", None, None);
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some(value) = line
            .strip_prefix("name")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('='))
            .map(|value| value.trim().trim_matches('"').to_string())
        else {
            continue;
        };
        match section {
            "[package]" if package.is_none() => package = Some(value),
            "[lib]" if lib.is_none() => lib = Some(value),
            _ => {}
        }
    }
    lib.or(package)
        .map(|name| name.replace('-', "_"))
        .ok_or_else(|| BuildError::BadPath {
            what: "kernel crate manifest",
            path: manifest.to_path_buf(),
            reason: "names no package".into(),
        })
}

/// The setters every device build has, on its `settings: KernelCrate` field: `target_dir`
/// (documented with `$target_doc`), `out_dir`, `rustflag`, `cargo_directives`.
macro_rules! kernel_crate_setters {
    ($(#[$target_doc:meta])*) => {
        $(#[$target_doc])*
        pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
            self.settings.target_dir = Some(dir.into());
            self
        }

        /// Where the outputs and the set file are written (default `$OUT_DIR`).
        pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
            self.settings.out_dir = Some(dir.into());
            self
        }

        /// One more rustflag for the device build (after the defaults).
        pub fn rustflag(mut self, flag: impl Into<String>) -> Self {
            self.settings.extra_rustflags.push(flag.into());
            self
        }

        /// Whether to print `cargo:` directives (default true; turn off outside a build
        /// script).
        pub fn cargo_directives(mut self, on: bool) -> Self {
            self.settings.cargo_directives = on;
            self
        }
    };
}
pub(super) use kernel_crate_setters;
