//! Float math, `umulhi`, Triton's random numbers and dropout, through `#[tile_kernel]` on the
//! test device, against references: a correctly rounded f64 function for the math, and for the
//! random numbers a CPU transcription of Triton's `triton/language/random.py`.

mod support;

use support::{device, launch_tensors_over, GuardedTensor};
use tessera::bf16;
use tessera::tensor::Tensor;
use tessera::tile::libdevice;
use tessera_kernels::tiled::random::{
    tile_dropout, tile_math, tile_math_bf16, tile_random, tile_umulhi,
};

// ---- Triton's random.py, literally (uint32 Philox, 10 rounds) ----

const PHILOX_KEY_A: u32 = 0x9E37_79B9;
const PHILOX_KEY_B: u32 = 0xBB67_AE85;
const PHILOX_ROUND_A: u32 = 0xD251_1F53;
const PHILOX_ROUND_B: u32 = 0xCD9E_8D57;
const N_ROUNDS_DEFAULT: usize = 10;

fn umulhi(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) >> 32) as u32
}

/// `philox_impl(c0, c1, c2, c3, k0, k1)`.
fn philox_impl(mut c: [u32; 4], mut k0: u32, mut k1: u32) -> [u32; 4] {
    for _ in 0..N_ROUNDS_DEFAULT {
        let (a, b) = (PHILOX_ROUND_A, PHILOX_ROUND_B);
        let (c0_, c2_) = (c[0], c[2]);
        c[0] = umulhi(b, c2_) ^ c[1] ^ k0;
        c[2] = umulhi(a, c0_) ^ c[3] ^ k1;
        c[1] = b.wrapping_mul(c2_);
        c[3] = a.wrapping_mul(c0_);
        k0 = k0.wrapping_add(PHILOX_KEY_A);
        k1 = k1.wrapping_add(PHILOX_KEY_B);
    }
    c
}

/// `randint4x(seed, offset)`: `philox(seed, offset, 0, 0, 0)` with `seed.to(uint64)`.
fn randint4x(seed: i64, offset: i32) -> [u32; 4] {
    let seed = seed as u64;
    let seed_hi = ((seed >> 32) & 0xffff_ffff) as u32;
    let seed_lo = (seed & 0xffff_ffff) as u32;
    philox_impl([offset as u32, 0, 0, 0], seed_lo, seed_hi)
}

/// `uint_to_uniform_float(x)` for uint32.
fn uint_to_uniform_float(x: u32) -> f32 {
    let x = x as i32;
    let scale = 4.6566127342e-10f64 as f32;
    let x = if x < 0 {
        x.wrapping_neg().wrapping_sub(1)
    } else {
        x
    };
    x as f32 * scale
}

fn rand(seed: i64, offset: i32) -> f32 {
    uint_to_uniform_float(randint4x(seed, offset)[0])
}

/// `randn`: `pair_uniform_to_normal(u1, u2)[0]`, with Triton's `tl.log` and `tl.cos` (libdevice's
/// `__nv_logf`/`__nv_cosf`, which `tessera::tile::libdevice` computes; their accuracy is tested
/// against f64 in `math_matches_f64_reference` and in that module) and the exact square root
/// (the GPU's `sqrt.approx.ftz` may differ in the last bit).
fn randn(seed: i64, offset: i32) -> f32 {
    let [i1, i2, _, _] = randint4x(seed, offset);
    let u1 = uint_to_uniform_float(i1).max(1.0e-7);
    let u2 = uint_to_uniform_float(i2);
    // Triton's 6.283185307179586, rounded to f32.
    let th = core::f32::consts::TAU * u2;
    let r = (-2.0f32 * libdevice::logf(u1)).sqrt();
    r * libdevice::cosf(th)
}

const SEEDS: [i64; 5] = [0, 1, 42, -1, 0x1234_5678_9abc_def0];

