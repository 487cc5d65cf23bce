//! Matmul (f16 and bf16 in, f32 accumulate, f16/bf16 out; i8 in, i32 out) against a CPU
//! reference over ragged shapes on the test device (the GPU when present, else the emulator;
//! see `support`). f16 and bf16 run on the emulator for both targets: sm_80, where the
//! emulator's counters show the operands reaching the tensor cores through conflict-free
//! `ldmatrix` reads of swizzled shared memory, and sm_90a (`wgmma`, operands stored to NVMMA
//! shared memory; on the emulator its accesses differ from the sm_80 body's). The kernels take
//! tensors: `c` is launched as an `[m, n]` view of a longer allocation whose guard elements
//! must stay untouched.

mod support;

use support::{device, device_and_module, launch_tensors, Float, TestDevice};
use tessera::emulator::{with_target, EmulatedTarget, EmulatorReport, SharedAccessKind};
use tessera::launch::{DeviceElement, LaunchError};
use tessera::tensor::Tensor;
use tessera::{bf16, f16, f8e4m3, f8e5m2};
use tessera_kernels::tiled::bench_triton::bench_matmul_pipelined;
use tessera_kernels::tiled::matmul::{
    tile_matmul, tile_matmul_f8, tile_matmul_f8_grouped, tile_matmul_i8,
};

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

