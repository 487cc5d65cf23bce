//! Helpers (`#[tile_fn]`) for kernels that work on blocks of a matrix: a row-major one given by
//! its pointer and row stride, or a `[m, n]` tensor of any strides.

use tessera::tile_fn;

/// The offsets of the block `rows × cols` of a row-major `m × n` matrix with row stride
/// `stride`, and the mask of those inside the matrix.
#[tile_fn]
pub(crate) fn block_offsets(rows: _, cols: _, m: i32, n: i32, stride: i32) -> (_, _) {
    (
        rows.expand_dims(1) * stride + cols.expand_dims(0),
        (rows.expand_dims(1) < m) & (cols.expand_dims(0) < n),
    )
}

/// The pointers of the block `rows × cols` of the `[m, n]` tensor `x` (any strides), and the
/// mask of those inside it.
#[tile_fn]
pub(crate) fn tensor_block(x: Tensor<_, 2>, rows: _, cols: _) -> (_, _) {
    (
        x + rows.expand_dims(1) * x.stride(0) + cols.expand_dims(0) * x.stride(1),
        (rows.expand_dims(1) < x.size(0)) & (cols.expand_dims(0) < x.size(1)),
    )
}
