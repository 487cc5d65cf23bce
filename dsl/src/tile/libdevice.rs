//! f32 `log`, `sin` and `cos` computed as CUDA's libdevice computes `__nv_logf`, `__nv_sinf` and
//! `__nv_cosf` with flush-to-zero on, which is what Triton's `tl.log`, `tl.sin` and `tl.cos` (and
//! so `tl.randn`) run on NVIDIA GPUs: the same operations in the same order, so the GPU's results
//! are Triton's bit for bit. Every step is an instruction of [`crate::device`] whose host body is
//! exact (`fma.rn.ftz`, `mul.rn`, `cvt.rni`, integer and f64 arithmetic), so the emulator's
//! results are the GPU's too.
//!
//! Accuracy: `logf` within 1 ulp, `sinf`/`cosf` within 2 ulp (the unit tests check both against
//! f64 over sweeps and random bit patterns). A subnormal argument of `sinf`/`cosf` counts as
//! zero (flush-to-zero); `logf` scales one into the normal range first.

use crate::device;

#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    device::fma_rn_ftz_f32(a, b, c)
}

/// `f32::from_bits`, for the constants (written as bits: they must be these exact values).
#[inline(always)]
const fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// The natural logarithm: `x = 2^e · m` with `m ∈ [2/3, 4/3)`, `ln x = e·ln 2 + ln m`, and
/// `ln m = f − f²/2 + f³·P(f)` for `f = m − 1` (a degree-8 polynomial by Horner's rule).
/// `log(±0) = −∞`, `log(x < 0) = NaN`, `log(+∞) = +∞`, NaN in gives NaN.
#[inline]
pub fn logf(x: f32) -> f32 {
    // A subnormal x is scaled by 2^23 into the normal range; e0 takes the 23 back.
    let small = x < f32::MIN_POSITIVE;
    let x = if small {
        device::mul_f32(x, f(0x4B00_0000))
    } else {
        x
    };
    let e0 = if small { f(0xC1B8_0000) } else { 0.0 };
    let bits = x.to_bits();
    // The exponent field, shifted so that the mantissa left over is m ∈ [2/3, 4/3).
    let e_field = bits.wrapping_sub(0x3F2A_AAAB) & 0xFF80_0000;
    let m = f32::from_bits(bits.wrapping_sub(e_field));
    let e = fma(device::i32_to_f32(e_field as i32), f(0x3400_0000), e0);
    let t = device::add_f32(m, -1.0);
    let mut p = fma(f(0xBE05_5027), t, f(0x3E10_39F6));
    for c in [
        0xBDF8_CDCC,
        0x3E0F_2955,
        0xBE2A_D8B9,
        0x3E4C_ED0B,
        0xBE7F_FF22,
        0x3EAA_AA78,
        0xBF00_0000,
    ] {
        p = fma(p, t, f(c));
    }
    let ln_m = fma(device::mul_f32(t, p), t, t);
    let ln_x = fma(e, f(0x3F31_7218), ln_m);
    // Negative (sign bit), infinite and NaN x: x·∞ + ∞ is +∞ for +∞ and NaN for the others.
    let ln_x = if bits > 0x7F7F_FFFF {
        fma(x, f32::INFINITY, f32::INFINITY)
    } else {
        ln_x
    };
    if x == 0.0 {
        f32::NEG_INFINITY
    } else {
        ln_x
    }
}

/// The sine: `x = q·π/2 + r` (`reduce_quadrant`), then ±sin r or ±cos r by the quadrant.
#[inline]
pub fn sinf(x: f32) -> f32 {
    let (q, r) = reduce_quadrant(x);
    quadrant_poly(q, r)
}

/// The cosine: `cos x = sin(x + π/2)`, one quadrant on.
#[inline]
pub fn cosf(x: f32) -> f32 {
    let (q, r) = reduce_quadrant(x);
    quadrant_poly(q.wrapping_add(1), r)
}

/// `sin(q·π/2 + r)` for `|r| ≲ π/4`: the odd quadrants take the cosine polynomial of `r`
/// (`1 + s·C(s)`, `s = r²`), the even ones the sine polynomial (`r + r·s·S(s)`); quadrants 2
/// and 3 negate.
#[inline(always)]
fn quadrant_poly(q: i32, r: f32) -> f32 {
    let s = device::mul_rn_ftz_f32(r, r);
    let odd = q & 1 != 0;
    let lead = if odd { 1.0 } else { r };
    let lead_s = fma(s, lead, 0.0);
    let c = if odd {
        fma(f(0x37CB_AC00), s, f(0xBAB6_07ED))
    } else {
        f(0xB94D_4153)
    };
    let c = fma(c, s, if odd { f(0x3D2A_AABB) } else { f(0x3C08_85E4) });
    let c = fma(c, s, if odd { f(0xBEFF_FFFF) } else { f(0xBE2A_AAA8) });
    let v = fma(c, lead_s, lead);
    if q & 2 == 0 {
        v
    } else {
        fma(v, -1.0, 0.0)
    }
}

