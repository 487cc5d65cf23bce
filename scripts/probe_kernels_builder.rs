//! `probe-kernels-builder KERNEL_CRATE OUT_DIR SM`: builds the kernel crate's PTX for SM with
//! `tessera::build::PtxBuild` and prints the PTX file's path (scripts/probe_kernels_gpu.sh runs it).

use tessera::build::{BuildError, PtxBuild, Sm};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kernels, out, sm] = args.as_slice() else {
        eprintln!("usage: probe-kernels-builder KERNEL_CRATE OUT_DIR SM");
        std::process::exit(2);
    };
    let built = Sm::parse(sm).map_err(BuildError::from).and_then(|sm| {
        PtxBuild::new(kernels)
            .sm(sm)
            .out_dir(out)
            .target_dir(std::path::Path::new(kernels).join("target-ptx"))
            .cargo_directives(false)
            .build()
    });
    match built {
        Ok(set) => {
            for target in &set.targets {
                println!("{}", target.ptx_path.display());
            }
        }
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
    }
}
