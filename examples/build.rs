//! Builds the kernel crate (`../kernels`) to PTX for nvptx64 and leaves it in `$OUT_DIR` for
//! `tessera::include_ptx!("tessera_kernels")`, so the binary carries its kernels with it.
//! `TESSERA_SM=sm_90` (or `sm_90a`) selects another target than the default `sm_80`.
//!
//! A second build for sm_90 (always sm_90, whatever `TESSERA_SM` says) goes to
//! `$OUT_DIR/sm_90/tessera_kernels.ptx`: `tessera-parity` runs it on devices of compute
//! capability 9.0 or newer, for `stmatrix` and the hardware f8 conversions. The two builds run
//! at the same time, each in its own target directory (`<target>/tessera-ptx/<sm>`), so the
//! second adds little wall time and is rebuilt only when the kernels change.

use std::path::{Path, PathBuf};
use tessera::build::{PtxBuild, Sm, SM_ENV, TARGET_DIR_ENV};

fn fail(message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}

/// Where the nested builds keep their target directories: `<target>/tessera-ptx` for
/// `OUT_DIR = <target>/<profile>/build/<package>-<hash>/out`, as `PtxBuild` picks by default
/// for its own `OUT_DIR` (the sm_90 build writes to a subdirectory of it, from which that
/// default cannot be derived). `None` when `TESSERA_PTX_TARGET_DIR` decides, or the layout is
/// unknown (then `PtxBuild`'s own default applies).
fn nested_target_base(out_dir: &Path) -> Option<PathBuf> {
    if std::env::var_os(TARGET_DIR_ENV).is_some_and(|dir| !dir.is_empty()) {
        return None;
    }
    let build_dir = out_dir.parent()?.parent()?;
    if build_dir.file_name()? != "build" {
        return None;
    }
    Some(build_dir.parent()?.parent()?.join("tessera-ptx"))
}

fn main() {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        fail("OUT_DIR is not set (cargo sets it for build scripts)".to_string());
    };
    // `TESSERA_SM` overrides the SM of every `PtxBuild`, but the second build must stay sm_90:
    // read it here, give both builds explicit SMs and clear it (before any thread starts).
    let default_sm = match std::env::var(SM_ENV) {
        Ok(text) if !text.trim().is_empty() => {
            Sm::parse(&text).unwrap_or_else(|err| fail(err.to_string()))
        }
        _ => Sm::default(),
    };
    std::env::remove_var(SM_ENV);

    let mut sm90 = PtxBuild::new("../kernels")
        .sm(Sm::SM_90)
        .out_dir(out_dir.join("sm_90"))
        // The first build tracks the sources and sets the PTX variable.
        .cargo_directives(false);
    if let Some(base) = nested_target_base(&out_dir) {
        sm90 = sm90.target_dir(base);
    }
    let sm90 = std::thread::spawn(move || sm90.build());

    match PtxBuild::new("../kernels").sm(default_sm).build() {
        Ok(built) => println!("cargo:rustc-env=TESSERA_EXAMPLES_PTX_SM={}", built.sm),
        Err(err) => fail(format!("building the kernels' PTX failed: {err}")),
    }
    match sm90.join() {
        Ok(Ok(_)) => {}
        Ok(Err(err)) => fail(format!("building the kernels' sm_90 PTX failed: {err}")),
        Err(_) => fail("the sm_90 PTX build panicked".to_string()),
    }
}
