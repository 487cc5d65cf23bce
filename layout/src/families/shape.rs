//! Fitting a CTA tile to a tensor shape, as Triton does (`LayoutUtils.cpp`,
//! `LinearLayoutConversions.cpp`):
//!
//! - [`ensure_layout_not_smaller_than`]: a tensor larger than the tile is covered by repeating
//!   the tile along the first input dimension (`register`, or `offset` for memory): the layout
//!   is multiplied by `identity1D(shape[d] / size[d], register, dim d)`, output dimensions taken
//!   in the layout's order (minor to major).
//! - [`ensure_layout_not_larger_than`]: a tensor smaller than the tile is covered several times:
//!   the bases with the largest coordinates in that dimension are set to zero (they become
//!   broadcast bits), largest first.
//! - [`combine_cta_with_shape`]: both, then the (trivial, one-CTA) CGA and the standard order
//!   `dim0, dim1, …` of the outputs.

use super::params::{bad, dim, prefix};
use crate::algebra::with_in_dims_of;
use crate::error::incompatible;
use crate::{log2_exact, Label, LayoutError, LinearLayout, MAX_BASES, MAX_DIMS};

/// Every entry of the tensor shape is a power of two, and there are at most [`MAX_DIMS`].
pub const fn check_shape(shape: &[u32]) -> Result<(), LayoutError> {
    if shape.is_empty() || shape.len() > MAX_DIMS {
        return Err(bad(
            "tensor",
            "shape.len()",
            None,
            shape.len() as u32,
            "but a tensor has 1 to 6 dimensions",
        ));
    }
    super::params::check_pow2_list("tensor", "shape", shape)
}

/// How a one-dimensional factor maps its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Map1d {
    /// `x ↦ x` (Triton `identity1D`).
    Identity,
    /// `x ↦ 0` (Triton `zeros1D`): the input is broadcast.
    Zeros,
}

/// `layout × map1D(size, in_dim, out_dim)`; `size == 0` multiplies by the empty layout
/// (Triton's `identity1D(0, …)`, which arises from integer division of sizes).
pub const fn times_1d(
    layout: &LinearLayout,
    map: Map1d,
    size: u32,
    in_dim: Label,
    out_dim: Label,
) -> Result<LinearLayout, LayoutError> {
    let factor = match (size, map) {
        (0, _) => LinearLayout::empty(),
        (_, Map1d::Identity) => tri!(LinearLayout::identity_1d(size, in_dim, out_dim)),
        (_, Map1d::Zeros) => tri!(LinearLayout::zeros_1d(size, in_dim, out_dim)),
    };
    layout.product(&factor)
}

/// `layout × identity1D(size, in_dim, out_dim)` (Triton `layout *= identity1D(…)`).
pub const fn times_identity(
    layout: &LinearLayout,
    size: u32,
    in_dim: Label,
    out_dim: Label,
) -> Result<LinearLayout, LayoutError> {
    times_1d(layout, Map1d::Identity, size, in_dim, out_dim)
}

/// `layout` with `log2(count)` more bases of `in_dim` on its two outputs: `step·1, step·2,
/// step·4, …` below `step·count` (`count` a power of two; 1 adds none).
pub const fn with_pow2_bases(
    layout: LinearLayout,
    in_dim: Label,
    count: u32,
    step: [u32; 2],
) -> Result<LinearLayout, LayoutError> {
    let mut layout = layout;
    let mut j = 1;
    while j < count {
        layout = tri!(layout.with_basis(in_dim, &[step[0] * j, step[1] * j]));
        j *= 2;
    }
    Ok(layout)
}

/// `[dim0, dim1, …, dim(rank-1)]` (Triton `standardOutDimNames`).
pub const fn standard_dims(rank: usize) -> [Label; MAX_DIMS] {
    let mut out = [Label::Dim(0); MAX_DIMS];
    let mut d = 0;
    while d < rank && d < MAX_DIMS {
        out[d] = dim(d);
        d += 1;
    }
    out
}

/// `layout` with its outputs in the standard order `dim0, …, dim(rank-1)`.
pub const fn to_standard_order(layout: &LinearLayout) -> Result<LinearLayout, LayoutError> {
    let dims = standard_dims(layout.num_out_dims());
    layout.transpose_outs(dims.split_at(layout.num_out_dims()).0)
}

