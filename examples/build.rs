//! Builds the kernel crate (`../kernels`) to PTX for nvptx64, for `sm_80` and `sm_90a` (the
//! default targets of `tessera::build::PtxBuild`; `TESSERA_SM=sm_80,sm_90` or any other list
//! replaces them), and leaves the set in `$OUT_DIR` for `tessera::include_ptx!("tessera_kernels")`,
//! so the binary carries its kernels with it and loads the best one for the GPU it runs on.
//!
//! The targets build at the same time, each in its own target directory
//! (`<target>/tessera-ptx/<sm>`, shared with `tessera-kernels`' build script and
//! `scripts/test`), so each is rebuilt only when the kernels change.

use tessera::build::PtxBuild;

fn main() {
    if let Err(err) = PtxBuild::new("../kernels").build() {
        eprintln!("error: building the kernels' PTX failed: {err}");
        std::process::exit(1);
    }
}
