//! The elementwise semantics of generated code (`tessera::tile`), checked against Rust on the
//! test device (the GPU when present, else the emulator; see `support`): wrapping integer
//! arithmetic, division by zero giving 0, clamped shifts, NaN-propagating `maximum`, saturating
//! casts, sub-word element types, `if` on scalars; and a kernel of this test crate written with
//! the kernel library's `pub` `#[tile_fn]` helpers (helpers of another crate).

mod support;

use support::{device, draws, launch_tensors, GuardedTensor, Rng};
use tessera::launch::Device;
use tessera::tensor::Tensor;
use tessera::{bf16, f16, tile_kernel};
use tessera_kernels::tiled::blocks::{elements, load_vector, vector_block};
use tessera_kernels::tiled::ops::{
    tile_deinterleave, tile_float_ops, tile_int_ops, tile_interleave, tile_narrow_ops,
    tile_scalar_splat, tile_scale_or_shift,
};

/// `n` words of the seeded test RNG.
fn bits(seed: u64, n: usize) -> Vec<u64> {
    draws(seed, n, Rng::next_u64)
}

#[test]
fn if_on_a_scalar_picks_the_branch() {
    let gpu = device();
    let device = gpu.device();
    let n = 300;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let tx = Tensor::from_slice(device, &x, &[n]).unwrap();
    for alpha in [2.0f32, 0.0] {
        let mut out = GuardedTensor::new(gpu, &[n], 0f32);
        let consts = tile_scale_or_shift::Consts { BLOCK: 256 };
        launch_tensors!(
            gpu,
            tile_scale_or_shift,
            consts,
            2,
            &mut out.view(),
            &tx,
            alpha
        )
        .unwrap();
        let out = out.outputs(&format!("alpha {alpha}"));
        for i in 0..n {
            let want = if alpha != 0.0 {
                x[i] * alpha
            } else {
                x[i] + 1.0
            };
            assert_eq!(out[i], want, "alpha {alpha} i {i}");
        }
    }
}

/// Runs the two-operand ops kernel `$kernel` (`BLOCK = 128`) on `$a` and `$b` (`[n]` each)
/// into a zeroed `[$ops, n]` output; gives it (op `k` of element `i` at `k * n + i`).
macro_rules! run_ops {
    ($kernel:ident, $a:expr, $b:expr, $ops:expr) => {{
        let gpu = device();
        let n = $a.len();
        let (ta, tb) = (
            Tensor::from_slice(gpu.device(), $a, &[n]).unwrap(),
            Tensor::from_slice(gpu.device(), $b, &[n]).unwrap(),
        );
        let mut out = GuardedTensor::new(gpu, &[$ops, n], Default::default());
        let consts = $kernel::Consts { BLOCK: 128 };
        let grid = (n.div_ceil(128) as u32,);
        launch_tensors!(gpu, $kernel, consts, grid, &mut out.view(), &ta, &tb).unwrap();
        out.outputs(stringify!($kernel))
    }};
}

#[test]
fn integer_ops_follow_the_documented_semantics() {
    let n = 200;
    let mut a: Vec<i32> = bits(5, n).iter().map(|&b| b as i32 >> (b % 24)).collect();
    let mut b: Vec<i32> = bits(6, n).iter().map(|&b| (b as i32) >> (b % 28)).collect();
    // Edge cases: zero divisors, MIN / -1, MIN negated, shifts by 0 and 31.
    a[0] = i32::MIN;
    b[0] = -1;
    a[1] = 17;
    b[1] = 0;
    a[2] = i32::MIN;
    b[2] = 31;
    a[3] = -5;
    b[3] = 32;
    let out = run_ops!(tile_int_ops, &a, &b, 10);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let want = [
            if y == 0 { 0 } else { x.wrapping_div(y) },
            if y == 0 { 0 } else { x.wrapping_rem(y) },
            x << (y & 31),
            x >> (y & 31),
            (x & y) | (x ^ 0x55),
            x.wrapping_neg(),
            x.wrapping_abs(),
            x.max(y).wrapping_sub(x.min(y)),
            if x < y && x != 0 { x } else { y },
            if x < 0 { -1 } else { 0 },
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(out[k * n + i], *w, "op {k} x {x} y {y}");
        }
    }
}

/// Bound of the GPU's approximate `sqrt`, `rsqrt` and `exp2` against the host's: 2^-20 of the
/// result (at least of 1), twice the PTX ISA's bounds (about 2^-22, plus the host's rounding).
const APPROX_BOUND: f64 = 1.0 / (1u64 << 20) as f64;