/// The identity from `in_dim` onto a tile of `shape`, its bits going to the dimensions in
/// `order` (most minor first): `∏ᵢ identity1D(shape[order[i]], in_dim, dim order[i])` (Triton
/// `identityStandardND`). The outputs come in `order`'s order.
pub const fn identity_standard_nd(
    in_dim: Label,
    shape: &[u32],
    order: &[u32],
) -> Result<LinearLayout, LayoutError> {
    let mut result = LinearLayout::empty();
    let mut i = 0;
    while i < order.len() {
        let d = order[i] as usize;
        result = tri!(times_identity(&result, shape[d], in_dim, dim(d)));
        i += 1;
    }
    Ok(result)
}

/// Triton `getMatrixOrder(rank, rowMajor)`: `[rank-1, …, 0]`, with the two minor entries
/// swapped when not row-major.
pub const fn matrix_order(rank: usize, row_major: bool) -> [u32; MAX_DIMS] {
    let mut order = [0u32; MAX_DIMS];
    let mut i = 0;
    while i < rank {
        order[i] = (rank - 1 - i) as u32;
        i += 1;
    }
    if !row_major && rank >= 2 {
        order.swap(0, 1);
    }
    order
}

/// Triton `getOrderForDotOperand(opIdx, rank, kContig)`: operand A is `[…, m, k]`, operand B
/// `[…, k, n]`; with `k_contig` the K dimension is the most minor.
pub const fn dot_operand_order(op_idx: u32, rank: usize, k_contig: bool) -> [u32; MAX_DIMS] {
    matrix_order(rank, (op_idx != 0) != k_contig)
}

/// The size of `layout`'s output `dimK` requested by `shape` (`shape[K]`).
const fn requested(layout: &LinearLayout, o: usize, shape: &[u32]) -> Result<u32, LayoutError> {
    match layout.out_label(o) {
        Label::Dim(k) if (k as usize) < shape.len() => Ok(shape[k as usize]),
        label => Err(LayoutError::UnknownDim { dim: label }),
    }
}

/// For each output `dimK` (in the layout's order), repeat the layout along its first input
/// dimension until it covers `shape[K]` (Triton `ensureLayoutNotSmallerThan`).
pub const fn ensure_layout_not_smaller_than(
    layout: &LinearLayout,
    shape: &[u32],
) -> Result<LinearLayout, LayoutError> {
    if layout.num_in_dims() == 0 {
        return Err(incompatible(
            "ensure_layout_not_smaller_than: the layout has no input dimension",
        ));
    }
    let k_dim = layout.in_label(0);
    let mut result = *layout;
    let mut o = 0;
    while o < layout.num_out_dims() {
        let desired = tri!(requested(layout, o, shape));
        let actual = 1u32 << layout.out_bits_at(o);
        if desired > actual {
            result = tri!(times_identity(
                &result,
                desired / actual,
                k_dim,
                layout.out_label(o)
            ));
        }
        o += 1;
    }
    Ok(result)
}

/// For each output `dimK` larger than `shape[K]`, set to zero the bases with the largest
/// coordinates there (largest first, input dimensions in order on ties) until it fits (Triton
/// `ensureLayoutNotLargerThan`). With `broadcast_registers == false`, register bases are removed
/// instead of zeroed. The output sizes are then those the bases reach (Triton infers them).
pub const fn ensure_layout_not_larger_than(
    layout: &LinearLayout,
    shape: &[u32],
    broadcast_registers: bool,
) -> Result<LinearLayout, LayoutError> {
    let num_out = layout.num_out_dims();
    let num_in = layout.num_in_dims();
    let mut coords = basis_coords(layout);
    let register = layout.in_index(Label::Register);
    // dropped[i] bit k: basis k of input i is removed (only register bases are).
    let mut dropped = [0u64; MAX_DIMS];
    let mut o = 0;
    while o < num_out {
        let desired = tri!(requested(layout, o, shape));
        let mut actual = 1u32 << layout.out_bits_at(o);
        if actual > desired {
            // Repeatedly take the largest remaining coordinate (first in input order on ties).
            let mut taken = [0u64; MAX_DIMS];
            while actual > desired {
                let mut best_value = 0u32;
                let mut best_i = 0;
                let mut best_k = 0;
                let mut i = 0;
                while i < num_in {
                    let mut k = 0;
                    while k < layout.in_bits_at(i) as usize {
                        let v = coords[i][k][o];
                        if v > best_value && taken[i] & (1 << k) == 0 {
                            best_value = v;
                            best_i = i;
                            best_k = k;
                        }
                        k += 1;
                    }
                    i += 1;
                }
                if best_value == 0 {
                    break; // nothing left to zero; the sizes below tell the caller
                }
                if log2_exact(best_value).is_none() {
                    return Err(incompatible(
                        "ensure_layout_not_larger_than: a basis coordinate is not a power of two",
                    ));
                }
                taken[best_i] |= 1 << best_k;
                let is_register = match register {
                    Some(r) => r == best_i,
                    None => false,
                };
                if !broadcast_registers && is_register {
                    dropped[best_i] |= 1 << best_k;
                } else {
                    coords[best_i][best_k][o] = 0;
                }
                actual >>= 1;
            }
        }
        o += 1;
    }
    // Output sizes inferred from the bases, as Triton's constructor does.
    let mut result = LinearLayout::empty();
    o = 0;
    while o < num_out {
        let mut size = 1u32;
        let mut i = 0;
        while i < num_in {
            let mut k = 0;
            while k < layout.in_bits_at(i) as usize {
                let c = coords[i][k][o];
                if dropped[i] & (1 << k) == 0 && c >= size {
                    size = (c + 1).next_power_of_two();
                }
                k += 1;
            }
            i += 1;
        }
        result = tri!(result.with_out_dim(layout.out_label(o), size));
        o += 1;
    }
    with_inputs_at(result, layout, &coords, &dropped)
}

