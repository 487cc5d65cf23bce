//! Builds the PTX of `tessera-kernels` (`..`) for the host side to embed
//! (`tessera::include_ptx!("tessera_kernels")`, this crate's `PTX`): the kernels' tests and the
//! example binaries run the same kernels on a GPU with it.
//!
//! * `TESSERA_NO_PTX=1`: no device build; the embedded PTX set is empty and `PTX_SKIPPED` says
//!   why, so the kernels' tests run on the emulator only and fail when the GPU is demanded
//!   (`TESSERA_DEVICE=gpu`).
//! * Otherwise the PTX for `sm_80` and `sm_90a` (`TESSERA_SM` replaces the list) is built, each
//!   target in `<target>/tessera-ptx/<sm>` (the nested cargos lock only those directories, never
//!   the outer build's), while the outer cargo compiles `tessera-kernels` for the host.
//! * `TESSERA_AMDGPU=gfx942[,gfx90a…]`: the AMD code objects of `tessera-kernels` for those
//!   processors too (`tessera::build::CodeObjectBuild`, in `<target>/tessera-amdgpu`), this
//!   crate's `CODE_OBJECTS`; none unless asked (every build of the examples would otherwise
//!   compile the kernels a third time).

use tessera::build::{write_ptx_set, CodeObjectBuild, PtxBuild};

/// Set to `1` (or anything but `0`/empty) to build the crate without its PTX.
const NO_PTX_ENV: &str = "TESSERA_NO_PTX";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={NO_PTX_ENV}");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(std::path::PathBuf::from) else {
        eprintln!("error: OUT_DIR is not set (cargo sets it for build scripts)");
        std::process::exit(1);
    };
    // The AMD code objects: `TESSERA_AMDGPU` names the processors (none by default).
    if let Err(err) = CodeObjectBuild::new("..")
        .processors(Vec::<String>::new())
        .build()
    {
        eprintln!("error: building the tessera-kernels code objects failed: {err}");
        std::process::exit(1);
    }
    let no_ptx = std::env::var(NO_PTX_ENV).unwrap_or_default();
    if !no_ptx.trim().is_empty() && no_ptx.trim() != "0" {
        println!(
            "cargo:warning=tessera-kernels: {NO_PTX_ENV}={no_ptx}: the kernels' PTX is not built; \
             the tests run on the emulator only and fail if TESSERA_DEVICE=gpu"
        );
        // An empty set, so that `include_ptx!` compiles and no stale PTX is embedded.
        if let Err(err) = write_ptx_set(&out_dir, "tessera_kernels", &[]) {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
        println!("cargo:rustc-env=TESSERA_KERNELS_PTX_SKIPPED={NO_PTX_ENV}={no_ptx}");
        return;
    }
    if let Err(err) = PtxBuild::new("..").build() {
        eprintln!(
            "error: building the tessera-kernels PTX failed: {err}\n\
             (set {NO_PTX_ENV}=1 to build without it; the kernels' tests then run on the \
             emulator only)"
        );
        std::process::exit(1);
    }
}