#[test]
fn float_ops_follow_the_documented_semantics() {
    let gpu = device();
    let n = 200;
    let mut a: Vec<f32> = bits(7, n)
        .iter()
        .map(|&b| (b >> 40) as f32 / (1u64 << 20) as f32 - 8.0)
        .collect();
    let mut b: Vec<f32> = bits(8, n)
        .iter()
        .map(|&b| (b >> 40) as f32 / (1u64 << 21) as f32 - 4.0)
        .collect();
    a[0] = f32::NAN;
    b[1] = f32::NAN;
    a[2] = -0.0;
    b[2] = 0.0;
    a[3] = 1.0e30;
    b[4] = 0.0;
    let out = run_ops!(tile_float_ops, &a, &b, 9);
    let same =
        |got: f32, want: f32| got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let max = if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x == y {
            f32::from_bits(x.to_bits() & y.to_bits())
        } else {
            x.max(y)
        };
        let want = [
            x.mul_add(y, 0.5),
            x.abs().sqrt(),
            1.0 / (y.abs() + 1.0).sqrt(),
            (x / 8.0).exp2(),
            tessera::tile::libdevice::logf(y.abs() + 1.0),
            max,
            x / y,
            ((x * 1.0e9) as i32) as f32,
            x % y,
        ];
        for (k, w) in want.iter().enumerate() {
            let got = out[k * n + i];
            // sqrt, rsqrt and exp2 are `sqrt.approx.ftz`, `rsqrt.approx` and `ex2.approx.ftz` on the
            // GPU (PTX ISA: relative error about 2^-22); the emulator computes them with the
            // host's math, which the test mirrors. The log is libdevice's, the same bits on both.
            if gpu.is_gpu() && (1..=3).contains(&k) {
                let bound = APPROX_BOUND * (w.abs() as f64).max(1.0);
                assert!(
                    same(got, *w) || (got as f64 - *w as f64).abs() <= bound,
                    "op {k} x {x} y {y}: {got} vs {w} (bound {bound:e})"
                );
                continue;
            }
            assert!(same(got, *w), "op {k} x {x} y {y}: {got} vs {w}");
        }
        // The log is ln within 1 ulp.
        let (arg, ln) = (y.abs() + 1.0, ((y.abs() + 1.0) as f64).ln());
        if !y.is_nan() {
            let spacing = f64::from(f32::from_bits((ln as f32).to_bits() + 1) - ln as f32);
            assert!(
                arg == 1.0 || (out[4 * n + i] as f64 - ln).abs() <= spacing,
                "ln {y}: {} vs {ln}",
                out[4 * n + i]
            );
        }
    }
    // maximum(-0, +0) is +0.
    assert_eq!(out[5 * n + 2].to_bits(), 0.0f32.to_bits());
}

#[test]
fn narrow_types_load_store_and_convert() {
    let gpu = device();
    let device = gpu.device();
    for n in [1usize, 15, 16, 17, 255, 256, 300, 1000] {
        let bytes: Vec<u8> = bits(9, n).iter().map(|&b| b as u8).collect();
        let x: Vec<f32> = bits(10, n)
            .iter()
            .map(|&b| f32::from_bits((b as u32 & 0x807f_ffff) | 0x3f00_0000) * 70000.0)
            .collect();
        let tbytes = Tensor::from_slice(device, &bytes, &[n]).unwrap();
        let tx = Tensor::from_slice(device, &x, &[n]).unwrap();
        let mut short = GuardedTensor::new(gpu, &[n], -1i16);
        let mut half = GuardedTensor::new(gpu, &[n], f16::from_f32(-1.0));
        let mut bf = GuardedTensor::new(gpu, &[n], bf16::from_f32(-1.0));
        launch_tensors!(
            gpu,
            tile_narrow_ops,
            tile_narrow_ops::Consts { BLOCK: 256 },
            (n.div_ceil(256) as u32,),
            &mut short.view(),
            &tbytes,
            &mut half.view(),
            &mut bf.view(),
            &tx,
        )
        .unwrap();
        let what = format!("narrow ops n {n}");
        let (short, half, bf) = (short.outputs(&what), half.outputs(&what), bf.outputs(&what));
        for i in 0..n {
            assert_eq!(short[i], bytes[i] as i16 * 3 - 100, "n {n} i {i}");
            let h = f16::from_f32(f16::from_f32(x[i]).to_f32() * 2.0);
            assert_eq!(half[i].to_bits(), h.to_bits(), "n {n} i {i} x {}", x[i]);
            assert_eq!(
                bf[i].to_bits(),
                bf16::from_f32(x[i]).to_bits(),
                "n {n} i {i}"
            );
        }
    }
}

