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
//! For a whole warp use `c = `[`SHFL_C_FULL`] (idx, bfly, down) or [`SHFL_C_UP`] (up); for
//! segments of `width` lanes use [`shfl_c`]`(width)` / [`shfl_c_up`]`(width)`, as CUDA's
//! `__shfl_*_sync(mask, v, x, width)` do. 64-bit values are moved as two 32-bit shuffles.

use super::word::ShflValue;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(target_arch = "nvptx64"))]
use crate::emulator::ops::{self, ShflMode};

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
            #[cfg(not(target_arch = "nvptx64"))]
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
