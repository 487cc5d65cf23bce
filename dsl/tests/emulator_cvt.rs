//! Conversions: the host paths of `tessera::dtype` and `tessera::device` conversions, which
//! must be bit-identical to PTX `cvt`. f16 is checked exhaustively against the compiler's own
//! binary16 (`f16` primitive, nightly), every format is checked at every rounding boundary
//! (midpoints between consecutive representable values must round to the even one, one f32 ulp
//! either side to the nearer one), plus overflow, saturation, subnormals and NaN encodings.
#![feature(f16)]

mod emulator_support;

use emulator_support::{run_block_with_output, run_with_output, Buffer, Rng};
use tessera::device::*;
use tessera::dtype::{self, bf16, f8e4m3, f8e5m2};
use tessera::Ptr;

#[test]
fn f16_to_f32_is_exact_for_all_65536_patterns() {
    for bits in 0..=u16::MAX {
        let ours = dtype::f16(bits).to_f32();
        let reference = f16::from_bits(bits) as f32;
        if reference.is_nan() {
            assert_eq!(ours.to_bits(), 0x7fff_ffff, "{bits:#x}: canonical NaN");
        } else {
            assert_eq!(ours.to_bits(), reference.to_bits(), "{bits:#x}");
        }
    }
}

#[test]
fn f32_to_f16_matches_the_compiler_on_a_dense_sample_and_all_boundaries() {
    let check = |x: f32| {
        let ours = dtype::f16::from_f32(x).to_bits();
        if x.is_nan() {
            assert_eq!(ours, 0x7fff, "{x:?}");
        } else {
            assert_eq!(ours, (x as f16).to_bits(), "{x:?} ({:#x})", x.to_bits());
        }
    };
    // Every 509th f32 bit pattern (odd stride: all mantissa residues get hit).
    let mut bits = 0u32;
    while let Some(next) = bits.checked_add(509) {
        check(f32::from_bits(bits));
        bits = next;
    }
    // Every f16 value, the midpoints to its neighbour, and one f32 ulp either side of them.
    for h in 0..0x7c00u16 {
        let lo = f16::from_bits(h) as f32;
        let hi = f16::from_bits(h + 1) as f32;
        let mid = ((lo as f64 + hi as f64) / 2.0) as f32;
        for x in [
            lo,
            mid,
            f32::from_bits(mid.to_bits() - 1),
            f32::from_bits(mid.to_bits() + 1),
        ] {
            check(x);
            check(-x);
        }
    }
}

#[test]
fn f16_edge_cases() {
    let f = |x: f32| dtype::f16::from_f32(x).to_bits();
    assert_eq!(f(65504.0), 0x7bff); // max finite
    assert_eq!(f(65519.99), 0x7bff); // below the midpoint to 65536
    assert_eq!(f(65520.0), 0x7c00); // midpoint ties to even: inf
    assert_eq!(f(f32::INFINITY), 0x7c00);
    assert_eq!(f(f32::NEG_INFINITY), 0xfc00);
    assert_eq!(f(-0.0), 0x8000);
    assert_eq!(f(5.960_464_5e-8), 0x0001); // smallest subnormal 2^-24
    assert_eq!(f(2.980_232_2e-8), 0x0000); // 2^-25: tie, rounds to even (zero)
    assert_eq!(f(2.980_232_5e-8), 0x0001); // just above the tie
    assert_eq!(f(f32::from_bits(1)), 0x0000); // f32 subnormal
    assert_eq!(f(f32::NAN), 0x7fff);
    assert_eq!(f(-f32::NAN), 0x7fff);
}

#[test]
fn bf16_round_to_nearest_even_at_every_boundary() {
    for h in (0..0x7f80u32).step_by(7).chain(0x7f00..0x7f80) {
        let lo = f32::from_bits(h << 16);
        let hi = f32::from_bits((h + 1) << 16);
        let mid = f32::from_bits((h << 16) | 0x8000);
        let even = if h % 2 == 0 { h } else { h + 1 };
        for (x, want) in [
            (lo, h),
            (hi, h + 1),
            (mid, even),
            (f32::from_bits(mid.to_bits() - 1), h),
            (f32::from_bits(mid.to_bits() + 1), h + 1),
        ] {
            assert_eq!(bf16::from_f32(x).to_bits() as u32, want, "{x:?}");
            assert_eq!(bf16::from_f32(-x).to_bits() as u32, want | 0x8000, "-{x:?}");
        }
    }
    assert_eq!(bf16::from_f32(f32::MAX).to_bits(), 0x7f80); // rounds up to inf
    assert_eq!(bf16::from_f32(f32::NAN).to_bits(), 0x7fff);
    assert_eq!(
        bf16::from_f32(f32::from_bits(0x0000_8000)).to_bits(),
        0x0000
    ); // tie to even
    assert_eq!(
        bf16::from_f32(f32::from_bits(0x0001_8000)).to_bits(),
        0x0002
    );
    // bf16 -> f32 is a shift, NaN payloads kept.
    assert_eq!(bf16(0x7fa1).to_f32().to_bits(), 0x7fa1_0000);
    assert_eq!(bf16(0xc0a0).to_f32(), -5.0);
}

