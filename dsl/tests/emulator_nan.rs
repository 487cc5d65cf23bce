//! NaN encodings of f32 arithmetic on the host: what the GPU computes, bit for bit.
//!
//! Measured on an H100 (tessera-parity): every NaN that f32 `add` and `mma.sync` f16/bf16 → f32
//! produce is `0x7fffffff`, whatever the NaN operands' signs and payloads, where x86 keeps an
//! operand's (quieted) payload and gives `0xffc00000` for invalid operations. The runtime layer
//! (`device::add_f32` & co.), the tile language's `Num`/`FloatMath`/`Transcendental` and the
//! emulator's `mma` must give the GPU's encodings; `neg`/`abs` are sign-bit operations that keep
//! payloads (pinned to `xor.b32`/`and.b32` on the GPU).

mod emulator_support;

use emulator_support::{Buffer, Rng};
use tessera::device::*;
use tessera::dtype::{bf16, f16, pack_bf16x2, pack_f16x2};
use tessera::emulator::run_grid;
use tessera::tile::{FloatMath, Num, Transcendental};
use tessera::Ptr;

const CANONICAL: u32 = 0x7fff_ffff;

/// NaNs of both signs with various payloads (signalling and quiet), including x86's default NaN
/// and the canonical one.
fn nans() -> Vec<f32> {
    let mut bits = vec![
        0x7f80_0001u32,
        0x7fbf_ffff,
        0x7fc0_0000,
        0x7fc0_0001,
        0x7fd2_3456,
        CANONICAL,
    ];
    let mut rng = Rng(0x004e_614e);
    for _ in 0..32 {
        bits.push(0x7f80_0000 | (rng.next_u32() & 0x7f_ffff).max(1));
    }
    let negative: Vec<u32> = bits.iter().map(|b| b | 0x8000_0000).collect();
    bits.extend(negative);
    bits.into_iter().map(f32::from_bits).collect()
}

/// Non-NaN operands: zeros, infinities, subnormals, ordinary values.
fn numbers() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        1.0,
        -2.5,
        3.0e38,
        -1.0e-45,
        1.0e-40,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
    ]
}

fn assert_bits(got: f32, want: u32, what: &str) {
    assert_eq!(got.to_bits(), want, "{what}: got {:#010x}", got.to_bits());
}

/// `got` is the IEEE result `ieee` where that is a number, the canonical NaN where it is a NaN.
fn assert_gpu_result(got: f32, ieee: f32, what: &str) {
    let want = if ieee.is_nan() {
        CANONICAL
    } else {
        ieee.to_bits()
    };
    assert_bits(got, want, what);
}

#[test]
fn host_x86_arithmetic_keeps_payloads_which_is_why_this_layer_exists() {
    // The behaviour the runtime layer corrects; if a host ever canonicalised by itself these
    // tests would still pass, so this only documents what x86 does.
    let x = f32::from_bits(0x7f80_0001);
    let sum = std::hint::black_box(x) + std::hint::black_box(1.0f32);
    assert!(sum.is_nan());
    if cfg!(target_arch = "x86_64") {
        assert_eq!(sum.to_bits(), 0x7fc0_0001);
        let inf = std::hint::black_box(f32::INFINITY);
        assert_eq!((inf - inf).to_bits(), 0xffc0_0000);
    }
}

/// Calls `check(a, b, what)` for every ordered pair of [`nans`] and [`numbers`]; `what(op)`
/// names the pair (`a op b` in hex).
fn for_all_pairs(check: impl Fn(f32, f32, &dyn Fn(&str) -> String)) {
    let mut operands = nans();
    operands.extend(numbers());
    for &a in &operands {
        for &b in &operands {
            check(a, b, &|op: &str| {
                format!("{:#010x} {op} {:#010x}", a.to_bits(), b.to_bits())
            });
        }
    }
}

