//! The helpers (`#[tile_fn]`) and kernel-stamping macros that several families of kernels
//! share, so that no family depends on another (changing a kernel rebuilds its own family, not
//! the families that borrow from it). Here: blocks of a `[m, n]` tensor of any strides, one
//! block of a 1-D tensor per program, results written as the rows of one tensor; [`matmul`]:
//! the grouped program order, the K loops and `grouped_matmul!`; [`rows`]: the softmax and
//! LayerNorm of a row and `softmax_kernel!`; [`transpose`]: a block stored transposed. They are
//! `pub`: kernels of any crate use them (`use tessera_kernels::tiled::blocks::load_vector;`,
//! listed in the kernel's `uses` with the helpers they call). This crate has no kernels.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]

use tessera::tile_fn;

pub mod matmul;
pub mod rows;
pub mod transpose;

/// The pointers of the block `rows × cols` of the `[m, n]` tensor `x` (any strides), and the
/// mask of those inside it.
#[tile_fn]
pub fn tensor_block(x: Tensor<_, 2>, rows: _, cols: _) -> (_, _) {
    (
        x + rows.expand_dims(1) * x.stride(0) + cols.expand_dims(0) * x.stride(1),
        (rows.expand_dims(1) < x.size(0)) & (cols.expand_dims(0) < x.size(1)),
    )
}

/// Stores `value` at the elements `offs` of row `r` of `out` (a `[rows, n]` tensor), where
/// `mask`: the kernels with several results write them as the rows of one output.
#[tile_fn]
pub fn store_row(out: Tensor<_, 2>, r: i32, offs: _, value: _, mask: _) {
    store(out + r * out.stride(0) + offs * out.stride(1), value, mask);
}

/// Program `program_id(0)`'s block of `BLOCK` elements of the 1-D tensor `x`: their offsets and
/// the mask of those inside `x`.
#[tile_fn]
pub fn vector_block<const BLOCK: usize>(x: Tensor<_, 1>) -> (_, _) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    (offs, offs < x.size(0))
}

/// The pointers of the elements `offs` of the 1-D tensor `x`.
#[tile_fn]
pub fn elements(x: Tensor<_, 1>, offs: _) -> _ {
    x + offs * x.stride(0)
}

/// [`vector_block`] of `x` and the values there (`other` past the end): the offsets, the mask
/// and the loaded tile.
#[tile_fn]
pub fn load_vector<const BLOCK: usize>(x: Tensor<_, 1>, other: _) -> (_, _, _) {
    let (offs, mask) = vector_block::<BLOCK>(x);
    (offs, mask, load(elements(x, offs), mask, other))
}
