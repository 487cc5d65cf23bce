//! The algebra of linear layouts (§4 of the paper), with Triton's semantics (`LinearLayout.cpp`).
//!
//! Every operation is a `const fn` on [`LinearLayout`]. Matrices are read as in Triton: one column
//! per input bit (input dimensions in order, low bit first), one row per output bit (output
//! dimensions in order, low bit first) — exactly the packing of a basis in [`LinearLayout`].
//! Operations that Triton `assert`s on return a [`LayoutError`] here; those that Triton answers
//! with `std::optional` return `Option`.
//!
//! One file per operation: [`compose`](LinearLayout::compose) (`compose.rs`),
//! [`product`](LinearLayout::product) (`product.rs`), left and right division (`division.rs`),
//! inverses and `invert_and_compose` (`inverse.rs`), transposes, sublayouts, concatenation and
//! resizing (`reorder.rs`), reshapes (`reshape.rs`), and properties read off the matrix
//! (`properties.rs`). This file holds the helpers they share.

use crate::error::incompatible;
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

/// `?` for `const fn` returning `Option`: unwraps `Ok` or returns `None`.
macro_rules! opt {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => return None,
        }
    };
}

const fn contains(labels: &[Label], label: Label) -> bool {
    let mut n = 0;
    while n < labels.len() {
        if labels[n].same(label) {
            return true;
        }
        n += 1;
    }
    false
}

/// A layout with `src`'s output dimensions (same order and sizes) and no input dimensions.
const fn with_out_dims_of(src: &LinearLayout) -> Result<LinearLayout, LayoutError> {
    let mut result = LinearLayout::empty();
    let mut o = 0;
    while o < src.num_out_dims() {
        result = tri!(result.with_out_dim(src.out_label(o), 1 << src.out_bits_at(o)));
        o += 1;
    }
    Ok(result)
}

/// `result` with the input dimensions of `src` appended (same order), without bases: input `i` of
/// `src` is input `i` of the result when `result` has no inputs of its own.
pub(crate) const fn with_in_dims_of(
    result: LinearLayout,
    src: &LinearLayout,
) -> Result<LinearLayout, LayoutError> {
    let mut result = result;
    let mut i = 0;
    while i < src.num_in_dims() {
        result = tri!(result.with_in_dim(src.in_label(i)));
        i += 1;
    }
    Ok(result)
}

/// Moves a packed vector of `src` into `dst`'s packing, output dimension by label; coordinates
/// of dimensions `dst` lacks are dropped (callers make sure they fit where they land).
const fn repack(src: &LinearLayout, dst: &LinearLayout, packed: u64) -> u64 {
    let mut out = 0u64;
    let mut o = 0;
    while o < src.num_out_dims() {
        if let Some(d) = dst.out_index(src.out_label(o)) {
            out |= (src.coord(packed, o) as u64) << dst.out_offset(d);
        }
        o += 1;
    }
    out
}

/// `result` with input dimension `i` of `src` appended, its bases moved into `result`'s packing by
/// output label (`by_label`) or kept packed as they are (outputs that flatten alike).
const fn append_in_dim(
    result: LinearLayout,
    src: &LinearLayout,
    i: usize,
    by_label: bool,
) -> Result<LinearLayout, LayoutError> {
    let mut result = tri!(result.with_in_dim(src.in_label(i)));
    let r = result.num_in_dims() - 1;
    let mut k = 0;
    while k < src.in_bits_at(i) as usize {
        let v = src.packed_basis(i, k);
        let v = if by_label { repack(src, &result, v) } else { v };
        tri!(result.push_packed_basis(r, v));
        k += 1;
    }
    Ok(result)
}

/// The number of input (`inputs`) or output dimensions of `layout`.
const fn num_dims(layout: &LinearLayout, inputs: bool) -> usize {
    if inputs {
        layout.num_in_dims()
    } else {
        layout.num_out_dims()
    }
}

/// The label and bits of input (`inputs`) or output dimension `n` of `layout`.
const fn dim_at(layout: &LinearLayout, inputs: bool, n: usize) -> (Label, u32) {
    if inputs {
        (layout.in_label(n), layout.in_bits_at(n))
    } else {
        (layout.out_label(n), layout.out_bits_at(n))
    }
}

/// Whether `a` and `b` have the same input (`inputs`) or output dimensions: names, order and
/// sizes.
const fn same_dims(a: &LinearLayout, b: &LinearLayout, inputs: bool) -> bool {
    let count = num_dims(a, inputs);
    if num_dims(b, inputs) != count {
        return false;
    }
    let mut n = 0;
    while n < count {
        let (a_label, a_bits) = dim_at(a, inputs, n);
        let (b_label, b_bits) = dim_at(b, inputs, n);
        if !a_label.same(b_label) || a_bits != b_bits {
            return false;
        }
        n += 1;
    }
    true
}

/// Ok if `order` lists each of the layout's input (`inputs`) or output dimensions exactly once.
const fn check_permutation(
    layout: &LinearLayout,
    order: &[Label],
    inputs: bool,
) -> Result<(), LayoutError> {
    let count = num_dims(layout, inputs);
    let mut n = 0;
    while n < order.len() {
        let present = if inputs {
            layout.in_index(order[n]).is_some()
        } else {
            layout.out_index(order[n]).is_some()
        };
        if !present {
            return Err(LayoutError::UnknownDim { dim: order[n] });
        }
        let mut m = 0;
        while m < n {
            if order[m].same(order[n]) {
                return Err(LayoutError::DuplicateDim { dim: order[n] });
            }
            m += 1;
        }
        n += 1;
    }
    if order.len() != count {
        return Err(incompatible(
            "a new order of dimensions must list every dimension of the layout exactly once",
        ));
    }
    Ok(())
}

/// The input (`inputs`) or output labels of a layout but those in `except`, as a fixed array and
/// a count.
pub(crate) const fn labels(
    layout: &LinearLayout,
    inputs: bool,
    except: &[Label],
) -> ([Label; MAX_DIMS], usize) {
    let all = num_dims(layout, inputs);
    let mut labels = [Label::Register; MAX_DIMS];
    let mut count = 0;
    let mut n = 0;
    while n < all {
        let label = dim_at(layout, inputs, n).0;
        if !contains(except, label) {
            labels[count] = label;
            count += 1;
        }
        n += 1;
    }
    (labels, count)
}

/// Whether input dimension `i` of `a` and `j` of `b` have the same bases, and `a`, `b` the same
/// output dimensions (names, order, sizes): Triton's `a.sublayout({dim}, outs) == b.sublayout(..)`.
const fn same_in_dim(a: &LinearLayout, i: usize, b: &LinearLayout, j: usize) -> bool {
    if a.in_bits_at(i) != b.in_bits_at(j) || !same_dims(a, b, false) {
        return false;
    }
    let mut k = 0;
    while k < a.in_bits_at(i) as usize {
        if a.packed_basis(i, k) != b.packed_basis(j, k) {
            return false;
        }
        k += 1;
    }
    true
}

mod compose;
mod division;
mod inverse;
mod product;
mod properties;
mod reorder;
mod reshape;

#[cfg(test)]
mod tests;