/// `coords[i][k][o]`: the coordinate in output `o` of basis `k` of input `i` of `layout`.
type BasisCoords = [[[u32; MAX_DIMS]; MAX_BASES]; MAX_DIMS];

/// The coordinates of every basis of `layout` (see [`BasisCoords`]).
const fn basis_coords(layout: &LinearLayout) -> BasisCoords {
    let mut coords = [[[0u32; MAX_DIMS]; MAX_BASES]; MAX_DIMS];
    let mut i = 0;
    while i < layout.num_in_dims() {
        let mut k = 0;
        while k < layout.in_bits_at(i) as usize {
            coords[i][k] = layout.unpack(layout.packed_basis(i, k));
            k += 1;
        }
        i += 1;
    }
    coords
}

/// `outputs` (a layout with only its output dimensions) given the input dimensions of `layout`,
/// basis `k` of input `i` at `coords[i][k]`, leaving out the bases with bit `k` of `dropped[i]`
/// set.
const fn with_inputs_at(
    outputs: LinearLayout,
    layout: &LinearLayout,
    coords: &BasisCoords,
    dropped: &[u64; MAX_DIMS],
) -> Result<LinearLayout, LayoutError> {
    let mut result = tri!(with_in_dims_of(outputs, layout));
    let num_out = result.num_out_dims();
    let mut i = 0;
    while i < layout.num_in_dims() {
        let mut k = 0;
        while k < layout.in_bits_at(i) as usize {
            if dropped[i] & (1 << k) == 0 {
                let packed = result.pack(prefix(&coords[i][k], num_out));
                tri!(result.push_packed_basis(i, packed));
            }
            k += 1;
        }
        i += 1;
    }
    Ok(result)
}

/// Triton `combineCtaCgaWithShape` for a CGA of one CTA: fit the CTA layout to `shape` (grow,
/// then shrink, each in the layout's output order), add the `block` input dimension (size 1),
/// and put the outputs in the order `dim0, dim1, …`. The CTA layout's outputs must be the
/// tensor's dimensions, in any order.
pub const fn combine_cta_with_shape(
    cta: &LinearLayout,
    shape: &[u32],
) -> Result<LinearLayout, LayoutError> {
    tri!(check_shape(shape));
    if cta.num_out_dims() != shape.len() {
        return Err(incompatible(
            "combine_cta_with_shape: the CTA layout's outputs are not the tensor's dimensions",
        ));
    }
    let grown = tri!(ensure_layout_not_smaller_than(cta, shape));
    let mut fitted = tri!(ensure_layout_not_larger_than(&grown, shape, true));
    if fitted.in_index(Label::Block).is_none() {
        fitted = tri!(fitted.with_in_dim(Label::Block));
    }
    let result = tri!(to_standard_order(&fitted));
    if !has_standard_outputs(&result, shape) {
        return Err(incompatible("combine_cta_with_shape: the layout does not fit the tensor shape (Triton asserts here)"));
    }
    Ok(result)
}

/// Whether the outputs of `layout` are `dim0, dim1, …` in that order, with the sizes of `shape`.
pub const fn has_standard_outputs(layout: &LinearLayout, shape: &[u32]) -> bool {
    if layout.num_out_dims() != shape.len() {
        return false;
    }
    let mut d = 0;
    while d < shape.len() {
        if !layout.out_label(d).same(dim(d)) || (1u32 << layout.out_bits_at(d)) != shape[d] {
            return false;
        }
        d += 1;
    }
    true
}

