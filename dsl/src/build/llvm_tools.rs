//! The device toolchain's `llc` and `rust-lld`, which make an amdgpu code object of a kernel
//! crate's final LLVM module after the build helper's edits: each `#[tile_kernel]` kernel's
//! workgroup bound ([`bound_workgroup_sizes`]) and `sync_threads`' fences at workgroup scope
//! ([`scope_block_barriers`]), neither of which rustc can say.

use super::barrier_scope::scope_block_barriers;
use super::error::BuildError;
use super::workgroup_bounds::bound_workgroup_sizes;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The device toolchain's LLVM code generator and linker.
pub(super) struct LlvmTools {
    /// `llc` (the `llvm-tools` component).
    pub llc: PathBuf,
    /// `rust-lld` (every toolchain has it), run as `ld.lld`.
    pub lld: PathBuf,
}

impl LlvmTools {
    /// The tools in `<sysroot>/lib/rustlib/<host>/bin`, if `llc` is there.
    pub(super) fn find(sysroot: &Path) -> Option<LlvmTools> {
        let rustlib = sysroot.join("lib").join("rustlib");
        std::fs::read_dir(&rustlib)
            .ok()?
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .find(|bin| bin.join("llc").is_file() && bin.join("rust-lld").is_file())
            .map(|bin| LlvmTools {
                llc: bin.join("llc"),
                lld: bin.join("rust-lld"),
            })
    }

    /// The code object of the module `ir` (a file of LLVM IR) for `processor`, its marked
    /// kernels bounded and its block barriers scoped: `<dir>/<stem>.bounded.ll` (the patched
    /// module), `.o` (from `llc -O3`,
    /// position-independent, sections per function as rustc's), `.elf` (linked by `rust-lld`
    /// with rustc's arguments for amdgpu: a shared object, unused sections dropped), and with
    /// `asm` the ISA text `.s` (a second `llc`). Returns the `.elf` and the asm.
    pub(super) fn code_object(
        &self,
        ir: &Path,
        processor: &str,
        asm: bool,
    ) -> Result<(PathBuf, Option<PathBuf>), BuildError> {
        let text = std::fs::read_to_string(ir).map_err(|error| BuildError::Io {
            path: ir.to_path_buf(),
            error,
        })?;
        let (bounded_ir, _) =
            bound_workgroup_sizes(&text).map_err(|detail| BuildError::WorkgroupBounds {
                ir: ir.to_path_buf(),
                detail,
            })?;
        let (bounded_ir, _) = scope_block_barriers(&bounded_ir);
        let with = |extension: &str| ir.with_extension(format!("bounded.{extension}"));
        let patched = with("ll");
        super::write_if_changed(&patched, &bounded_ir)?;
        let cpu = format!("-mcpu={processor}");
        let llc = |filetype: &str, out: &Path| {
            let args: Vec<String> = [
                "-O3",
                "-mtriple=amdgcn-amd-amdhsa",
                &cpu,
                "-relocation-model=pic",
                "-function-sections",
                "-data-sections",
                filetype,
                "-o",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([out.display().to_string(), patched.display().to_string()])
            .collect();
            run(&self.llc, &args)
        };
        let object = with("o");
        llc("-filetype=obj", &object)?;
        let elf = with("elf");
        let args: Vec<String> = [
            "-flavor",
            "gnu",
            "-shared",
            "--gc-sections",
            "-O1",
            "--strip-debug",
            "-z",
            "noexecstack",
            "-o",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([elf.display().to_string(), object.display().to_string()])
        .collect();
        run(&self.lld, &args)?;
        let asm_path = if asm {
            let path = with("s");
            llc("-filetype=asm", &path)?;
            Some(path)
        } else {
            None
        };
        Ok((elf, asm_path))
    }
}

/// Runs `program args`; an error with its diagnostics when it fails.
fn run(program: &Path, args: &[String]) -> Result<(), BuildError> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|error| BuildError::Spawn {
            program: program.display().to_string(),
            error,
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(BuildError::CargoFailed {
        status: output.status.to_string(),
        command: format!("{} {}", program.display(), args.join(" ")),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}
