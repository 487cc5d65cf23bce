//! Slice layouts (Triton `SliceEncodingAttr`): the parent layout with tensor dimension `dim`
//! removed — the layout of the result of a reduction along `dim`, or of the input of an
//! `expand_dims`.
//!
//! As a linear layout: build the parent for the shape with a 1 inserted at `dim`, compose with
//! the projection `P` that drops output `dim` (`P ∘ parent`), and delete the register bases
//! that became zero (registers that now hold the same element); lane and warp bases that
//! became zero stay, as broadcast bits.

use super::params::{bad, dim};
use super::shape::{check_shape, times_1d, Map1d};
use super::Distributed;
use crate::error::incompatible;
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

/// The parameters of a slice layout.
#[derive(Clone, Copy, Debug)]
pub struct Slice<'a> {
    /// The removed tensor dimension (of the parent's rank).
    pub dim: u32,
    /// The layout the slice is taken from.
    pub parent: &'a Distributed<'a>,
}

impl<'a> Slice<'a> {
    /// The parameters, in the order of the fields.
    pub const fn new(dim: u32, parent: &'a Distributed<'a>) -> Self {
        Self { dim, parent }
    }

    /// The layout of a tensor of `shape` (Triton `SliceEncodingAttr::toLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        let rank = shape.len();
        if rank + 1 > MAX_DIMS {
            return Err(LayoutError::TooManyDims {
                max: MAX_DIMS as u8,
            });
        }
        if self.dim as usize > rank {
            return Err(bad(
                "slice",
                "dim",
                None,
                self.dim,
                "which is not a dimension of the parent (rank of the shape + 1)",
            ));
        }
        let mut parent_shape = [1u32; MAX_DIMS];
        let mut d = 0;
        let mut p = 0;
        while p < rank + 1 {
            if p != self.dim as usize {
                parent_shape[p] = shape[d];
                d += 1;
            }
            p += 1;
        }
        let parent = tri!(self
            .parent
            .to_linear_layout(parent_shape.split_at(rank + 1).0));
        slice_of(&parent, self.dim)
    }
}

/// Removes output `dimK` (`K = removed`) from a parent layout whose outputs are `dim0, dim1, …`
/// in order: `P ∘ parent` with `P` the projection (`dimJ ↦ dimJ` below `K`, `dimJ ↦ dim(J-1)`
/// above, `dimK ↦ 0`), then the zero register bases dropped.
pub const fn slice_of(parent: &LinearLayout, removed: u32) -> Result<LinearLayout, LayoutError> {
    let n = parent.num_out_dims();
    if removed as usize >= n {
        return Err(bad(
            "slice",
            "dim",
            None,
            removed,
            "which is not an output dimension of the parent layout",
        ));
    }
    let mut projection = LinearLayout::empty();
    let mut o = 0;
    while o < n {
        let label = parent.out_label(o);
        if !label.same(dim(o)) {
            return Err(incompatible(
                "slice: the parent's outputs must be dim0, dim1, … in order",
            ));
        }
        let size = 1u32 << parent.out_bits_at(o);
        let (map, target) = if o == removed as usize {
            (Map1d::Zeros, 0)
        } else if o < removed as usize {
            (Map1d::Identity, o)
        } else {
            (Map1d::Identity, o - 1)
        };
        projection = tri!(times_1d(&projection, map, size, label, dim(target)));
        o += 1;
    }
    let sliced = tri!(parent.compose(&projection));
    if sliced.in_index(Label::Register).is_none() {
        return Ok(sliced);
    }
    sliced.remove_zero_bases(Label::Register)
}
