//! Building a kernel crate's AMD code objects ([`CodeObjectBuild`]) and embedding them
//! ([`include_code_objects!`](crate::include_code_objects)).

use super::artifacts::{parse_artifacts, tracked_sources};
use super::error::BuildError;
use super::llvm_tools::LlvmTools;
use super::nested::{
    kernel_artifact, kernel_crate_setters, package_crate_name, CrateBuild, KernelCrate,
    NestedCargo, Places,
};
use super::ptx_set::{set_source, write_set_file};
use super::toolchain::device_toolchain;
use super::write_if_changed;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The AMD device target triple.
pub const AMDGPU_TARGET: &str = "amdgcn-amd-amdhsa";

/// Environment variable naming the processors to build code objects for (`gfx942,gfx90a`), or
/// `none`; it overrides [`CodeObjectBuild::processors`].
pub const AMDGPU_ENV: &str = "TESSERA_AMDGPU";

/// The processors built unless told otherwise: `gfx942` (MI300).
pub const DEFAULT_PROCESSORS: [&str; 1] = ["gfx942"];

/// Environment variable naming the processors whose ISA (the asm) the build also writes
/// (`gfx942`, `all`, or `none`); it overrides [`CodeObjectBuild::asm_for`].
pub const AMDGPU_ASM_ENV: &str = "TESSERA_AMDGPU_ASM";

/// Environment variable that overrides the nested AMD builds' target directory.
pub const AMDGPU_TARGET_DIR_ENV: &str = "TESSERA_AMDGPU_TARGET_DIR";

/// The rustflags of the build for `processor`, then `extra`.
pub(super) fn amdgpu_rustflags(processor: &str, extra: &[String]) -> Vec<String> {
    let mut flags = vec![
        format!("-Ctarget-cpu={processor}"),
        "-Zmerge-functions=disabled".to_string(),
    ];
    flags.extend(extra.iter().cloned());
    flags
}

/// `processor` if it names an AMD processor as LLVM does (`gfx` then lower-case letters and
/// digits: `gfx90a`, `gfx942`, `gfx1100`).
pub fn parse_processor(processor: &str) -> Result<String, BuildError> {
    let name = processor.trim();
    let valid = name.strip_prefix("gfx").is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
    });
    if valid {
        Ok(name.to_string())
    } else {
        Err(BuildError::UnknownProcessor {
            given: processor.to_string(),
        })
    }
}

/// `gfx942,gfx90a` (commas or spaces between names) → the processors, each once, in the order
/// given; `none` → no processor.
pub(super) fn parse_processor_list(text: &str) -> Result<Vec<String>, BuildError> {
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    let mut processors: Vec<String> = Vec::new();
    for name in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|name| !name.is_empty())
    {
        let name = parse_processor(name)?;
        if !processors.contains(&name) {
            processors.push(name);
        }
    }
    Ok(processors)
}

/// One processor's code object of a [`CodeObjectBuild`].
#[derive(Clone, Debug)]
pub struct BuiltCodeObject {
    /// The kernel crate's Rust crate name (`tessera_kernels`).
    pub crate_name: String,
    /// The processor (`gfx942`).
    pub processor: String,
    /// The code object as copied to the output directory: `<out_dir>/<crate>/<processor>.hsaco`.
    pub path: PathBuf,
    /// Its ISA, the crate's asm, when asked for ([`CodeObjectBuild::asm_for`]):
    /// `<out_dir>/<crate>/<processor>.s`.
    pub asm_path: Option<PathBuf>,
    /// Every file the code object depends on (what `cargo:rerun-if-changed` was printed for).
    pub tracked_files: Vec<PathBuf>,
}

/// The result of a [`CodeObjectBuild`]: one code object per processor and the set file that
/// embeds them.
#[derive(Clone, Debug)]
pub struct BuiltCodeObjects {
    /// The kernel crate's Rust crate name; empty when no processor was built.
    pub crate_name: String,
    /// The processors' code objects, in the order built (the order a HIP device tries them).
    pub targets: Vec<BuiltCodeObject>,
    /// The file [`include_code_objects!`](crate::include_code_objects) includes:
    /// `<out_dir>/<crate>.code-objects.rs`.
    pub set_path: PathBuf,
}

