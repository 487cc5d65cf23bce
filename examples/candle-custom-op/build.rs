//! Builds the kernel crate (`../../kernels`) to PTX for nvptx64 (for `sm_80` and `sm_90a`, the
//! default targets of `tessera::build::PtxBuild`; `TESSERA_SM` replaces the list) and leaves the
//! set in `$OUT_DIR` for `tessera::include_ptx!("tessera_kernels")`, so the binary carries its
//! kernels with it. `scripts/build_candle_example.sh` sets `TESSERA_SM=sm_90a`: Candle's own
//! kernels are built for that target only.

use tessera::build::PtxBuild;

fn main() {
    if let Err(err) = PtxBuild::new("../../kernels").build() {
        eprintln!("error: building the kernels' PTX failed: {err}");
        std::process::exit(1);
    }
}