/// `x = q·π/2 + r`: for `|x| < 105615` (and NaN) Cody–Waite, `q = rint(x·2/π)` and `r = x − q·π/2`
/// with π/2 in three parts; for infinite `x`, `(0, NaN)`; otherwise Payne–Hanek
/// ([`reduce_large`]).
#[inline(always)]
fn reduce_quadrant(x: f32) -> (i32, f32) {
    let q = device::f32_to_i32_rn(device::mul_f32(x, f(0x3F22_F983)));
    let qf = device::i32_to_f32(q);
    let r = fma(qf, f(0xBFC9_0FDA), x);
    let r = fma(qf, f(0xB3A2_2168), r);
    let r = fma(qf, f(0xA7C2_34C5), r);
    let ax = device::abs_f32(x);
    // NaN takes this branch too (and gives NaN).
    if ax.is_nan() || ax < f(0x47CE_4780) {
        (q, r)
    } else if ax == f32::INFINITY {
        (0, device::mul_rn_ftz_f32(x, 0.0))
    } else {
        reduce_large(x)
    }
}

/// 2/π in 32-bit words, least significant first (192 bits).
const TWO_OVER_PI: [u32; 6] = [
    0x3C43_9041,
    0xDB62_9599,
    0xF534_DDC0,
    0xFC27_57D1,
    0x4E44_1529,
    0xA2F9_836E,
];

/// Payne–Hanek for `105615 ≤ |x| < ∞`: the 24-bit mantissa times 2/π to 224 bits, of which
/// the two bits at the binary point (by the exponent) are the quadrant and the 62 below the
/// fraction, rounded to the nearer quadrant and scaled by π/2 in f64. (`#[inline]`, not
/// `inline(never)`: a device function of this crate must be compiled into the kernel crate's
/// PTX, which is the only PTX a module loads.)
#[inline]
fn reduce_large(x: f32) -> (i32, f32) {
    let bits = x.to_bits();
    let sign = bits & 0x8000_0000;
    let mantissa = (bits << 8) | 0x8000_0000;
    // The product mantissa · 2/π, 32 bits at a time, least significant first: p0 … p6.
    let word = |w: u32, carry: u32| {
        let t = u64::from(w) * u64::from(mantissa) + u64::from(carry);
        (t as u32, (t >> 32) as u32)
    };
    let (_p0, c) = word(TWO_OVER_PI[0], 0);
    let (p1, c) = word(TWO_OVER_PI[1], c);
    let (p2, c) = word(TWO_OVER_PI[2], c);
    let (p3, c) = word(TWO_OVER_PI[3], c);
    let (p4, c) = word(TWO_OVER_PI[4], c);
    let (p5, p6) = word(TWO_OVER_PI[5], c);
    let biased = (bits >> 23) & 0xFF;
    // 105615 ≤ |x| < 2^128: the biased exponent is 143..=254, so `skip` is 0..=3, and the
    // three words from `p[6 - skip]` down hold the bits wanted. Chosen by `skip`'s two bits in
    // registers: an array indexed by `skip` lives in scratch memory on amdgpu.
    let skip = (biased - 128) >> 5;
    let (x3, x2, x1, x0) = if skip & 2 == 0 {
        (p6, p5, p4, p3)
    } else {
        (p4, p3, p2, p1)
    };
    let (w2, w1, w0) = if skip & 1 == 0 {
        (x3, x2, x1)
    } else {
        (x2, x1, x0)
    };
    let shift = biased & 31;
    let (hi, lo) = if shift == 0 {
        (w2, w1)
    } else {
        (
            (w2 << shift) | (w1 >> (32 - shift)),
            (w1 << shift) | (w0 >> (32 - shift)),
        )
    };
    let frac_hi = (hi << 2) | (lo >> 30);
    let frac_lo = lo << 2;
    // Round to the nearer quadrant: a fraction ≥ 1/2 takes the next one and becomes negative.
    let q = (hi >> 30) + (frac_hi >> 31);
    let q = if sign == 0 { q } else { q.wrapping_neg() } as i32;
    let ones = ((frac_hi as i32) >> 31) as u32;
    let r_sign = sign ^ (ones & 0x8000_0000);
    let fixed = ((u64::from(frac_hi ^ ones) << 32) | u64::from(frac_lo ^ ones)) as i64;
    // π/2 · 2^-62.
    let r = (fixed as f64 * f64::from_bits(0x3BF9_21FB_5444_2D19)) as f32;
    (q, if r_sign == 0 { r } else { -r })
}

