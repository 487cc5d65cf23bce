//! Register-only float instructions: `max.NaN`/`min.NaN`, the approximations `ex2.ftz`, `lg2`,
//! `rsqrt`, `sqrt.approx.ftz`, the correctly rounded `sqrt.rn`, `fma.rn` (f32 and f64) and the
//! flush-to-zero `fma.rn.ftz`/`mul.rn.ftz`.
//!
//! On the host each function computes the exact function; an f32 NaN result is the GPU's
//! [`CANONICAL_NAN_F32`] (see [`crate::device::add_f32`]), so the approximations may differ from
//! the GPU in the last bits but never in their NaNs. f64 results are the host's IEEE ones.
//!
//! On amdgpu each is LLVM's generic intrinsic of the same function (`core::intrinsics`:
//! `v_exp_f32`, `v_log_f32`, `v_sqrt_f32`/`v_rsq_f32` with LLVM's refinement, `v_fma_f32`), the
//! `ftz` forms flushing their operands and results as the host does, the minimum and maximum
//! the host's own code; NaN results are AMD's (`0x7fc00000`), not PTX's canonical one.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use super::float::canonicalize_nan_f32;
use super::float::CANONICAL_NAN_F32;
#[cfg(target_arch = "amdgpu")]
use core::intrinsics::{exp2f32, fmaf32, fmaf64, log2f32, sqrtf32, sqrtf64};

/// Defines the NaN-propagating maximum and minimum of `$t` with `-0 < +0`: the semantics of PTX
/// `max.NaN`/`min.NaN` ("the result is canonical NaN if any of the inputs is NaN"), NaN `$nan`.
macro_rules! nan_minmax {
    ($vis:vis $max:ident, $min:ident, $t:ty, $nan:expr) => {
        // Equal values differ at most in the sign of zero: the maximum keeps the sign bit only
        // when both have it (+0 wins), the minimum when either has it (-0 wins).
        nan_minmax!(@one $vis $max, "maximum", $t, $nan, >, &);
        nan_minmax!(@one $vis $min, "minimum", $t, $nan, <, |);
    };
    (@one $vis:vis $name:ident, $what:literal, $t:ty, $nan:expr, $wins:tt, $equal_bits:tt) => {
        #[doc = concat!("NaN-propagating ", $what, " of two `", stringify!($t), "` with `-0 < +0`.")]
        #[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
        #[inline(always)]
        $vis fn $name(a: $t, b: $t) -> $t {
            if a.is_nan() || b.is_nan() {
                $nan
            } else if a == b {
                <$t>::from_bits(a.to_bits() $equal_bits b.to_bits())
            } else if a $wins b {
                a
            } else {
                b
            }
        }
    };
}
// The host bodies of `max_f32`/`min_f32`.
nan_minmax!(max_nan_f32, min_nan_f32, f32, CANONICAL_NAN_F32);
// No f64 `max.NaN` in PTX: software on the GPU as well (the same constant there).
nan_minmax!(pub max_f64, min_f64, f64, f64::NAN);

