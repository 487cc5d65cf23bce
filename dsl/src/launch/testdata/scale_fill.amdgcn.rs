// The source of `scale_fill.gfx942.hsaco`, the HSA code object the launcher's code-object tests
// read (kernel names, parameter sizes, target). Built as the `src/lib.rs` of a `cdylib` crate
// (`panic = "abort"`) with the repository's nightly:
//
//     RUSTFLAGS="-C target-cpu=gfx942" cargo +nightly build --release -Zbuild-std=core \
//         --target amdgcn-amd-amdhsa
//
// which links `target/amdgcn-amd-amdhsa/release/<crate>.elf`. No AMD GPU has run it.
#![no_std]
#![feature(abi_gpu_kernel)]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! { loop {} }
/// Writes `x[0] * scale` to `out[0]` when `n > 0`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn scale(x: *const f32, out: *mut f32, n: u32, scale: f32) {
    if n > 0 { *out = *x * scale; }
}
/// Writes `value` to `out[0]`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn fill(out: *mut u64, value: u64) {
    *out = value;
}
