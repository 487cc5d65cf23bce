//! 2-D transpose: `out[j, i] = x[i, j]` of an `m × n` matrix into `out: [n, m]`, tensors whose
//! rows are contiguous (`requires` pins `x.stride(1) == 1` and `out.stride(1) == 1`, so every
//! variant, the unaligned one too, knows it). Each program moves a `BM × BN` tile: the load wants
//! the tile row-major across the threads (vectorized along `n`), the store wants it row-major in
//! the output (vectorized along `m`), so layout inference puts one conversion between them,
//! through shared memory with the optimal swizzle, conflict-free on both sides.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile_kernel;
use tessera_kernels_blocks::tensor_block;
use tessera_kernels_blocks::transpose::transpose_block;

/// `out = xᵀ` for `x: [m, n]`, tiles of `BM × BN`.
#[tile_kernel(
    num_warps = 4,
    BM = 32,
    BN = 32,
    requires = [
        out.size(0) == x.size(1) && out.size(1) == x.size(0),
        x.stride(1) == 1 && out.stride(1) == 1,
    ],
    uses = [transpose_block, tensor_block]
)]
pub fn tile_transpose<const BM: usize, const BN: usize>(x: Tensor<f32, 2>, out: Tensor<f32, 2>) {
    transpose_block::<BM, BN>(x, out, program_id(0), program_id(1));
}

/// One warp per `B × B` tile of `T`s: load and store layouts then share their (single) warp,
/// and the conversion between them is planned as warp shuffles, without shared memory (f16
/// values travel in 32-bit shuffles).
#[tile_kernel(
    T = [f32, f16],
    num_warps = 1,
    B = [8, 16, 32],
    requires = [
        out.size(0) == x.size(1) && out.size(1) == x.size(0),
        x.stride(1) == 1 && out.stride(1) == 1,
    ],
    uses = [transpose_block, tensor_block]
)]
pub fn tile_transpose_warp<T, const B: usize>(x: Tensor<T, 2>, out: Tensor<T, 2>) {
    transpose_block::<B, B>(x, out, program_id(0), program_id(1));
}
