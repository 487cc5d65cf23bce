//! `cargo:rerun-if-env-changed=TESSERA_EXPLAIN`, so that setting it re-expands the kernels (the
//! host build and the device builds) and prints their layout inference. The kernels' PTX is
//! built by the crate `tessera-kernels-ptx` (`ptx/`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    tessera::build::track_explain_env();
}
