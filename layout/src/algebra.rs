//! The algebra of linear layouts (§4 of the paper), with Triton's semantics (`LinearLayout.cpp`).
//!
//! Every operation is a `const fn` on [`LinearLayout`]. Matrices are read as in Triton: one column
//! per input bit (input dimensions in order, low bit first), one row per output bit (output
//! dimensions in order, low bit first) — exactly the packing of a basis in [`LinearLayout`].
//! Operations that Triton `assert`s on return a [`LayoutError`] here; those that Triton answers
//! with `std::optional` return `Option`.

use crate::f2::EchelonBasis;
use crate::{log2_exact, Label, LayoutError, LinearLayout, MAX_DIMS};

/// `?` for `const fn`: unwraps `Ok` or returns the error.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

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

const fn incompatible(what: &'static str) -> LayoutError {
    LayoutError::Incompatible { what }
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

/// Ok if `order` lists each of the layout's input (`inputs`) or output dimensions exactly once.
const fn check_permutation(
    layout: &LinearLayout,
    order: &[Label],
    inputs: bool,
) -> Result<(), LayoutError> {
    let count = if inputs {
        layout.num_in_dims()
    } else {
        layout.num_out_dims()
    };
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

/// The output labels of a layout, as a fixed array and a count.
const fn out_labels(layout: &LinearLayout) -> ([Label; MAX_DIMS], usize) {
    let mut labels = [Label::Register; MAX_DIMS];
    let mut o = 0;
    while o < layout.num_out_dims() {
        labels[o] = layout.out_label(o);
        o += 1;
    }
    (labels, layout.num_out_dims())
}

/// Whether input dimension `i` of `a` and `j` of `b` have the same bases, and `a`, `b` the same
/// output dimensions (names, order, sizes): Triton's `a.sublayout({dim}, outs) == b.sublayout(..)`.
const fn same_in_dim(a: &LinearLayout, i: usize, b: &LinearLayout, j: usize) -> bool {
    if a.num_out_dims() != b.num_out_dims() || a.in_bits_at(i) != b.in_bits_at(j) {
        return false;
    }
    let mut o = 0;
    while o < a.num_out_dims() {
        if !a.out_label(o).same(b.out_label(o)) || a.out_bits_at(o) != b.out_bits_at(o) {
            return false;
        }
        o += 1;
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

impl LinearLayout {
    // ------------------------------------------------------------------ composition

    /// `outer ∘ self`, i.e. `x ↦ outer(self(x))` (Triton `self.compose(outer)`, Definition 4.2).
    /// Matrix `M_outer · M_self`: each basis of `self` is evaluated by `outer`, label by label.
    ///
    /// `self`'s output dimensions must be `outer`'s input dimensions (any order), none larger.
    pub const fn compose(&self, outer: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        if self.num_out_dims() != outer.num_in_dims() {
            return Err(incompatible(
                "cannot compose: the outer layout's input dimensions must be the inner layout's output dimensions",
            ));
        }
        let mut o = 0;
        while o < self.num_out_dims() {
            let Some(j) = outer.in_index(self.out_label(o)) else {
                return Err(incompatible(
                    "cannot compose: an output dimension of the inner layout is not an input dimension of the outer layout",
                ));
            };
            if self.out_bits_at(o) > outer.in_bits_at(j) {
                return Err(incompatible(
                    "cannot compose: an output dimension of the inner layout is larger than the outer layout's input dimension",
                ));
            }
            o += 1;
        }
        let mut result = tri!(with_out_dims_of(outer));
        let mut i = 0;
        while i < self.num_in_dims() {
            result = tri!(result.with_in_dim(self.in_label(i)));
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let image = self.through(outer, self.packed_basis(i, k));
                tri!(result.push_packed_basis(i, image));
                k += 1;
            }
            i += 1;
        }
        Ok(result)
    }

    /// `outer` applied to a packed output vector of `self` (output labels are `outer`'s inputs).
    const fn through(&self, outer: &LinearLayout, packed: u64) -> u64 {
        let mut out = 0u64;
        let mut o = 0;
        while o < self.num_out_dims() {
            let c = self.coord(packed, o);
            if let Some(j) = outer.in_index(self.out_label(o)) {
                let mut b = 0;
                while b < outer.in_bits_at(j) {
                    if (c >> b) & 1 == 1 {
                        out ^= outer.packed_basis(j, b as usize);
                    }
                    b += 1;
                }
            }
            o += 1;
        }
        out
    }

    // ------------------------------------------------------------------ reordering

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
            result = tri!(result.with_in_dim(self.in_label(i)));
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                tri!(result.push_packed_basis(i, repack(self, &result, self.packed_basis(i, k))));
                k += 1;
            }
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
            result = tri!(result.with_in_dim(order[n]));
            let i = match self.in_index(order[n]) {
                Some(i) => i,
                None => return Err(LayoutError::UnknownDim { dim: order[n] }),
            };
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                tri!(result.push_packed_basis(n, self.packed_basis(i, k)));
                k += 1;
            }
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
            if self.in_index(in_dims[n]).is_none() {
                return Err(LayoutError::UnknownDim { dim: in_dims[n] });
            }
            n += 1;
        }
        n = 0;
        while n < out_dims.len() {
            if self.out_index(out_dims[n]).is_none() {
                return Err(LayoutError::UnknownDim { dim: out_dims[n] });
            }
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
        let mut r = 0;
        while i < self.num_in_dims() {
            if contains(in_dims, self.in_label(i)) {
                result = tri!(result.with_in_dim(self.in_label(i)));
                let mut k = 0;
                while k < self.in_bits_at(i) as usize {
                    let v = repack(self, &result, self.packed_basis(i, k));
                    tri!(result.push_packed_basis(r, v));
                    k += 1;
                }
                r += 1;
            }
            i += 1;
        }
        Ok(result)
    }

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
            result = tri!(result.with_in_dim(self.in_label(i)));
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                tri!(result.push_packed_basis(i, self.packed_basis(i, k)));
                k += 1;
            }
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
        if self.num_in_dims() == 0 {
            return Ok(*self);
        }
        let bits = self.total_in_bits();
        if bits > 31 {
            return Err(incompatible(
                "flatten_ins: the flattened input dimension would exceed 2^31 elements",
            ));
        }
        self.reshape_ins(&[(self.in_label(0), 1 << bits)])
    }

    /// All outputs as one dimension named like the first (Triton `flattenOuts`).
    pub const fn flatten_outs(&self) -> Result<LinearLayout, LayoutError> {
        if self.num_out_dims() == 0 {
            return Ok(*self);
        }
        let bits = self.total_out_bits();
        if bits > 31 {
            return Err(incompatible(
                "flatten_outs: the flattened output dimension would exceed 2^31 elements",
            ));
        }
        self.reshape_outs(&[(self.out_label(0), 1 << bits)])
    }

    /// Input dimension `label` replaced, in place, by `low` (its low bits) then `high` (the rest):
    /// `reshape_ins` on one dimension. `low.1 · high.1` must be the size of `label`.
    pub const fn split_in(
        &self,
        label: Label,
        low: (Label, u32),
        high: (Label, u32),
    ) -> Result<LinearLayout, LayoutError> {
        let Some(at) = self.in_index(label) else {
            return Err(LayoutError::UnknownDim { dim: label });
        };
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
                result = tri!(result.with_in_dim(self.in_label(i)));
                let mut k = 0;
                while k < self.in_bits_at(i) as usize {
                    tri!(result.push_packed_basis(r, self.packed_basis(i, k)));
                    k += 1;
                }
                r += 1;
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
            result = tri!(result.with_in_dim(other.in_label(i)));
            let r = result.num_in_dims() - 1;
            let mut k = 0;
            while k < other.in_bits_at(i) as usize {
                tri!(result.push_packed_basis(r, other.packed_basis(i, k)));
                k += 1;
            }
            i += 1;
        }
        Ok(result)
    }

    /// The outputs of `self` then those of `other`, same inputs (Triton `concatOuts`):
    /// `[[M_self], [M_other]]`. Input dimensions must agree exactly; output dimensions must differ.
    pub const fn concat_outs(&self, other: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        if self.num_in_dims() != other.num_in_dims() {
            return Err(incompatible(
                "concat_outs: both layouts must have the same input dimensions, in the same order and sizes",
            ));
        }
        let mut i = 0;
        while i < self.num_in_dims() {
            if !self.in_label(i).same(other.in_label(i))
                || self.in_bits_at(i) != other.in_bits_at(i)
            {
                return Err(incompatible(
                    "concat_outs: both layouts must have the same input dimensions, in the same order and sizes",
                ));
            }
            i += 1;
        }
        let mut result = tri!(with_out_dims_of(self));
        let mut o = 0;
        while o < other.num_out_dims() {
            result = tri!(result.with_out_dim(other.out_label(o), 1 << other.out_bits_at(o)));
            o += 1;
        }
        let shift = self.total_out_bits();
        i = 0;
        while i < self.num_in_dims() {
            result = tri!(result.with_in_dim(self.in_label(i)));
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
        if self.num_out_dims() != other.num_out_dims() {
            return false;
        }
        let mut o = 0;
        while o < self.num_out_dims() {
            if !self.out_label(o).same(other.out_label(o))
                || self.out_bits_at(o) != other.out_bits_at(o)
            {
                return false;
            }
            o += 1;
        }
        true
    }

    /// Input dimension `label` with `new_size` elements: fewer keeps the first bases (Triton
    /// `resizeInDim`), more appends zero (broadcast) bases (Triton's older `resize`).
    pub const fn resize_in_dim(
        &self,
        label: Label,
        new_size: u32,
    ) -> Result<LinearLayout, LayoutError> {
        let Some(at) = self.in_index(label) else {
            return Err(LayoutError::UnknownDim { dim: label });
        };
        let Some(bits) = log2_exact(new_size) else {
            return Err(LayoutError::SizeNotPowerOfTwo {
                dim: label,
                size: new_size,
            });
        };
        let mut result = tri!(with_out_dims_of(self));
        let mut i = 0;
        while i < self.num_in_dims() {
            result = tri!(result.with_in_dim(self.in_label(i)));
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
        let Some(at) = self.out_index(label) else {
            return Err(LayoutError::UnknownDim { dim: label });
        };
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
        let mut i = 0;
        while i < self.num_in_dims() {
            result = tri!(result.with_in_dim(self.in_label(i)));
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
        let Some(at) = self.in_index(label) else {
            return Err(LayoutError::UnknownDim { dim: label });
        };
        let mut result = tri!(with_out_dims_of(self));
        let mut i = 0;
        while i < self.num_in_dims() {
            result = tri!(result.with_in_dim(self.in_label(i)));
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

    // ------------------------------------------------------------------ inverses

    /// `outer⁻¹ ∘ self` (Triton `self.invertAndCompose(outer)`): a layout `C` from `self`'s
    /// inputs to `outer`'s inputs with `outer(C(x)) = self(x)`. Both map to the same output
    /// dimensions (any order; `outer`'s no smaller). Triton's choice, reproduced exactly:
    /// - an input dimension on which both layouts agree (same label, same bases) maps to
    ///   itself by the identity (no data crosses that dimension);
    /// - the rest is Triton's `lstsq`: the solution of `A·X = B` (`A`, `B` the remaining columns of
    ///   `outer`, `self`) whose entries on free variables of `A` are zero, i.e. each column of `B`
    ///   is written in the pivot columns of `A` (those independent of earlier columns). This is
    ///   the minimum-norm choice of §5.4: elements held twice by `outer` are read from one place.
    ///
    /// Deviation: where the identity shortcut leaves a system with no solution (an element of
    /// `self` reachable only through a dimension kept as the identity — Triton's `FIXME`, where
    /// it fails its "Im(B) not contained in Im(A)" assertion), the whole system is solved by
    /// `lstsq` with no identity dimensions instead. Error only if `outer` does not reach every
    /// element of `self`.
    pub const fn invert_and_compose(
        &self,
        outer: &LinearLayout,
    ) -> Result<LinearLayout, LayoutError> {
        match self.solve_from(outer, true) {
            Ok(result) => Ok(result),
            Err(_) => self.solve_from(outer, false),
        }
    }

    /// [`invert_and_compose`](Self::invert_and_compose), with or without Triton's identity
    /// dimensions.
    const fn solve_from(
        &self,
        outer: &LinearLayout,
        identity_dims: bool,
    ) -> Result<LinearLayout, LayoutError> {
        let (labels, count) = out_labels(self);
        let a = tri!(outer.transpose_outs(labels.split_at(count).0));
        let mut o = 0;
        while o < self.num_out_dims() {
            if a.out_bits_at(o) < self.out_bits_at(o) {
                return Err(incompatible(
                    "invert_and_compose: an output dimension of the outer layout is smaller than this layout's",
                ));
            }
            o += 1;
        }
        // Input dimensions both layouts share with equal bases map by the identity.
        let mut a_identity = [false; MAX_DIMS];
        let mut b_identity = [false; MAX_DIMS];
        let mut i = 0;
        while i < a.num_in_dims() {
            if let Some(j) = self.in_index(a.in_label(i)) {
                if identity_dims && same_in_dim(&a, i, self, j) {
                    a_identity[i] = true;
                    b_identity[j] = true;
                }
            }
            i += 1;
        }
        // Pivot columns of A's remaining columns, in order (column n = bit `col_bit[n]` of input
        // dimension `col_dim[n]`).
        let mut echelon = EchelonBasis::new();
        let mut col_dim = [0u8; 64];
        let mut col_bit = [0u8; 64];
        let mut n = 0;
        i = 0;
        while i < a.num_in_dims() {
            if !a_identity[i] {
                let mut k = 0;
                while k < a.in_bits_at(i) as usize {
                    if n == 64 {
                        return Err(incompatible(
                            "invert_and_compose: more than 64 input bits to solve for",
                        ));
                    }
                    echelon.insert(a.packed_basis(i, k));
                    col_dim[n] = i as u8;
                    col_bit[n] = k as u8;
                    n += 1;
                    k += 1;
                }
            }
            i += 1;
        }
        // The result: self's inputs → outer's inputs (outer's order and sizes).
        let mut result = LinearLayout::empty();
        i = 0;
        while i < a.num_in_dims() {
            result = tri!(result.with_out_dim(a.in_label(i), 1 << a.in_bits_at(i)));
            i += 1;
        }
        let mut j = 0;
        while j < self.num_in_dims() {
            let label = self.in_label(j);
            result = tri!(result.with_in_dim(label));
            let mut k = 0;
            while k < self.in_bits_at(j) as usize {
                let image = if b_identity[j] {
                    let d = match result.out_index(label) {
                        Some(d) => d,
                        None => return Err(LayoutError::UnknownDim { dim: label }),
                    };
                    1u64 << (result.out_offset(d) + k as u32)
                } else {
                    let target = repack(self, &a, self.packed_basis(j, k));
                    let Some(combo) = echelon.express(target) else {
                        return Err(incompatible(
                            "invert_and_compose: an element of this layout is not reached by the outer layout",
                        ));
                    };
                    let mut image = 0u64;
                    let mut c = 0;
                    while c < n {
                        if (combo >> c) & 1 == 1 {
                            image |= 1u64
                                << (result.out_offset(col_dim[c] as usize) + col_bit[c] as u32);
                        }
                        c += 1;
                    }
                    image
                };
                tri!(result.push_packed_basis(j, image));
                k += 1;
            }
            j += 1;
        }
        Ok(result)
    }

    /// The identity layout on this layout's output dimensions (each `dimK → dimK`).
    const fn identity_on_outs(&self) -> Result<LinearLayout, LayoutError> {
        let mut identity = tri!(with_out_dims_of(self));
        let mut o = 0;
        while o < self.num_out_dims() {
            identity = tri!(identity.with_in_dim(self.out_label(o)));
            let mut b = 0;
            while b < self.out_bits_at(o) {
                tri!(identity.push_packed_basis(o, 1u64 << (self.out_offset(o) + b)));
                b += 1;
            }
            o += 1;
        }
        Ok(identity)
    }

    /// The minimum-norm right inverse `L⁻¹` of a surjective layout (Triton `pseudoinvert`,
    /// Definition 4.5, §5.4): `identity.invert_and_compose(self)`, so `L(L⁻¹(y)) = y`, and an
    /// element held by several inputs is mapped to the one spelled with pivot (earliest
    /// independent) bits only; broadcast bits are never set.
    pub const fn pseudo_invert(&self) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_surjective());
        let identity = tri!(self.identity_on_outs());
        identity.invert_and_compose(self)
    }

    /// The inverse of a bijective layout (Triton `invert`): `L⁻¹ ∘ L = id`, `L ∘ L⁻¹ = id`.
    pub const fn invert(&self) -> Result<LinearLayout, LayoutError> {
        tri!(self.check_injective());
        tri!(self.check_surjective());
        if !self.is_invertible() {
            return Err(incompatible("invert: the layout is not square"));
        }
        self.pseudo_invert()
    }

    // ------------------------------------------------------------------ division

    /// `C` with `self = divisor × C` (Definition 4.4, Triton `divideLeft`), or `None`. Label by
    /// label `M_self = [[M_divisor, 0], [0, M_C]]`: the first bases of each input dimension are
    /// the divisor's, the others have zero low (divisor-sized) bits. `C` has `self`'s dimensions.
    pub const fn divide_left(&self, divisor: &LinearLayout) -> Option<LinearLayout> {
        if !self.has_dims_of(divisor) {
            return None;
        }
        let mut c = LinearLayout::empty();
        let mut o = 0;
        while o < self.num_out_dims() {
            let label = self.out_label(o);
            let divisor_bits = divisor.out_bits(label);
            if self.out_bits_at(o) < divisor_bits {
                return None;
            }
            c = opt!(c.with_out_dim(label, 1 << (self.out_bits_at(o) - divisor_bits)));
            o += 1;
        }
        let mut i = 0;
        while i < self.num_in_dims() {
            let label = self.in_label(i);
            c = opt!(c.with_in_dim(label));
            let divisor_in = divisor.in_index(label);
            let inner_bits = divisor.in_bits(label) as usize;
            if (self.in_bits_at(i) as usize) < inner_bits {
                return None;
            }
            let mut k = 0;
            while k < self.in_bits_at(i) as usize {
                let v = self.packed_basis(i, k);
                if k < inner_bits {
                    // Must be the divisor's basis, with zeros where it has no dimension.
                    let expected = match divisor_in {
                        Some(d) => repack(divisor, self, divisor.packed_basis(d, k)),
                        None => 0,
                    };
                    if v != expected {
                        return None;
                    }
                } else {
                    // Must vanish on the divisor's (low) bits; the rest, shifted down, is C's.
                    let mut w = 0u64;
                    o = 0;
                    while o < self.num_out_dims() {
                        let low = divisor.out_bits(self.out_label(o));
                        let coord = self.coord(v, o);
                        if coord & ((1u32 << low) - 1) != 0 {
                            return None;
                        }
                        w |= ((coord >> low) as u64) << c.out_offset(o);
                        o += 1;
                    }
                    opt!(c.push_packed_basis(i, w));
                }
                k += 1;
            }
            i += 1;
        }
        Some(c)
    }

    /// `C` with `self = C × divisor` (Triton `divideRight`), or `None`: the last bases of each
    /// input dimension are the divisor's scaled by `C`'s size, the first ones stay below it.
    pub const fn divide_right(&self, divisor: &LinearLayout) -> Option<LinearLayout> {
        if !self.has_dims_of(divisor) {
            return None;
        }
        let mut c = LinearLayout::empty();
        let mut o = 0;
        while o < self.num_out_dims() {
            let label = self.out_label(o);
            let divisor_bits = divisor.out_bits(label);
            if self.out_bits_at(o) < divisor_bits {
                return None;
            }
            c = opt!(c.with_out_dim(label, 1 << (self.out_bits_at(o) - divisor_bits)));
            o += 1;
        }
        let mut i = 0;
        while i < self.num_in_dims() {
            let label = self.in_label(i);
            c = opt!(c.with_in_dim(label));
            let outer_bits = divisor.in_bits(label) as usize;
            let total = self.in_bits_at(i) as usize;
            if total < outer_bits {
                return None;
            }
            let inner_bits = total - outer_bits;
            let mut k = 0;
            while k < total {
                let v = self.packed_basis(i, k);
                let mut w = 0u64;
                o = 0;
                while o < self.num_out_dims() {
                    let low = c.out_bits_at(o);
                    let coord = self.coord(v, o);
                    if k < inner_bits {
                        // C's basis: must fit below C's size.
                        if coord >> low != 0 {
                            return None;
                        }
                        w |= (coord as u64) << c.out_offset(o);
                    } else {
                        // The divisor's basis, scaled by C's size; zero where it has no dimension.
                        let expected = match (
                            divisor.in_index(label),
                            divisor.out_index(self.out_label(o)),
                        ) {
                            (Some(d), Some(e)) => {
                                divisor.coord(divisor.packed_basis(d, k - inner_bits), e)
                            }
                            _ => 0,
                        };
                        if coord & ((1u32 << low) - 1) != 0 || coord >> low != expected {
                            return None;
                        }
                    }
                    o += 1;
                }
                if k < inner_bits {
                    opt!(c.push_packed_basis(i, w));
                }
                k += 1;
            }
            i += 1;
        }
        Some(c)
    }

    /// Whether every input and output dimension of `other` is one of `self`'s.
    const fn has_dims_of(&self, other: &LinearLayout) -> bool {
        let mut i = 0;
        while i < other.num_in_dims() {
            if self.in_index(other.in_label(i)).is_none() {
                return false;
            }
            i += 1;
        }
        let mut o = 0;
        while o < other.num_out_dims() {
            if self.out_index(other.out_label(o)).is_none() {
                return false;
            }
            o += 1;
        }
        true
    }

    // ------------------------------------------------------------------ properties

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
        if self.num_out_dims() != other.num_out_dims() || self.num_in_dims() != other.num_in_dims()
        {
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
            if !self.in_label(i).same(other.in_label(i))
                || self.in_bits_at(i) != other.in_bits_at(i)
            {
                return false;
            }
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
        let mut ins = [Label::Register; MAX_DIMS];
        let mut num_ins = 0;
        let mut i = 0;
        while i < self.num_in_dims() {
            if !contains(dims, self.in_label(i)) {
                ins[num_ins] = self.in_label(i);
                num_ins += 1;
            }
            i += 1;
        }
        let mut outs = [Label::Register; MAX_DIMS];
        let mut num_outs = 0;
        let mut o = 0;
        while o < self.num_out_dims() {
            if !contains(dims, self.out_label(o)) {
                outs[num_outs] = self.out_label(o);
                num_outs += 1;
            }
            o += 1;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expect_layout;
    use std::string::ToString;
    use Label::*;

    /// A blocked layout over a 32×8 tile: 4 registers along dim1, 32 lanes (2 along dim1, 16
    /// along dim0), 2 warps along dim0.
    const BLOCKED: LinearLayout = expect_layout(LinearLayout::distributed(
        &[
            (Register, &[&[0, 1], &[0, 2]]),
            (Lane, &[&[0, 4], &[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
            (Warp, &[&[16, 0]]),
        ],
        &[(Dim(0), 32), (Dim(1), 8)],
    ));

    /// The algebra runs in `const` evaluation.
    const BLOCKED_INVERSE: LinearLayout = expect_layout(BLOCKED.invert());
    const BLOCKED_ROUND_TRIP: LinearLayout = expect_layout(BLOCKED.compose(&BLOCKED_INVERSE));

    fn layout(bases: &[(Label, &[&[u32]])], outs: &[(Label, u32)]) -> LinearLayout {
        LinearLayout::from_bases(bases, outs).unwrap()
    }

    #[test]
    fn invert_then_compose_is_identity() {
        let identity = layout(
            &[
                (Register, &[&[1, 0, 0], &[2, 0, 0]]),
                (
                    Lane,
                    &[&[0, 1, 0], &[0, 2, 0], &[0, 4, 0], &[0, 8, 0], &[0, 16, 0]],
                ),
                (Warp, &[&[0, 0, 1]]),
            ],
            &[(Register, 4), (Lane, 32), (Warp, 2)],
        );
        assert_eq!(BLOCKED_ROUND_TRIP, identity);
        // dim0 = 1 is lane 2; dim1 = 4 is lane 1.
        assert_eq!(
            BLOCKED_INVERSE.apply(&[(Dim(0), 1)]).unwrap()[..3],
            [0, 2, 0]
        );
        assert_eq!(
            BLOCKED_INVERSE.apply(&[(Dim(1), 4)]).unwrap()[..3],
            [0, 1, 0]
        );
    }

    #[test]
    fn compose_evaluates_each_basis_through_the_outer_layout() {
        // self: register → dim0 (x ↦ 2x); outer: dim0 → offset with a swizzle-like XOR.
        let inner = layout(&[(Register, &[&[2], &[4]])], &[(Dim(0), 8)]);
        let outer = layout(&[(Dim(0), &[&[1], &[3], &[4]])], &[(Offset, 8)]);
        let c = inner.compose(&outer).unwrap();
        assert_eq!(c, layout(&[(Register, &[&[3], &[4]])], &[(Offset, 8)]));
        // Output dimension not an input of outer, or larger than it.
        let other = layout(&[(Dim(1), &[&[1]])], &[(Offset, 2)]);
        assert_eq!(
            inner.compose(&other).unwrap_err().to_string(),
            "invalid linear layout: cannot compose: an output dimension of the inner layout is not an input dimension of the outer layout"
        );
        let small = layout(&[(Dim(0), &[&[1], &[2]])], &[(Offset, 4)]);
        assert!(inner.compose(&small).is_err());
    }

    #[test]
    fn transposes_and_sublayouts_keep_the_map() {
        let t = BLOCKED.transpose_outs(&[Dim(1), Dim(0)]).unwrap();
        assert_eq!(t.out_label(0), Dim(1));
        assert_eq!(t.basis(Lane, 0).unwrap()[..2], [4, 0]);
        assert_eq!(t.transpose_outs(&[Dim(0), Dim(1)]).unwrap(), BLOCKED);
        let t = BLOCKED.transpose_ins(&[Warp, Register, Lane]).unwrap();
        assert_eq!(t.in_label(0), Warp);
        assert_eq!(t.transpose_ins(&[Register, Lane, Warp]).unwrap(), BLOCKED);
        assert_eq!(
            BLOCKED.transpose_ins(&[Warp, Register]).unwrap_err(),
            LayoutError::Incompatible {
                what:
                    "a new order of dimensions must list every dimension of the layout exactly once"
            }
        );
        assert_eq!(
            BLOCKED.transpose_outs(&[Dim(0), Dim(0)]).unwrap_err(),
            LayoutError::DuplicateDim { dim: Dim(0) }
        );
        let s = BLOCKED.sublayout(&[Lane], &[Dim(1)]).unwrap();
        assert_eq!(
            s,
            layout(&[(Lane, &[&[4], &[0], &[0], &[0], &[0]])], &[(Dim(1), 8)])
        );
        assert_eq!(
            BLOCKED.sublayout(&[Offset], &[]).unwrap_err(),
            LayoutError::UnknownDim { dim: Offset }
        );
    }

    #[test]
    fn reshapes_regroup_bits_first_dimension_minor() {
        // 32×8 → 256: dim1's bits sit above dim0's.
        let flat = BLOCKED.reshape_outs(&[(Dim(0), 256)]).unwrap();
        assert_eq!(flat.basis(Register, 0).unwrap()[0], 32);
        assert_eq!(flat.basis(Warp, 0).unwrap()[0], 16);
        assert_eq!(
            flat.reshape_outs(&[(Dim(0), 32), (Dim(1), 8)]).unwrap(),
            BLOCKED
        );
        assert_eq!(BLOCKED.flatten_outs().unwrap(), flat);
        let ins = BLOCKED
            .reshape_ins(&[(Register, 8), (Lane, 16), (Warp, 2)])
            .unwrap();
        assert_eq!(ins.basis(Register, 2).unwrap()[..2], [0, 4]);
        assert_eq!(ins.in_bits(Lane), 4);
        assert!(BLOCKED.reshape_ins(&[(Register, 8)]).is_err());
        assert!(BLOCKED.reshape_outs(&[(Dim(0), 6)]).is_err());
        let split = BLOCKED.split_in(Lane, (Lane, 4), (Block, 8)).unwrap();
        assert_eq!(split.in_label(2), Block);
        assert_eq!(split.basis(Block, 0).unwrap()[..2], [2, 0]);
        assert_eq!(
            split
                .reshape_ins(&[(Register, 4), (Lane, 32), (Warp, 2)])
                .unwrap(),
            BLOCKED
        );
    }

    #[test]
    fn pseudo_invert_reads_broadcast_elements_from_one_place() {
        // Lane 1 and lane 2 hold the same element (dim0 = 1): the right inverse uses lane 1
        // (the pivot) only, and never the broadcast register bit.
        let l = layout(
            &[(Register, &[&[0]]), (Lane, &[&[1], &[1], &[2]])],
            &[(Dim(0), 4)],
        );
        let r = l.pseudo_invert().unwrap();
        assert_eq!(
            r,
            layout(
                &[(Dim(0), &[&[0, 1], &[0, 4]])],
                &[(Register, 2), (Lane, 8)]
            )
        );
        assert!(l.invert().is_err());
        let not_onto = layout(&[(Lane, &[&[1]])], &[(Dim(0), 4)]);
        assert_eq!(
            not_onto.pseudo_invert().unwrap_err(),
            LayoutError::NotSurjective {
                out_dim: Dim(0),
                bit: 1
            }
        );
    }

    #[test]
    fn invert_and_compose_keeps_shared_dimensions_as_identity() {
        // Same warps in both layouts: warps map to themselves even though both broadcast.
        let a = layout(
            &[(Register, &[&[1], &[2]]), (Warp, &[&[0]])],
            &[(Dim(0), 4)],
        );
        let b = layout(
            &[(Register, &[&[2], &[1]]), (Warp, &[&[0]])],
            &[(Dim(0), 4)],
        );
        let c = a.invert_and_compose(&b).unwrap();
        assert_eq!(
            c,
            layout(
                &[(Register, &[&[2, 0], &[1, 0]]), (Warp, &[&[0, 1]])],
                &[(Register, 4), (Warp, 2)]
            )
        );
        // Not reachable: b covers only half of dim0.
        let half = layout(&[(Register, &[&[1]])], &[(Dim(0), 4)]);
        assert!(a.invert_and_compose(&half).is_err());
    }

    #[test]
    fn divide_left_undoes_product() {
        let inner = layout(&[(Register, &[&[1], &[2]])], &[(Dim(0), 4)]);
        let outer = layout(
            &[(Register, &[&[0, 1]]), (Lane, &[&[1, 0]])],
            &[(Dim(0), 2), (Dim(1), 2)],
        );
        let p = inner.product(&outer).unwrap();
        assert_eq!(p.divide_left(&inner), Some(outer));
        // The first bases must be the divisor's.
        let other = layout(&[(Register, &[&[2], &[1]])], &[(Dim(0), 4)]);
        assert_eq!(p.divide_left(&other), None);
        // A larger divisor does not divide.
        assert_eq!(inner.divide_left(&p), None);
        let right = layout(&[(Register, &[&[1]])], &[(Dim(1), 2)]);
        let q = outer.product(&right).unwrap();
        assert_eq!(q.divide_right(&right), Some(outer));
    }

    #[test]
    fn concat_resize_and_masks() {
        let a = layout(&[(Register, &[&[1], &[0]])], &[(Dim(0), 2)]);
        let b = layout(&[(Lane, &[&[1]])], &[(Dim(0), 2)]);
        let ab = a.concat_ins(&b).unwrap();
        assert_eq!(
            ab,
            layout(
                &[(Register, &[&[1], &[0]]), (Lane, &[&[1]])],
                &[(Dim(0), 2)]
            )
        );
        assert_eq!(ab.free_variable_masks()[..2], [0b10, 0b1]);
        assert_eq!(ab.free_variable_mask(Lane), 1);
        assert_eq!(
            a.concat_ins(&a).unwrap_err(),
            LayoutError::DuplicateDim { dim: Register }
        );
        let c = layout(&[(Register, &[&[0], &[1]])], &[(Dim(1), 2)]);
        assert_eq!(
            a.concat_outs(&c).unwrap(),
            layout(
                &[(Register, &[&[1, 0], &[0, 1]])],
                &[(Dim(0), 2), (Dim(1), 2)]
            )
        );
        let r = ab.resize_in_dim(Register, 8).unwrap();
        assert_eq!(r.basis(Register, 2).unwrap()[0], 0);
        assert_eq!(r.resize_in_dim(Register, 4).unwrap(), ab);
        let wide = layout(&[(Lane, &[&[1], &[6], &[2]])], &[(Dim(0), 8)]);
        assert_eq!(
            wide.resize_out_dim(Dim(0), 4).unwrap(),
            layout(&[(Lane, &[&[1], &[0], &[2]])], &[(Dim(0), 4)])
        );
        assert_eq!(wide.remove_zero_bases(Lane).unwrap(), wide);
        assert_eq!(
            a.remove_zero_bases(Register).unwrap(),
            layout(&[(Register, &[&[1]])], &[(Dim(0), 2)])
        );
    }

    #[test]
    fn equality_ignoring_sizes_and_consecutive_elements() {
        let a = layout(&[(Register, &[&[1], &[2]])], &[(Dim(0), 4)]);
        let b = layout(&[(Register, &[&[1], &[2]])], &[(Dim(0), 8)]);
        assert!(a.equal_ignoring_out_dim_sizes(&b));
        assert_ne!(a, b);
        assert_eq!(a.get_num_consecutive_in_out(), 4);
        // Registers 0,1 consecutive in dim0, then a lane at dim0 = 2 caps at 2.
        assert_eq!(BLOCKED.get_num_consecutive_in_out(), 1);
        let v = layout(
            &[(Register, &[&[1, 0], &[2, 0], &[0, 1]]), (Lane, &[&[2, 0]])],
            &[(Dim(0), 4), (Dim(1), 2)],
        );
        assert_eq!(v.get_num_consecutive_in_out(), 2);
        // The first in-dim's consecutive bases cannot run past the first out-dim's size.
        let short = layout(
            &[(Register, &[&[1, 0], &[0, 1]])],
            &[(Dim(0), 2), (Dim(1), 2)],
        );
        assert_eq!(short.get_num_consecutive_in_out(), 2);
    }

    #[test]
    fn trivial_over_and_quotient() {
        let l = layout(
            &[(Register, &[&[1, 0]]), (Block, &[&[0, 1], &[0, 2]])],
            &[(Dim(0), 2), (Block, 4)],
        );
        assert!(l.is_trivial_over(&[Block]));
        assert_eq!(
            l.quotient(&[Block]),
            Some(layout(&[(Register, &[&[1]])], &[(Dim(0), 2)]))
        );
        let mixed = layout(
            &[(Register, &[&[1, 1]]), (Block, &[&[0, 1], &[0, 2]])],
            &[(Dim(0), 2), (Block, 4)],
        );
        assert!(!mixed.is_trivial_over(&[Block]));
        assert_eq!(mixed.quotient(&[Block]), None);
        assert!(!l.is_trivial_over(&[Warp]));
        assert!(l.is_trivial_over(&[]));
    }

    #[test]
    fn definitions_4_10_and_4_14() {
        assert!(BLOCKED.is_distributed_layout());
        let repeated = layout(
            &[(Register, &[&[1]]), (Lane, &[&[1], &[2]])],
            &[(Dim(0), 4)],
        );
        assert!(repeated.is_surjective() && !repeated.is_distributed_layout());
        let mixed = layout(&[(Lane, &[&[3], &[2]])], &[(Dim(0), 4)]);
        assert!(mixed.is_surjective() && !mixed.is_distributed_layout());
        let broadcast = layout(&[(Lane, &[&[1], &[0], &[2]])], &[(Dim(0), 4)]);
        assert!(broadcast.is_distributed_layout());
        let not_hw = layout(&[(Offset, &[&[1], &[2]])], &[(Dim(0), 4)]);
        assert!(!not_hw.is_distributed_layout());
        // mma swizzle [[I, C], [0, I]] with C one bit per column: columns of 1 or 2 bits.
        let swizzle = layout(
            &[(Offset, &[&[1, 0], &[2, 0], &[0, 1], &[2, 2]])],
            &[(Dim(0), 4), (Dim(1), 4)],
        );
        assert!(swizzle.is_memory_layout());
        assert!(!not_hw.resize_out_dim(Dim(0), 8).unwrap().is_memory_layout());
        let three_bits = layout(
            &[(Offset, &[&[1, 0], &[3, 1], &[0, 2]])],
            &[(Dim(0), 4), (Dim(1), 4)],
        );
        assert!(!three_bits.is_memory_layout());
        assert!(!BLOCKED.is_memory_layout());
    }
}