#[test]
fn runtime_layer_f32_arithmetic_gives_the_canonical_nan() {
    for_all_pairs(|a, b, what| {
        assert_gpu_result(add_f32(a, b), a + b, &what("+"));
        assert_gpu_result(sub_f32(a, b), a - b, &what("-"));
        assert_gpu_result(mul_f32(a, b), a * b, &what("*"));
        assert_gpu_result(div_f32(a, b), a / b, &what("/"));
    });
    // Invalid operations on numbers.
    let inf = f32::INFINITY;
    assert_bits(add_f32(inf, -inf), CANONICAL, "inf + -inf");
    assert_bits(sub_f32(inf, inf), CANONICAL, "inf - inf");
    assert_bits(mul_f32(0.0, -inf), CANONICAL, "0 * -inf");
    assert_bits(div_f32(0.0, -0.0), CANONICAL, "0 / -0");
    assert_bits(div_f32(-inf, inf), CANONICAL, "-inf / inf");
    // Ordinary results are untouched (signed zeros included).
    assert_bits(add_f32(-0.0, -0.0), 0x8000_0000, "-0 + -0");
    assert_bits(mul_f32(-1.0e-45, 0.5), 0x8000_0000, "subnormal underflow");
    assert_eq!(div_f32(1.0, 3.0), 1.0 / 3.0);
    assert_eq!(CANONICAL_NAN_F32.to_bits(), CANONICAL);
    assert_eq!(canonicalize_nan_f32(2.0), 2.0);
}

#[test]
fn neg_and_abs_only_touch_the_sign_bit() {
    for x in nans().into_iter().chain(numbers()) {
        let bits = x.to_bits();
        assert_bits(neg_f32(x), bits ^ 0x8000_0000, "neg_f32");
        assert_bits(abs_f32(x), bits & 0x7fff_ffff, "abs_f32");
        assert_bits(<f32 as Num>::neg(x), bits ^ 0x8000_0000, "Num::neg");
        assert_bits(<f32 as Num>::abs(x), bits & 0x7fff_ffff, "Num::abs");
    }
}

#[test]
fn tile_num_f32_gives_the_canonical_nan() {
    for_all_pairs(|a, b, what| {
        assert_gpu_result(<f32 as Num>::add(a, b), a + b, &what("add"));
        assert_gpu_result(<f32 as Num>::sub(a, b), a - b, &what("sub"));
        assert_gpu_result(<f32 as Num>::mul(a, b), a * b, &what("mul"));
        assert_gpu_result(<f32 as Num>::div(a, b), a / b, &what("div"));
        // `%` is the exact IEEE fmod on both sides (`tile::fmod_f32`, integer code, so the
        // GPU computes these same bits): a NaN whenever IEEE says so, x % ±inf = x for finite x.
        assert_gpu_result(<f32 as Num>::rem(a, b), a % b, &what("rem"));
        // max.NaN / min.NaN: "the result is canonical NaN if any of the inputs is NaN".
        if a.is_nan() || b.is_nan() {
            assert_bits(<f32 as Num>::max(a, b), CANONICAL, &what("max"));
            assert_bits(<f32 as Num>::min(a, b), CANONICAL, &what("min"));
        } else {
            assert_eq!(<f32 as Num>::max(a, b), a.max(b), "{}", what("max"));
            assert_eq!(<f32 as Num>::min(a, b), a.min(b), "{}", what("min"));
        }
        assert_gpu_result(
            <f32 as FloatMath>::fma(a, b, 1.0),
            a.mul_add(b, 1.0),
            &what("fma"),
        );
        assert_gpu_result(
            <f32 as FloatMath>::fma(1.0, a, b),
            a + b,
            &what("fma 1·a +"),
        );
    });
    let inf = f32::INFINITY;
    assert_bits(<f32 as Num>::rem(inf, inf), CANONICAL, "inf % inf");
    assert_bits(<f32 as Num>::rem(inf, 2.0), CANONICAL, "inf % 2");
    assert_bits(<f32 as Num>::rem(1.0, 0.0), CANONICAL, "1 % 0");
    assert_eq!(<f32 as Num>::rem(7.5, -2.0), 1.5);
    assert_eq!(<f32 as Num>::rem(-7.5, inf), -7.5);
    assert_bits(
        <f32 as FloatMath>::fma(0.0, inf, 1.0),
        CANONICAL,
        "fma(0, inf, 1)",
    );
}

