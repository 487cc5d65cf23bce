//! Product (Triton's `operator*`): the block-diagonal matrix `[[A, 0], [0, B]]`, merged by label.

use super::labels;
use crate::{Label, LayoutError, LinearLayout, MAX_BASES, MAX_DIMS};

impl LinearLayout {
    /// The product `self × outer` (Triton's `operator*`): input and output dimensions are merged
    /// by label; on a shared input dimension `outer`'s bases come after `self`'s, and on a shared
    /// output dimension `outer`'s coordinates are scaled by `self`'s size (they become the high
    /// bits). On disjoint dimensions this is the block-diagonal matrix `[[A, 0], [0, B]]`.
    pub const fn product(&self, outer: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        // Dimension orders: Triton's `supremum` of the two orders (the merge that keeps both).
        let (self_outs, n_self_outs) = labels(self, false, &[]);
        let (outer_outs, n_outer_outs) = labels(outer, false, &[]);
        let (outs, num_outs) = tri!(supremum(&self_outs, n_self_outs, &outer_outs, n_outer_outs));
        let (self_ins, n_self_ins) = labels(self, true, &[]);
        let (outer_ins, n_outer_ins) = labels(outer, true, &[]);
        let (ins, num_ins) = tri!(supremum(&self_ins, n_self_ins, &outer_ins, n_outer_ins));
        let mut result = Self::empty();
        let mut o = 0;
        while o < num_outs {
            let label = outs[o];
            let size_bits = self.out_bits(label) + outer.out_bits(label);
            if size_bits > 31 {
                return Err(LayoutError::TooManyOutBits {
                    bits: size_bits as u8,
                    max: 31,
                });
            }
            result = tri!(result.with_out_dim(label, 1 << size_bits));
            o += 1;
        }
        let mut i = 0;
        while i < num_ins {
            let label = ins[i];
            result = tri!(result.with_in_dim(label));
            let count = self.in_bits(label) + outer.in_bits(label);
            if count as usize > MAX_BASES {
                return Err(LayoutError::TooManyBases {
                    dim: label,
                    count: count as u8,
                    max: MAX_BASES as u8,
                });
            }
            if let Some(si) = self.in_index(label) {
                let mut k = 0;
                while k < self.in_bits_at(si) as usize {
                    let v = result.repack_scaled(self, self.packed_basis(si, k), None);
                    tri!(result.push_packed_basis(i, v));
                    k += 1;
                }
            }
            if let Some(oi) = outer.in_index(label) {
                let mut k = 0;
                while k < outer.in_bits_at(oi) as usize {
                    let v = result.repack_scaled(outer, outer.packed_basis(oi, k), Some(self));
                    tri!(result.push_packed_basis(i, v));
                    k += 1;
                }
            }
            i += 1;
        }
        Ok(result)
    }

    /// Re-packs a vector of `src` into `self`'s output dimensions (by label), each coordinate
    /// shifted left by `inner`'s size there (the high bits of a product), or unshifted.
    const fn repack_scaled(
        &self,
        src: &LinearLayout,
        packed: u64,
        inner: Option<&LinearLayout>,
    ) -> u64 {
        let mut out = 0u64;
        let mut o = 0;
        while o < src.num_out_dims() {
            let label = src.out_label(o);
            let shift = match inner {
                Some(inner) => inner.out_bits(label),
                None => 0,
            };
            if let Some(d) = self.out_index(label) {
                out |= ((src.coord(packed, o) as u64) << shift) << self.out_offset(d);
            }
            o += 1;
        }
        out
    }
}

/// Triton's `supremum` of two dimension orders: the shortest order that contains both as
/// subsequences (a dimension only one side has goes first); an error if the orders disagree.
const fn supremum(
    x: &[Label; MAX_DIMS],
    nx: usize,
    y: &[Label; MAX_DIMS],
    ny: usize,
) -> Result<([Label; MAX_DIMS], usize), LayoutError> {
    const fn position(list: &[Label; MAX_DIMS], n: usize, label: Label) -> Option<usize> {
        let mut k = 0;
        while k < n {
            if list[k].same(label) {
                return Some(k);
            }
            k += 1;
        }
        None
    }
    let mut out = [Label::Register; MAX_DIMS];
    let mut n = 0;
    let (mut i, mut j) = (0, 0);
    loop {
        while i < nx && position(&out, n, x[i]).is_some() {
            i += 1;
        }
        while j < ny && position(&out, n, y[j]).is_some() {
            j += 1;
        }
        if i >= nx && j >= ny {
            break;
        }
        if n == MAX_DIMS {
            return Err(LayoutError::TooManyDims {
                max: MAX_DIMS as u8,
            });
        }
        // Triton's rule, step by step: equal heads go together; a head whose twin in the other
        // order is already passed (or absent) goes now; else the head whose twin comes first.
        let take_x = if i < nx && j < ny && x[i].same(y[j]) {
            if let Some(p) = position(y, ny, x[i]) {
                if p < j {
                    return Err(LayoutError::Incompatible {
                        what: "the two layouts order their shared dimensions differently",
                    });
                }
            }
            j += 1;
            true
        } else {
            const INF: usize = usize::MAX;
            let cand_x = match (i < nx, if i < nx { position(y, ny, x[i]) } else { None }) {
                (true, Some(p)) if p >= j => p,
                _ => INF,
            };
            let cand_y = match (j < ny, if j < ny { position(x, nx, y[j]) } else { None }) {
                (true, Some(p)) if p >= i => p,
                _ => INF,
            };
            if i < nx && cand_x == INF {
                true
            } else if j < ny && cand_y == INF {
                false
            } else {
                cand_x <= cand_y
            }
        };
        if take_x {
            out[n] = x[i];
            i += 1;
        } else {
            out[n] = y[j];
            j += 1;
        }
        n += 1;
    }
    Ok((out, n))
}