#[test]
fn philox_reference_matches_random123_known_answer() {
    // Random123's kat_vectors, philox4x32 10 rounds: counter 0, key 0.
    assert_eq!(
        philox_impl([0; 4], 0, 0),
        [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
    );
    // counter all ones, key all ones.
    assert_eq!(
        philox_impl([u32::MAX; 4], u32::MAX, u32::MAX),
        [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
    );
}

#[test]
fn random_matches_triton_reference_bit_for_bit() {
    let gpu = device();
    let n = 100_003usize;
    for seed in SEEDS {
        let mut ints = GuardedTensor::new(gpu, &[n], 7u32);
        let mut uniform = GuardedTensor::new(gpu, &[n], 0f32);
        let mut normal = GuardedTensor::new(gpu, &[n], 0f32);
        launch_tensors_over!(
            gpu,
            tile_random,
            BLOCK = 1024,
            n,
            &mut ints.view(),
            &mut uniform.view(),
            &mut normal.view(),
            seed,
        )
        .unwrap();
        let what = format!("tile_random seed {seed}");
        let (ints, uniform, normal) = (
            ints.outputs(&what),
            uniform.outputs(&what),
            normal.outputs(&what),
        );
        for i in 0..n {
            let want = randint4x(seed, i as i32)[0];
            assert_eq!(ints[i], want, "randint seed {seed} offset {i}");
            let u = rand(seed, i as i32);
            assert_eq!(
                uniform[i].to_bits(),
                u.to_bits(),
                "rand seed {seed} offset {i}"
            );
            assert!((0.0..1.0).contains(&u));
            let z = randn(seed, i as i32);
            if gpu.is_gpu() {
                // sqrt.approx.ftz instead of the correctly rounded root: a few ulps at most.
                assert!(
                    (normal[i] - z).abs() <= 4.0 * f32::EPSILON * z.abs(),
                    "randn seed {seed} offset {i}: {} vs {z}",
                    normal[i]
                );
            } else {
                assert_eq!(
                    normal[i].to_bits(),
                    z.to_bits(),
                    "randn seed {seed} offset {i}"
                );
            }
        }
        let mean = uniform.iter().map(|&u| f64::from(u)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "seed {seed}: mean {mean}");
        let var = normal.iter().map(|&z| f64::from(z).powi(2)).sum::<f64>() / n as f64;
        assert!((var - 1.0).abs() < 0.03, "seed {seed}: variance {var}");
    }
}

#[test]
fn dropout_matches_cpu_on_ragged_sizes() {
    let gpu = device();
    let device = gpu.device();
    let mut rng = tessera_test_support::Rng(11);
    for n in [1usize, 5, 1023, 1025, 4099, 100_003] {
        for (p, seed) in [(0.0f32, 3i32), (0.25, -7), (0.5, 123_456), (0.9, 0)] {
            let x: Vec<f32> = (0..n).map(|_| rng.next_f32() * 4.0).collect();
            let tx = Tensor::from_slice(device, &x, &[n]).unwrap();
            let mut dout = GuardedTensor::new(gpu, &[n], 9.5f32);
            launch_tensors_over!(
                gpu,
                tile_dropout,
                BLOCK = 1024,
                n,
                &mut dout.view(),
                &tx,
                p,
                seed,
            )
            .unwrap();
            let out = dout.outputs(&format!("dropout n {n}"));
            let mut kept = 0usize;
            for i in 0..n {
                let keep = rand(i64::from(seed), i as i32) > p;
                let want = if keep { x[i] / (1.0 - p) } else { 0.0 };
                kept += usize::from(keep);
                assert_eq!(out[i].to_bits(), want.to_bits(), "n {n} p {p} i {i}");
            }
            if n > 10_000 {
                let rate = kept as f64 / n as f64;
                assert!(
                    (rate - f64::from(1.0 - p)).abs() < 0.01,
                    "n {n} p {p}: kept {rate}"
                );
            }
        }
    }
}

// ---- math ----

/// Special values, a dense linear sweep of [-12, 12], subnormals, large arguments and random
/// bit patterns.
fn math_inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        1e-40,
        f32::MAX,
        f32::MIN,
        1e-20,
        3.9999998,
        4.0,
        -4.0,
        100.0,
        -1000.5,
        1e6,
        3e7,
    ];
    v.extend((0..=96_000).map(|i| -12.0 + i as f32 * 2.5e-4));
    v.extend((1..200).map(|i| f32::from_bits(i * 37_111)));
    let mut rng = tessera_test_support::Rng(5);
    v.extend((0..20_000).map(|_| f32::from_bits(rng.next_u32())));
    v
}

