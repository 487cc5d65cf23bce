//! The approximate transcendental instructions `sin.approx.f32`, `cos.approx.f32`,
//! `tanh.approx.f32` (sm_75+) and the integer high product `mul.hi.u32`.
//!
//! On the host the approximations compute the exact function in f64 and round it to f32 (NaN
//! results canonical, as in [`crate::device::ex2_approx_ftz_f32`]), so they may differ from the GPU
//! in the last bits; `mul.hi.u32` is integer arithmetic and agrees bit for bit.
//!
//! Accuracy on the GPU (PTX ISA): `sin`/`cos.approx.f32` have an absolute error of at most
//! 2^-20.5 for |x| ≤ 100π, growing with |x| beyond (the hardware reduces the argument in f32);
//! `tanh.approx.f32` has a relative error of at most 2^-11 (about 2^-10.987).
//!
//! On amdgpu `sin` and `cos` are LLVM's intrinsics (`v_sin_f32`/`v_cos_f32` after a scaling by
//! 1/2π) and `tanh` is [`tanh_from_exp2`], within the same 2^-11.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use super::float::canonicalize_nan_f32;

register_op!(
    /// `sin.approx.f32`: sin x (absolute error ≤ 2^-20.5 for |x| ≤ 100π).
    sin_approx_f32(x): f32, reg32, "sin.approx.f32 {d}, {x};",
    host canonicalize_nan_f32(f64::from(x).sin() as f32),
    amdgpu core::intrinsics::sinf32(x)
);
register_op!(
    /// `cos.approx.f32`: cos x (absolute error ≤ 2^-20.5 for |x| ≤ 100π).
    cos_approx_f32(x): f32, reg32, "cos.approx.f32 {d}, {x};",
    host canonicalize_nan_f32(f64::from(x).cos() as f32),
    amdgpu core::intrinsics::cosf32(x)
);
register_op!(
    /// `tanh.approx.f32`: tanh x (relative error ≤ 2^-11; sm_75+).
    tanh_approx_f32(x): f32, reg32, "tanh.approx.f32 {d}, {x};",
    host canonicalize_nan_f32(f64::from(x).tanh() as f32),
    amdgpu tanh_from_exp2(x, |v| core::intrinsics::exp2f32(v))
);

/// tanh x from one `exp2` (amdgpu has no tanh instruction): `(1 - e) / (1 + e)` with
/// `e = 2^(-2|x| log₂e)`, the sign of `x`; below |x| = 1/16 the series `x - x³/3 + 2x⁵/15`
/// (`1 - e` would cancel there). Relative error a few ulp beyond `exp2`'s own, well within
/// `tanh.approx`'s 2^-11 (the test below measures it with the host's `exp2`); ±1 beyond
/// |x| ≈ 9, NaN for NaN.
#[cfg(any(target_arch = "amdgpu", test))]
#[inline(always)]
fn tanh_from_exp2(x: f32, exp2: impl Fn(f32) -> f32) -> f32 {
    let magnitude = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    if magnitude < 0.0625 {
        let x2 = x * x;
        return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0)));
    }
    let e = exp2(-2.0 * core::f32::consts::LOG2_E * magnitude);
    let t = (1.0 - e) / (1.0 + e);
    f32::from_bits(t.to_bits() | (x.to_bits() & 0x8000_0000))
}

register_op!(
    /// `mul.hi.u32`: the high 32 bits of the 64-bit product `a · b`.
    mul_hi_u32(a, b): u32, reg32, "mul.hi.u32 {d}, {a}, {b};",
    host ((u64::from(a) * u64::from(b)) >> 32) as u32,
    amdgpu ((u64::from(a) * u64::from(b)) >> 32) as u32
);

#[cfg(test)]
mod tests {
    #[test]
    fn tanh_from_exp2_is_within_a_few_ulp() {
        let mut worst = 0f64;
        // Every 97th f32 from 2^-20 to 16, both signs; 0 and NaN.
        let (low, high) = (2f32.powi(-20).to_bits(), 16f32.to_bits());
        for bits in (low..=high).step_by(97) {
            for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let got = f64::from(super::tanh_from_exp2(x, f32::exp2));
                let want = f64::from(x).tanh();
                worst = worst.max(((got - want) / want).abs());
            }
        }
        // 8 ulp of f32 (2^-20): the bar `tanh.approx` sets is 2^-11.
        assert!(worst < 2f64.powi(-20), "worst relative error {worst:e}");
        assert_eq!(super::tanh_from_exp2(0.0, f32::exp2), 0.0);
        assert_eq!(super::tanh_from_exp2(30.0, f32::exp2), 1.0);
        assert_eq!(super::tanh_from_exp2(-30.0, f32::exp2), -1.0);
        assert!(super::tanh_from_exp2(f32::NAN, f32::exp2).is_nan());
    }
}