/// Builds a kernel crate's AMD code objects: one `amdgcn-amd-amdhsa` build per processor
/// (`gfx942`, `gfx90a`, …), each an HSA code object that `hipModuleLoadData` loads, embedded in
/// the host crate with [`include_code_objects!`](crate::include_code_objects) as a
/// [`CodeObjectSet`](super::CodeObjectSet).
///
/// ```no_run
/// // In the host crate's build.rs (`fn main`), beside the PTX build:
/// if let Err(err) = tessera::build::CodeObjectBuild::new("../kernels").build() {
///     eprintln!("error: {err}");
///     std::process::exit(1);
/// }
/// // In its main.rs:
/// // const CODE: tessera::build::DeviceCode = tessera::build::DeviceCode {
/// //     ptx: tessera::include_ptx!("tessera_kernels"),
/// //     amdgpu: tessera::include_code_objects!("tessera_kernels"),
/// // };
/// ```
///
/// The processors are [`DEFAULT_PROCESSORS`] (`gfx942`) unless set with
/// [`CodeObjectBuild::processors`]; `TESSERA_AMDGPU` (a comma-separated list, or `none` for no
/// code object) overrides both. Per processor the build runs the device toolchain's
/// `cargo rustc --release --target amdgcn-amd-amdhsa -Zbuild-std=core --crate-type cdylib` in
/// the kernel crate's directory with rustflags `-Ctarget-cpu=<processor>
/// -Zmerge-functions=disabled` (LLVM would otherwise make a kernel whose code equals another's an
/// alias of it, without the kernel descriptor `hipModuleGetFunction` looks for) and
/// `--config profile.release.lto="fat"` (amdgpu code is linked by LTO: told so, cargo compiles
/// the dependencies to bitcode only), the processors at once, each in a target directory of its
/// own (`<target>/tessera-amdgpu/<processor>`). With the toolchain's `llc` (its `llvm-tools`
/// component) rustc stops at the crate's final LLVM module (`--emit=llvm-ir`; with
/// `-Clinker-plugin-lto` every crate's object is bitcode, so rustc generates no code and its
/// link is reduced to `rust-lld --version`), each
/// `#[tile_kernel]` kernel gets the workgroup bound of its block size
/// (`amdgpu-flat-work-group-size`, which rustc cannot set: without it LLVM budgets registers for
/// 1024-thread workgroups and large tiles spill), `sync_threads`' fences get workgroup scope
/// (Rust's are the system's, which write back and invalidate the L2 at each barrier), and `llc`
/// and `rust-lld` make the code object
/// (and, for the processors [`asm_for`](CodeObjectBuild::asm_for) names, a second `llc` the
/// asm); without `llc`, rustc's own (`--emit=link`, `--emit=asm,link`: LLVM's code generation
/// of the whole crate twice), unbounded and with system-scope barriers, and the build says so. The code object is copied to
/// `$OUT_DIR/<crate>/<processor>.hsaco` (and the asm to `$OUT_DIR/<crate>/<processor>.s`). The
/// kernel crate needs
/// `#![cfg_attr(target_arch = "amdgpu", no_std, feature(abi_gpu_kernel))]`; its `#[tile_kernel]`s
/// without NVIDIA-only instructions are kernels of the code object (see the README, "AMD GPUs").
#[derive(Clone, Debug)]
pub struct CodeObjectBuild {
    processors: Vec<String>,
    /// The processors whose asm is written too.
    asm_for: Vec<String>,
    settings: KernelCrate,
}

impl CodeObjectBuild {
    /// A build of the kernel crate in `kernel_crate_dir` (relative paths are relative to
    /// `$CARGO_MANIFEST_DIR`, i.e. the host crate).
    pub fn new(kernel_crate_dir: impl Into<PathBuf>) -> Self {
        CodeObjectBuild {
            processors: DEFAULT_PROCESSORS.iter().map(|p| p.to_string()).collect(),
            asm_for: Vec::new(),
            settings: KernelCrate::new(kernel_crate_dir.into()),
        }
    }

