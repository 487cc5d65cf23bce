//! Conversions between f32, f16, bf16, f8 (e4m3, e5m2), i32 and u32.
//!
//! On nvptx64 each is one PTX `cvt` (listed per function); on the host the same function is
//! exact integer code from [`crate::dtype`] / Rust `as`, bit-identical to the PTX result (see the
//! table in [`crate::dtype`]).
//!
//! The f8 `cvt` forms need sm_89 and PTX ISA 7.8. They are used when the target CPU is sm_89 or
//! newer (`#[cfg(target_feature = "sm_89")]`, set by `-C target-cpu=sm_89`/`sm_90`, for which
//! LLVM also raises `.version` to 7.8); for older targets (the default sm_80) the f8 conversions
//! compile to the same integer code as the host, so they work everywhere and give identical bits.
//!
//! On amdgpu every conversion is that exact integer code too (the host's body; rounding to an
//! integer by LLVM's `roundeven`), bit for bit the emulator's results.

use crate::dtype::{bf16, f16, f8e4m3, f8e5m2};

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// Defines each conversion `$name`: on nvptx64 the one instruction `$ptx` (`{d}` the result, a
/// `$dreg` register of type `$dty` that `$from_asm` turns into the value; `{a}` the operand, the
/// `$sreg` register that `$to_asm` makes of `$x`), on the host `$host`.
macro_rules! cvt_fns {
    ($(
        $(#[$doc:meta])* $name:ident($x:ident: $in:ty) -> $out:ty, host $host:expr,
        device($dreg:ident: $dty:ty, $sreg:ident, $ptx:literal, $to_asm:expr, $from_asm:expr);
    )*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name($x: $in) -> $out {
            #[cfg(target_arch = "nvptx64")]
            {
                let r: $dty;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!($ptx, d = out($dreg) r, a = in($sreg) ($to_asm)($x),
                         options(pure, nomem, nostack));
                }
                ($from_asm)(r)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                $host
            }
        }
    )*};
}

