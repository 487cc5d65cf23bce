// Builds my-kernels to PTX (sm_80 and sm_90a) with the pinned nightly, for include_ptx!.
fn main() {
    if let Err(err) = tessera::build::PtxBuild::new("my-kernels").build() {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}