    /// These processors, in the order a HIP device tries them; `$TESSERA_AMDGPU` overrides them.
    /// A name that is not `gfx…` is an error of [`build`](Self::build).
    pub fn processors<S: Into<String>>(mut self, processors: impl IntoIterator<Item = S>) -> Self {
        self.processors = processors.into_iter().map(Into::into).collect();
        self
    }

    /// Also writes the ISA (the crate's asm) of these processors (default: none; `all` in
    /// `$TESSERA_AMDGPU_ASM` for every processor, which overrides this). It costs a second run
    /// of LLVM's code generation over the whole crate per processor.
    pub fn asm_for<S: Into<String>>(mut self, processors: impl IntoIterator<Item = S>) -> Self {
        self.asm_for = processors.into_iter().map(Into::into).collect();
        self
    }

    /// The processors among `processors` whose asm is written: `env` (the value of
    /// `$TESSERA_AMDGPU_ASM`: `all`, `none`, or names) if set, else the configured ones.
    pub(super) fn effective_asm(
        &self,
        processors: &[String],
        env: Option<&str>,
    ) -> Result<Vec<String>, BuildError> {
        let named = match env.map(str::trim) {
            Some("all") => return Ok(processors.to_vec()),
            Some(text) if !text.is_empty() => parse_processor_list(text)?,
            _ => parse_processor_list(&self.asm_for.join(","))?,
        };
        Ok(processors
            .iter()
            .filter(|p| named.contains(p))
            .cloned()
            .collect())
    }

    kernel_crate_setters!(
        /// The folder of the nested builds' target directories (one per processor, named after
        /// it). Default: `$TESSERA_AMDGPU_TARGET_DIR`, else `<target>/tessera-amdgpu` where
        /// `<target>` is the outer build's target directory, else `$OUT_DIR/tessera-amdgpu`.
    );

    /// The processors that will be built: `$TESSERA_AMDGPU` if set, else the configured ones.
    pub fn effective_processors(&self) -> Result<Vec<String>, BuildError> {
        match std::env::var(AMDGPU_ENV) {
            Ok(text) if !text.trim().is_empty() => parse_processor_list(&text),
            _ => parse_processor_list(&self.processors.join(",")),
        }
    }

