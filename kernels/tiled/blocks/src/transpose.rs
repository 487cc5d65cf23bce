//! The block of the transposes: a `BM × BN` block of `x` stored transposed into `out`.

use tessera::tile_fn;

/// `out[rn, rm] = x[rm, rn]` for block `(tile_m, tile_n)` (rows `rm`, columns `rn`: `BM × BN`)
/// of `x: [m, n]` and `out: [n, m]`.
#[tile_fn]
pub fn transpose_block<const BM: usize, const BN: usize>(
    x: Tensor<_, 2>,
    out: Tensor<_, 2>,
    tile_m: i32,
    tile_n: i32,
) {
    let rm = tile_m * BM + arange(0, BM);
    let rn = tile_n * BN + arange(0, BN);
    let (ptrs, mask) = tensor_block(x, rm, rn);
    let tile = load(ptrs, mask, 0.0);
    let (t_ptrs, t_mask) = tensor_block(out, rn, rm);
    store(t_ptrs, tile.trans(), t_mask);
}