/// Exact value of an 8-bit float from its fields (independent of the library's decoder).
fn f8_value(bits: u8, exp_bits: u32, man_bits: u32, bias: i32) -> f64 {
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((bits & 0x7f) >> man_bits) as i32;
    let m = (bits & ((1 << man_bits) - 1)) as f64;
    let scale = (1u32 << man_bits) as f64;
    let _ = exp_bits;
    if e == 0 {
        sign * m / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

#[test]
fn e4m3_decode_round_trip_rounding_and_saturation() {
    let finite: Vec<u8> = (0..=255u8).filter(|b| b & 0x7f != 0x7f).collect();
    for &b in &finite {
        let v = f8_value(b, 4, 3, 7);
        assert_eq!(f8e4m3(b).to_f32() as f64, v, "{b:#x}");
        let back = f8e4m3::from_f32(v as f32).to_bits();
        if v == 0.0 {
            assert_eq!(back, b & 0x80);
        } else {
            assert_eq!(back, b, "round trip {b:#x}");
        }
    }
    assert_eq!(f8e4m3(0x7e).to_f32(), 448.0);
    assert!(f8e4m3(0x7f).to_f32().is_nan() && f8e4m3(0xff).to_f32().is_nan());
    // Midpoints between consecutive positive values tie to even; ulp either side is nearer.
    for b in 0..0x7eu8 {
        let (lo, hi) = (f8_value(b, 4, 3, 7), f8_value(b + 1, 4, 3, 7));
        let mid = ((lo + hi) / 2.0) as f32;
        let even = if b % 2 == 0 { b } else { b + 1 };
        assert_eq!(f8e4m3::from_f32(mid).to_bits(), even, "mid {b:#x}");
        assert_eq!(f8e4m3::from_f32(-mid).to_bits(), even | 0x80, "-mid {b:#x}");
        assert_eq!(
            f8e4m3::from_f32(f32::from_bits(mid.to_bits() - 1)).to_bits(),
            b
        );
        assert_eq!(
            f8e4m3::from_f32(f32::from_bits(mid.to_bits() + 1)).to_bits(),
            b + 1
        );
    }
    // satfinite: above 448 (also past the would-be 480) and inf saturate; NaN -> 0x7f.
    for x in [449.0, 464.0, 470.0, 480.0, 1e30, f32::INFINITY] {
        assert_eq!(f8e4m3::from_f32(x).to_bits(), 0x7e, "{x}");
        assert_eq!(f8e4m3::from_f32(-x).to_bits(), 0xfe, "-{x}");
    }
    assert_eq!(f8e4m3::from_f32(f32::NAN).to_bits(), 0x7f);
    // Subnormals: smallest 2^-9; half of it ties to zero; 1.5 * 2^-9 ties to 2 * 2^-9.
    assert_eq!(f8e4m3::from_f32(2f32.powi(-9)).to_bits(), 0x01);
    assert_eq!(f8e4m3::from_f32(2f32.powi(-10)).to_bits(), 0x00);
    assert_eq!(f8e4m3::from_f32(1.5 * 2f32.powi(-9)).to_bits(), 0x02);
    assert_eq!(f8e4m3(0x7f).to_f16().to_bits(), 0x7fff);
}

#[test]
fn e5m2_decode_round_trip_rounding_and_saturation() {
    for b in 0..=255u8 {
        let e = (b & 0x7f) >> 2;
        if e == 31 {
            continue;
        }
        let v = f8_value(b, 5, 2, 15);
        assert_eq!(f8e5m2(b).to_f32() as f64, v, "{b:#x}");
        assert_eq!(f8e5m2(b).to_f16().to_f32() as f64, v, "{b:#x} via f16");
        if v != 0.0 {
            assert_eq!(f8e5m2::from_f32(v as f32).to_bits(), b);
        }
    }
    assert_eq!(f8e5m2(0x7c).to_f32(), f32::INFINITY);
    assert!(f8e5m2(0x7d).to_f32().is_nan());
    for b in 0..0x7bu8 {
        let (lo, hi) = (f8_value(b, 5, 2, 15), f8_value(b + 1, 5, 2, 15));
        let mid = ((lo + hi) / 2.0) as f32;
        let even = if b % 2 == 0 { b } else { b + 1 };
        assert_eq!(f8e5m2::from_f32(mid).to_bits(), even, "mid {b:#x}");
    }
    for x in [57345.0, 61440.0, 1e10, f32::INFINITY] {
        assert_eq!(f8e5m2::from_f32(x).to_bits(), 0x7b, "{x}");
        assert_eq!(f8e5m2::from_f32(-x).to_bits(), 0xfb, "-{x}");
    }
    assert_eq!(f8e5m2::from_f32(f32::NAN).to_bits(), 0x7f);
    // f16 -> e5m2 is one rounding (e5m2 is the top byte of f16, rounded to nearest even).
    for h in 0..0x7c00u16 {
        let x = dtype::f16(h);
        let want = f8e5m2::from_f32(x.to_f32());
        assert_eq!(f8e5m2::from_f16(x).to_bits(), want.to_bits());
    }
}

/// Every f32 NaN, whatever its sign and payload, converts to e5m2 0x7f (as
/// `cvt.rn.satfinite.e5m2x2.f32` does on an H100); 0x7d, 0x7e and 0x7f are all NaNs that convert
/// to the canonical f16 and f32 NaNs, 0x7c is +inf.
#[test]
fn e5m2_nan_encodings() {
    let mut nans = vec![
        0x7f80_0001u32,
        0x7fbf_ffff,
        0x7fc0_0000,
        0x7fc0_0001,
        0x7fff_ffff,
    ];
    let mut rng = Rng(0xe5);
    for _ in 0..1000 {
        nans.push(0x7f80_0000 | (rng.next_u32() & 0x7f_ffff).max(1));
    }
    for bits in nans.clone() {
        for bits in [bits, bits | 0x8000_0000] {
            let x = f32::from_bits(bits);
            assert!(x.is_nan());
            assert_eq!(f8e5m2::from_f32(x).to_bits(), 0x7f, "{bits:#x}");
            assert_eq!(f32_to_f8e5m2(x).to_bits(), 0x7f, "device, {bits:#x}");
            let pair = f32x2_to_f8e5m2x2(x, 1.0);
            assert_eq!((pair[0].to_bits(), pair[1].to_bits()), (0x7f, 0x3c));
            let pair = f32x2_to_f8e5m2x2(-2.0, x);
            assert_eq!((pair[0].to_bits(), pair[1].to_bits()), (0xc0, 0x7f));
        }
    }
    assert_eq!(f8e5m2::NAN.to_bits(), 0x7f);
    // f16 -> e5m2 of every f16 NaN (one rounding through f32).
    for h in 0x7c01..=0x7fffu16 {
        for h in [h, h | 0x8000] {
            assert_eq!(f8e5m2::from_f16(dtype::f16(h)).to_bits(), 0x7f, "{h:#x}");
        }
    }
    for b in [0x7du8, 0x7e, 0x7f, 0xfd, 0xfe, 0xff] {
        let x = f8e5m2(b);
        assert!(x.is_nan(), "{b:#x}");
        assert_eq!(x.to_f32().to_bits(), 0x7fff_ffff, "{b:#x}");
        assert_eq!(x.to_f16().to_bits(), 0x7fff, "{b:#x}");
        assert_eq!(f8e5m2_to_f32(x).to_bits(), 0x7fff_ffff, "device, {b:#x}");
        assert_eq!(
            f8e5m2x2_to_f16x2([x, x])[1].to_bits(),
            0x7fff,
            "device, {b:#x}"
        );
    }
    assert_eq!(f8e5m2(0x7c).to_f32(), f32::INFINITY);
    assert_eq!(f8e5m2(0xfc).to_f32(), f32::NEG_INFINITY);
    assert!(!f8e5m2(0x7c).is_nan() && !f8e5m2(0x7b).is_nan());
}

#[test]
fn device_conversions_inside_a_kernel() {
    let mut rng = Rng(11);
    let mut inputs: Vec<f32> = (0..256).map(|_| f32::from_bits(rng.next_u32())).collect();
    inputs.extend([
        0.5,
        1.5,
        2.5,
        -0.5,
        -2.5,
        3e9,
        -3e9,
        4.4e9,
        f32::NAN,
        65520.0,
        448.0,
        465.0,
    ]);
    let n = inputs.len();
    let mut input = Buffer::from_f32(&inputs);
    let in_ptr: Ptr<f32> = input.ptr();
    let out = run_with_output(
        [n as u32, 1, 1],
        [1, 1, 1],
        0,
        n * 8,
        |out_ptr: Ptr<u32>| unsafe {
            let i = block_idx_x() as isize;
            let x = ld_global_v1(in_ptr.offset(i), true, 0.0f32);
            let o = out_ptr.offset(8 * i);
            st_global_v4(
                o,
                true,
                [
                    f32_to_f16(x).to_bits() as u32 | (f32_to_bf16(x).to_bits() as u32) << 16,
                    f32_to_f8e4m3(x).to_bits() as u32 | (f32_to_f8e5m2(x).to_bits() as u32) << 8,
                    f32_to_i32_rz(x) as u32,
                    f32_to_i32_rn(x) as u32,
                ],
            );
            st_global_v4(
                o.offset(4),
                true,
                [
                    f32_to_u32_rz(x),
                    f32_to_u32_rn(x),
                    f16_to_f32(f32_to_f16(x)).to_bits(),
                    bf16_to_f32(f32_to_bf16(x)).to_bits(),
                ],
            );
        },
    );
    let got = out.to_u32();
    for (i, &x) in inputs.iter().enumerate() {
        let w = &got[8 * i..8 * i + 8];
        let h = dtype::f16::from_f32(x);
        let b = bf16::from_f32(x);
        assert_eq!(
            w[0],
            h.to_bits() as u32 | (b.to_bits() as u32) << 16,
            "{x:?}"
        );
        assert_eq!(
            w[1],
            f8e4m3::from_f32(x).to_bits() as u32 | (f8e5m2::from_f32(x).to_bits() as u32) << 8,
            "{x:?}"
        );
        assert_eq!(w[2] as i32, x as i32, "{x:?}");
        assert_eq!(w[3] as i32, x.round_ties_even() as i32, "{x:?}");
        assert_eq!(w[4], x as u32, "{x:?}");
        assert_eq!(w[5], x.round_ties_even() as u32, "{x:?}");
        assert_eq!(w[6], h.to_f32().to_bits(), "{x:?}");
        assert_eq!(w[7], b.to_f32().to_bits(), "{x:?}");
    }
    // Round-half-even and saturation of the integer conversions (cvt.rni / cvt.rzi semantics).
    assert_eq!(
        [0.5f32, 1.5, 2.5, -0.5, -2.5].map(|x| x.round_ties_even() as i32),
        [0, 2, 2, 0, -2]
    );
    let nan = f32::from_bits(0x7fc0_0000);
    assert_eq!(
        (3e9f32 as i32, -3e9f32 as i32, nan as i32),
        (i32::MAX, i32::MIN, 0)
    );
    assert_eq!((-1.0f32 as u32, 4.4e9f32 as u32), (0, u32::MAX));
    assert_eq!(i32_to_f32_host(16_777_217), 16_777_216.0); // tie to even
    assert_eq!(i32_to_f32_host(16_777_219), 16_777_220.0);
}

fn i32_to_f32_host(x: i32) -> f32 {
    let out = run_block_with_output(1, 0, 1, |out_ptr: Ptr<f32>| unsafe {
        st_global_v1(out_ptr, true, i32_to_f32(x));
    });
    out.to_f32()[0]
}

#[test]
fn packed_f8_pairs_keep_lane_order() {
    let pair = f32x2_to_f8e4m3x2(1.0, -2.0);
    assert_eq!(pair.map(|p| p.to_bits()), [0x38, 0xc0]);
    let back = f8e4m3x2_to_f16x2(pair);
    assert_eq!(back.map(|h| h.to_f32()), [1.0, -2.0]);
    let pair = f32x2_to_f8e5m2x2(0.5, 3.0);
    assert_eq!(f8e5m2x2_to_f16x2(pair).map(|h| h.to_f32()), [0.5, 3.0]);
    assert_eq!(f8e4m3_to_f32(f8e4m3(0x7e)), 448.0);
    assert_eq!(f8e5m2_to_f32(f8e5m2(0x7b)), 57344.0);
}

/// Law: the f8 → f16 widening by the bits (`to_f16`, what the device layer's software path and
/// AMD's f8 dots run) is the f32 value rounded to f16, bit for bit, for every pattern of both
/// formats: subnormals normalised, ±0, ±inf, NaN as `0x7fff`.
#[test]
fn f8_to_f16_by_the_bits_is_the_rounded_f32_value_for_every_pattern() {
    for b in 0..=255u8 {
        assert_eq!(
            f8e4m3(b).to_f16().to_bits(),
            dtype::f16::from_f32(f8e4m3(b).to_f32()).to_bits(),
            "e4m3 {b:#x}"
        );
        assert_eq!(
            f8e5m2(b).to_f16().to_bits(),
            dtype::f16::from_f32(f8e5m2(b).to_f32()).to_bits(),
            "e5m2 {b:#x}"
        );
    }
    assert_eq!(f8e4m3(0x01).to_f16().to_f32(), 2f32.powi(-9));
    assert_eq!(f8e4m3(0x87).to_f16().to_f32(), -7.0 * 2f32.powi(-9));
    assert_eq!(f8e5m2(0xfc).to_f16().to_bits(), 0xfc00);
}
