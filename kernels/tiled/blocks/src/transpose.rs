//! The block of the transposes: a `BM × BN` block of `x` stored transposed into `out`.

use tessera::tile_fn;

/// `out[rn, rm] = x[rm, rn]` for `x: [m, n]` and `out: [n, m]`.
#[tile_fn]
pub fn transpose_block(x: Tensor<_, 2>, out: Tensor<_, 2>, rm: _, rn: _) {
    let (ptrs, mask) = tensor_block(x, rm, rn);
    let tile = load(ptrs, mask, 0.0);
    let (t_ptrs, t_mask) = tensor_block(out, rn, rm);
    store(t_ptrs, tile.trans(), t_mask);
}
