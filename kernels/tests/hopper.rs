//! The Hopper matmul (`hopper_matmul_f16`: TMA, `mbarrier` pipeline, `wgmma`) against a CPU
//! reference over ragged shapes, on the emulator, or on an sm_90 GPU when the crate's PTX is
//! built for sm_90a (`TESSERA_SM=sm_90a`). `TESSERA_DEVICE=gpu` also times it at 4096³.

mod support;

use support::{device, run_in_buffers, say, Buffer, Rng, TestDevice};
use tessera::device::{TensorMap, TmaElement, TmaSwizzle};
use tessera::launch::{LaunchConfig, LaunchReport, TimingOptions};
use tessera::{f16, Ptr};
use tessera_kernels::hopper::*;
use tessera_layout::families::NvmmaShared;
use tessera_layout::plan::wgmma::plan_operand;

/// Rounds to f16 and packs pairs into words (the element count is even).
fn f16_words(values: &[f32]) -> (Vec<u32>, Vec<f32>) {
    let halves: Vec<f16> = values.iter().map(|&v| f16::from_f32(v)).collect();
    let words = halves
        .chunks(2)
        .map(|p| p[0].to_bits() as u32 | (p[1].to_bits() as u32) << 16)
        .collect();
    (words, halves.iter().map(|h| h.to_f32()).collect())
}

/// The map as the kernel reads it: the driver's encoding on the GPU, the struct on the
/// emulator.
fn map_buffer(gpu: &TestDevice, map: TensorMap) -> Buffer {
    let words: Vec<u32> = if gpu.is_gpu() {
        let encoded = map.encode().unwrap_or_else(|err| panic!("{err}"));
        encoded
            .iter()
            .flat_map(|&q| [q as u32, (q >> 32) as u32])
            .collect()
    } else {
        let bytes = size_of::<TensorMap>();
        // SAFETY: TensorMap is plain old data (integers and fieldless enums), `bytes` long.
        let raw =
            unsafe { std::slice::from_raw_parts(&map as *const TensorMap as *const u8, bytes) };
        raw.chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    };
    Buffer::from_u32(gpu.device(), &words)
}

struct Problem {
    a_map: Buffer,
    b_map: Buffer,
    c: Buffer,
    // The tensors the maps point at, kept alive.
    _a: Buffer,
    _b: Buffer,
    a: Vec<f32>,
    b: Vec<f32>,
}

/// Uploads random `m × k` A and `k × n` B and a C of sentinels (plus 4 words past its end).
fn problem(gpu: &TestDevice, m: usize, n: usize, k: usize, seed: u64) -> Problem {
    let mut rng = Rng(seed);
    let (a_words, a) = f16_words(&(0..m * k).map(|_| rng.next_f32()).collect::<Vec<_>>());
    let (b_words, b) = f16_words(&(0..k * n).map(|_| rng.next_f32()).collect::<Vec<_>>());
    let device = gpu.device();
    let (da, db) = (
        Buffer::from_u32(device, &a_words),
        Buffer::from_u32(device, &b_words),
    );
    let c = Buffer::filled(device, m * n / 2 + 4, 0x7777_7777);
    // A row-major `rows × cols` f16 tensor, read in 128-byte-swizzled boxes.
    let tensor_map = |tensor: &Buffer, rows: usize, cols: usize, tma_box| {
        let dims = [rows as u64, cols as u64];
        let map = TensorMap::tiled_2d(
            TmaElement::F16,
            tensor.ptr::<f16>(),
            dims,
            2 * cols as u64,
            tma_box,
            TmaSwizzle::B128,
        )
        .unwrap();
        map_buffer(gpu, map)
    };
    Problem {
        a_map: tensor_map(&da, m, k, A_BOX),
        b_map: tensor_map(&db, k, n, B_BOX),
        c,
        _a: da,
        _b: db,
        a,
        b,
    }
}

fn config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig {
        grid: [
            n.div_ceil(HOPPER_BLOCK_N as usize) as u32,
            m.div_ceil(HOPPER_BLOCK_M as usize) as u32,
            1,
        ],
        block: [HOPPER_THREADS, 1, 1],
        shared_bytes: HOPPER_SHARED_BYTES,
    }
}

type Args = (Ptr<TensorMap>, Ptr<TensorMap>, Ptr<f16>, u32, u32, u32);

fn args(p: &Problem, m: usize, n: usize, k: usize) -> Args {
    (
        p.a_map.ptr(),
        p.b_map.ptr(),
        p.c.ptr(),
        m as u32,
        n as u32,
        k as u32,
    )
}

/// Whether the embedded PTX has the kernel (only a `TESSERA_SM=sm_90a` build has).
fn has_kernel(gpu: &TestDevice) -> bool {
    gpu.has_entry(HOPPER_MATMUL_F16.name) == Some(true)
}

/// Whether the kernel can run here: on the emulator always, on a GPU only from an sm_90a PTX
/// (otherwise the test says it was skipped).
fn runnable(gpu: &TestDevice) -> bool {
    if gpu.is_gpu() && !has_kernel(gpu) {
        gpu.skip(
            "hopper_matmul_f16 on the GPU: the PTX is not built for sm_90a (TESSERA_SM=sm_90a)",
        );
        return false;
    }
    true
}

/// Runs the kernel: through the PTX entry when the module has it (on the GPU it must), else
/// on the emulator in the live buffers.
fn launch(gpu: &TestDevice, config: LaunchConfig, args: Args) -> LaunchReport {
    if gpu.is_gpu() || has_kernel(gpu) {
        return gpu.launch(HOPPER_MATMUL_F16, config, args).unwrap();
    }
    LaunchReport::Emulator(
        run_in_buffers(HOPPER_MATMUL_F16, config, args).unwrap_or_else(|err| panic!("{err}")),
    )
}

