//! Arithmetic of the tile language ([`Num`]) and float math ([`FloatMath`], [`Transcendental`]),
//! on the instructions of [`crate::device`] (`max.NaN`, `ex2.approx`, `fma.rn`, ...).

use super::elements::{Elem, NarrowFloat};
use crate::device;
use crate::dtype::{bf16, f16, f8e4m3, f8e5m2};

/// Arithmetic of the tile language.
///
/// Integers wrap (`+ - * neg abs` as `wrapping_*`); integer `/` and `%` truncate toward zero and
/// give 0 for a zero divisor (no trap; `MIN / -1` wraps to `MIN`, `MIN % -1` is 0). Floats are
/// IEEE (`/` is `div.rn`); `max`/`min` propagate NaN (PTX `max.NaN`/`min.NaN`) and order
/// `-0 < +0`; `neg`/`abs` only change the sign bit. `f16`, `bf16`, `f8e4m3`, `f8e5m2` convert to
/// `f32` (exact), compute there, and round back (`cvt.rn`) after each operation.
///
/// **NaN encodings (f32).** A NaN that f32 `+ - * / % max min` produce is the GPU's canonical
/// NaN `0x7fffffff` whatever the operands' NaN payloads, on the GPU (measured on sm_90) and on
/// the host (see [`crate::device::add_f32`]); `neg`/`abs` keep payloads. f32 `%` is the exact
/// IEEE `fmod` on both sides ([`fmod_f32`], integer code: the same bits on the GPU and the
/// host). f64 arithmetic is the host's IEEE arithmetic (the PTX ISA: double-precision
/// instructions support NaN payloads; not measured).
pub trait Num: Elem {
    /// `a + b` (integers wrap).
    fn add(a: Self, b: Self) -> Self;
    /// `a - b` (integers wrap).
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b` (integers wrap).
    fn mul(a: Self, b: Self) -> Self;
    /// `a / b` (integers truncate toward zero).
    fn div(a: Self, b: Self) -> Self;
    /// `a % b` (the sign of `a`, as Rust's `%`).
    fn rem(a: Self, b: Self) -> Self;
    /// `-a`.
    fn neg(a: Self) -> Self;
    /// `|a|`.
    fn abs(a: Self) -> Self;
    /// The larger of `a` and `b`.
    fn max(a: Self, b: Self) -> Self;
    /// The smaller of `a` and `b`.
    fn min(a: Self, b: Self) -> Self;
    /// The additive identity.
    const ZERO: Self;
    /// The identity of `max`: the smallest value (`-inf` for floats).
    const LOWEST: Self;
    /// The identity of `min`: the largest value (`+inf` for floats).
    const HIGHEST: Self;
}

macro_rules! num_signed {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)] fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)] fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_div(b) } }
            #[inline(always)] fn rem(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_rem(b) } }
            #[inline(always)] fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)] fn abs(a: Self) -> Self { a.wrapping_abs() }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if a > b { a } else { b } }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if a < b { a } else { b } }
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}
num_signed!(i8, i16, i32, i64);

macro_rules! num_unsigned {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)] fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)] fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a / b } }
            #[inline(always)] fn rem(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a % b } }
            #[inline(always)] fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)] fn abs(a: Self) -> Self { a }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if a > b { a } else { b } }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if a < b { a } else { b } }
            const ZERO: Self = 0;
            const LOWEST: Self = 0;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}
num_unsigned!(u8, u16, u32, u64);

/// f32 `%` (see [`Num`]): the exact IEEE remainder `x - trunc(x / y)·y` with the sign of `x`
/// (C's `fmodf`, Rust's `%` on the host), computed with integer long division on the
/// significands so the GPU and the emulator give the same bits. (LLVM lowers `frem` on nvptx64 to
/// `fma(-trunc(x / y), y, x)`, which is wrong once the quotient exceeds 2^24: `1e30 % 0.29` came
/// out as -9.8e21.) NaN results are the canonical `0x7fffffff`.
#[inline(always)]
fn rem_f32(a: f32, b: f32) -> f32 {
    fmod_f32(a, b)
}

/// Exact IEEE `fmod` of two f32 values (the tile language's f32 `%`): integer long division on
/// the significands, so the GPU and the emulator give the same bits; NaN results are canonical.
#[inline]
pub fn fmod_f32(x: f32, y: f32) -> f32 {
    const SIGN: u32 = 0x8000_0000;
    const HIDDEN: u32 = 0x0080_0000;
    let (ux, uy) = (x.to_bits(), y.to_bits());
    let sign = ux & SIGN;
    let (ax, ay) = (ux & !SIGN, uy & !SIGN);
    // x infinite or NaN, y zero or NaN: NaN.
    if ax >= 0x7f80_0000 || ay == 0 || ay > 0x7f80_0000 {
        return f32::from_bits(device::CANONICAL_NAN_F32_BITS);
    }
    // |x| < |y| (y infinite included): x itself; |x| = |y|: a zero with x's sign.
    if ax < ay {
        return x;
    }
    if ax == ay {
        return f32::from_bits(sign);
    }
    // Significand and exponent of each, subnormals normalised (significand in [2^23, 2^24)).
    let split = |a: u32| -> (i32, u32) {
        let e = (a >> 23) as i32;
        if e == 0 {
            let shift = a.leading_zeros() as i32 - 8;
            (1 - shift, a << shift)
        } else {
            (e, (a & (HIDDEN - 1)) | HIDDEN)
        }
    };
    let (mut ex, mut mx) = split(ax);
    let (ey, my) = split(ay);
    // Long division, one quotient bit per step: keep mx the remainder of (mx·2^(ex-ey)) / my.
    while ex > ey {
        if mx >= my {
            mx -= my;
        }
        if mx == 0 {
            return f32::from_bits(sign);
        }
        mx <<= 1;
        ex -= 1;
    }
    if mx >= my {
        mx -= my;
    }
    if mx == 0 {
        return f32::from_bits(sign);
    }
    // Renormalise; the result is exact, so it is either normal or a subnormal of y's scale.
    while mx < HIDDEN {
        mx <<= 1;
        ex -= 1;
    }
    let bits = if ex > 0 {
        ((ex as u32) << 23) | (mx & (HIDDEN - 1))
    } else {
        mx >> (1 - ex)
    };
    f32::from_bits(sign | bits)
}

impl Num for f32 {
    #[inline(always)]
    fn add(a: Self, b: Self) -> Self {
        device::add_f32(a, b)
    }
    #[inline(always)]
    fn sub(a: Self, b: Self) -> Self {
        device::sub_f32(a, b)
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        device::mul_f32(a, b)
    }
    #[inline(always)]
    fn div(a: Self, b: Self) -> Self {
        device::div_f32(a, b)
    }
    #[inline(always)]
    fn rem(a: Self, b: Self) -> Self {
        rem_f32(a, b)
    }
    #[inline(always)]
    fn neg(a: Self) -> Self {
        device::neg_f32(a)
    }
    #[inline(always)]
    fn abs(a: Self) -> Self {
        device::abs_f32(a)
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        device::max_f32(a, b)
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        device::min_f32(a, b)
    }
    const ZERO: Self = 0.0;
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
}

impl Num for f64 {
    #[inline(always)]
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
    #[inline(always)]
    fn sub(a: Self, b: Self) -> Self {
        a - b
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        a * b
    }
    #[inline(always)]
    fn div(a: Self, b: Self) -> Self {
        a / b
    }
    #[inline(always)]
    fn rem(a: Self, b: Self) -> Self {
        a % b
    }
    #[inline(always)]
    fn neg(a: Self) -> Self {
        -a
    }
    #[inline(always)]
    fn abs(a: Self) -> Self {
        f64::from_bits(a.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        device::max_f64(a, b)
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        device::min_f64(a, b)
    }
    const ZERO: Self = 0.0;
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
}

macro_rules! num_narrow {
    ($($t:ident),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(a: Self, b: Self) -> Self { Self::narrow(device::add_f32(a.widen(), b.widen())) }
            #[inline(always)] fn sub(a: Self, b: Self) -> Self { Self::narrow(device::sub_f32(a.widen(), b.widen())) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { Self::narrow(device::mul_f32(a.widen(), b.widen())) }
            #[inline(always)] fn div(a: Self, b: Self) -> Self { Self::narrow(device::div_f32(a.widen(), b.widen())) }
            #[inline(always)] fn rem(a: Self, b: Self) -> Self { Self::narrow(rem_f32(a.widen(), b.widen())) }
            #[inline(always)] fn neg(a: Self) -> Self { Self::narrow(-a.widen()) }
            #[inline(always)] fn abs(a: Self) -> Self { Self::narrow(<f32 as Num>::abs(a.widen())) }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { Self::narrow(device::max_f32(a.widen(), b.widen())) }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { Self::narrow(device::min_f32(a.widen(), b.widen())) }
            const ZERO: Self = $t::ZERO;
            const LOWEST: Self = $t(!$t::MAX.0);
            const HIGHEST: Self = $t::MAX;
        }
    )*};
}
num_narrow!(f16, bf16, f8e4m3, f8e5m2);

/// Float math, as Triton lowers it on NVIDIA GPUs. f32: `sqrt = sqrt.approx.ftz.f32` (Triton's
/// `tl.sqrt`), `rsqrt = rsqrt.approx.f32`, `fma = fma.rn.f32`; on the host the correctly rounded
/// root, which the GPU's approximation may miss by its last bit. f64: `sqrt.rn.f64`,
/// `rsqrt.approx.f64`, `fma.rn.f64`; f64 `exp`/`log` are not provided. Narrow floats compute in
/// f32 (their `sqrt` is `sqrt.rn.f32`, then rounded).
///
/// f32 NaN results are the canonical `0x7fffffff` on the host as on the GPU (see [`Num`]):
/// `fma.rn.f32` is `FFMA` (the FMA pipe, measured canonical through `FADD`); `ex2`/`lg2`/`sqrt`/
/// `rsqrt.approx` are single `MUFU`s, taken to return the same canonical NaN (not measured bit
/// for bit).
pub trait FloatMath: Num {
    /// The square root.
    fn sqrt(a: Self) -> Self;
    /// `1 / sqrt(a)`.
    fn rsqrt(a: Self) -> Self;
    /// `a * b + c`, rounded once.
    fn fma(a: Self, b: Self, c: Self) -> Self;
}

/// `exp`, `exp2`, `log`, `log2`, `tanh`, `erf`, `sin`, `cos`, `sigmoid`: f32 and the narrow
/// floats (which compute in f32 and round).
///
/// f32, as Triton lowers `tl.exp` & co. on NVIDIA GPUs: `exp(x) = ex2.approx.ftz.f32(x · log₂e)`,
/// `exp2 = ex2.approx.ftz.f32`, `log2 = lg2.approx.f32`, `tanh = tanh.approx.f32` (relative error
/// ≤ 2^-11), `sigmoid(x) = 1 / (1 + exp(-x))`; on the host the exact functions rounded to f32,
/// so these may differ from the GPU in the last bits. `log`, `sin` and `cos` are libdevice's
/// `__nv_logf`/`__nv_sinf`/`__nv_cosf` ([`super::libdevice`]: within 1, 2 and 2 ulp), and `erf`
/// is [`erf_f32`] (within 1 ulp): software built from exact instructions, the same bits on the
/// GPU and the host.
pub trait Transcendental: FloatMath {
    /// `e^a`.
    fn exp(a: Self) -> Self;
    /// `2^a`.
    fn exp2(a: Self) -> Self;
    /// The natural logarithm.
    fn log(a: Self) -> Self;
    /// The base-2 logarithm.
    fn log2(a: Self) -> Self;
    /// The hyperbolic tangent.
    fn tanh(a: Self) -> Self;
    /// The error function.
    fn erf(a: Self) -> Self;
    /// The sine.
    fn sin(a: Self) -> Self;
    /// The cosine.
    fn cos(a: Self) -> Self;
    /// `1 / (1 + e^-a)`.
    fn sigmoid(a: Self) -> Self;
}

/// The error function of an f32, within 1 ulp of the exact value (correctly rounded unless the
/// exact value lies within 10^-9 of a rounding boundary), the same bits on the GPU and the host:
/// f64 arithmetic only (`+ - * /` are correctly rounded on both), no approximate instruction.
/// erf x = 2/√π · Σₙ (−1)ⁿ x^(2n+1) / (n! (2n+1)) for |x| < 4, summed in f64 (the largest term
/// is below 1.1·10^5, so the absolute error stays below 10^-10); erf x = ±1 for |x| ≥ 4 (there
/// 1 − erf x < 1.6·10^-8, under half an f32 ulp of 1). NaN results are canonical.
#[inline]
pub fn erf_f32(x: f32) -> f32 {
    if x.is_nan() {
        return device::CANONICAL_NAN_F32;
    }
    let sign = x.to_bits() & 0x8000_0000;
    if x.to_bits() & 0x7fff_ffff >= 4.0f32.to_bits() {
        return f32::from_bits(sign | 1.0f32.to_bits());
    }
    let x = f64::from(x);
    let minus_x2 = -(x * x);
    let mut power = x; // (−1)ⁿ x^(2n+1) / n!
    let mut sum = x;
    let mut n = 1.0f64;
    // At |x| < 4 the terms fall below 2^-60 of the sum by n = 75.
    while n < 80.0 {
        power = power * minus_x2 / n;
        let term = power / (2.0 * n + 1.0);
        sum += term;
        if term == 0.0 || (term / sum).abs() < 1e-18 {
            break;
        }
        n += 1.0;
    }
    (sum * core::f64::consts::FRAC_2_SQRT_PI) as f32
}

/// The high 32 bits of the 64-bit product of two 32-bit integers (`mul.hi.u32`): Triton's
/// `tl.umulhi`, unsigned on the bits also for `i32`.
pub trait MulHi: Elem {
    /// The high 32 bits of `a · b`, both taken unsigned.
    fn umulhi(a: Self, b: Self) -> Self;
}

impl MulHi for u32 {
    #[inline(always)]
    fn umulhi(a: Self, b: Self) -> Self {
        device::mul_hi_u32(a, b)
    }
}

impl MulHi for i32 {
    #[inline(always)]
    fn umulhi(a: Self, b: Self) -> Self {
        device::mul_hi_u32(a as u32, b as u32) as i32
    }
}

/// `impl FloatMath` on the [`crate::device`] instructions of each `type: sqrt, rsqrt, fma`.
macro_rules! float_math {
    ($($t:ident: $sqrt:ident, $rsqrt:ident, $fma:ident);* $(;)?) => {$(
        impl FloatMath for $t {
            #[inline(always)]
            fn sqrt(a: Self) -> Self {
                device::$sqrt(a)
            }
            #[inline(always)]
            fn rsqrt(a: Self) -> Self {
                device::$rsqrt(a)
            }
            #[inline(always)]
            fn fma(a: Self, b: Self, c: Self) -> Self {
                device::$fma(a, b, c)
            }
        }
    )*};
}
float_math!(
    f32: sqrt_approx_ftz_f32, rsqrt_approx_f32, fma_rn_f32;
    f64: sqrt_rn_f64, rsqrt_approx_f64, fma_rn_f64;
);

impl Transcendental for f32 {
    #[inline(always)]
    fn exp(a: Self) -> Self {
        device::ex2_approx_ftz_f32(device::mul_f32(a, core::f32::consts::LOG2_E))
    }
    #[inline(always)]
    fn exp2(a: Self) -> Self {
        device::ex2_approx_ftz_f32(a)
    }
    #[inline(always)]
    fn log(a: Self) -> Self {
        super::libdevice::logf(a)
    }
    #[inline(always)]
    fn log2(a: Self) -> Self {
        device::lg2_approx_f32(a)
    }
    #[inline(always)]
    fn tanh(a: Self) -> Self {
        device::tanh_approx_f32(a)
    }
    #[inline(always)]
    fn erf(a: Self) -> Self {
        erf_f32(a)
    }
    #[inline(always)]
    fn sin(a: Self) -> Self {
        super::libdevice::sinf(a)
    }
    #[inline(always)]
    fn cos(a: Self) -> Self {
        super::libdevice::cosf(a)
    }
    #[inline(always)]
    fn sigmoid(a: Self) -> Self {
        // 1 / (1 + e^-x)
        let e = <f32 as Transcendental>::exp(device::neg_f32(a));
        device::div_f32(1.0, device::add_f32(1.0, e))
    }
}

macro_rules! math_narrow {
    ($($t:ident),*) => {$(
        impl FloatMath for $t {
            #[inline(always)] fn sqrt(a: Self) -> Self { Self::narrow(device::sqrt_rn_f32(a.widen())) }
            #[inline(always)] fn rsqrt(a: Self) -> Self { Self::narrow(device::rsqrt_approx_f32(a.widen())) }
            #[inline(always)]
            fn fma(a: Self, b: Self, c: Self) -> Self {
                Self::narrow(device::fma_rn_f32(a.widen(), b.widen(), c.widen()))
            }
        }
        impl Transcendental for $t {
            #[inline(always)] fn exp(a: Self) -> Self { Self::narrow(<f32 as Transcendental>::exp(a.widen())) }
            #[inline(always)] fn exp2(a: Self) -> Self { Self::narrow(device::ex2_approx_ftz_f32(a.widen())) }
            #[inline(always)] fn log(a: Self) -> Self { Self::narrow(<f32 as Transcendental>::log(a.widen())) }
            #[inline(always)] fn log2(a: Self) -> Self { Self::narrow(device::lg2_approx_f32(a.widen())) }
            #[inline(always)] fn tanh(a: Self) -> Self { Self::narrow(device::tanh_approx_f32(a.widen())) }
            #[inline(always)] fn erf(a: Self) -> Self { Self::narrow(erf_f32(a.widen())) }
            #[inline(always)] fn sin(a: Self) -> Self { Self::narrow(super::libdevice::sinf(a.widen())) }
            #[inline(always)] fn cos(a: Self) -> Self { Self::narrow(super::libdevice::cosf(a.widen())) }
            #[inline(always)] fn sigmoid(a: Self) -> Self { Self::narrow(<f32 as Transcendental>::sigmoid(a.widen())) }
        }
    )*};
}
math_narrow!(f16, bf16, f8e4m3, f8e5m2);
