//! Inverses: `invert_and_compose` (Triton's `lstsq`), the pseudo-inverse and the inverse.

use super::{incompatible, labels, repack, same_in_dim, with_out_dims_of};
use crate::f2::EchelonBasis;
use crate::{LayoutError, LinearLayout, MAX_DIMS};

impl LinearLayout {
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
        let (labels, count) = labels(self, false, &[]);
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
}
