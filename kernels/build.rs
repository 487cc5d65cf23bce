//! Builds this crate's own PTX when the crate is built for the host, so that its tests can embed
//! it (`tessera::include_ptx!("tessera_kernels")`) and run the same kernels on a GPU.
//!
//! * Always: `cargo:rerun-if-env-changed=TESSERA_EXPLAIN`, so that setting it re-expands the
//!   kernels and prints their layout inference.
//! * Built for `nvptx64` (the nested device build that [`tessera::build::PtxBuild`] starts runs
//!   this script again, for the device target): nothing to do, the PTX is what that build makes.
//!   Likewise for `amdgpu` (`scripts/check_amdgcn.sh` builds the code objects).
//! * `TESSERA_NO_PTX=1`: no device build; the embedded PTX set is empty and the tests see
//!   `TESSERA_KERNELS_PTX_SKIPPED`, so they run on the emulator only and fail when the GPU is
//!   demanded (`TESSERA_DEVICE=gpu`).
//! * Otherwise the PTX for `sm_80` and `sm_90a` (`TESSERA_SM` replaces the list) is built, each
//!   target in `<target>/tessera-ptx/<sm>`, the directories `tessera-examples`' build script uses
//!   for the same builds, so whichever runs second finds them up to date. The nested cargos lock
//!   only those directories, never the outer build's, so the builds wait on each other at most.

use tessera::build::{write_ptx_set, PtxBuild};

/// Set to `1` (or anything but `0`/empty) to build the crate without its PTX.
const NO_PTX_ENV: &str = "TESSERA_NO_PTX";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Re-expand the kernels (device and host builds) when TESSERA_EXPLAIN changes.
    tessera::build::track_explain_env();
    let target_arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_default();
    if target_arch == "nvptx64" || target.starts_with("nvptx64") || target_arch == "amdgpu" {
        return;
    }
    println!("cargo:rerun-if-env-changed={NO_PTX_ENV}");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(std::path::PathBuf::from) else {
        eprintln!("error: OUT_DIR is not set (cargo sets it for build scripts)");
        std::process::exit(1);
    };
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
    if let Err(err) = PtxBuild::new(".").build() {
        eprintln!(
            "error: building the tessera-kernels PTX for the tests failed: {err}\n\
             (set {NO_PTX_ENV}=1 to build without it; the tests then run on the emulator only)"
        );
        std::process::exit(1);
    }
}
