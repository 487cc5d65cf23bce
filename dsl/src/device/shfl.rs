//! Warp shuffles: `shfl.sync.{idx,bfly,up,down}.b32 d, a, b, c, membermask`.
//!
//! Every lane of `membermask` must execute the same shuffle (and the executing lane must be in
//! it). Per lane, with `lane` the executing lane, `bval = b & 31`, `cval = c & 31` (clamp) and
//! `segmask = (c >> 8) & 31`:
//!
//! ```text
//! maxLane = (lane & segmask) | (cval & ~segmask);  minLane = lane & segmask
//! up:   j = lane - bval;                   valid = j >= maxLane
//! down: j = lane + bval;                   valid = j <= maxLane
//! bfly: j = lane ^ bval;                   valid = j <= maxLane
//! idx:  j = minLane | (bval & ~segmask);   valid = j <= maxLane
//! d = valid ? a[j] : a[lane]
//! ```
//!
//! On amdgpu a warp is half a wave (see `device/amdgpu.rs`): the source lane is computed by
//! `shfl_source`, the formula above, and read with `ds_bpermute` within the half; a butterfly
//! with a mask and clamp LLVM knows, whose partner is always valid, is read by DPP (masks 1 and
//! 2) or `ds_swizzle` (the others) instead, without an address.
//!
//! For a whole warp use `c = `[`SHFL_C_FULL`] (idx, bfly, down) or [`SHFL_C_UP`] (up); for
//! segments of `width` lanes use [`shfl_c`]`(width)` / [`shfl_c_up`]`(width)`, as CUDA's
//! `__shfl_*_sync(mask, v, x, width)` do. 64-bit values are moved as two 32-bit shuffles.

use super::word::ShflValue;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::ops;