#[test]
fn tile_float_math_gives_the_canonical_nan() {
    let mut inputs = nans();
    inputs.extend([
        -1.0,
        -0.0,
        0.0,
        -1.0e-40,
        -130.0,
        f32::NEG_INFINITY,
        f32::INFINITY,
        2.0,
    ]);
    // `.ftz`: a subnormal operand or result counts as zero of its sign.
    let ftz = |x: f32| {
        if x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    };
    for x in inputs {
        let what = |op: &str| format!("{op}({:#010x})", x.to_bits());
        assert_gpu_result(<f32 as FloatMath>::sqrt(x), ftz(x).sqrt(), &what("sqrt"));
        assert_gpu_result(<f32 as FloatMath>::rsqrt(x), 1.0 / x.sqrt(), &what("rsqrt"));
        // `ex2.approx.ftz`: 2^-130 is subnormal, so 0.
        assert_gpu_result(
            <f32 as Transcendental>::exp2(x),
            ftz(ftz(x).exp2()),
            &what("exp2"),
        );
        assert_gpu_result(<f32 as Transcendental>::log2(x), x.log2(), &what("log2"));
        let exp = <f32 as Transcendental>::exp(x);
        let log = <f32 as Transcendental>::log(x);
        assert_gpu_result(
            exp,
            ftz(ftz(x * std::f32::consts::LOG2_E).exp2()),
            &what("exp"),
        );
        assert_gpu_result(log, x.log2() * std::f32::consts::LN_2, &what("log"));
    }
    assert_bits(<f32 as FloatMath>::sqrt(-1.0), CANONICAL, "sqrt(-1)");
    assert_bits(<f32 as Transcendental>::log2(-1.0), CANONICAL, "log2(-1)");
    assert_bits(
        <f32 as Transcendental>::exp2(f32::from_bits(0xffc0_0001)),
        CANONICAL,
        "exp2(-NaN)",
    );
}

#[test]
fn narrow_float_nan_results_are_the_formats_canonical_nans() {
    // Computed in f32 and rounded back: any NaN becomes the format's conversion NaN.
    let f16_nan = f16(0xfe01);
    let bf16_nan = bf16(0xffc1);
    for (a, b) in [(f16_nan, f16::from_f32(1.0)), (f16(0x7c00), f16(0xfc00))] {
        assert_eq!(<f16 as Num>::add(a, b).to_bits(), 0x7fff);
        assert_eq!(<f16 as Num>::max(a, f16_nan).to_bits(), 0x7fff);
    }
    assert_eq!(
        <bf16 as Num>::mul(bf16_nan, bf16::from_f32(2.0)).to_bits(),
        0x7fff
    );
    assert_eq!(<bf16 as Num>::rem(bf16_nan, bf16(0x7f80)).to_bits(), 0x7fff);
}

// ---------------------------------------------------------------------------------------------
// mma
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Kind {
    F16,
    Bf16,
}

