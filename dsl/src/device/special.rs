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

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use super::float::canonicalize_nan_f32;

register_op!(
    /// `sin.approx.f32`: sin x (absolute error ≤ 2^-20.5 for |x| ≤ 100π).
    sin_approx_f32(x): f32, reg32, "sin.approx.f32 {d}, {x};",
    host canonicalize_nan_f32(f64::from(x).sin() as f32)
);
register_op!(
    /// `cos.approx.f32`: cos x (absolute error ≤ 2^-20.5 for |x| ≤ 100π).
    cos_approx_f32(x): f32, reg32, "cos.approx.f32 {d}, {x};",
    host canonicalize_nan_f32(f64::from(x).cos() as f32)
);
register_op!(
    /// `tanh.approx.f32`: tanh x (relative error ≤ 2^-11; sm_75+).
    tanh_approx_f32(x): f32, reg32, "tanh.approx.f32 {d}, {x};",
    host canonicalize_nan_f32(f64::from(x).tanh() as f32)
);
register_op!(
    /// `mul.hi.u32`: the high 32 bits of the 64-bit product `a · b`.
    mul_hi_u32(a, b): u32, reg32, "mul.hi.u32 {d}, {a}, {b};",
    host ((u64::from(a) * u64::from(b)) >> 32) as u32,
    amdgpu ((u64::from(a) * u64::from(b)) >> 32) as u32
);