register_op!(
    /// `max.NaN.f32`: NaN-propagating maximum with `-0 < +0` (a NaN result is the canonical
    /// `0x7fffffff`; sm_80+).
    max_f32(a, b): f32, reg32, "max.NaN.f32 {d}, {a}, {b};", host max_nan_f32(a, b),
    amdgpu max_nan_f32(a, b)
);
register_op!(
    /// `min.NaN.f32`: NaN-propagating minimum with `-0 < +0` (a NaN result is the canonical
    /// `0x7fffffff`; sm_80+).
    min_f32(a, b): f32, reg32, "min.NaN.f32 {d}, {a}, {b};", host min_nan_f32(a, b),
    amdgpu min_nan_f32(a, b)
);
register_op!(
    /// `ex2.approx.ftz.f32`: 2^x, a subnormal `x` counting as zero and a subnormal result
    /// flushed to zero (Triton's `tl.exp2`: libdevice's `__nv_exp2f` under flush-to-zero; the
    /// non-`ftz` form costs ptxas a test and two scaling multiplies around each `MUFU.EX2`).
    /// The host computes the exact 2^x of the flushed `x`, flushed.
    ex2_approx_ftz_f32(x): f32, reg32, "ex2.approx.ftz.f32 {d}, {x};",
    host canonicalize_nan_f32(flush_subnormal_f32(flush_subnormal_f32(x).exp2())),
    amdgpu flush_subnormal_f32(exp2f32(flush_subnormal_f32(x)))
);
register_op!(
    /// `lg2.approx.f32`: log₂ x.
    lg2_approx_f32(x): f32, reg32, "lg2.approx.f32 {d}, {x};", host canonicalize_nan_f32(x.log2()),
    amdgpu log2f32(x)
);
register_op!(
    /// `sqrt.approx.ftz.f32`: √x, approximate (Triton's `tl.sqrt`; a subnormal `x` counts as
    /// zero). The host computes the correctly rounded root of the flushed `x`, which the GPU's
    /// approximation may miss by its last bit.
    sqrt_approx_ftz_f32(x): f32, reg32, "sqrt.approx.ftz.f32 {d}, {x};",
    host {
        // NaN and negative operands give the canonical NaN, decided on the bits before the
        // root (the host's root keeps a NaN operand's payload, and an optimised build was
        // seen to let a signalling NaN through a float test here).
        let x = flush_subnormal_f32(x);
        let (bits, magnitude) = (x.to_bits(), x.to_bits() & 0x7fff_ffff);
        if magnitude > 0x7f80_0000 || (bits >> 31 == 1 && magnitude != 0) {
            CANONICAL_NAN_F32
        } else {
            x.sqrt()
        }
    },
    amdgpu sqrtf32(flush_subnormal_f32(x))
);
register_op!(
    /// `fma.rn.ftz.f32`: `a·b + c` rounded once, subnormal operands and results flushed to
    /// zero of their sign (NaN results canonical). Bit for bit the same on the host.
    fma_rn_ftz_f32(a, b, c): f32, reg32, "fma.rn.ftz.f32 {d}, {a}, {b}, {c};",
    host canonicalize_nan_f32(flush_subnormal_f32(
        flush_subnormal_f32(a).mul_add(flush_subnormal_f32(b), flush_subnormal_f32(c))
    )),
    amdgpu flush_subnormal_f32(fmaf32(
        flush_subnormal_f32(a), flush_subnormal_f32(b), flush_subnormal_f32(c)
    ))
);
register_op!(
    /// `mul.rn.ftz.f32`: `a·b` rounded, subnormal operands and results flushed to zero of their
    /// sign (NaN results canonical). Bit for bit the same on the host.
    mul_rn_ftz_f32(a, b): f32, reg32, "mul.rn.ftz.f32 {d}, {a}, {b};",
    host canonicalize_nan_f32(flush_subnormal_f32(flush_subnormal_f32(a) * flush_subnormal_f32(b))),
    amdgpu flush_subnormal_f32(flush_subnormal_f32(a) * flush_subnormal_f32(b))
);

/// `x`, or the zero of its sign if `x` is subnormal: what `.ftz` instructions do to their
/// operands and results.
#[inline(always)]
pub const fn flush_subnormal_f32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

register_op!(
    /// `sqrt.rn.f32`: √x, correctly rounded.
    sqrt_rn_f32(x): f32, reg32, "sqrt.rn.f32 {d}, {x};", host canonicalize_nan_f32(x.sqrt()),
    amdgpu sqrtf32(x)
);
register_op!(
    /// `rsqrt.approx.f32`: 1/√x.
    rsqrt_approx_f32(x): f32, reg32, "rsqrt.approx.f32 {d}, {x};", host canonicalize_nan_f32(1.0 / x.sqrt()),
    amdgpu 1.0 / sqrtf32(x)
);
register_op!(
    /// `fma.rn.f32`: `a·b + c` rounded once (NaN results canonical, `0x7fffffff`).
    fma_rn_f32(a, b, c): f32, reg32, "fma.rn.f32 {d}, {a}, {b}, {c};", host canonicalize_nan_f32(a.mul_add(b, c)),
    amdgpu fmaf32(a, b, c)
);
register_op!(
    /// `sqrt.rn.f64`: √x, correctly rounded.
    sqrt_rn_f64(x): f64, reg64, "sqrt.rn.f64 {d}, {x};", host x.sqrt(),
    amdgpu sqrtf64(x)
);
register_op!(
    /// `rsqrt.approx.f64`: 1/√x.
    rsqrt_approx_f64(x): f64, reg64, "rsqrt.approx.f64 {d}, {x};", host 1.0 / x.sqrt(),
    amdgpu 1.0 / sqrtf64(x)
);
register_op!(
    /// `fma.rn.f64`: `a·b + c` rounded once.
    fma_rn_f64(a, b, c): f64, reg64, "fma.rn.f64 {d}, {a}, {b}, {c};", host a.mul_add(b, c),
    amdgpu fmaf64(a, b, c)
);