#[test]
fn join_reshape_split_and_trans_move_the_right_elements() {
    let gpu = device();
    let device = gpu.device();
    for n in [1usize, 100, 256, 300, 777] {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| -(i as f32) - 0.5).collect();
        let ta = Tensor::from_slice(device, &a, &[n]).unwrap();
        let tb = Tensor::from_slice(device, &b, &[n]).unwrap();
        let mut out = GuardedTensor::new(gpu, &[2 * n], 9.0f32);
        let grid = (n.div_ceil(256) as u32,);
        let consts = tile_interleave::Consts { BLOCK: 256 };
        launch_tensors!(
            gpu,
            tile_interleave,
            consts,
            grid,
            &mut out.view(),
            &ta,
            &tb
        )
        .unwrap();
        let out = out.outputs(&format!("interleave n {n}"));
        for i in 0..n {
            assert_eq!((out[2 * i], out[2 * i + 1]), (a[i], b[i]), "n {n} i {i}");
        }

        let tpairs = Tensor::from_slice(device, &out, &[2 * n]).unwrap();
        let mut ea = GuardedTensor::new(gpu, &[n], 0f32);
        let mut eb = GuardedTensor::new(gpu, &[n], 0f32);
        let mut et = GuardedTensor::new(gpu, &[2, n], 0f32);
        launch_tensors!(
            gpu,
            tile_deinterleave,
            tile_deinterleave::Consts { BLOCK: 256 },
            grid,
            &mut ea.view(),
            &mut eb.view(),
            &mut et.view(),
            &tpairs,
        )
        .unwrap();
        let what = format!("deinterleave n {n}");
        let (ra, rb, t) = (ea.outputs(&what), eb.outputs(&what), et.outputs(&what));
        assert_eq!(ra, a, "n {n}");
        assert_eq!(rb, b, "n {n}");
        assert_eq!(&t[..n], &a[..], "n {n}");
        assert_eq!(&t[n..], &b[..], "n {n}");
    }
}

#[test]
fn scalars_become_one_element_tiles() {
    let gpu = device();
    let device = gpu.device();
    let (rows, block) = (5, 128);
    let x: Vec<f32> = (0..rows * block).map(|i| (i % 7) as f32 - 3.0).collect();
    let tx = Tensor::from_slice(device, &x, &[rows, block]).unwrap();
    let mut sums = GuardedTensor::new(gpu, &[rows], 0f32);
    let mut row_ids = GuardedTensor::new(gpu, &[rows], -1i32);
    launch_tensors!(
        gpu,
        tile_scalar_splat,
        tile_scalar_splat::Consts { BLOCK: block },
        (rows as u32,),
        &mut sums.view(),
        &mut row_ids.view(),
        &tx,
    )
    .unwrap();
    let want: Vec<f32> = x.chunks(block).map(|r| r.iter().sum()).collect();
    assert_eq!(sums.outputs("sums"), want);
    assert_eq!(
        row_ids.outputs("rows"),
        (0..rows as i32).collect::<Vec<_>>()
    );
}

/// `out = x / (1 + |x|)` (softsign), with the helpers of `tessera_kernels::tiled::blocks`:
/// `load_vector` (which calls `vector_block` and `elements`) and `elements`, fetched from
/// another crate.
#[tile_kernel(
    num_warps = 2,
    BLOCK = [128],
    requires = [out.size(0) == x.size(0)],
    uses = [load_vector, vector_block, elements]
)]
fn softsign<const BLOCK: usize>(out: Tensor<f32, 1>, x: Tensor<f32, 1>) {
    let (offs, mask, v) = load_vector::<BLOCK>(x, 0.0);
    store(elements(out, offs), v / (1.0 + abs(v)), mask);
}

/// The kernel above runs on the emulator (it is this test crate's, so it is in no PTX) on
/// contiguous and strided views, ragged lengths included, and equals Rust's `x / (1 + |x|)` bit
/// for bit.
#[test]
fn a_kernel_uses_helpers_of_another_crate() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    // softsign of the `n` elements of `stored` that are `stride` apart, as the kernel computes it.
    let softsign_on_device = |stored: &[f32], n: usize, stride: usize| -> Vec<f32> {
        let stream = device.stream().unwrap();
        let stored = Tensor::from_slice(&device, stored, &[stored.len()]).unwrap();
        let x = stored.view().as_strided(&[n], &[stride], 0).unwrap();
        let mut out = Tensor::<f32>::zeros(&device, &[n]).unwrap();
        let grid = (n.div_ceil(128) as u32,);
        softsign::launch(
            &stream,
            &module,
            softsign::Consts { BLOCK: 128 },
            grid,
            &mut out,
            &x,
        )
        .unwrap();
        stream.synchronize().unwrap();
        out.to_vec().unwrap()
    };
    for (n, stride) in [1usize, 127, 128, 300]
        .into_iter()
        .flat_map(|n| [(n, 1usize), (n, 3)])
    {
        let stored = draws(n as u64 * 10 + stride as u64, n * stride, |rng| {
            rng.next_f32() * 16.0 - 8.0
        });
        let got = softsign_on_device(&stored, n, stride);
        let want = stored.iter().step_by(stride).map(|v| v / (1.0 + v.abs()));
        for (i, (got, want)) in got.iter().zip(want).enumerate() {
            assert_eq!(got.to_bits(), want.to_bits(), "n {n} stride {stride} i {i}");
        }
    }
}
