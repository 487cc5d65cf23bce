//! Builds the kernel crate (`../kernels`) to PTX for nvptx64 and leaves it in `$OUT_DIR` for
//! `tessera::include_ptx!("tessera_kernels")`, so the binary carries its kernels with it.
//! `TESSERA_SM=sm_90` (or `sm_90a`) selects another target than the default `sm_80`.
//!
//! A second build for sm_90 (always sm_90, whatever `TESSERA_SM` says) goes to
//! `$OUT_DIR/sm_90/tessera_kernels.ptx`: `tessera-parity` runs it on devices of compute
//! capability 9.0 or newer, for `stmatrix` and the hardware f8 conversions. It has its own
//! target directory (`<target>/tessera-ptx/sm_90`), so it is built once and then only when the
//! kernels change.

use std::path::PathBuf;
use tessera::build::{PtxBuild, Sm, SM_ENV};

fn main() {
    let built = match PtxBuild::new("../kernels").build() {
        Ok(built) => built,
        Err(err) => {
            eprintln!("error: building the kernels' PTX failed: {err}");
            std::process::exit(1);
        }
    };
    println!("cargo:rustc-env=TESSERA_EXAMPLES_PTX_SM={}", built.sm);
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        eprintln!("error: OUT_DIR is not set (cargo sets it for build scripts)");
        std::process::exit(1);
    };
    // `TESSERA_SM` overrides the SM of every `PtxBuild`; this one must stay sm_90. The build
    // script is single-threaded, so changing its own environment here affects nothing else.
    std::env::remove_var(SM_ENV);
    // The sources are tracked (and the PTX env var set) by the build above.
    let mut sm90 = PtxBuild::new("../kernels")
        .sm(Sm::SM_90)
        .out_dir(out_dir.join("sm_90"))
        .cargo_directives(false);
    // Beside the first build's target directory: `<base>/<sm>/nvptx64-nvidia-cuda/release/deps/
    // <crate>-<hash>.s` → `<base>/sm_90` (else the default would be derived from this out_dir).
    let first_target_dir = built.built_ptx_path.ancestors().nth(4);
    if first_target_dir.and_then(|dir| dir.file_name()) == Some(built.sm.name().as_ref()) {
        if let Some(base) = built.built_ptx_path.ancestors().nth(5) {
            sm90 = sm90.target_dir(base);
        }
    }
    let sm90 = sm90.build();
    if let Err(err) = sm90 {
        eprintln!("error: building the kernels' sm_90 PTX failed: {err}");
        std::process::exit(1);
    }
}