/// `shfl.sync` modes.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// The lane that `lane` reads in a shuffle of mode `mode` with operands `b` and `c`, and whether
/// it is valid (when it is not, the lane keeps its own value): the formula of this module's docs.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(crate) const fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1f;
    let cval = c & 0x1f;
    let segmask = (c >> 8) & 0x1f;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, valid) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Bfly => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (bval & !segmask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if valid {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

/// Whether a shuffle is a butterfly whose partner `lane ^ b` is always valid (`b`'s bits inside
/// the segment, the clamp at its end), with `b` and `c` known to LLVM: then amdgpu reads it by
/// DPP or `ds_swizzle` (`amdgpu::warp_xor`), which need no address, instead of `ds_bpermute`.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn amd_butterfly(mode: ShflMode, b: u32, c: u32) -> bool {
    use core::intrinsics::is_val_statically_known;
    matches!(mode, ShflMode::Bfly)
        && is_val_statically_known(b)
        && is_val_statically_known(c)
        && (b & 0x1f) & ((c >> 8) & 0x1f) == 0
        && c & 0x1f == 0x1f
}

/// All 32 lanes.
pub const FULL_MASK: u32 = u32::MAX;
/// `c` operand for a whole-warp `idx`, `bfly` or `down` shuffle (clamp 31, no segments).
pub const SHFL_C_FULL: u32 = 0x1f;
/// `c` operand for a whole-warp `up` shuffle (clamp 0, no segments).
pub const SHFL_C_UP: u32 = 0;

/// `c` operand for `idx`/`bfly`/`down` shuffles within segments of `width` lanes
/// (a power of two ≤ 32): `((32 - width) << 8) | 0x1f`.
#[inline(always)]
pub const fn shfl_c(width: u32) -> u32 {
    ((32 - width) << 8) | 0x1f
}

/// `c` operand for `up` shuffles within segments of `width` lanes: `(32 - width) << 8`.
#[inline(always)]
pub const fn shfl_c_up(width: u32) -> u32 {
    (32 - width) << 8
}

/// Defines the shuffle `$name` of one 32-bit word (`$ptx`, emulator mode `$mode`) and `$any`,
/// the same shuffle of any [`ShflValue`] (64-bit values as two words), whose `b` operand is
/// named `$b`.
macro_rules! shfl {
    (
        $(#[$doc:meta])* $name:ident, $ptx:literal, $mode:ident;
        $(#[$any_doc:meta])* $any:ident($b:ident)
    ) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(mask: u32, a: u32, b: u32, c: u32) -> u32 {
            #[cfg(target_arch = "nvptx64")]
            {
                let d: u32;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!(
                        concat!($ptx, " {d}, {a}, {b}, {c}, {mask};"),
                        d = out(reg32) d,
                        a = in(reg32) a,
                        b = in(reg32) b,
                        c = in(reg32) c,
                        mask = in(reg32) mask,
                        options(nomem, nostack)
                    );
                }
                d
            }
            #[cfg(target_arch = "amdgpu")]
            {
                // Every lane of the warp (half-wave) executes the shuffle: `mask` names them.
                let _ = mask;
                if amd_butterfly(ShflMode::$mode, b, c) {
                    return super::amdgpu::warp_xor(b, a);
                }
                let (src, _) = shfl_source(ShflMode::$mode, super::sreg::lane_id(), b, c);
                super::amdgpu::warp_read(src, a)
            }
            #[cfg(not(tessera_device))]
            {
                ops::shfl(ShflMode::$mode, mask, a, b, c).0
            }
        }

        $(#[$any_doc])*
        #[inline(always)]
        pub fn $any<T: ShflValue>(mask: u32, value: T, $b: u32, c: u32) -> T {
            value.map_words(|w| $name(mask, w, $b, c))
        }
    };
}

shfl!(
    /// `shfl.sync.idx.b32 d, a, b, c, mask`: `a` of lane `b` (within the segment).
    shfl_idx_b32, "shfl.sync.idx.b32", Idx;
    /// Indexed shuffle of any 32- or 64-bit value: `value` of source lane `src_lane`.
    shfl_idx(src_lane)
);
shfl!(
    /// `shfl.sync.bfly.b32 d, a, b, c, mask`: `a` of lane `lane ^ b`.
    shfl_bfly_b32, "shfl.sync.bfly.b32", Bfly;
    /// Butterfly shuffle of any 32- or 64-bit value: `value` of lane `lane ^ lane_mask`.
    shfl_bfly(lane_mask)
);
shfl!(
    /// `shfl.sync.up.b32 d, a, b, c, mask`: `a` of lane `lane - b` (own value below the clamp).
    shfl_up_b32, "shfl.sync.up.b32", Up;
    /// Up shuffle of any 32- or 64-bit value: `value` of lane `lane - delta`.
    shfl_up(delta)
);
shfl!(
    /// `shfl.sync.down.b32 d, a, b, c, mask`: `a` of lane `lane + b` (own value past the clamp).
    shfl_down_b32, "shfl.sync.down.b32", Down;
    /// Down shuffle of any 32- or 64-bit value: `value` of lane `lane + delta`.
    shfl_down(delta)
);

#[cfg(test)]
mod tests {
    use super::*;

    // Laws of CUDA's `__shfl_*_sync(mask, v, x, width)`: lane ℓ of a segment of `width` lanes
    // (base s = ℓ − ℓ mod width) reads idx: s + (x mod width); bfly: ℓ ^ x when below the
    // segment's end (CUDA: "earlier groups" may be read, later ones not); up: ℓ − x when ≥ s;
    // down: ℓ + x when < s + width; otherwise its own value.
    #[test]
    fn the_source_lane_follows_cudas_width_rules() {
        for width in [1u32, 2, 4, 8, 16, 32] {
            for lane in 0..32u32 {
                let s = lane - lane % width;
                for x in 0..32u32 {
                    let idx = shfl_source(ShflMode::Idx, lane, x, shfl_c(width));
                    assert_eq!(idx, (s + x % width, true), "idx w{width} l{lane} x{x}");
                    let bfly = shfl_source(ShflMode::Bfly, lane, x, shfl_c(width));
                    let j = lane ^ x;
                    let want = if j < s + width {
                        (j, true)
                    } else {
                        (lane, false)
                    };
                    assert_eq!(bfly, want, "bfly w{width} l{lane} x{x}");
                    let up = shfl_source(ShflMode::Up, lane, x, shfl_c_up(width));
                    let want = if lane >= s + x {
                        (lane - x, true)
                    } else {
                        (lane, false)
                    };
                    assert_eq!(up, want, "up w{width} l{lane} x{x}");
                    let down = shfl_source(ShflMode::Down, lane, x, shfl_c(width));
                    let want = if lane + x < s + width {
                        (lane + x, true)
                    } else {
                        (lane, false)
                    };
                    assert_eq!(down, want, "down w{width} l{lane} x{x}");
                }
            }
        }
    }
}
