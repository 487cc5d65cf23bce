//! Elementwise tile kernels.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{tile_kernel, Ptr};

/// `out[i] = a[i] + b[i]` for `i < n`, `BLOCK` elements per program.
#[tile_kernel(num_warps = 4, BLOCK = [1024])]
pub fn tile_vec_add<const BLOCK: usize>(a: Ptr<f32>, b: Ptr<f32>, out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + offs, mask, 0.0);
    let y = load(b + offs, mask, 0.0);
    store(out + offs, x + y, mask);
}

/// `out[i] = alpha · x[i] + y[i]` for `i < n` on `T` elements, computed in f32 and rounded to
/// `T`: one kernel for f16, bf16 and f32, at 4 or 8 warps, specialised by the launcher from the
/// arguments' element type and `Consts::num_warps`.
#[tile_kernel(T = [f16, bf16, f32], num_warps = [4, 8], BLOCK = [1024])]
pub fn tile_axpy<T, const BLOCK: usize>(x: Ptr<T>, y: Ptr<T>, out: Ptr<T>, alpha: f32, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let xs = load(x + offs, mask, 0.0).to::<f32>();
    let ys = load(y + offs, mask, 0.0).to::<f32>();
    store(out + offs, (xs * alpha + ys).to::<T>(), mask);
}