/// Distance in ulps of f32 `got` from the exact value `want` (the f32 spacing at `want`).
fn ulps(got: f32, want: f64) -> f64 {
    let w = want as f32;
    let spacing = f64::from(f32::from_bits(w.abs().to_bits().max(1) + 1) - w.abs())
        .max(f64::from(f32::from_bits(1)));
    (f64::from(got) - want).abs() / spacing
}

fn erf_reference(x: f64) -> f64 {
    // Series below 2, continued fraction for erfc above (another method than the kernel's).
    let a = x.abs();
    let r = if a < 2.0 {
        let (mut term, mut sum, mut n) = (a, a, 0.0);
        while term.abs() > 1e-30 {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * core::f64::consts::FRAC_2_SQRT_PI
    } else if a < 10.0 {
        // erfc a = e^(−a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …)))), backwards.
        let mut f = a;
        for k in (1..200).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (core::f64::consts::PI.sqrt() * f)
    } else {
        1.0
    };
    r.copysign(x)
}

#[test]
fn erf_reference_matches_known_values() {
    for (x, e) in [
        (0.5, 0.520_499_877_813_046_5),
        (1.0, 0.842_700_792_949_714_9),
        (2.0, 0.995_322_265_018_952_7),
        (3.0, 0.999_977_909_503_001_4),
    ] {
        assert!((erf_reference(x) - e).abs() < 1e-15, "{x}");
    }
}

/// Runs the math kernel `$kernel` (`BLOCK` elements a program) on `$x`: `$ops` functions of
/// each element into the rows of an `[$ops, n]` output, function `k` of `x[i]` at `k * n + i`
/// of the output it gives.
macro_rules! run_math {
    ($kernel:ident, BLOCK = $block:expr, $x:expr, $ops:expr) => {{
        let gpu = device();
        let n = $x.len();
        let tx = Tensor::from_slice(gpu.device(), $x, &[n]).unwrap();
        let mut out = GuardedTensor::new(gpu, &[$ops, n], Default::default());
        launch_tensors_over!(gpu, $kernel, BLOCK = $block, n, &mut out.view(), &tx).unwrap();
        out.outputs(stringify!($kernel))
    }};
}

#[test]
fn math_matches_f64_reference() {
    let x = math_inputs();
    let n = x.len();
    let out = run_math!(tile_math, BLOCK = 512, &x, 6);
    let on_gpu = device().is_gpu();
    for (i, &v) in x.iter().enumerate() {
        let [tanh, erf, sin, cos, sigmoid, clamp] = std::array::from_fn(|k| out[k * n + i]);
        let w = f64::from(v);
        if v.is_nan() {
            for r in [tanh, erf, sin, cos, sigmoid, clamp] {
                assert_eq!(r.to_bits(), 0x7fff_ffff, "NaN in");
            }
            continue;
        }
        // erf: software, the same bits everywhere, within 1 ulp.
        assert!(ulps(erf, erf_reference(w)) <= 1.0, "erf({v}) = {erf}");
        // sigmoid: 1 / (1 + exp(-x)) with exp = ex2(x·log₂e).
        // Below x ≈ −88.7, e^-x overflows f32 and the result is 0, as Triton's.
        let s = if (-w).exp() > f64::from(f32::MAX) {
            0.0
        } else {
            1.0 / (1.0 + (-w).exp())
        };
        let bound = if on_gpu { 1e-6 } else { 2.0f64.powi(-22) } * (1.0 + w.abs());
        assert!(
            // Below 2^-126 the result is subnormal: one subnormal step of rounding.
            f64::from(sigmoid) == s
                || (f64::from(sigmoid) - s).abs() <= bound * s + f64::from(f32::from_bits(1)),
            "sigmoid({v}) = {sigmoid}, want {s}"
        );
        let c = v.clamp(-1.5, 2.0);
        assert_eq!(clamp.to_bits(), c.to_bits(), "clamp({v})");
        // sin and cos: libdevice's, the same bits on the GPU and the emulator, within 2 ulp
        // (a subnormal argument counts as zero; a result below 2^-126 is flushed).
        if v.is_infinite() {
            assert!(sin.is_nan() && cos.is_nan(), "sin/cos({v})");
        } else if v.is_subnormal() {
            assert!(
                sin == 0.0 && cos == 1.0,
                "sin/cos({v:e}) = {sin:e}, {cos:e}"
            );
        } else {
            let tiny = f64::from(f32::MIN_POSITIVE);
            for (got, want, what) in [(sin, w.sin(), "sin"), (cos, w.cos(), "cos")] {
                assert!(
                    ulps(got, want) <= 2.0 || (f64::from(got) - want).abs() <= tiny,
                    "{what}({v:e}) = {got:e}, want {want:e}"
                );
            }
        }
        assert_eq!(sin.to_bits(), libdevice::sinf(v).to_bits(), "sin({v:e})");
        assert_eq!(cos.to_bits(), libdevice::cosf(v).to_bits(), "cos({v:e})");
        if on_gpu {
            // tanh.approx: relative 2^-11.
            assert!(
                (f64::from(tanh) - w.tanh()).abs()
                    <= 2.0f64.powi(-10) * w.tanh().abs().max(1e-30) + 1e-38,
                "tanh({v})"
            );
        } else {
            assert!(ulps(tanh, w.tanh()) <= 0.5 + 1e-9, "tanh({v}) = {tanh}");
        }
    }
}

#[test]
fn narrow_math_rounds_the_f32_result() {
    let x: Vec<bf16> = (0..=4000)
        .map(|i| bf16::from_f32(-5.0 + i as f32 * 2.5e-3))
        .collect();
    let n = x.len();
    let out = run_math!(tile_math_bf16, BLOCK = 128, &x, 3);
    for (i, v) in x.iter().enumerate() {
        let w = f64::from(v.to_f32());
        for (k, want) in [w.tanh(), erf_reference(w), 1.0 / (1.0 + (-w).exp())]
            .into_iter()
            .enumerate()
        {
            let got = f64::from(out[k * n + i].to_f32());
            // One bf16 ulp (2^-7 relative) plus the f32 error below it.
            assert!(
                (got - want).abs() <= 2.0f64.powi(-7) * want.abs() + 1e-30,
                "op {k} of {w}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn umulhi_and_integer_clamp() {
    let gpu = device();
    let device = gpu.device();
    let mut rng = tessera_test_support::Rng(9);
    let n = 1000usize;
    let mut a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let mut b: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    a[..4].copy_from_slice(&[0, u32::MAX, u32::MAX, 0x8000_0000]);
    b[..4].copy_from_slice(&[u32::MAX, u32::MAX, 1, 0x8000_0000]);
    let ta = Tensor::from_slice(device, &a, &[n]).unwrap();
    let tb = Tensor::from_slice(device, &b, &[n]).unwrap();
    let mut out_u = GuardedTensor::new(gpu, &[n], 0u32);
    let mut out_i = GuardedTensor::new(gpu, &[2, n], 0i32);
    launch_tensors_over!(
        gpu,
        tile_umulhi,
        BLOCK = 128,
        n,
        &mut out_u.view(),
        &mut out_i.view(),
        &ta,
        &tb,
    )
    .unwrap();
    let (u, s) = (out_u.outputs("umulhi"), out_i.outputs("umulhi"));
    for i in 0..n {
        let hi = umulhi(a[i], b[i]);
        assert_eq!(u[i], hi, "{} {}", a[i], b[i]);
        assert_eq!(s[i] as u32, hi, "i32 {} {}", a[i], b[i]);
        assert_eq!(s[n + i], (a[i] as i32).clamp(-1000, 1000));
    }
}
