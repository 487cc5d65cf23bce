//! Properties read off the matrix: free variables, equality up to sizes, contiguity,
//! triviality, quotients and the distributed / memory layout definitions (4.10, 4.14).

use super::{contains, labels, same_dims};
use crate::f2::EchelonBasis;
use crate::{Label, LinearLayout, MAX_DIMS};

impl LinearLayout {
    /// Free variables per input dimension (Triton `getFreeVariableMasks`), in input order: bit `k`
    /// of entry `i` is set when column (input dimension `i`, bit `k`) is not a pivot of the reduced
    /// row echelon form, i.e. lies in the span of the columns before it.
    pub const fn free_variable_masks(&self) -> [u32; MAX_DIMS] {
        let mut masks = [0u32; MAX_DIMS];
        let mut echelon = EchelonBasis::new();
        let mut i = 0;
        while i < self.num_in_dims() {
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                if !echelon.insert(self.packed_basis(i, k)) {
                    masks[i] |= 1 << k;
                }
                k += 1;
            }
            i += 1;
        }
        masks
    }

    /// The free-variable mask of input dimension `label` (0 if absent); see
    /// [`free_variable_masks`](Self::free_variable_masks).
    pub const fn free_variable_mask(&self, label: Label) -> u32 {
        match self.in_index(label) {
            Some(i) => self.free_variable_masks()[i],
            None => 0,
        }
    }

    /// Triton `equalIgnoringOutDimSizes`: same output names in the same order, same input
    /// dimensions in the same order, and the same bases as coordinates.
    pub const fn equal_ignoring_out_dim_sizes(&self, other: &LinearLayout) -> bool {
        if self.num_out_dims() != other.num_out_dims() || !same_dims(self, other, true) {
            return false;
        }
        let mut o = 0;
        while o < self.num_out_dims() {
            if !self.out_label(o).same(other.out_label(o)) {
                return false;
            }
            o += 1;
        }
        let mut i = 0;
        while i < self.num_in_dims() {
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                o = 0;
                while o < self.num_out_dims() {
                    if self.coord(self.packed_basis(i, k), o)
                        != other.coord(other.packed_basis(i, k), o)
                    {
                        return false;
                    }
                    o += 1;
                }
                k += 1;
            }
            i += 1;
        }
        true
    }

    /// Triton `getNumConsecutiveInOut`: how many consecutive values of the first input dimension
    /// land on consecutive values of the first output dimension (a power of two). The first
    /// bases of the first input that are `(2^k, 0, …)` count, capped by the lowest first-output
    /// bit any other basis touches.
    pub const fn get_num_consecutive_in_out(&self) -> u32 {
        if self.num_in_dims() == 0 || self.num_out_dims() == 0 {
            return 1;
        }
        let first_bits = self.out_bits_at(0);
        let mut consec = 0u32;
        while consec < self.in_bits_at(0) {
            if consec >= first_bits || self.packed_basis(0, consec as usize) != 1u64 << consec {
                break;
            }
            consec += 1;
        }
        let mut other_bits = 0u32;
        let mut i = 0;
        while i < self.num_in_dims() {
            let mut k = if i == 0 { consec as usize } else { 0 };
            while k < self.in_bits_at(i) as usize {
                other_bits |= self.coord(self.packed_basis(i, k), 0);
                k += 1;
            }
            i += 1;
        }
        let trailing = if other_bits != 0 {
            other_bits.trailing_zeros()
        } else {
            31
        };
        1 << if consec < trailing { consec } else { trailing }
    }

    /// Triton `isTrivialOver`: every label in `dims` is an input and an output dimension, the
    /// layout is the identity from those inputs to those outputs, and they neither feed nor are
    /// fed by the other dimensions (block matrix `[[A, 0], [0, I]]`).
    pub const fn is_trivial_over(&self, dims: &[Label]) -> bool {
        let mut n = 0;
        while n < dims.len() {
            let (Some(i), Some(o)) = (self.in_index(dims[n]), self.out_index(dims[n])) else {
                return false;
            };
            if self.in_bits_at(i) != self.out_bits_at(o) {
                return false;
            }
            n += 1;
        }
        // Flattened over `dims` (both sides in layout order), input bit `flat` must map to output
        // bit `flat` of `dims`, and nothing else; other inputs must not reach `dims`' outputs.
        let mut flat = 0u32;
        let mut i = 0;
        while i < self.num_in_dims() {
            let selected = contains(dims, self.in_label(i));
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let v = self.packed_basis(i, k);
                let mut inside = 0u64;
                let mut shift = 0u32;
                let mut o = 0;
                while o < self.num_out_dims() {
                    let c = self.coord(v, o) as u64;
                    if contains(dims, self.out_label(o)) {
                        inside |= c << shift;
                        shift += self.out_bits_at(o);
                    } else if selected && c != 0 {
                        return false;
                    }
                    o += 1;
                }
                if selected {
                    if inside != 1u64 << flat {
                        return false;
                    }
                    flat += 1;
                } else if inside != 0 {
                    return false;
                }
                k += 1;
            }
            i += 1;
        }
        true
    }

    /// Triton `quotient`: the layout without `dims`, if it is trivial over them.
    pub const fn quotient(&self, dims: &[Label]) -> Option<LinearLayout> {
        if !self.is_trivial_over(dims) {
            return None;
        }
        let (ins, num_ins) = labels(self, true, dims);
        let (outs, num_outs) = labels(self, false, dims);
        match self.sublayout(ins.split_at(num_ins).0, outs.split_at(num_outs).0) {
            Ok(l) => Some(l),
            Err(_) => None,
        }
    }

    /// Definition 4.10: a surjective layout from hardware indices (`register`, `lane`, `warp`,
    /// `block`) to tensor dimensions whose every column has at most one set bit, no two nonzero
    /// columns equal — a permutation matrix with zero (broadcast) columns interleaved.
    pub const fn is_distributed_layout(&self) -> bool {
        let mut i = 0;
        while i < self.num_in_dims() {
            if !matches!(
                self.in_label(i),
                Label::Register | Label::Lane | Label::Warp | Label::Block
            ) {
                return false;
            }
            i += 1;
        }
        if !self.outs_are_tensor_dims() {
            return false;
        }
        let mut seen = 0u64;
        i = 0;
        while i < self.num_in_dims() {
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let v = self.packed_basis(i, k);
                if v != 0 {
                    if v.count_ones() != 1 || seen & v != 0 {
                        return false;
                    }
                    seen |= v;
                }
                k += 1;
            }
            i += 1;
        }
        self.is_surjective()
    }

    /// Definition 4.14: an invertible layout from memory offsets (`offset`, and `block` for
    /// distributed shared memory) to tensor dimensions whose every column has one or two set bits.
    pub const fn is_memory_layout(&self) -> bool {
        let mut i = 0;
        while i < self.num_in_dims() {
            if !matches!(self.in_label(i), Label::Offset | Label::Block) {
                return false;
            }
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let ones = self.packed_basis(i, k).count_ones();
                if ones != 1 && ones != 2 {
                    return false;
                }
                k += 1;
            }
            i += 1;
        }
        self.outs_are_tensor_dims() && self.is_invertible()
    }

    const fn outs_are_tensor_dims(&self) -> bool {
        let mut o = 0;
        while o < self.num_out_dims() {
            if !matches!(self.out_label(o), Label::Dim(_)) {
                return false;
            }
            o += 1;
        }
        true
    }
}
