//! 2-D transpose: `out[j, i] = x[i, j]` of an `m × n` f32 matrix (row-major, leading dimensions
//! `n` and `m`). Each program moves a `BM × BN` tile: the load wants the tile row-major across
//! the threads (vectorized along `n`), the store wants it row-major in the output (vectorized
//! along `m`), so layout inference puts one conversion between them, through shared memory with
//! the optimal swizzle, conflict-free on both sides.

use super::blocks::block_offsets;
use tessera::{tile_fn, tile_kernel, Ptr};

/// `out[rn, rm] = x[rm, rn]` for `x: [m, n]` and `out: [n, m]`, both row-major.
#[tile_fn]
fn transpose_block(x: Ptr<_>, out: Ptr<_>, rm: _, rn: _, m: i32, n: i32) {
    let (offs, mask) = block_offsets(rm, rn, m, n, n);
    let tile = load(x + offs, mask, 0.0);
    let (t_offs, t_mask) = block_offsets(rn, rm, n, m, m);
    store(out + t_offs, tile.trans(), t_mask);
}

/// `out = xᵀ` for `x: [m, n]`, tiles of `BM × BN`.
#[tile_kernel(num_warps = 4, BM = 32, BN = 32, uses = [transpose_block, block_offsets])]
pub fn tile_transpose<const BM: usize, const BN: usize>(
    x: Ptr<f32>,
    out: Ptr<f32>,
    m: i32,
    n: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    transpose_block(x, out, rm, rn, m, n);
}

/// One warp per `B × B` tile of `T`s: load and store layouts then share their (single) warp,
/// and the conversion between them is planned as warp shuffles, without shared memory (f16
/// values travel in 32-bit shuffles).
#[tile_kernel(
    T = [f32, f16],
    num_warps = 1,
    B = [8, 16, 32],
    uses = [transpose_block, block_offsets]
)]
pub fn tile_transpose_warp<T, const B: usize>(x: Ptr<T>, out: Ptr<T>, m: i32, n: i32) {
    let rm = program_id(0) * B + arange(0, B);
    let rn = program_id(1) * B + arange(0, B);
    transpose_block(x, out, rm, rn, m, n);
}