#[rustfmt::skip]
const SHAPES: [(usize, usize, usize); 5] = [
    (64, 64, 32), (1, 1, 1), (70, 33, 45), (128, 64, 100), (17, 130, 64),
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

/// `values` (`m × n` outputs and guard elements past them) as a tensor, and the output of a
/// launch: `launch` gets the `[m, n]` view of its start; gives every value back after it.
fn with_output<T: DeviceElement, R>(
    values: &[T],
    [m, n]: [usize; 2],
    launch: impl FnOnce(&mut tessera::tensor::TensorMut<'_, T>) -> R,
) -> (Vec<T>, R) {
    let (device, _) = device_and_module();
    let mut stored = Tensor::from_slice(device, values, &[values.len()]).unwrap();
    let result = {
        let start = stored.view_mut().slice(0, 0..m * n).unwrap();
        launch(&mut start.reshape(&[m, n]).unwrap())
    };
    (stored.to_vec().unwrap(), result)
}

/// Runs the matmul `$kernel` (64 × 64 × 32 tiles, and the `Consts` fields given in braces) on
/// `$a: [m, k]` and `$b` (of sizes `$b_sizes`: `[k, n]`, or `[n, k]` for `c = a · wᵀ`) into
/// `$c` (the initial output, guard elements included); gives the output and the launch report.
macro_rules! run_matmul {
    ($gpu:expr, $kernel:ident $({ $($field:ident: $value:expr),* })?, $a:expr, $b:expr => $b_sizes:expr, $c:expr, ($m:expr, $n:expr, $k:expr)) => {{
        let gpu: &TestDevice = $gpu;
        let (device, _) = device_and_module();
        let (m, n): (usize, usize) = ($m, $n);
        let ta = Tensor::from_slice(device, $a, &[m, $k]).unwrap();
        let tb = Tensor::from_slice(device, $b, &$b_sizes).unwrap();
        let (c, report) = with_output($c, [m, n], |c| {
            launch_tensors!(
                gpu,
                $kernel,
                $kernel::Consts {
                    BM: 64,
                    BN: 64,
                    BK: 32,
                    $($($field: $value,)*)?
                },
                |c: &$kernel::Consts| (m.div_ceil(c.BM) as u32, n.div_ceil(c.BN) as u32),
                &ta,
                &tb,
                c,
            )
            .unwrap()
        });
        (c, report)
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

/// An input and output type of `tile_matmul` (f16 or bf16), with the bound of its one rounding
/// of the f32 accumulator at the end, relative to the result (its unit roundoff, with room).
trait Half: tile_matmul::Listed_T + Float {
    const RELATIVE: f64;
}

impl Half for f16 {
    const RELATIVE: f64 = 1.0e-3;
}

impl Half for bf16 {
    const RELATIVE: f64 = 8.0e-3;
}

/// [`values`] rounded to `T`.
fn halves<T: Half>(seed: u64, n: usize) -> Vec<T> {
    values(seed, n).into_iter().map(T::from_f32).collect()
}

/// The output of [`halves`] products: `m × n` elements and 8 guard elements (99.0) past them.
fn guarded_output<T: Half>(m: usize, n: usize) -> Vec<T> {
    vec![T::from_f32(99.0); m * n + 8]
}

/// A product `c` of `a · b` in `T` against the reference (f32 accumulation, one rounding to
/// `T`), and the guard elements past its `m × n` (written as 99.0) untouched.
fn check_product<T: Half>(
    gpu: &TestDevice,
    c: &[T],
    (a, b): (&[T], &[T]),
    (m, n, k): (usize, usize, usize),
) {
    let wide = |v: &[T]| v.iter().map(|&x| x.to_f32()).collect::<Vec<_>>();
    let got: Vec<f64> = c[..m * n].iter().map(|&x| x.to_f32() as f64).collect();
    check_close(gpu, &got, &wide(a), &wide(b), (m, n, k), T::RELATIVE);
    assert!(
        c[m * n..].iter().all(|&x| x.to_f32() == 99.0),
        "{m}x{n}x{k}: wrote past the end"
    );
}

/// On the emulator, the operands reached the tensor cores as the target's body does it:
/// conflict-free `ldmatrix` reads on sm_80; on sm_90a another body ran (its shared-memory
/// accesses differ from the sm_80 body's on the same problem, `sm80`: operands stored for
/// `wgmma`, `ldmatrix` only in the epilogue).
fn check_path(
    gpu: &TestDevice,
    report: &tessera::launch::LaunchReport,
    target: EmulatedTarget,
    sm80: impl FnOnce() -> tessera::launch::LaunchReport,
    ctx: &str,
) {
    let Some(report) = gpu.emulator_only(report, "matmul: how operands reach the tensor cores")
    else {
        return;
    };
    match target {
        EmulatedTarget::Sm80 => check_ldmatrix(report, ctx),
        EmulatedTarget::Sm90a => {
            let other = sm80();
            let other = other.emulator_report().expect("emulated");
            assert_ne!(
                report.shared_sites, other.shared_sites,
                "{ctx}: the sm_90a launch ran the sm_80 body\n{report}"
            );
        }
        EmulatedTarget::Amdgpu => check_no_ldmatrix(report, ctx),
        other => panic!("{ctx}: tile_matmul has no body for {}", other.name()),
    }
}

/// The amdgpu body (`v_mfma`) read its operands from shared memory without `ldmatrix` and
/// copied nothing asynchronously.
fn check_no_ldmatrix(report: &EmulatorReport, ctx: &str) {
    assert!(
        !report.shared_sites.iter().any(|s| matches!(
            s.kind,
            SharedAccessKind::Ldmatrix | SharedAccessKind::CpAsync
        )),
        "{ctx}: NVIDIA-only shared-memory accesses in the amdgpu body\n{report}"
    );
}

/// `tile_matmul` (one stage) on `T` inputs drawn from `seeds` in the body of `target`.
fn matmul_one_stage<T: Half>(target: EmulatedTarget, seeds: [u64; 2]) {
    let gpu = device();
    for (m, n, k) in shapes(gpu) {
        let a: Vec<T> = halves(seeds[0], m * k);
        let b: Vec<T> = halves(seeds[1], k * n);
        let guarded = guarded_output::<T>(m, n);
        let run = || {
            run_matmul!(
                gpu,
                tile_matmul { num_stages: 1 },
                &a,
                &b => [k, n],
                &guarded,
                (m, n, k)
            )
        };
        let (c, report) = with_target(target, run);
        check_product(gpu, &c, (&a, &b), (m, n, k));
        let sm80 = || with_target(EmulatedTarget::Sm80, run).1;
        let ctx = format!("{} {target:?} {m}x{n}x{k}", T::DTYPE_NAME);
        check_path(gpu, &report, target, sm80, &ctx);
    }
}

fn matmul_f16(target: EmulatedTarget) {
    matmul_one_stage::<f16>(target, [1, 2]);
}

fn matmul_bf16(target: EmulatedTarget) {
    matmul_one_stage::<bf16>(target, [3, 4]);
}

/// Two `#[test]`s per check: the sm_80 body (`mma.sync`; on a GPU, the body of the PTX the
/// device loaded) and the sm_90a body (`wgmma`) on the emulator.
macro_rules! sm80_and_sm90a_tests {
    ($($check:ident: $sm80:ident, $sm90a:ident;)*) => {$(
        #[test]
        fn $sm80() {
            $check(EmulatedTarget::Sm80);
        }

        #[test]
        fn $sm90a() {
            $check(EmulatedTarget::Sm90a);
        }
    )*};
}

sm80_and_sm90a_tests! {
    matmul_f16: matmul_f16_matches_cpu, matmul_f16_sm90a_matches_cpu;
    matmul_bf16: matmul_bf16_matches_cpu, matmul_bf16_sm90a_matches_cpu;
    matmul_i8: matmul_i8_is_exact, matmul_i8_sm90a_is_exact;
}

/// The amdgpu body on the emulator (`v_mfma_f32_32x32x8` on waves of two warps); on a GPU the
/// device's own code.
#[test]
fn matmul_f16_amdgpu_matches_cpu() {
    matmul_f16(EmulatedTarget::Amdgpu);
}

#[test]
fn matmul_bf16_amdgpu_matches_cpu() {
    matmul_bf16(EmulatedTarget::Amdgpu);
}

/// The pipelined variants on amdgpu: no asynchronous copies are planned there, so the loop runs
/// unpipelined (the same code as one stage), and is right.
#[test]
fn matmul_f16_three_stages_amdgpu_matches_cpu() {
    let gpu = device();
    for (m, n, k) in gpu.cases(&PIPELINED_SHAPES, &[]) {
        let a: Vec<f16> = halves(7, m * k);
        let b: Vec<f16> = halves(8, k * n);
        let guarded = guarded_output::<f16>(m, n);
        let (c, report) = with_target(
            EmulatedTarget::Amdgpu,
            || run_matmul!(gpu, tile_matmul { num_stages: 3 }, &a, &b => [k, n], &guarded, (m, n, k)),
        );
        check_product(gpu, &c, (&a, &b), (m, n, k));
        if let Some(report) = gpu.emulator_only(&report, "amdgpu: no async copies") {
            check_no_ldmatrix(report, &format!("3 stages on amdgpu {m}x{n}x{k}"));
        }
    }
}

/// The i8 matmul's amdgpu body (`v_mfma_i32_*_i8`, i32 accumulators: wrapped sums, so exact),
/// unpipelined and over 3 stages (the same code on amdgpu).
#[test]
fn matmul_i8_amdgpu_is_exact() {
    matmul_i8(EmulatedTarget::Amdgpu);
}

/// `tile_matmul_i8` unpipelined and over 3 stages in the body of `target` (`mma.sync`
/// m16n8k32, `wgmma` k32 with an s32 accumulator, or `v_mfma_i32_*_i8`), exact against the i32
/// product.
fn matmul_i8(target: EmulatedTarget) {
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
        let mut want = vec![0i32; m * n];
        for i in 0..m {
            for x in 0..k {
                for j in 0..n {
                    want[i * n + j] += a[i * k + x] as i32 * b[x * n + j] as i32;
                }
            }
        }
        for stages in [1, 3] {
            let run = || {
                run_matmul!(
                    gpu,
                    tile_matmul_i8 { num_stages: stages },
                    &a,
                    &b => [k, n],
                    &guarded,
                    (m, n, k)
                )
            };
            let (c, report) = with_target(target, run);
            let ctx = format!("i8 {target:?} {stages} stage(s) {m}x{n}x{k}");
            let sm80 = || with_target(EmulatedTarget::Sm80, run).1;
            check_path(gpu, &report, target, sm80, &ctx);
            if let Some(i) = (0..m * n).find(|&i| c[i] != want[i]) {
                let (row, col) = (i / n, i % n);
                panic!("{ctx}: c[{row}, {col}] = {}, want {}", c[i], want[i]);
            }
            assert!(
                c[m * n..].iter().all(|&v| v == i32::MIN),
                "{ctx}: wrote past the end"
            );
        }
    }
}

/// `c` (`m × n` and 8 guard elements, 99.0) against `a · wᵀ` in f64 from the rounded f8
/// inputs `a: [m, k]`, `w: [n, k]`: within `relative` of the result (the output's rounding) and,
/// on the GPU, 2⁻¹⁰ of the terms' magnitudes (Hopper's f8 `wgmma` keeps fewer bits of the
/// aligned sum than the 16-bit one: on an H200, 0.034 off at K = 512, magnitude 128, past 2⁻¹²;
/// a wrong element or fragment is off by whole terms).
fn check_f8_product<T: Float>(
    gpu: &TestDevice,
    c: &[f64],
    (a, w): (&[T], &[T]),
    (m, n, k): (usize, usize, usize),
    relative: f64,
    ctx: &str,
) {
    let a32: Vec<f32> = a.iter().map(|x| x.to_f32()).collect();
    // `w` as `[k, n]` for the reference.
    let b32: Vec<f32> = (0..k * n)
        .map(|i| w[(i % n) * k + i / n].to_f32())
        .collect();
    let (want, magnitude) = reference(&a32, &b32, m, n, k);
    let slack = if gpu.is_gpu() { 1.0 / 1024.0 } else { 0.0 };
    for i in 0..m * n {
        let tol = want[i].abs() * relative + 1.0e-5 + slack * magnitude[i];
        assert!(
            (c[i] - want[i]).abs() <= tol,
            "{ctx}: c[{}, {}] = {}, want {}",
            i / n,
            i % n,
            c[i],
            want[i]
        );
    }
    assert!(
        c[m * n..].iter().all(|&x| x == 99.0),
        "{ctx}: wrote past the end"
    );
}

/// On sm_90a the aligned variant of a kernel at `stages > 1` copies its operands with
/// `cp.async` (emulator only).
fn check_f8_copies(
    gpu: &TestDevice,
    report: &tessera::launch::LaunchReport,
    target: EmulatedTarget,
    stages: u32,
    (n, k): (usize, usize),
    ctx: &str,
) {
    let copies = gpu.emulator_only(report, "f8 matmul: cp.async copies");
    if let (EmulatedTarget::Sm90a, Some(report)) = (target, copies) {
        let pipelined = stages > 1 && k % 16 == 0 && n % 16 == 0;
        assert_eq!(copied_async(report), pipelined, "{ctx}\n{report}");
    }
}

/// `tile_matmul_f8` (`c = a · wᵀ`, f32 out) on `T` inputs at 1 and 3 stages in the body of
/// `target` ([`check_f8_product`], exact to f32 rounding on the emulator; on amdgpu no
/// asynchronous copies or `ldmatrix`).
fn matmul_f8<T: tile_matmul_f8::Listed_T + Float>(target: EmulatedTarget) {
    let gpu = device();
    for stages in [1, 3] {
        for (m, n, k) in gpu.cases(&PIPELINED_SHAPES, &[(257, 512, 1024), (1024, 1024, 512)]) {
            let a: Vec<T> = values(9, m * k).into_iter().map(T::from_f32).collect();
            let w: Vec<T> = values(10, n * k).into_iter().map(T::from_f32).collect();
            let guarded = vec![99.0f32; m * n + 8];
            let (c, report) = with_target(target, || {
                run_matmul!(
                    gpu,
                    tile_matmul_f8 { num_stages: stages },
                    &a,
                    &w => [n, k],
                    &guarded,
                    (m, n, k)
                )
            });
            let c: Vec<f64> = c.iter().map(|&x| x as f64).collect();
            let ctx = format!(
                "tile_matmul_f8 {} {target:?} {stages} stages {m}x{n}x{k}",
                T::DTYPE_NAME
            );
            check_f8_product(gpu, &c, (&a, &w), (m, n, k), 1.0e-6, &ctx);
            check_f8_copies(gpu, &report, target, stages, (n, k), &ctx);
            let amd = gpu.emulator_only(&report, "f8 matmul on amdgpu: no ldmatrix");
            if let (EmulatedTarget::Amdgpu, Some(report)) = (target, amd) {
                check_no_ldmatrix(report, &ctx);
            }
        }
    }
}

fn matmul_e4m3(target: EmulatedTarget) {
    matmul_f8::<f8e4m3>(target);
}

fn matmul_e5m2(target: EmulatedTarget) {
    matmul_f8::<f8e5m2>(target);
}

sm80_and_sm90a_tests! {
    matmul_e4m3: matmul_e4m3_matches_cpu, matmul_e4m3_sm90a_matches_cpu;
    matmul_e5m2: matmul_e5m2_matches_cpu, matmul_e5m2_sm90a_matches_cpu;
}

/// The f8 matmul's amdgpu body: `v_mfma` of 8 f8 elements a lane (the emulator computes gfx950's
/// f8 instruction; gfx942 and gfx90a run two f16 ones on the elements widened).
#[test]
fn matmul_e4m3_amdgpu_matches_cpu() {
    matmul_e4m3(EmulatedTarget::Amdgpu);
}

#[test]
fn matmul_e5m2_amdgpu_matches_cpu() {
    matmul_e5m2(EmulatedTarget::Amdgpu);
}

/// `tile_matmul_f8_grouped` (sm_90a alone of NVIDIA's targets: 128 × 128 × 128 tiles, 4
/// stages, f16 out) on `T` inputs: against the f64 product in its sm_90a body (half an f16 ulp,
/// and on the GPU the f8 `wgmma`'s slack), the aligned shapes copying by `cp.async`; on the
/// emulator also its amdgpu body (the same source planned for AMD: the f8 `v_mfma`, no
/// `ldmatrix`), and a launch emulating sm_80 is refused as
/// `UnsupportedTarget`, naming sm_90a, as is any launch on a GPU module without sm_90a PTX.
fn matmul_f8_grouped<T: tile_matmul_f8_grouped::Listed_T + Float>() {
    let gpu = device();
    let shapes = gpu.cases(
        &[
            (128, 128, 128),
            (70, 48, 96),
            (33, 80, 272),
            (256, 128, 640),
            (17, 130, 64),
        ],
        &[(257, 512, 1024), (2048, 1024, 512)],
    );
    for (m, n, k) in shapes {
        let a: Vec<T> = values(11, m * k).into_iter().map(T::from_f32).collect();
        let w: Vec<T> = values(12, n * k).into_iter().map(T::from_f32).collect();
        let (device, _) = device_and_module();
        let ta = Tensor::from_slice(device, &a, &[m, k]).unwrap();
        let tw = Tensor::from_slice(device, &w, &[n, k]).unwrap();
        let initial = vec![f16::from_f32(99.0); m * n + 8];
        let run = || {
            with_output(&initial, [m, n], |c| {
                launch_tensors!(
                    gpu,
                    tile_matmul_f8_grouped,
                    tile_matmul_f8_grouped::Consts {
                        BM: 128,
                        BN: 128,
                        BK: 128,
                        GROUP: 8
                    },
                    |c: &tile_matmul_f8_grouped::Consts| {
                        ((m.div_ceil(c.BM) * n.div_ceil(c.BN)) as u32,)
                    },
                    &ta,
                    &tw,
                    c,
                )
            })
        };
        let ctx = format!("tile_matmul_f8_grouped {} {m}x{n}x{k}", T::DTYPE_NAME);
        let (c, report) = with_target(EmulatedTarget::Sm90a, run);
        let report = match report {
            // A GPU whose module has no sm_90a PTX (a set built with `TESSERA_SM=sm_80`, or a
            // device other than compute capability 9.0) refuses the kernel, naming sm_90a.
            Err(LaunchError::UnsupportedTarget { needs, .. }) if gpu.is_gpu() => {
                assert_eq!(needs, "sm_90a", "{ctx}");
                gpu.skip("tile_matmul_f8_grouped (sm_90a only) without sm_90a PTX: refused");
                return;
            }
            report => report.unwrap(),
        };
        let c: Vec<f64> = c.iter().map(|x| x.to_f32() as f64).collect();
        check_f8_product(gpu, &c, (&a, &w), (m, n, k), 1.0 / 2048.0, &ctx);
        check_f8_copies(gpu, &report, EmulatedTarget::Sm90a, 4, (n, k), &ctx);
        if !gpu.is_gpu() {
            let (c, report) = with_target(EmulatedTarget::Amdgpu, run);
            let report = report.unwrap();
            let c: Vec<f64> = c.iter().map(|x| x.to_f32() as f64).collect();
            let ctx = format!("{ctx} amdgpu");
            check_f8_product(gpu, &c, (&a, &w), (m, n, k), 1.0 / 2048.0, &ctx);
            if let Some(report) = gpu.emulator_only(&report, "f8 matmul on amdgpu: no ldmatrix") {
                check_no_ldmatrix(report, &ctx);
            }
            let refused = with_target(EmulatedTarget::Sm80, run).1.unwrap_err();
            let text = refused.to_string();
            assert!(
                matches!(refused, LaunchError::UnsupportedTarget { .. })
                    && text.contains("built for sm_90a only")
                    && text.contains("sm_80 on the emulator"),
                "{ctx}: {text}"
            );
        }
    }
}

#[test]
fn matmul_f8_grouped_e4m3_matches_cpu() {
    matmul_f8_grouped::<f8e4m3>();
}

#[test]
fn matmul_f8_grouped_e5m2_matches_cpu() {
    matmul_f8_grouped::<f8e5m2>();
}

/// Shapes for the pipelined kernels: K loops of 1 to 9 iterations (fewer than the stages
/// included), masked K tails (`k` not a multiple of 32), ragged M and N; the aligned variant
/// (`k`, `n` multiples of 16) is the pipelined one, the others run the unaligned variant.
#[rustfmt::skip]
const PIPELINED_SHAPES: [(usize, usize, usize); 7] = [
    (64, 64, 32), (70, 48, 96), (33, 80, 272), (128, 64, 16), (64, 128, 160), (17, 130, 64),
    (70, 33, 45),
];

/// Whether the emulator saw `cp.async` copies into shared memory.
fn copied_async(report: &EmulatorReport) -> bool {
    copied_by(report, SharedAccessKind::CpAsync)
}

/// Whether the emulator saw copies of `kind` (`CpAsync`, `Tma`) into shared memory.
fn copied_by(report: &EmulatorReport, kind: SharedAccessKind) -> bool {
    report.shared_sites.iter().any(|s| s.kind == kind)
}

/// How the aligned variant's pipelined K loop copies on `target`: TMA boxes (`load_block`
/// of 16-byte aligned tensors into `wgmma` operands) on sm_90a, `cp.async` on sm_80.
fn pipelined_copies(target: EmulatedTarget) -> SharedAccessKind {
    match target {
        EmulatedTarget::Sm90a => SharedAccessKind::Tma,
        _ => SharedAccessKind::CpAsync,
    }
}

/// `tile_matmul` pipelined over `$stages` stages against the CPU reference in the body of
/// `$target`: on sm_80
/// `cp.async` rings read by `ldmatrix`, on sm_90a rings in the NVMMA layouts read by `wgmma`
/// (one group in flight).
macro_rules! pipelined_matmul_test {
    ($test:ident, $stages:literal, $target:expr) => {
        #[test]
        fn $test() {
            let gpu = device();
            for (m, n, k) in gpu.cases(&PIPELINED_SHAPES, &[(257, 512, 1024), (1024, 1024, 512)]) {
                let a: Vec<f16> = halves(7, m * k);
                let b: Vec<f16> = halves(8, k * n);
                let guarded = guarded_output::<f16>(m, n);
                let (c, report) = with_target($target, || {
                    run_matmul!(gpu, tile_matmul { num_stages: $stages }, &a, &b => [k, n], &guarded, (m, n, k))
                });
                check_product(gpu, &c, (&a, &b), (m, n, k));
                let what = concat!("tile_matmul at ", $stages, " stages: cp.async copies and ldmatrix reads");
                if let Some(report) = gpu.emulator_only(&report, what) {
                    let aligned = k % 16 == 0 && n % 16 == 0;
                    let kind = pipelined_copies($target);
                    assert_eq!(
                        copied_by(report, kind),
                        aligned,
                        "{m}x{n}x{k}: the aligned variant copies by {kind:?}, the other not\n{report}"
                    );
                    assert!(
                        !(aligned && copied_async(report) && kind == SharedAccessKind::Tma),
                        "{m}x{n}x{k}: TMA and cp.async both\n{report}"
                    );
                    if $target == EmulatedTarget::Sm80 {
                        check_ldmatrix(report, &format!("tile_matmul at {} stages {m}x{n}x{k}", $stages));
                    }
                }
            }
        }
    };
}

pipelined_matmul_test!(matmul_f16_two_stages_matches_cpu, 2, EmulatedTarget::Sm80);
pipelined_matmul_test!(matmul_f16_three_stages_matches_cpu, 3, EmulatedTarget::Sm80);
pipelined_matmul_test!(matmul_f16_four_stages_matches_cpu, 4, EmulatedTarget::Sm80);
pipelined_matmul_test!(
    matmul_f16_two_stages_sm90a_matches_cpu,
    2,
    EmulatedTarget::Sm90a
);
pipelined_matmul_test!(
    matmul_f16_three_stages_sm90a_matches_cpu,
    3,
    EmulatedTarget::Sm90a
);
pipelined_matmul_test!(
    matmul_f16_four_stages_sm90a_matches_cpu,
    4,
    EmulatedTarget::Sm90a
);

#[test]
fn matmul_bf16_three_stages_matches_cpu() {
    let gpu = device();
    for (m, n, k) in gpu.cases(&PIPELINED_SHAPES, &[(512, 256, 1024)]) {
        let a: Vec<bf16> = halves(9, m * k);
        let b: Vec<bf16> = halves(10, k * n);
        let guarded = guarded_output::<bf16>(m, n);
        let (c, _) = run_matmul!(
            gpu,
            tile_matmul { num_stages: 3 },
            &a,
            &b => [k, n],
            &guarded,
            (m, n, k)
        );
        check_product(gpu, &c, (&a, &b), (m, n, k));
    }
}

/// The benchmark's pipelined matmul (8 warps, 128 × 128 × 32 tiles, 3 stages, grouped program
/// order) against the CPU reference: several programs, K loops of 1 to 5 iterations, ragged M.
#[test]
fn bench_matmul_pipelined_matches_cpu() {
    bench_matmul_pipelined_on(EmulatedTarget::Sm80);
}

/// The same in the sm_90a body: two warpgroups of `wgmma` fed by the rings.
#[test]
fn bench_matmul_pipelined_sm90a_matches_cpu() {
    bench_matmul_pipelined_on(EmulatedTarget::Sm90a);
}

fn bench_matmul_pipelined_on(target: EmulatedTarget) {
    let gpu = device();
    for (m, n, k) in gpu.cases(
        &[(130, 256, 160), (64, 128, 32), (200, 144, 48)],
        &[(1024, 1024, 1024)],
    ) {
        let a: Vec<f16> = halves(11, m * k);
        let b: Vec<f16> = halves(12, k * n);
        let (device, _) = device_and_module();
        let ta = Tensor::from_slice(device, &a, &[m, k]).unwrap();
        let tb = Tensor::from_slice(device, &b, &[k, n]).unwrap();
        let (c, report) = with_target(target, || {
            with_output(&vec![f16::from_f32(0.0); m * n], [m, n], |c| {
                launch_tensors!(
                    gpu,
                    bench_matmul_pipelined,
                    bench_matmul_pipelined::Consts {
                        BM: 128,
                        BN: 128,
                        BK: 32,
                        GROUP: 8,
                    },
                    |c: &bench_matmul_pipelined::Consts| {
                        ((m.div_ceil(c.BM) * n.div_ceil(c.BN)) as u32, 1)
                    },
                    &ta,
                    &tb,
                    c,
                )
                .unwrap()
            })
        });
        check_product(gpu, &c, (&a, &b), (m, n, k));
        let kind = pipelined_copies(target);
        if let Some(report) = gpu.emulator_only(&report, "bench_matmul_pipelined: async copies") {
            assert!(
                copied_by(report, kind),
                "{m}x{n}x{k}: no {kind:?} copies\n{report}"
            );
        }
    }
}
