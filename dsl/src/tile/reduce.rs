//! Warp reductions of any element: butterfly shuffles and the `(value, index)` combiners of
//! `argmax`/`argmin`.

use super::elements::{Cmp, Elem};
use crate::device;

/// `shfl.sync.bfly` of any element over the whole warp: the value of lane `lane ^ lane_mask`.
/// Elements of up to 32 bits take one shuffle, 64-bit ones two.
#[inline(always)]
pub fn shfl_bfly<T: Elem>(value: T, lane_mask: u32) -> T {
    let bits = value.to_bits();
    let lo = device::shfl_bfly_b32(
        device::FULL_MASK,
        bits as u32,
        lane_mask,
        device::SHFL_C_FULL,
    );
    if T::BITS <= 32 {
        T::from_bits(lo as u64)
    } else {
        let hi = device::shfl_bfly_b32(
            device::FULL_MASK,
            (bits >> 32) as u32,
            lane_mask,
            device::SHFL_C_FULL,
        );
        T::from_bits(lo as u64 | (hi as u64) << 32)
    }
}

/// `value` of the lane `l ^ wave_mask` of this thread's AMD wave, `l` its lane in the wave
/// (`lane_id() | (warp_id() & 1) << 5`; `wave_mask < 64`, bit 5 the other warp of the wave), by
/// `ds_bpermute` over the wave (`device::wave_shfl_idx`): the butterflies across a wave of the
/// bodies planned for AMD (a reduction's along warp bit 0, mask 32; a scan level's). Elements of
/// up to 32 bits take one shuffle, 64-bit ones two.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn wave_bfly<T: Elem>(value: T, wave_mask: u32) -> T {
    let source = (device::lane_id() | (device::warp_id() & 1) << 5) ^ wave_mask;
    let bits = value.to_bits();
    let lo = device::wave_shfl_idx_b32(bits as u32, source);
    if T::BITS <= 32 {
        T::from_bits(lo as u64)
    } else {
        let hi = device::wave_shfl_idx_b32((bits >> 32) as u32, source);
        T::from_bits(lo as u64 | (hi as u64) << 32)
    }
}

/// The `(value, index)` pair `argmax` keeps: the larger value; on a tie (or both NaN) the
/// smaller index; NaN counts as larger than every number (so `argmax` finds the first NaN).
#[inline(always)]
pub fn argmax_combine<T: Cmp>(a: (T, i32), b: (T, i32)) -> (T, i32) {
    arg_combine(a, b, T::gt)
}

/// The `(value, index)` pair `argmin` keeps: the smaller value; on a tie (or both NaN) the
/// smaller index; NaN counts as smaller than every number (so `argmin` finds the first NaN).
#[inline(always)]
pub fn argmin_combine<T: Cmp>(a: (T, i32), b: (T, i32)) -> (T, i32) {
    arg_combine(a, b, T::lt)
}

/// The pair an arg-reduction keeps of `a` and `b`: `b` if its value wins (`wins(b, a)`), or ties
/// with a smaller index; a NaN wins over every number, and of two NaNs the smaller index.
#[inline(always)]
fn arg_combine<T: Cmp>(a: (T, i32), b: (T, i32), wins: impl Fn(T, T) -> bool) -> (T, i32) {
    let a_nan = !T::eq(a.0, a.0);
    let b_nan = !T::eq(b.0, b.0);
    let take_b = if a_nan || b_nan {
        b_nan && (!a_nan || b.1 < a.1)
    } else {
        wins(b.0, a.0) || (T::eq(b.0, a.0) && b.1 < a.1)
    };
    if take_b {
        b
    } else {
        a
    }
}
