//! Reshapes: the same matrix with its input or output bits regrouped into new dimensions.

use super::{append_in_dim, incompatible, with_out_dims_of};
use crate::{log2_exact, Label, LayoutError, LinearLayout};

impl LinearLayout {
    /// The same matrix with the output bits regrouped into `new` dimensions (Triton
    /// `reshapeOuts`): flatten all outputs (first dimension most minor), split in `new`'s order.
    pub const fn reshape_outs(&self, new: &[(Label, u32)]) -> Result<LinearLayout, LayoutError> {
        let mut result = LinearLayout::empty();
        let mut n = 0;
        while n < new.len() {
            result = tri!(result.with_out_dim(new[n].0, new[n].1));
            n += 1;
        }
        if result.total_out_bits() != self.total_out_bits() {
            return Err(incompatible(
                "reshape_outs: the new output dimensions must have as many elements in all as the old",
            ));
        }
        // The packing is the flattening: the packed bases carry over unchanged.
        let mut i = 0;
        while i < self.num_in_dims() {
            result = tri!(append_in_dim(result, self, i, false));
            i += 1;
        }
        Ok(result)
    }

    /// The same matrix with the input bits regrouped into `new` dimensions (Triton
    /// `reshapeIns`): list all columns (first dimension most minor), deal them out in `new`'s order.
    pub const fn reshape_ins(&self, new: &[(Label, u32)]) -> Result<LinearLayout, LayoutError> {
        let mut total = 0u32;
        let mut n = 0;
        while n < new.len() {
            let Some(bits) = log2_exact(new[n].1) else {
                return Err(LayoutError::SizeNotPowerOfTwo {
                    dim: new[n].0,
                    size: new[n].1,
                });
            };
            total += bits as u32;
            n += 1;
        }
        if total != self.total_in_bits() {
            return Err(incompatible(
                "reshape_ins: the new input dimensions must have as many elements in all as the old",
            ));
        }
        let mut result = tri!(with_out_dims_of(self));
        // Walk the old columns in order while filling the new dimensions in order.
        let mut src_dim = 0;
        let mut src_bit = 0;
        n = 0;
        while n < new.len() {
            result = tri!(result.with_in_dim(new[n].0));
            let bits = new[n].1.trailing_zeros();
            let mut k = 0;
            while k < bits {
                while src_bit == self.in_bits_at(src_dim) {
                    src_dim += 1;
                    src_bit = 0;
                }
                tri!(result.push_packed_basis(n, self.packed_basis(src_dim, src_bit as usize)));
                src_bit += 1;
                k += 1;
            }
            n += 1;
        }
        Ok(result)
    }

    /// All inputs as one dimension named like the first (Triton `flattenIns`).
    pub const fn flatten_ins(&self) -> Result<LinearLayout, LayoutError> {
        self.flattened(true)
    }

    /// All outputs as one dimension named like the first (Triton `flattenOuts`).
    pub const fn flatten_outs(&self) -> Result<LinearLayout, LayoutError> {
        self.flattened(false)
    }

    /// The inputs (`ins`) or the outputs as one dimension named like the first; unchanged when
    /// there are none.
    const fn flattened(&self, ins: bool) -> Result<LinearLayout, LayoutError> {
        let (dims, bits) = if ins {
            (self.num_in_dims(), self.total_in_bits())
        } else {
            (self.num_out_dims(), self.total_out_bits())
        };
        if dims == 0 {
            return Ok(*self);
        }
        if bits > 31 {
            return Err(incompatible(if ins {
                "flatten_ins: the flattened input dimension would exceed 2^31 elements"
            } else {
                "flatten_outs: the flattened output dimension would exceed 2^31 elements"
            }));
        }
        if ins {
            self.reshape_ins(&[(self.in_label(0), 1 << bits)])
        } else {
            self.reshape_outs(&[(self.out_label(0), 1 << bits)])
        }
    }

    /// Input dimension `label` replaced, in place, by `low` (its low bits) then `high` (the rest):
    /// `reshape_ins` on one dimension. `low.1 · high.1` must be the size of `label`.
    pub const fn split_in(
        &self,
        label: Label,
        low: (Label, u32),
        high: (Label, u32),
    ) -> Result<LinearLayout, LayoutError> {
        let at = tri!(self.in_index_or_err(label));
        let Some(low_bits) = log2_exact(low.1) else {
            return Err(LayoutError::SizeNotPowerOfTwo {
                dim: low.0,
                size: low.1,
            });
        };
        let Some(high_bits) = log2_exact(high.1) else {
            return Err(LayoutError::SizeNotPowerOfTwo {
                dim: high.0,
                size: high.1,
            });
        };
        if low_bits as u32 + high_bits as u32 != self.in_bits_at(at) {
            return Err(incompatible(
                "split_in: the two parts must have as many elements in all as the dimension split",
            ));
        }
        let mut result = tri!(with_out_dims_of(self));
        let mut i = 0;
        let mut r = 0;
        while i < self.num_in_dims() {
            if i == at {
                result = tri!(result.with_in_dim(low.0));
                let mut k = 0;
                while k < low_bits as usize {
                    tri!(result.push_packed_basis(r, self.packed_basis(i, k)));
                    k += 1;
                }
                result = tri!(result.with_in_dim(high.0));
                while k < self.in_bits_at(i) as usize {
                    tri!(result.push_packed_basis(r + 1, self.packed_basis(i, k)));
                    k += 1;
                }
                r += 2;
            } else {
                result = tri!(append_in_dim(result, self, i, false));
                r += 1;
            }
            i += 1;
        }
        Ok(result)
    }
}