/// Triton `transposeLinearLayout(layout, order)`: output `i` of the result takes the
/// coordinates of output `order[i]` (names stay `dim0, dim1, …`; sizes follow the coordinates).
pub const fn permute_out_coords(
    layout: &LinearLayout,
    order: &[u32],
) -> Result<LinearLayout, LayoutError> {
    let n = layout.num_out_dims();
    if order.len() != n {
        return Err(incompatible(
            "permute_out_coords: the order must list every output dimension",
        ));
    }
    let mut result = LinearLayout::empty();
    let mut o = 0;
    while o < n {
        if order[o] as usize >= n {
            return Err(incompatible(
                "permute_out_coords: the order names a missing output dimension",
            ));
        }
        result = tri!(result.with_out_dim(
            layout.out_label(o),
            1 << layout.out_bits_at(order[o] as usize)
        ));
        o += 1;
    }
    let mut coords = basis_coords(layout);
    let mut i = 0;
    while i < layout.num_in_dims() {
        let mut k = 0;
        while k < layout.in_bits_at(i) as usize {
            let c = coords[i][k];
            let mut o = 0;
            while o < n {
                coords[i][k][o] = c[order[o] as usize];
                o += 1;
            }
            k += 1;
        }
        i += 1;
    }
    with_inputs_at(result, layout, &coords, &[0; MAX_DIMS])
}

/// Triton `reshapeLayout(layout, shape)`: the outputs reshaped row-major (last dimension most
/// minor) to `dim0, …` of sizes `shape`.
pub const fn reshape_row_major(
    layout: &LinearLayout,
    shape: &[u32],
) -> Result<LinearLayout, LayoutError> {
    let n = layout.num_out_dims();
    let mut reversed = [Label::Dim(0); MAX_DIMS];
    let mut o = 0;
    while o < n {
        reversed[o] = layout.out_label(n - 1 - o);
        o += 1;
    }
    let flipped = tri!(layout.transpose_outs(reversed.split_at(n).0));
    let rank = shape.len();
    if rank > MAX_DIMS {
        return Err(LayoutError::TooManyDims {
            max: MAX_DIMS as u8,
        });
    }
    let mut new_dims = [(Label::Dim(0), 1u32); MAX_DIMS];
    let mut d = 0;
    while d < rank {
        new_dims[d] = (dim(rank - 1 - d), shape[rank - 1 - d]);
        d += 1;
    }
    let reshaped = tri!(flipped.reshape_outs(new_dims.split_at(rank).0));
    to_standard_order(&reshaped)
}

/// The names `dim(order[0]), dim(order[1]), …` of a layout's outputs listed in `order`.
const fn dims_in_order(order: &[u32]) -> [Label; MAX_DIMS] {
    let mut out = [Label::Dim(0); MAX_DIMS];
    let mut i = 0;
    while i < order.len() {
        out[i] = dim(order[i] as usize);
        i += 1;
    }
    out
}

/// Triton `broadcastedDotOperandLayout`: `in_dim` tiles `shape` in `order`, except along
/// `k_dim` where it is broadcast (`zeros1D`): every warp row of A (column of B) holds all of K.
pub const fn broadcasted_dot_operand_layout(
    shape: &[u32],
    order: &[u32],
    k_dim: usize,
    in_dim: Label,
) -> Result<LinearLayout, LayoutError> {
    let mut layout = LinearLayout::empty();
    let mut i = 0;
    while i < order.len() {
        let d = order[i] as usize;
        let map = if d == k_dim {
            Map1d::Zeros
        } else {
            Map1d::Identity
        };
        layout = tri!(times_1d(&layout, map, shape[d], in_dim, dim(d)));
        i += 1;
    }
    Ok(layout)
}

/// Reorders a layout's outputs as `dim(order[0]), dim(order[1]), …`.
pub(crate) const fn transpose_to(
    layout: &LinearLayout,
    order: &[u32],
) -> Result<LinearLayout, LayoutError> {
    let dims = dims_in_order(order);
    layout.transpose_outs(dims.split_at(order.len()).0)
}

/// Reorders a layout's outputs to `dim0, dim1, …` (all `rank` of them).
pub(crate) const fn standard(
    layout: &LinearLayout,
    rank: usize,
) -> Result<LinearLayout, LayoutError> {
    let dims = standard_dims(rank);
    layout.transpose_outs(dims.split_at(rank).0)
}
