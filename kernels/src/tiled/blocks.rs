//! Helpers (`#[tile_fn]`) for kernels that work on blocks of a `[m, n]` tensor of any strides,
//! and for kernels that write several results as the rows of one tensor.

use tessera::tile_fn;

/// The pointers of the block `rows × cols` of the `[m, n]` tensor `x` (any strides), and the
/// mask of those inside it.
#[tile_fn]
pub(crate) fn tensor_block(x: Tensor<_, 2>, rows: _, cols: _) -> (_, _) {
    (
        x + rows.expand_dims(1) * x.stride(0) + cols.expand_dims(0) * x.stride(1),
        (rows.expand_dims(1) < x.size(0)) & (cols.expand_dims(0) < x.size(1)),
    )
}

/// Stores `value` at the elements `offs` of row `r` of `out` (a `[rows, n]` tensor), where
/// `mask`: the kernels with several results write them as the rows of one output.
#[tile_fn]
pub(crate) fn store_row(out: Tensor<_, 2>, r: i32, offs: _, value: _, mask: _) {
    store(out + r * out.stride(0) + offs * out.stride(1), value, mask);
}
