//! Division (Definition 4.4): `self = divisor × C`, solved for `C` on the left or the right.

use super::repack;
use crate::LinearLayout;

impl LinearLayout {
    /// `C` with `self = divisor × C` (Definition 4.4, Triton `divideLeft`), or `None`. Label by
    /// label `M_self = [[M_divisor, 0], [0, M_C]]`: the first bases of each input dimension are
    /// the divisor's, the others have zero low (divisor-sized) bits. `C` has `self`'s dimensions.
    pub const fn divide_left(&self, divisor: &LinearLayout) -> Option<LinearLayout> {
        divide(self, divisor, true)
    }

    /// `C` with `self = C × divisor` (Triton `divideRight`), or `None`: the last bases of each
    /// input dimension are the divisor's scaled by `C`'s size, the first ones stay below it.
    pub const fn divide_right(&self, divisor: &LinearLayout) -> Option<LinearLayout> {
        divide(self, divisor, false)
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
}

/// A layout with the output dimensions of `self / divisor` (each `self`'s size over the
/// divisor's) and no inputs, or `None` when `divisor` has a dimension `self` lacks or is larger.
const fn quotient_outs(layout: &LinearLayout, divisor: &LinearLayout) -> Option<LinearLayout> {
    if !layout.has_dims_of(divisor) {
        return None;
    }
    let mut c = LinearLayout::empty();
    let mut o = 0;
    while o < layout.num_out_dims() {
        let label = layout.out_label(o);
        let divisor_bits = divisor.out_bits(label);
        if layout.out_bits_at(o) < divisor_bits {
            return None;
        }
        c = opt!(c.with_out_dim(label, 1 << (layout.out_bits_at(o) - divisor_bits)));
        o += 1;
    }
    Some(c)
}

/// `C` with `layout = divisor × C` (`left`) or `layout = C × divisor`, or `None`: `C`'s outputs
/// from [`quotient_outs`], then its bases input dimension by input dimension.
const fn divide(layout: &LinearLayout, divisor: &LinearLayout, left: bool) -> Option<LinearLayout> {
    let Some(mut c) = quotient_outs(layout, divisor) else {
        return None;
    };
    let mut i = 0;
    while i < layout.num_in_dims() {
        let label = layout.in_label(i);
        c = opt!(c.with_in_dim(label));
        if left {
            // The first bases must be the divisor's, the others vanish on its (low) bits.
            let divisor_in = divisor.in_index(label);
            let inner_bits = divisor.in_bits(label) as usize;
            if (layout.in_bits_at(i) as usize) < inner_bits {
                return None;
            }
            let mut k = 0;
            while k < layout.in_bits_at(i) as usize {
                let v = layout.packed_basis(i, k);
                if k < inner_bits {
                    // Must be the divisor's basis, with zeros where it has no dimension.
                    let expected = match divisor_in {
                        Some(d) => repack(divisor, layout, divisor.packed_basis(d, k)),
                        None => 0,
                    };
                    if v != expected {
                        return None;
                    }
                } else {
                    // Must vanish on the divisor's (low) bits; the rest, shifted down, is C's.
                    let mut w = 0u64;
                    let mut o = 0;
                    while o < layout.num_out_dims() {
                        let low = divisor.out_bits(layout.out_label(o));
                        let coord = layout.coord(v, o);
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
        } else {
            // The last bases must be the divisor's scaled by C's size, the first ones stay
            // below it.
            let outer_bits = divisor.in_bits(label) as usize;
            let total = layout.in_bits_at(i) as usize;
            if total < outer_bits {
                return None;
            }
            let inner_bits = total - outer_bits;
            let mut k = 0;
            while k < total {
                let v = layout.packed_basis(i, k);
                let mut w = 0u64;
                let mut o = 0;
                while o < layout.num_out_dims() {
                    let low = c.out_bits_at(o);
                    let coord = layout.coord(v, o);
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
                            divisor.out_index(layout.out_label(o)),
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
        }
        i += 1;
    }
    Some(c)
}
