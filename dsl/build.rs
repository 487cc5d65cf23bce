//! Sets `cfg(tessera_device)` when the crate is built for a GPU (`nvptx64` or `amdgpu`): the
//! bodies of [`device`](src/device/mod.rs) functions are GPU instructions there and emulator
//! calls otherwise (`cfg(not(tessera_device))`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tessera_device)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "nvptx64" || arch == "amdgpu" {
        println!("cargo::rustc-cfg=tessera_device");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
