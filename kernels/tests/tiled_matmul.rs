//! Matmul (f16 and bf16 in, f32 accumulate, f16/bf16 out; i8 in, i32 out) against a CPU
//! reference over ragged shapes on the test device (the GPU when present, else the emulator;
//! see `support`); on the emulator's counters the operands reach the tensor cores through
//! `ldmatrix` reads of swizzled shared memory, conflict-free.

mod support;

use support::{device, launch_tile, TestDevice};
use tessera::emulator::{EmulatorReport, SharedAccessKind};
use tessera::{bf16, f16};
use tessera_kernels::tiled::matmul::{tile_matmul, tile_matmul_i8};

/// Values in [-1, 1) from a seeded LCG.
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect()
}

/// `a · b` in f64 from the already-rounded inputs, and per element the sum of the products'
/// magnitudes `Σ_x |a[i, x] · b[x, j]|` (the scale of the tensor cores' accumulation error).
fn reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut c, mut magnitude) = (vec![0f64; m * n], vec![0f64; m * n]);
    for i in 0..m {
        for x in 0..k {
            let av = a[i * k + x] as f64;
            for j in 0..n {
                let p = av * b[x * n + j] as f64;
                c[i * n + j] += p;
                magnitude[i * n + j] += p.abs();
            }
        }
    }
    (c, magnitude)
}

const SHAPES: [(usize, usize, usize); 5] = [
    (64, 64, 32),
    (1, 1, 1),
    (70, 33, 45),
    (128, 64, 100),
    (17, 130, 64),
];

/// The shapes of this device: on the GPU also larger ones (many programs, long K loops).
fn shapes(gpu: &TestDevice) -> Vec<(usize, usize, usize)> {
    gpu.cases(
        &SHAPES,
        &[(257, 511, 1000), (1024, 1024, 512), (64, 64, 4099)],
    )
}

/// The ldmatrix reads happened and were conflict-free.
fn check_ldmatrix(report: &EmulatorReport, ctx: &str) {
    let ldsm: Vec<_> = report
        .shared_sites
        .iter()
        .filter(|s| s.kind == SharedAccessKind::Ldmatrix)
        .collect();
    assert!(!ldsm.is_empty(), "{ctx}: no ldmatrix\n{report}");
    for s in ldsm {
        assert_eq!(
            s.stats.wavefronts, s.stats.ideal_wavefronts,
            "{ctx}: ldmatrix bank conflicts at line {}\n{report}",
            s.line
        );
    }
}

/// Runs the matmul `$kernel` (64 × 64 × 32 tiles) on `$a: [m, k]`, `$b: [k, n]` into `$c`
/// (the initial output, guard elements included); gives the output and the launch report.
macro_rules! run_matmul {
    ($gpu:expr, $kernel:ident, $a:expr, $b:expr, $c:expr, ($m:expr, $n:expr, $k:expr)) => {{
        let gpu: &TestDevice = $gpu;
        let (da, db) = (
            gpu.device().upload($a).unwrap(),
            gpu.device().upload($b).unwrap(),
        );
        let dc = gpu.device().upload($c).unwrap();
        let (m, n) = ($m, $n);
        let report = launch_tile!(
            gpu,
            $kernel,
            $kernel::Consts {
                BM: 64,
                BN: 64,
                BK: 32,
            },
            |c: &$kernel::Consts| (m.div_ceil(c.BM) as u32, n.div_ceil(c.BN) as u32),
            da.ptr(),
            db.ptr(),
            dc.ptr(),
            m as i32,
            n as i32,
            $k as i32,
        )
        .unwrap();
        (dc.download().unwrap(), report)
    }};
}

/// Every `c[i]` of the `m × n` product `a · b` is within `relative · |want| + 1e-3` (plus the
/// device's tensor-core slack) of the f64 reference.
fn check_close(
    gpu: &TestDevice,
    c: &[f64],
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
    relative: f64,
) {
    let (want, magnitude) = reference(a, b, m, n, k);
    for i in 0..m * n {
        let got = c[i];
        let tol = want[i].abs() * relative + 1.0e-3 + gpu.mma_slack(magnitude[i]);
        assert!(
            (got - want[i]).abs() <= tol,
            "{m}x{n}x{k}: c[{}, {}] = {got}, want {}",
            i / n,
            i % n,
            want[i]
        );
    }
}

/// `tile_matmul` on `$t` (f16 or bf16) against the f64 product of the rounded inputs: within
/// `$relative` (f32 accumulation, one rounding to `$t` at the end), nothing written past `c`,
/// and (on the emulator) conflict-free `ldmatrix`.
macro_rules! matmul_matches_cpu {
    ($test:ident, $t:ident, seeds = ($seed_a:literal, $seed_b:literal), relative = $relative:expr) => {
        #[test]
        fn $test() {
            let gpu = device();
            let what = stringify!($t);
            for (m, n, k) in shapes(gpu) {
                let a: Vec<$t> = values($seed_a, m * k)
                    .into_iter()
                    .map($t::from_f32)
                    .collect();
                let b: Vec<$t> = values($seed_b, k * n)
                    .into_iter()
                    .map($t::from_f32)
                    .collect();
                let guarded = vec![$t::from_f32(99.0); m * n + 8];
                let (c, report) = run_matmul!(gpu, tile_matmul, &a, &b, &guarded, (m, n, k));
                let wide = |v: &[$t]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
                let got: Vec<f64> = c[..m * n].iter().map(|x| x.to_f32() as f64).collect();
                check_close(gpu, &got, &wide(&a), &wide(&b), (m, n, k), $relative);
                assert!(
                    c[m * n..].iter().all(|x| x.to_f32() == 99.0),
                    "{what} {m}x{n}x{k}: wrote past the end"
                );
                let check = format!("matmul_{what}: conflict-free ldmatrix");
                if let Some(report) = gpu.emulator_only(&report, &check) {
                    check_ldmatrix(report, &format!("{what} {m}x{n}x{k}"));
                }
            }
        }
    };
}

// One rounding to f16 (2^-11 relative) or bf16 (2^-8 relative) at the end.
matmul_matches_cpu!(
    matmul_f16_matches_cpu,
    f16,
    seeds = (1, 2),
    relative = 1.0e-3
);
matmul_matches_cpu!(
    matmul_bf16_matches_cpu,
    bf16,
    seeds = (3, 4),
    relative = 8.0e-3
);

#[test]
fn matmul_i8_is_exact() {
    let gpu = device();
    for (m, n, k) in shapes(gpu) {
        let a: Vec<i8> = values(5, m * k)
            .iter()
            .map(|&v| (v * 127.0) as i8)
            .collect();
        let b: Vec<i8> = values(6, k * n)
            .iter()
            .map(|&v| (v * 127.0) as i8)
            .collect();
        let guarded = vec![i32::MIN; m * n + 8];
        let (c, _) = run_matmul!(gpu, tile_matmul_i8, &a, &b, &guarded, (m, n, k));
        let mut want = vec![0i32; m * n];
        for i in 0..m {
            for x in 0..k {
                for j in 0..n {
                    want[i * n + j] += a[i * k + x] as i32 * b[x * n + j] as i32;
                }
            }
        }
        for i in 0..m {
            for j in 0..n {
                assert_eq!(c[i * n + j], want[i * n + j], "{m}x{n}x{k}: ({i}, {j})");
            }
        }
        assert!(
            c[m * n..].iter().all(|&v| v == i32::MIN),
            "{m}x{n}x{k}: wrote past the end"
        );
    }
}