    /// Runs the build (see [`CodeObjectBuild`]). With no processor it builds nothing and
    /// writes an empty set (a host crate that embeds it then runs on CUDA and the emulator).
    pub fn build(&self) -> Result<BuiltCodeObjects, BuildError> {
        let Places {
            crate_dir,
            manifest,
            out_dir,
        } = self.settings.prepare(&[
            AMDGPU_ENV,
            AMDGPU_ASM_ENV,
            AMDGPU_TARGET_DIR_ENV,
            super::DEVICE_TOOLCHAIN_ENV,
        ])?;
        let processors = self.effective_processors()?;
        let asm_for =
            self.effective_asm(&processors, std::env::var(AMDGPU_ASM_ENV).ok().as_deref())?;
        if processors.is_empty() {
            let crate_name = package_crate_name(&manifest)?;
            let set_path = write_code_object_set(&out_dir, &crate_name, &[])?;
            self.settings
                .print_outputs([], &code_objects_env_var(&crate_name), &set_path);
            return Ok(BuiltCodeObjects {
                crate_name,
                targets: Vec::new(),
                set_path,
            });
        }
        let say = |message: &str| self.settings.say(message);
        let toolchain = device_toolchain(&say)?;
        let names = processors.join(", ");
        let toolchain_name = toolchain
            .name
            .as_deref()
            .unwrap_or("the outer build's toolchain");
        eprintln!(
            "tessera: building {} for {AMDGPU_TARGET} ({names}) with {toolchain_name} ({})",
            crate_dir.display(),
            toolchain.version
        );
        let tools = LlvmTools::find(&toolchain.sysroot);
        if tools.is_none() {
            say(&format!(
                "no `llc` in {toolchain_name} (its `llvm-tools` component): the amdgpu kernels \
                 keep LLVM's register budget for 1024-thread workgroups, not their own block \
                 size, and `sync_threads` fences at system scope (`rustup component add \
                 llvm-tools` bounds and scopes them)"
            ));
        }
        let started = std::time::Instant::now();
        let build = CrateBuild {
            crate_dir: &crate_dir,
            manifest: &manifest,
            out_dir: &out_dir,
            toolchain: &toolchain,
            extra_rustflags: &self.settings.extra_rustflags,
        };
        // The processors at once, each in a target directory of its own (as the PTX targets):
        // the longest parts of a build, the largest kernel crate and the link's whole-crate LLVM
        // compilation (amdgpu code is linked by LTO), use one core each.
        let target_dir =
            self.settings
                .nested_target_dir(AMDGPU_TARGET_DIR_ENV, "tessera-amdgpu", &out_dir)?;
        let targets = super::build_each_at_once(
            &processors,
            |processor| {
                let asm = asm_for.contains(processor);
                let dir = target_dir.join(processor);
                build.build_code_object(processor, &dir, asm, tools.as_ref())
            },
            || BuildError::CodeObjectNotFound {
                crate_dir: crate_dir.clone(),
                detail: "the thread of a processor's build panicked".to_string(),
            },
        )?;
        let crate_name = targets[0].crate_name.clone();
        say(&format!(
            "built the code objects of {crate_name} for {AMDGPU_TARGET} ({names}) with \
             {toolchain_name} in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
        let files: Vec<(String, PathBuf)> = targets
            .iter()
            .map(|t| (t.processor.clone(), t.path.clone()))
            .collect();
        let set_path = write_code_object_set(&out_dir, &crate_name, &files)?;
        self.settings.print_outputs(
            targets.iter().flat_map(|t| &t.tracked_files),
            &code_objects_env_var(&crate_name),
            &set_path,
        );
        Ok(BuiltCodeObjects {
            crate_name,
            targets,
            set_path,
        })
    }
}

/// The environment variable set for the host crate's rustc: `TESSERA_CODE_OBJECTS_<CRATE>`.
pub fn code_objects_env_var(crate_name: &str) -> String {
    format!("TESSERA_CODE_OBJECTS_{}", crate_name.to_ascii_uppercase())
}

impl CrateBuild<'_> {
    /// Builds the code object for `processor` in `target_dir` and copies it (and its asm, with
    /// `asm`) to `<out_dir>/<crate>/<processor>.{hsaco,s}`; `tools`: the toolchain's `llc` and
    /// `rust-lld`, if it has `llc`.
    fn build_code_object(
        &self,
        processor: &str,
        target_dir: &Path,
        asm: bool,
        tools: Option<&LlvmTools>,
    ) -> Result<BuiltCodeObject, BuildError> {
        let crate_dir = self.crate_dir.to_path_buf();
        let mut rustflags = amdgpu_rustflags(processor, self.extra_rustflags);
        // With the toolchain's `llc`, rustc stops at the crate's final LLVM module, which gets
        // its kernels' workgroup bounds and its barriers' workgroup-scope fences before `llc`
        // and `rust-lld` make the code object (`llvm_tools`); without it, rustc's own code
        // object.
        let emit: &[&str] = match (tools, asm) {
            (Some(_), _) => {
                // Every crate's "object" is LLVM bitcode (`-Clinker-plugin-lto`): rustc runs the
                // fat LTO, writes the module and generates no code (`llc` does, once); cargo
                // still asks for a link, which `--version` turns into rust-lld printing its
                // version (and not linking the bitcode itself), unreported.
                rustflags.push("-Clinker-plugin-lto".to_string());
                &[
                    "--emit=llvm-ir",
                    "-Clink-arg=--version",
                    "-Alinker_messages",
                ]
            }
            (None, true) => &["--emit=asm,link"],
            (None, false) => &["--emit=link"],
        };
        let shown = format!(
            "(cd {} && {} rustc --release --target {AMDGPU_TARGET} -Zbuild-std=core \
             --crate-type cdylib {LTO_CONFIG} --target-dir {} \
             --message-format=json-render-diagnostics -- {}) with rustflags `{}`",
            crate_dir.display(),
            self.toolchain.cargo.display(),
            target_dir.display(),
            emit.join(" "),
            rustflags.join(" ")
        );
        let args = [
            "rustc",
            "--release",
            "--target",
            AMDGPU_TARGET,
            "-Zbuild-std=core",
        ]
        .into_iter()
        .chain(["--crate-type", "cdylib"])
        .chain(LTO_CONFIG.split(' '))
        .map(OsString::from)
        .chain([
            "--manifest-path".into(),
            self.manifest.into(),
            "--target-dir".into(),
            target_dir.into(),
            "--message-format=json-render-diagnostics".into(),
            "--".into(),
        ])
        .chain(emit.iter().map(OsString::from))
        .collect();
        let stdout = NestedCargo {
            toolchain: self.toolchain,
            crate_dir: self.crate_dir,
            args,
            rustflags: &rustflags,
            expand_target: super::toolchain::AMDGPU_EXPAND_TARGET,
            shown,
            log_path: target_dir.join(format!("device-build-{processor}.log")),
        }
        .run()?;
        let artifacts = parse_artifacts(&stdout);
        let not_found = |detail: String| BuildError::CodeObjectNotFound {
            crate_dir: crate_dir.clone(),
            detail,
        };
        let kernel_artifact = kernel_artifact(&artifacts, self.manifest)?.ok_or_else(|| {
            not_found(format!(
                "no lib `compiler-artifact` message for {} among {} artifacts (is it a \
                     library crate?)",
                self.manifest.display(),
                artifacts.len()
            ))
        })?;
        let crate_name = kernel_artifact.crate_name();
        let rustc_elf = || {
            kernel_artifact
                .filenames
                .iter()
                .map(PathBuf::from)
                .find(|file| file.extension().is_some_and(|e| e == "elf"))
                .ok_or_else(|| {
                    not_found(format!(
                        "no `.elf` among the files {:?} (is the target's dylib suffix still \
                         `.elf`?)",
                        kernel_artifact.filenames
                    ))
                })
        };
        // The code object, and the asm `llc` wrote (rustc's is found below).
        let (elf, llc_asm) = match tools {
            Some(tools) => {
                let ir = target_dir
                    .join(AMDGPU_TARGET)
                    .join("release")
                    .join("deps")
                    .join(format!("{crate_name}.ll"));
                if !ir.is_file() {
                    return Err(not_found(format!("no LLVM module {}", ir.display())));
                }
                tools.code_object(&ir, processor, asm)?
            }
            None => (rustc_elf()?, None),
        };
        let bytes = std::fs::read(&elf).map_err(|error| BuildError::Io {
            path: elf.clone(),
            error,
        })?;
        code_object_processor(&bytes)
            .filter(|found| found == processor)
            .ok_or_else(|| {
                not_found(format!(
                    "{} is not a code object for {processor} (found {:?}): the nested build's \
                     rustflags did not apply",
                    elf.display(),
                    code_object_processor(&bytes)
                ))
            })?;
        let dir = self.out_dir.join(&crate_name);
        std::fs::create_dir_all(&dir).map_err(|error| BuildError::Io {
            path: dir.clone(),
            error,
        })?;
        let path = dir.join(format!("{processor}.hsaco"));
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            std::fs::write(&path, &bytes).map_err(|error| BuildError::Io {
                path: path.clone(),
                error,
            })?;
        }
        let asm_path = if asm {
            // `llc`'s, or rustc's beside the linked object, or in `deps/` (cargo uplifts only
            // the link output).
            let asm = [
                llc_asm,
                Some(elf.with_extension("s")),
                elf.parent()
                    .map(|d| d.join("deps").join(format!("{crate_name}.s"))),
            ]
            .into_iter()
            .flatten()
            .find(|path| path.is_file())
            .ok_or_else(|| {
                not_found(format!("no asm `{crate_name}.s` beside {}", elf.display()))
            })?;
            let asm_path = dir.join(format!("{processor}.s"));
            let asm_text = std::fs::read_to_string(&asm).map_err(|error| BuildError::Io {
                path: asm.clone(),
                error,
            })?;
            write_if_changed(&asm_path, &asm_text)?;
            Some(asm_path)
        } else {
            None
        };
        let tracked_files = tracked_sources(
            &artifacts,
            kernel_artifact,
            &self.toolchain.sysroot,
            self.crate_dir,
        );
        Ok(BuiltCodeObject {
            crate_name,
            processor: processor.to_string(),
            path,
            asm_path,
            tracked_files,
        })
    }
}

