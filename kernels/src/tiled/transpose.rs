//! 2-D transpose: `out[j, i] = x[i, j]` of an `m × n` f32 matrix (row-major, leading dimensions
//! `n` and `m`). Each program moves a `BM × BN` tile: the load wants the tile row-major across
//! the threads (vectorized along `n`), the store wants it row-major in the output (vectorized
//! along `m`), so layout inference puts one conversion between them, through shared memory with
//! the optimal swizzle, conflict-free on both sides.

use tessera::{tile_kernel, Ptr};

/// `out = xᵀ` for `x: [m, n]`, tiles of `BM × BN`.
#[tile_kernel(num_warps = 4, BM = 32, BN = 32)]
pub fn tile_transpose<const BM: usize, const BN: usize>(
    x: Ptr<f32>,
    out: Ptr<f32>,
    m: i32,
    n: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let load_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    let tile = load(
        x + rm.expand_dims(1) * n + rn.expand_dims(0),
        load_mask,
        0.0,
    );
    let store_mask = (rn.expand_dims(1) < n) & (rm.expand_dims(0) < m);
    store(
        out + rn.expand_dims(1) * m + rm.expand_dims(0),
        tile.trans(),
        store_mask,
    );
}

/// One warp per `B × B` tile of `T`s: load and store layouts then share their (single) warp,
/// and the conversion between them is planned as warp shuffles, without shared memory (f16
/// values travel in 32-bit shuffles).
#[tile_kernel(T = [f32, f16], num_warps = 1, B = [8, 16, 32])]
pub fn tile_transpose_warp<T, const B: usize>(x: Ptr<T>, out: Ptr<T>, m: i32, n: i32) {
    let rm = program_id(0) * B + arange(0, B);
    let rn = program_id(1) * B + arange(0, B);
    let load_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    let tile = load(
        x + rm.expand_dims(1) * n + rn.expand_dims(0),
        load_mask,
        0.0,
    );
    let store_mask = (rn.expand_dims(1) < n) & (rm.expand_dims(0) < m);
    store(
        out + rn.expand_dims(1) * m + rm.expand_dims(0),
        tile.trans(),
        store_mask,
    );
}