#[cfg(all(test, not(tessera_device)))]
mod tests {
    use super::*;

    /// Distance in ulps of `got` from the exact `want`, in units of the f32 spacing at `want`.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = (want as f32).abs();
        let spacing =
            f64::from(f32::from_bits(w.to_bits() + 1) - w).max(f64::from(f32::from_bits(1)));
        (f64::from(got) - want).abs() / spacing
    }

    /// Sweeps of [-20, 20] and [1e-6, 4], large arguments and random bit patterns.
    fn inputs() -> Vec<f32> {
        let mut v: Vec<f32> = (0..=400_000).map(|i| -20.0 + i as f32 * 1.0e-4).collect();
        v.extend((0..=100_000).map(|i| 1.0e-6 + i as f32 * 4.0e-5));
        v.extend([
            105_614.99,
            105_615.0,
            1.0e6,
            3.0e7,
            1.0e30,
            f32::MAX,
            f32::MIN,
        ]);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        v.extend((0..200_000).map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            f32::from_bits((state >> 32) as u32)
        }));
        v
    }

    #[test]
    fn logf_is_within_one_ulp_of_ln() {
        for x in inputs().into_iter().filter(|x| x.is_finite() && *x > 0.0) {
            let got = logf(x);
            assert!(ulps(got, f64::from(x).ln()) <= 1.0, "log({x:e}) = {got:e}");
        }
        // Subnormals are scaled, not flushed.
        for x in [1.0e-45f32, 1.0e-40, 1.1e-38] {
            assert!(ulps(logf(x), f64::from(x).ln()) <= 1.0, "log({x:e})");
        }
    }

    #[test]
    fn logf_special_values() {
        assert_eq!(logf(0.0), f32::NEG_INFINITY);
        assert_eq!(logf(-0.0), f32::NEG_INFINITY);
        assert_eq!(logf(f32::INFINITY), f32::INFINITY);
        assert_eq!(logf(1.0).to_bits(), 0);
        for x in [-1.0f32, -1.0e-40, f32::NEG_INFINITY, f32::NAN] {
            assert_eq!(
                logf(x).to_bits(),
                device::CANONICAL_NAN_F32_BITS,
                "log({x})"
            );
        }
    }

    #[test]
    fn sinf_and_cosf_are_within_two_ulp() {
        for x in inputs()
            .into_iter()
            .filter(|x| x.is_finite() && x.is_normal())
        {
            let w = f64::from(x);
            let (s, c) = (sinf(x), cosf(x));
            // A result below 2^-126 is flushed: allow the subnormal range as absolute error.
            let tiny = f64::from(f32::MIN_POSITIVE);
            assert!(
                ulps(s, w.sin()) <= 2.0 || (f64::from(s) - w.sin()).abs() <= tiny,
                "sin({x:e}) = {s:e}, want {:e}",
                w.sin()
            );
            assert!(
                ulps(c, w.cos()) <= 2.0 || (f64::from(c) - w.cos()).abs() <= tiny,
                "cos({x:e}) = {c:e}, want {:e}",
                w.cos()
            );
        }
    }

    #[test]
    fn sinf_and_cosf_special_values() {
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert_eq!(
                sinf(x).to_bits(),
                device::CANONICAL_NAN_F32_BITS,
                "sin({x})"
            );
            assert_eq!(
                cosf(x).to_bits(),
                device::CANONICAL_NAN_F32_BITS,
                "cos({x})"
            );
        }
        // Subnormal arguments count as zero (flush-to-zero), of their sign for the sine.
        for x in [0.0f32, 1.0e-40, 1.0e-45] {
            assert_eq!(sinf(x).to_bits(), 0, "sin({x:e})");
            assert_eq!(cosf(x), 1.0, "cos({x:e})");
        }
        assert_eq!(sinf(-1.0e-40).to_bits(), (-0.0f32).to_bits());
    }

    /// The quadrant reductions agree where both apply: Payne–Hanek on the top of the Cody–Waite
    /// range (the exponents it is used for start there).
    #[test]
    fn large_reduction_agrees_with_the_small_one_below_its_bound() {
        for x in [65_536.5f32, -70_000.0, 99_999.0, 105_000.0, -105_614.99] {
            let (q, r) = reduce_quadrant(x);
            let (q2, r2) = reduce_large(x);
            assert_eq!(q.rem_euclid(4), q2.rem_euclid(4), "quadrant of {x}");
            assert!(
                (r - r2).abs() <= 4.0 * f32::EPSILON * r.abs().max(1e-3),
                "{x}: {r} vs {r2}"
            );
        }
    }
}
