//! Gather along axis 1: `out[i, j] = src[i, index[i, j]]` for `src: [m, n]` f32 and
//! `index: [m, k]` i32 (values in `0..n`) into `out: [m, k]`, tensors of any strides. A program
//! takes `BM` rows; `n ≤ BN` (`requires`), so a row of the source lies in one tile. The rows sit
//! on lanes and warps and the columns on lanes and registers of one warp, so the gathered axis
//! stays inside each warp and the gather is done with warp shuffles only: no shared memory.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile_kernel;
use tessera_kernels_blocks::tensor_block;

/// `out[i, j] = src[i, index[i, j]]`, `BM` rows per program, `BK` index columns per program
/// (grid `(⌈m / BM⌉, ⌈k / BK⌉)`).
#[tile_kernel(
    num_warps = 4,
    BM = 32,
    BN = 32,
    BK = 32,
    requires = [
        src.size(1) <= BN,
        index.size(0) == src.size(0),
        out.size(0) == index.size(0) && out.size(1) == index.size(1),
    ],
    uses = [tensor_block]
)]
pub fn tile_gather_cols<const BM: usize, const BN: usize, const BK: usize>(
    src: Tensor<f32, 2>,
    index: Tensor<i32, 2>,
    out: Tensor<f32, 2>,
) {
    let rows = program_id(0) * BM + arange(0, BM);
    let picks = program_id(1) * BK + arange(0, BK);
    let (table_ptrs, table_mask) = tensor_block(src, rows, arange(0, BN));
    let (index_ptrs, pick_mask) = tensor_block(index, rows, picks);
    let table = load(table_ptrs, table_mask, 0.0);
    let which = load(index_ptrs, pick_mask, 0);
    let (out_ptrs, _) = tensor_block(out, rows, picks);
    store(out_ptrs, gather(table, which, 1), pick_mask);
}
