//! Builds the kernel crate (`../kernels`) to PTX for nvptx64 and leaves it in `$OUT_DIR` for
//! `tessera::include_ptx!("tessera_kernels")`, so the binary carries its kernels with it.
//! `TESSERA_SM=sm_90` (or `sm_90a`) selects another target than the default `sm_80`.

fn main() {
    match tessera::build::PtxBuild::new("../kernels").build() {
        Ok(built) => {
            println!("cargo:rustc-env=TESSERA_EXAMPLES_PTX_SM={}", built.sm);
        }
        Err(err) => {
            eprintln!("error: building the kernels' PTX failed: {err}");
            std::process::exit(1);
        }
    }
}