/// The nested build's profile setting: fat LTO (which the amdgpu target needs anyway), so that
/// cargo builds the kernel crate's dependencies as bitcode only, without machine code.
const LTO_CONFIG: &str = "--config profile.release.lto=\"fat\"";

/// The processor an HSA code object is for (`gfx942`), from the `amdgcn-amd-amdhsa--<processor>`
/// target name its metadata holds; `None` for bytes that are not an AMDGPU ELF.
pub(super) fn code_object_processor(bytes: &[u8]) -> Option<String> {
    // ELF magic, then e_machine (bytes 18-19, little endian) EM_AMDGPU = 0xe0.
    if bytes.len() < 20 || &bytes[..4] != b"\x7fELF" || bytes[18..20] != [0xe0, 0] {
        return None;
    }
    let marker = b"amdgcn-amd-amdhsa--";
    let at = bytes.windows(marker.len()).position(|w| w == marker)? + marker.len();
    let name: String = bytes[at..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .map(|&b| b as char)
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The file [`include_code_objects!`](crate::include_code_objects) includes for the crate
/// `crate_name`: `$OUT_DIR/<crate_name>.code-objects.rs`.
pub fn code_object_set_path(out_dir: &Path, crate_name: &str) -> PathBuf {
    out_dir.join(format!("{crate_name}.code-objects.rs"))
}

/// The text of a set file: a slice expression of `("gfx942", include_bytes!("<path>"))` pairs.
pub(super) fn code_object_set_source(targets: &[(String, PathBuf)]) -> String {
    set_source(
        "include_bytes",
        targets.iter().map(|(p, path)| (p.as_str(), path)),
    )
}

/// Writes the set file of `crate_name` in `out_dir` for these `(processor, code object file)`
/// pairs (none for a build without code objects) and returns its path.
pub fn write_code_object_set(
    out_dir: &Path,
    crate_name: &str,
    targets: &[(String, PathBuf)],
) -> Result<PathBuf, BuildError> {
    let path = code_object_set_path(out_dir, crate_name);
    write_set_file(&path, &code_object_set_source(targets))?;
    Ok(path)
}

/// Embeds the code objects that [`CodeObjectBuild::build`] wrote for the kernel crate named
/// `$crate_name` (e.g. `"tessera_kernels"`): a [`CodeObjectSet`](crate::build::CodeObjectSet),
/// included from `$OUT_DIR/<crate_name>.code-objects.rs`. Usable in a constant:
/// `const AMD: tessera::build::CodeObjectSet = tessera::include_code_objects!("tessera_kernels");`.
#[macro_export]
macro_rules! include_code_objects {
    ($crate_name:literal) => {
        $crate::build::CodeObjectSet::new(include!(concat!(
            env!("OUT_DIR"),
            "/",
            $crate_name,
            ".code-objects.rs"
        )))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_are_llvm_gfx_names() {
        for name in ["gfx942", "gfx90a", "gfx1100", "gfx950", " gfx942 "] {
            assert_eq!(parse_processor(name).unwrap(), name.trim());
        }
        for name in ["sm_90a", "gfx", "GFX942", "gfx94-2", "942", ""] {
            let err = parse_processor(name).unwrap_err();
            assert!(matches!(&err, BuildError::UnknownProcessor { given } if given == name));
            let text = err.to_string();
            assert!(text.contains("is not an AMD processor name"), "{text}");
            assert!(text.contains("gfx942 (MI300)"), "{text}");
        }
        assert_eq!(
            parse_processor_list("gfx942, gfx90a,gfx942").unwrap(),
            ["gfx942", "gfx90a"]
        );
        assert!(parse_processor_list("none").unwrap().is_empty());
        assert!(parse_processor_list("gfx942,sm_80").is_err());
        // The default, and an explicit empty list (a build of nothing).
        assert_eq!(
            CodeObjectBuild::new(".").processors,
            DEFAULT_PROCESSORS.map(String::from)
        );
        let none = CodeObjectBuild::new(".").processors(Vec::<String>::new());
        assert!(parse_processor_list(&none.processors.join(","))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn amd_builds_pin_the_processor_and_keep_each_kernel_its_own_function() {
        assert_eq!(
            amdgpu_rustflags("gfx90a", &["-Cdebuginfo=0".to_string()]),
            [
                "-Ctarget-cpu=gfx90a",
                "-Zmerge-functions=disabled",
                "-Cdebuginfo=0"
            ]
        );
    }

    #[test]
    fn a_code_object_names_its_processor() {
        // A code object rustc linked for gfx942 (`dsl/src/launch/testdata`).
        let bytes = include_bytes!("../launch/testdata/scale_fill.gfx942.hsaco");
        assert_eq!(code_object_processor(bytes).as_deref(), Some("gfx942"));
        // Another machine in the ELF header, or no ELF at all.
        let mut other = bytes.to_vec();
        other[18] = 0x3e; // EM_X86_64
        assert_eq!(code_object_processor(&other), None);
        assert_eq!(code_object_processor(b"not an elf"), None);
    }

    #[test]
    fn the_code_object_is_the_cdylib_artifact_not_the_build_script() {
        // What `cargo rustc --crate-type cdylib` prints for a kernel crate with a build script.
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let message = |kind: &str, name: &str, file: &str| {
            format!(
                "{{\"reason\":\"compiler-artifact\",\"package_id\":\"path+file:///k#0.1.0\",\
                 \"manifest_path\":{:?},\"target\":{{\"kind\":[\"{kind}\"],\"name\":\"{name}\",\
                 \"src_path\":\"/k/src/lib.rs\"}},\"filenames\":[\"{file}\"]}}",
                manifest.display().to_string()
            )
        };
        let stdout = [
            message(
                "custom-build",
                "build-script-build",
                "/t/release/build/k-1/build-script-build",
            ),
            message(
                "cdylib",
                "my-kernels",
                "/t/amdgcn-amd-amdhsa/release/my_kernels.elf",
            ),
        ]
        .join("\n");
        let artifacts = parse_artifacts(&stdout);
        assert_eq!(artifacts.len(), 2);
        let found = kernel_artifact(&artifacts, &manifest).unwrap().unwrap();
        assert_eq!(found.crate_name(), "my_kernels");
        assert_eq!(
            found.filenames,
            ["/t/amdgcn-amd-amdhsa/release/my_kernels.elf"]
        );
    }

    #[test]
    fn the_set_file_embeds_every_code_object() {
        let dir = std::env::temp_dir().join(format!("tessera-code-objects-{}", std::process::id()));
        let files = [
            ("gfx942".to_string(), dir.join("k/gfx942.hsaco")),
            ("gfx90a".to_string(), dir.join("k/gfx90a.hsaco")),
        ];
        let path = write_code_object_set(&dir, "my_kernels", &files).unwrap();
        assert_eq!(path, code_object_set_path(&dir, "my_kernels"));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "&[");
        assert_eq!(
            lines[1],
            format!(
                "    (\"gfx942\", include_bytes!({:?})),",
                files[0].1.display().to_string()
            )
        );
        assert!(lines[2].starts_with("    (\"gfx90a\", include_bytes!("));
        assert_eq!(lines[3], "]");
        // No code object: an empty slice, which `include_code_objects!` embeds as an empty set.
        write_code_object_set(&dir, "none", &[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(code_object_set_path(&dir, "none")).unwrap(),
            "&[\n]"
        );
        assert_eq!(
            code_objects_env_var("my_kernels"),
            "TESSERA_CODE_OBJECTS_MY_KERNELS"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_crate_name_comes_from_the_manifest() {
        let dir = std::env::temp_dir().join(format!("tessera-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"my-kernels\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = \"x\"\n",
        )
        .unwrap();
        assert_eq!(package_crate_name(&manifest).unwrap(), "my_kernels");
        std::fs::write(
            &manifest,
            "[package]\nname = \"my-kernels\"\n[lib]\nname = \"device_code\"\n",
        )
        .unwrap();
        assert_eq!(package_crate_name(&manifest).unwrap(), "device_code");
        std::fs::write(&manifest, "[workspace]\n").unwrap();
        assert!(package_crate_name(&manifest).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