/// `c[i][j]` of `a · b` in f64, and the sum of the products' magnitudes.
fn dot(p: &Problem, n: usize, k: usize, i: usize, j: usize) -> (f64, f64) {
    (0..k).fold((0.0, 0.0), |(sum, magnitude), x| {
        let product = p.a[i * k + x] as f64 * p.b[x * n + j] as f64;
        (sum + product, magnitude + product.abs())
    })
}

fn check_element(
    gpu: &TestDevice,
    p: &Problem,
    c: &[u32],
    (m, n, k): (usize, usize, usize),
    i: usize,
    j: usize,
) {
    let word = c[(i * n + j) / 2];
    let got = f16::from_bits((word >> (16 * (j % 2))) as u16).to_f32() as f64;
    let (want, magnitude) = dot(p, n, k, i, j);
    // f32 accumulation, one rounding to f16 (2^-11 relative) at the end.
    let tol = want.abs() * 1.0e-3 + 1.0e-3 + gpu.mma_slack(magnitude);
    assert!(
        (got - want).abs() <= tol,
        "{m}x{n}x{k}: c[{i}, {j}] = {got}, want {want}"
    );
}

/// Shapes: one tile; ragged M, N and K (TMA's zero fill); K loops that reuse every stage
/// several times (barrier phases 0, 1, 0, ...); more CTAs than one row of tiles.
#[rustfmt::skip]
const SHAPES: [(usize, usize, usize); 5] = [
    (128, 128, 64), (8, 8, 8), (200, 136, 200), (64, 128, 640), (130, 264, 72),
];

#[test]
fn hopper_matmul_matches_cpu() {
    let gpu = device();
    if !runnable(gpu) {
        return;
    }
    for (m, n, k) in gpu.cases(&SHAPES, &[(1000, 1000, 1000), (4096, 256, 4096)]) {
        let p = problem(gpu, m, n, k, (m * 31 + n * 7 + k) as u64);
        launch(gpu, config(m, n), args(&p, m, n, k));
        let c = p.c.to_u32();
        for i in 0..m {
            for j in 0..n {
                check_element(gpu, &p, &c, (m, n, k), i, j);
            }
        }
        assert!(
            c[m * n / 2..].iter().all(|&w| w == 0x7777_7777),
            "{m}x{n}x{k}: wrote past the end of C"
        );
    }
}

/// The kernel's descriptor constants and TMA boxes are the planner's for its tiles.
#[test]
fn descriptors_and_boxes_are_the_planned_ones() {
    let shared = NvmmaShared::new(128, 16, false);
    let a = plan_operand(shared, [HOPPER_BLOCK_M, HOPPER_BLOCK_K], 1, 64).unwrap();
    assert_eq!(A_OPERAND.template, a.descriptor.encode());
    let steps: Vec<u32> = (0..4).map(|s| s * A_OPERAND.k_step_bytes).collect();
    assert_eq!(a.k_step_offsets, steps);
    assert_eq!(a.mn_block_offsets, [0, A_OPERAND.mn_block_bytes]);
    let b = plan_operand(shared, [HOPPER_BLOCK_K, HOPPER_BLOCK_N], 0, HOPPER_BLOCK_N).unwrap();
    assert_eq!(B_OPERAND.template, b.descriptor.encode());
    let steps: Vec<u32> = (0..4).map(|s| s * B_OPERAND.k_step_bytes).collect();
    assert_eq!(b.k_step_offsets, steps);
    // TMA boxes: [rows, cols] here, as Triton's getTMABlockShape of the NVMMA layout.
    let a_box = shared
        .tma_block_shape(&[HOPPER_BLOCK_M, HOPPER_BLOCK_K])
        .unwrap();
    assert_eq!([a_box[0], a_box[1]], A_BOX);
    let b_box = shared
        .tma_block_shape(&[HOPPER_BLOCK_K, HOPPER_BLOCK_N])
        .unwrap();
    assert_eq!([b_box[0], b_box[1]], B_BOX);
    assert_eq!(a.alignment, 1024);
}

/// `TESSERA_DEVICE=gpu` (with `TESSERA_SM=sm_90a`): times the kernel at 4096³ with CUDA events
/// (median of 100 launches after an L2 flush) and prints TFLOP/s; checks 256 sampled outputs.
#[test]
fn hopper_matmul_4096_timing() {
    let gpu = device();
    if !gpu.is_gpu() {
        gpu.skip("hopper_matmul_f16 timing at 4096^3 (GPU only)");
        return;
    }
    if !runnable(gpu) {
        return;
    }
    let (m, n, k) = (4096, 4096, 4096);
    let p = problem(gpu, m, n, k, 4096);
    let module = gpu.module().expect("a GPU test device has a module");
    assert!(
        has_kernel(gpu),
        "the timing needs the PTX built with TESSERA_SM=sm_90a"
    );
    let timing = gpu
        .device()
        .time_launches(
            module,
            HOPPER_MATMUL_F16,
            config(m, n),
            args(&p, m, n, k),
            TimingOptions::default(),
        )
        .unwrap();
    let tflops = 2.0 * (m * n * k) as f64 / (timing.median_ms * 1e-3) / 1e12;
    say(&format!(
        "hopper_matmul_f16 {m}x{n}x{k}: median {:.3} ms (min {:.3}, max {:.3}, {}): {tflops:.1} TFLOP/s",
        timing.median_ms, timing.min_ms, timing.max_ms, timing.clock
    ));
    let c = p.c.to_u32();
    let mut rng = Rng(7);
    for _ in 0..256 {
        let (i, j) = (rng.next_u32() as usize % m, rng.next_u32() as usize % n);
        check_element(gpu, &p, &c, (m, n, k), i, j);
    }
}
