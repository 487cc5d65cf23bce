//! f32 arithmetic with the GPU's NaN encodings: `+ - * /`, negation and absolute value.
//!
//! The PTX ISA leaves the NaN that single-precision instructions return unspecified ("Single-
//! precision instructions return an unspecified NaN"). Measured on an H100 (sm_90, and the
//! sm_80 PTX run there): every NaN that f32 `add` and `mma.sync` f16/bf16 → f32 produce is
//! [`CANONICAL_NAN_F32`] (`0x7fffffff`), whatever the sign and payload of the NaN operands. x86
//! instead keeps an operand's payload (quieted: `0x7f800001 + 1.0` is `0x7fc00001`) and produces
//! `0xffc00000` for invalid operations (`inf - inf`), so host Rust arithmetic is not what the
//! GPU computes bit for bit.
//!
//! Each function here has the two bodies of the runtime layer: on nvptx64 the plain Rust
//! operator (LLVM emits `add.rn.f32`, `sub.rn.f32`, `mul.rn.f32`, `div.rn.f32`; SASS `FADD`,
//! `FMUL`, ...: unchanged code), on the host the same IEEE operation (identical results for
//! every non-NaN value) with a NaN result replaced by [`CANONICAL_NAN_F32`]. Kernels that do
//! their f32 arithmetic through these functions, and the tile language (through
//! [`crate::tile::Num`]), run bit-identically on the emulator. Raw `a + b` in a kernel body cannot
//! be intercepted: on the host it is x86 arithmetic.
//!
//! Negation and absolute value are bit operations (`xor.b32` / `and.b32` with the sign bit) on
//! both sides, so they keep a NaN's payload everywhere. They are pinned as inline PTX because the
//! PTX float forms are not: `neg.f32` / `abs.f32` ("NaN inputs yield an unspecified NaN") are
//! assembled by ptxas as `FADD d, -a, -RZ` / `FADD d, |a|, -RZ`, which canonicalise NaNs, and
//! LLVM picks the float or the bit form depending on where the value goes.
//!
//! f64 is left to the host's IEEE arithmetic: the PTX ISA says that double-precision
//! instructions support NaN payloads, and no f64 NaN encoding has been measured on the GPU.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// Bits of the NaN that f32 arithmetic produces on the GPU (`0x7fffffff`: positive, all
/// mantissa bits set).
pub const CANONICAL_NAN_F32_BITS: u32 = 0x7fff_ffff;

/// The NaN that f32 arithmetic produces on the GPU (bits [`CANONICAL_NAN_F32_BITS`]).
pub const CANONICAL_NAN_F32: f32 = f32::from_bits(CANONICAL_NAN_F32_BITS);

/// `x`, or [`CANONICAL_NAN_F32`] if `x` is any NaN: what the GPU's f32 arithmetic returns where
/// IEEE arithmetic returns the NaN `x`. Used by the host bodies of this layer.
#[inline(always)]
pub const fn canonicalize_nan_f32(x: f32) -> f32 {
    if x.is_nan() {
        CANONICAL_NAN_F32
    } else {
        x
    }
}

macro_rules! f32_binary {
    ($(#[$doc:meta])* $name:ident, $op:tt) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(a: f32, b: f32) -> f32 {
            #[cfg(tessera_device)]
            {
                a $op b
            }
            #[cfg(not(tessera_device))]
            {
                canonicalize_nan_f32(a $op b)
            }
        }
    };
}

f32_binary!(
    /// `add.rn.f32 d, a, b`: `a + b` rounded to nearest even; NaN results are
    /// [`CANONICAL_NAN_F32`].
    add_f32, +
);
f32_binary!(
    /// `sub.rn.f32 d, a, b`: `a − b` rounded to nearest even; NaN results are
    /// [`CANONICAL_NAN_F32`].
    sub_f32, -
);
f32_binary!(
    /// `mul.rn.f32 d, a, b`: `a · b` rounded to nearest even; NaN results are
    /// [`CANONICAL_NAN_F32`].
    mul_f32, *
);
f32_binary!(
    /// `div.rn.f32 d, a, b`: `a / b` correctly rounded (IEEE); NaN results are
    /// [`CANONICAL_NAN_F32`].
    div_f32, /
);

register_op!(
    /// `xor.b32 d, a, 0x80000000`: `−a` by flipping the sign bit (NaN payloads kept).
    neg_f32(a): f32, reg32, "xor.b32 {d}, {a}, -2147483648;",
    host f32::from_bits(a.to_bits() ^ 0x8000_0000),
    amdgpu f32::from_bits(a.to_bits() ^ 0x8000_0000)
);
register_op!(
    /// `and.b32 d, a, 0x7fffffff`: `|a|` by clearing the sign bit (NaN payloads kept).
    abs_f32(a): f32, reg32, "and.b32 {d}, {a}, 2147483647;",
    host f32::from_bits(a.to_bits() & 0x7fff_ffff),
    amdgpu f32::from_bits(a.to_bits() & 0x7fff_ffff)
);
