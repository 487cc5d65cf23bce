//! Composition (Definition 4.2): `outer ∘ self`, the matrix product `M_outer · M_self`.

use super::{incompatible, with_in_dims_of, with_out_dims_of};
use crate::{LayoutError, LinearLayout};

impl LinearLayout {
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
        let mut result = tri!(with_in_dims_of(tri!(with_out_dims_of(outer)), self));
        let mut i = 0;
        while i < self.num_in_dims() {
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
}
