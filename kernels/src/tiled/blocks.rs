//! Helpers (`#[tile_fn]`) for kernels that work on blocks of a row-major matrix.

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