/// One warp runs `mma.m16n8k16` with every A element `a`, every B element `b` (bits of the
/// input format) and lane `l`'s C registers `c[l]`; returns D as each lane's 4 registers. With
/// uniform A and B, every `D[r][n] = C[r][n] + 16·a·b`.
fn mma_uniform(kind: Kind, a: u16, b: u16, c: &[[f32; 4]; 32]) -> Vec<[u32; 4]> {
    let mut words = Vec::new();
    for lane_c in c {
        words.extend(lane_c.map(f32::to_bits));
    }
    let mut input = Buffer::from_u32(&words);
    let in_ptr: Ptr<u32> = input.ptr();
    let mut out = Buffer::zeros(32 * 4);
    let out_ptr: Ptr<u32> = out.ptr();
    let pack = |x: u16| match kind {
        Kind::F16 => pack_f16x2(f16(x), f16(x)),
        Kind::Bf16 => pack_bf16x2(bf16(x), bf16(x)),
    };
    let (ra, rb) = (pack(a), pack(b));
    run_grid([1, 1, 1], [32, 1, 1], 0, &|| unsafe {
        let lane = lane_id() as isize;
        let p = in_ptr.offset(4 * lane);
        let c = [0, 1, 2, 3].map(|k| f32::from_bits(ld_global_v1(p.offset(k), true, 0u32)));
        let d = match kind {
            Kind::F16 => mma_m16n8k16_f16_f32([ra; 4], [rb; 2], c),
            Kind::Bf16 => mma_m16n8k16_bf16_f32([ra; 4], [rb; 2], c),
        };
        st_global_v4(out_ptr.offset(4 * lane), true, d.map(f32::to_bits));
    })
    .unwrap();
    out.to_u32()
        .chunks(4)
        .map(|w| [w[0], w[1], w[2], w[3]])
        .collect()
}

#[test]
fn mma_nan_results_are_canonical() {
    let nan_list = nans();
    let mut c = [[0f32; 4]; 32];
    for (lane, regs) in c.iter_mut().enumerate() {
        for (i, reg) in regs.iter_mut().enumerate() {
            let k = 4 * lane + i;
            // Two thirds NaN accumulators of every kind, the rest numbers.
            *reg = match k % 3 {
                0 => 1.5 * k as f32 - 40.0,
                _ => nan_list[k % nan_list.len()],
            };
        }
    }
    let one = |kind: Kind| match kind {
        Kind::F16 => 0x3c00u16,
        Kind::Bf16 => 0x3f80,
    };
    let inf = |kind: Kind| match kind {
        Kind::F16 => 0x7c00u16,
        Kind::Bf16 => 0x7f80,
    };
    let payload_nan = |kind: Kind| match kind {
        Kind::F16 => 0xfe01u16,
        Kind::Bf16 => 0xffc1,
    };
    for kind in [Kind::F16, Kind::Bf16] {
        // NaN accumulators: the result is the canonical NaN, numbers get + 16.
        let d = mma_uniform(kind, one(kind), one(kind), &c);
        for lane in 0..32 {
            for i in 0..4 {
                let want = if c[lane][i].is_nan() {
                    CANONICAL
                } else {
                    (c[lane][i] + 16.0).to_bits()
                };
                assert_eq!(d[lane][i], want, "{kind:?} lane {lane} reg {i}: NaN in C");
            }
        }
        // NaN inputs (negative, with a payload): every result is the canonical NaN.
        let d = mma_uniform(kind, payload_nan(kind), one(kind), &c);
        assert!(
            d.iter().flatten().all(|&w| w == CANONICAL),
            "{kind:?}: NaN in A"
        );
        // inf · 0 and inf + (−inf): invalid operations give the canonical NaN (x86's f64
        // arithmetic would give the negative default NaN 0xffc00000 after rounding).
        let d = mma_uniform(kind, inf(kind), 0, &[[1.0; 4]; 32]);
        assert!(
            d.iter().flatten().all(|&w| w == CANONICAL),
            "{kind:?}: inf·0"
        );
        let d = mma_uniform(kind, inf(kind), one(kind), &[[f32::NEG_INFINITY; 4]; 32]);
        assert!(
            d.iter().flatten().all(|&w| w == CANONICAL),
            "{kind:?}: inf - inf"
        );
        let d = mma_uniform(kind, inf(kind), one(kind), &[[2.0; 4]; 32]);
        let inf_bits = f32::INFINITY.to_bits();
        assert!(d.iter().flatten().all(|&w| w == inf_bits), "{kind:?}: inf");
    }
}
