//! Sets `cfg(tessera_device)` when the crate is built for a GPU (`nvptx64` or `amdgpu`): the
//! bodies of [`device`](src/device/mod.rs) functions are GPU instructions there and emulator
//! calls otherwise (`cfg(not(tessera_device))`). On amdgpu it also sets `cfg(tessera_cdna2)`
//! when the processor (`-Ctarget-cpu`) is gfx908 or gfx90a, whose i8 `mfma`s are the K = 4 ones,
//! and `cfg(tessera_ocp_fp8)` when it is gfx950, whose f8 `mfma`s read the OCP encodings
//! (`src/device/mfma.rs`); rustc has no `target_feature` cfg for amdgpu to tell them apart.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tessera_device)");
    println!("cargo::rustc-check-cfg=cfg(tessera_cdna2)");
    println!("cargo::rustc-check-cfg=cfg(tessera_ocp_fp8)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "nvptx64" || arch == "amdgpu" {
        println!("cargo::rustc-cfg=tessera_device");
    }
    let cpu = target_cpu();
    if arch == "amdgpu" && matches!(cpu.as_deref(), Some("gfx908" | "gfx90a")) {
        println!("cargo::rustc-cfg=tessera_cdna2");
    }
    if arch == "amdgpu" && cpu.as_deref() == Some("gfx950") {
        println!("cargo::rustc-cfg=tessera_ocp_fp8");
    }
    println!("cargo::rerun-if-changed=build.rs");
}

/// The last `-Ctarget-cpu=…` (or `-C target-cpu=…`) of the target's rustflags.
fn target_cpu() -> Option<String> {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\u{1f}').collect();
    let mut cpu = None;
    for (i, flag) in flags.iter().enumerate() {
        let option = match flag.strip_prefix("-C") {
            Some("") => flags.get(i + 1).copied(),
            Some(rest) => Some(rest),
            None => None,
        };
        if let Some(value) = option.and_then(|o| o.strip_prefix("target-cpu=")) {
            cpu = Some(value.to_string());
        }
    }
    cpu
}