/// `cvt_fns!` for conversions between 32-bit values, each passed to and from its `reg32`
/// register unchanged.
macro_rules! cvt_b32_fns {
    ($($(#[$doc:meta])* $name:ident($x:ident: $in:ty) -> $out:ty, $ptx:literal, host $host:expr;)*) => {
        cvt_fns! {$(
            $(#[$doc])* $name($x: $in) -> $out, host $host,
            device(reg32: $out, reg32, $ptx, |x: $in| x, |r: $out| r);
        )*}
    };
}

cvt_fns! {
    /// `cvt.rn.f16.f32 d, a`: round to nearest even; overflow gives ±inf, NaN gives `0x7fff`.
    f32_to_f16(x: f32) -> f16, host f16::from_f32(x),
    device(reg16: u16, reg32, "cvt.rn.f16.f32 {d}, {a};", |x: f32| x, |r: u16| f16(r));
    /// `cvt.f32.f16 d, a`: exact; NaN gives `0x7fffffff`.
    f16_to_f32(x: f16) -> f32, host x.to_f32(),
    device(reg32: f32, reg16, "cvt.f32.f16 {d}, {a};", |x: f16| x.0, |r: f32| r);
    /// `cvt.rn.bf16.f32 d, a` (sm_80): round to nearest even; overflow gives ±inf, NaN gives
    /// `0x7fff`.
    f32_to_bf16(x: f32) -> bf16, host bf16::from_f32(x),
    device(reg16: u16, reg32, "cvt.rn.bf16.f32 {d}, {a};", |x: f32| x, |r: u16| bf16(r));
    /// `shl.b32 d, a, 16`: bf16 → f32 is exact (the bf16 bits are the top half of the f32; NaN
    /// payloads are kept). PTX's `cvt.f32.bf16` needs sm_90; the shift works everywhere.
    bf16_to_f32(x: bf16) -> f32, host x.to_f32(),
    device(reg32: u32, reg32, "shl.b32 {d}, {a}, 16;", |x: bf16| x.0 as u32, |r: u32| f32::from_bits(r));
}
cvt_b32_fns! {
    /// `cvt.rzi.s32.f32 d, a`: truncate toward zero, saturate to the i32 range, NaN → 0
    /// (Rust's `x as i32`).
    f32_to_i32_rz(x: f32) -> i32, "cvt.rzi.s32.f32 {d}, {a};", host x as i32;
    /// `cvt.rni.s32.f32 d, a`: round to nearest even integer, saturate, NaN → 0.
    f32_to_i32_rn(x: f32) -> i32, "cvt.rni.s32.f32 {d}, {a};", host round_ties_even(x) as i32;
    /// `cvt.rzi.u32.f32 d, a`: truncate toward zero, saturate to the u32 range (negative → 0),
    /// NaN → 0 (Rust's `x as u32`).
    f32_to_u32_rz(x: f32) -> u32, "cvt.rzi.u32.f32 {d}, {a};", host x as u32;
    /// `cvt.rni.u32.f32 d, a`: round to nearest even integer, saturate, NaN → 0.
    f32_to_u32_rn(x: f32) -> u32, "cvt.rni.u32.f32 {d}, {a};", host round_ties_even(x) as u32;
    /// `cvt.rn.f32.s32 d, a`: round to nearest even (Rust's `x as f32`).
    i32_to_f32(x: i32) -> f32, "cvt.rn.f32.s32 {d}, {a};", host x as f32;
    /// `cvt.rn.f32.u32 d, a`: round to nearest even (Rust's `x as f32`).
    u32_to_f32(x: u32) -> f32, "cvt.rn.f32.u32 {d}, {a};", host x as f32;
}

/// `x` rounded to the nearest integer, ties to even (`f32::round_ties_even`; on amdgpu LLVM's
/// `roundeven`, `v_rndne_f32`).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn round_ties_even(x: f32) -> f32 {
    #[cfg(target_arch = "amdgpu")]
    {
        core::intrinsics::round_ties_even_f32(x)
    }
    #[cfg(not(tessera_device))]
    {
        x.round_ties_even()
    }
}

/// `(lo, hi)` rounded to `$t` as one `$ptx d, hi, lo` (the high half of `d` from `hi`), bit for
/// bit the two one-lane conversions `$one`.
macro_rules! narrow_pair_fn {
    ($(#[$doc:meta])* $name:ident -> $t:ident, $ptx:literal, $one:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(lo: f32, hi: f32) -> ($t, $t) {
            #[cfg(target_arch = "nvptx64")]
            {
                let d: u32;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!($ptx, d = out(reg32) d, hi = in(reg32) hi, lo = in(reg32) lo,
                         options(pure, nomem, nostack));
                }
                ($t(d as u16), $t((d >> 16) as u16))
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                ($one(lo), $one(hi))
            }
        }
    };
}

narrow_pair_fn!(
    /// `cvt.rn.f16x2.f32 d, hi, lo`: two [`f32_to_f16`] in one instruction.
    f32x2_to_f16x2 -> f16, "cvt.rn.f16x2.f32 {d}, {hi}, {lo};", f32_to_f16
);
narrow_pair_fn!(
    /// `cvt.rn.bf16x2.f32 d, hi, lo` (sm_80): two [`f32_to_bf16`] in one instruction.
    f32x2_to_bf16x2 -> bf16, "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};", f32_to_bf16
);

/// Defines the conversions of the f8 format `$t` (PTX `$fmt`): the pairs f32×2 → f8×2
/// (`cvt.rn.satfinite.<fmt>x2.f32`) and f8×2 → f16×2 (`cvt.rn.f16x2.<fmt>x2`), sm_89+
/// instructions with the type's own software rounding elsewhere, and their one-lane forms
/// f32 → f8 and f8 → f32 (through `cvt.f32.f16`, exact).
macro_rules! f8_conversions {
    (
        $t:ident, $fmt:literal,
        $(#[$narrow_doc:meta])* $narrow_x2:ident,
        $(#[$widen_doc:meta])* $widen_x2:ident,
        $narrow:ident, $widen:ident
    ) => {
        $(#[$narrow_doc])*
        #[inline(always)]
        pub fn $narrow_x2(lo: f32, hi: f32) -> [$t; 2] {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_89"))]
            {
                let d: u16;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!(concat!("cvt.rn.satfinite.", $fmt, "x2.f32 {d}, {a}, {b};"),
                         d = out(reg16) d, a = in(reg32) hi, b = in(reg32) lo,
                         options(pure, nomem, nostack));
                }
                [$t(d as u8), $t((d >> 8) as u8)]
            }
            #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_89")))]
            {
                [$t::from_f32(lo), $t::from_f32(hi)]
            }
        }

        $(#[$widen_doc])*
        #[inline(always)]
        pub fn $widen_x2(x: [$t; 2]) -> [f16; 2] {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_89"))]
            {
                let d: u32;
                let a = x[0].0 as u16 | (x[1].0 as u16) << 8;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!(concat!("cvt.rn.f16x2.", $fmt, "x2 {d}, {a};"), d = out(reg32) d,
                         a = in(reg16) a, options(pure, nomem, nostack));
                }
                [f16(d as u16), f16((d >> 16) as u16)]
            }
            #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_89")))]
            {
                [x[0].to_f16(), x[1].to_f16()]
            }
        }

        #[doc = concat!("f32 → ", $fmt, " (one lane of [`", stringify!($narrow_x2), "`]).")]
        #[inline(always)]
        pub fn $narrow(x: f32) -> $t {
            $narrow_x2(x, 0.0)[0]
        }

        #[doc = concat!(
            $fmt, " → f32, exactly: [`", stringify!($widen_x2),
            "`] then `cvt.f32.f16` (NaN gives `0x7fffffff`)."
        )]
        #[inline(always)]
        pub fn $widen(x: $t) -> f32 {
            f16_to_f32($widen_x2([x, $t(0)])[0])
        }
    };
}

f8_conversions!(
    f8e4m3, "e4m3",
    /// `cvt.rn.satfinite.e4m3x2.f32 d, hi, lo` (sm_89+; software elsewhere): two f32 rounded to
    /// e4m3, `lo` in bits 0..8 of the pair. Overflow and ±inf saturate to ±448, NaN gives `0x7f`.
    f32x2_to_f8e4m3x2,
    /// `cvt.rn.f16x2.e4m3x2 d, a` (sm_89+; software elsewhere): two e4m3 to two f16, exactly
    /// (NaN gives `0x7fff`).
    f8e4m3x2_to_f16x2,
    f32_to_f8e4m3, f8e4m3_to_f32
);
f8_conversions!(
    f8e5m2, "e5m2",
    /// `cvt.rn.satfinite.e5m2x2.f32 d, hi, lo` (sm_89+; software elsewhere): two f32 rounded to
    /// e5m2, `lo` in bits 0..8. Overflow and ±inf saturate to ±57344, NaN (any sign or
    /// payload) gives `0x7f`.
    f32x2_to_f8e5m2x2,
    /// `cvt.rn.f16x2.e5m2x2 d, a` (sm_89+; software elsewhere): two e5m2 to two f16, exactly
    /// (NaN gives `0x7fff`).
    f8e5m2x2_to_f16x2,
    f32_to_f8e5m2, f8e5m2_to_f32
);
