//! Reordering and restricting dimensions: transposes, sublayouts, concatenation, resizing.

use super::{
    append_in_dim, check_permutation, contains, incompatible, repack, same_dims, with_in_dims_of,
    with_out_dims_of,
};
use crate::{log2_exact, Label, LayoutError, LinearLayout};

impl LinearLayout {
    /// The same map with output dimensions in `order` (Triton `transposeOuts`): rows permuted
    /// label-wise, `M' = P·M`. `order` lists every output dimension once.
    pub const fn transpose_outs(&self, order: &[Label]) -> Result<LinearLayout, LayoutError> {
        tri!(check_permutation(self, order, false));
        let mut result = LinearLayout::empty();
        let mut n = 0;
        while n < order.len() {
            result = tri!(result.with_out_dim(order[n], self.out_size(order[n])));
            n += 1;
        }
        let mut i = 0;
        while i < self.num_in_dims() {
            result = tri!(append_in_dim(result, self, i, true));
            i += 1;
        }
        Ok(result)
    }

    /// The same map with input dimensions in `order` (Triton `transposeIns`): column blocks
    /// permuted, `M' = M·P`. `order` lists every input dimension once.
    pub const fn transpose_ins(&self, order: &[Label]) -> Result<LinearLayout, LayoutError> {
        tri!(check_permutation(self, order, true));
        let mut result = tri!(with_out_dims_of(self));
        let mut n = 0;
        while n < order.len() {
            let i = tri!(self.in_index_or_err(order[n]));
            result = tri!(append_in_dim(result, self, i, false));
            n += 1;
        }
        Ok(result)
    }

    /// The restriction to the input dimensions `in_dims` and the projection onto the output
    /// dimensions `out_dims` (Triton `sublayout`; both keep this layout's order): the block of `M`
    /// with those rows and columns. Every listed label must be a dimension of the layout.
    pub const fn sublayout(
        &self,
        in_dims: &[Label],
        out_dims: &[Label],
    ) -> Result<LinearLayout, LayoutError> {
        let mut n = 0;
        while n < in_dims.len() {
            tri!(self.in_index_or_err(in_dims[n]));
            n += 1;
        }
        n = 0;
        while n < out_dims.len() {
            tri!(self.out_index_or_err(out_dims[n]));
            n += 1;
        }
        let mut result = LinearLayout::empty();
        let mut o = 0;
        while o < self.num_out_dims() {
            if contains(out_dims, self.out_label(o)) {
                result = tri!(result.with_out_dim(self.out_label(o), 1 << self.out_bits_at(o)));
            }
            o += 1;
        }
        let mut i = 0;
        while i < self.num_in_dims() {
            if contains(in_dims, self.in_label(i)) {
                result = tri!(append_in_dim(result, self, i, true));
            }
            i += 1;
        }
        Ok(result)
    }

    /// The inputs of `self` then those of `other`, same outputs (Triton `concatIns`):
    /// `[M_self | M_other]`. Output dimensions must agree exactly; input dimensions must differ.
    pub const fn concat_ins(&self, other: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        if !self.same_out_dims(other) {
            return Err(incompatible(
                "concat_ins: both layouts must have the same output dimensions, in the same order and sizes",
            ));
        }
        let mut result = *self;
        let mut i = 0;
        while i < other.num_in_dims() {
            result = tri!(append_in_dim(result, other, i, false));
            i += 1;
        }
        Ok(result)
    }

    /// The outputs of `self` then those of `other`, same inputs (Triton `concatOuts`):
    /// `[[M_self], [M_other]]`. Input dimensions must agree exactly; output dimensions must differ.
    pub const fn concat_outs(&self, other: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        if !same_dims(self, other, true) {
            return Err(incompatible(
                "concat_outs: both layouts must have the same input dimensions, in the same order and sizes",
            ));
        }
        let mut result = tri!(with_out_dims_of(self));
        let mut o = 0;
        while o < other.num_out_dims() {
            result = tri!(result.with_out_dim(other.out_label(o), 1 << other.out_bits_at(o)));
            o += 1;
        }
        result = tri!(with_in_dims_of(result, self));
        let shift = self.total_out_bits();
        let mut i = 0;
        while i < self.num_in_dims() {
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let v = self.packed_basis(i, k) | (other.packed_basis(i, k) << shift);
                tri!(result.push_packed_basis(i, v));
                k += 1;
            }
            i += 1;
        }
        Ok(result)
    }

    /// Whether both layouts have the same output dimensions: names, order and sizes.
    pub const fn same_out_dims(&self, other: &LinearLayout) -> bool {
        same_dims(self, other, false)
    }

    /// Input dimension `label` with `new_size` elements: fewer keeps the first bases (Triton
    /// `resizeInDim`), more appends zero (broadcast) bases (Triton's older `resize`).
    pub const fn resize_in_dim(
        &self,
        label: Label,
        new_size: u32,
    ) -> Result<LinearLayout, LayoutError> {
        let at = tri!(self.in_index_or_err(label));
        let Some(bits) = log2_exact(new_size) else {
            return Err(LayoutError::SizeNotPowerOfTwo {
                dim: label,
                size: new_size,
            });
        };
        let mut result = tri!(with_in_dims_of(tri!(with_out_dims_of(self)), self));
        let mut i = 0;
        while i < self.num_in_dims() {
            let count = if i == at {
                bits as usize
            } else {
                self.in_bits_at(i) as usize
            };
            let mut k = 0;
            while k < count {
                let v = if k < self.in_bits_at(i) as usize {
                    self.packed_basis(i, k)
                } else {
                    0
                };
                tri!(result.push_packed_basis(i, v));
                k += 1;
            }
            i += 1;
        }
        Ok(result)
    }

    /// Output dimension `label` with `new_size` elements (Triton `resizeOutDim`): a basis whose
    /// coordinate there is `>= new_size` gets coordinate 0 (the whole coordinate, not its high
    /// bits). Growing is allowed too (coordinates are kept); Triton asserts it only shrinks.
    pub const fn resize_out_dim(
        &self,
        label: Label,
        new_size: u32,
    ) -> Result<LinearLayout, LayoutError> {
        let at = tri!(self.out_index_or_err(label));
        let mut result = LinearLayout::empty();
        let mut o = 0;
        while o < self.num_out_dims() {
            let size = if o == at {
                new_size
            } else {
                1 << self.out_bits_at(o)
            };
            result = tri!(result.with_out_dim(self.out_label(o), size));
            o += 1;
        }
        result = tri!(with_in_dims_of(result, self));
        let mut i = 0;
        while i < self.num_in_dims() {
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let mut v = self.packed_basis(i, k);
                if self.coord(v, at) >= new_size {
                    // Clear that coordinate before moving into the new packing.
                    v ^= (self.coord(v, at) as u64) << self.out_offset(at);
                }
                tri!(result.push_packed_basis(i, repack(self, &result, v)));
                k += 1;
            }
            i += 1;
        }
        Ok(result)
    }

    /// Input dimension `label` without its zero bases (Triton `removeZeroBasesAlongDim`): the
    /// broadcast bits dropped, the other bases keep their order.
    pub const fn remove_zero_bases(&self, label: Label) -> Result<LinearLayout, LayoutError> {
        let at = tri!(self.in_index_or_err(label));
        let mut result = tri!(with_in_dims_of(tri!(with_out_dims_of(self)), self));
        let mut i = 0;
        while i < self.num_in_dims() {
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let v = self.packed_basis(i, k);
                if i != at || v != 0 {
                    tri!(result.push_packed_basis(i, v));
                }
                k += 1;
            }
            i += 1;
        }
        Ok(result)
    }
}
