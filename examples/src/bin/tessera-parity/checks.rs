//! The checks: for every kernel and probe, a launch (the same inputs on every device), the CPU
//! reference the kernel tests use, and how outputs must agree.
//!
//! Every output buffer starts as [`SENTINEL`] words followed by [`CANARY_WORDS`] canaries, and
//! the whole buffer is compared, so words a kernel must not write (ragged mma rows) and writes
//! past the end show up as differences.

mod mma;

use crate::compare::Compare;
use crate::inputs::{self, ParityDraws, Rng};
use mma::*;
use std::rc::Rc;
use tessera::dtype::{bf16, f16, pack_s8x4};
use tessera::launch::{Device, DeviceBuffer, KernelArgs, LaunchConfig, LaunchError, Module};
use tessera::{Kernel, Ptr};
use tessera_kernels::probes::{
    convert_reference, shuffle_reference, CONVERT_PROBE, GEOMETRY_PROBE, LDMATRIX_PROBE,
    MMA_BF16_TILE, MMA_F16_TILE, MMA_S8_TILE, SHUFFLE_PROBE, STMATRIX_PROBE,
};
use tessera_kernels::{
    COPY, COPY_ELEMENTS_PER_THREAD, ROW_SUM, TRANSPOSE32, VEC_ADD, VEC_ADD_ELEMENTS_PER_THREAD,
};

/// Initial value of every output word.
pub const SENTINEL: u32 = 0xdead_beef;
/// Value of the words after each output.
pub const CANARY: u32 = 0x0bad_c0de;
/// Canary words after each output.
pub const CANARY_WORDS: usize = 4;

/// Bound of the tensor-core float checks on random inputs: `|d_a − d_b| ≤ MMA_RELATIVE_BOUND ·
/// (|c| + Σ_k |a_k·b_k|)` per element, i.e. 32 f32 epsilons (2^-23) of the sum of the terms'
/// magnitudes. Tensor cores do not round the sum once as the emulator does (exact f64 sum, one
/// rounding): they align the products to the largest and truncate, which costs up to about one
/// unit in the last place of the largest term per term; relative to the result alone the
/// difference is unbounded when the terms cancel, hence a bound on the terms. A wrong element
/// or fragment mapping changes a result by about one whole term (≈ 1/16 of the sum), 2^14 times
/// this bound.
pub const MMA_RELATIVE_BOUND_LOG2: i32 = -18;
/// `2^MMA_RELATIVE_BOUND_LOG2`.
pub const MMA_RELATIVE_BOUND: f64 = 1.0 / (1u64 << -MMA_RELATIVE_BOUND_LOG2) as f64;

/// One launch (or a few) on a device and module, returning every output word.
pub type Run = Box<dyn Fn(&Device, &Module) -> Result<Vec<u32>, LaunchError>>;
/// Names output word `i`.
pub type Label = Box<dyn Fn(usize) -> String>;
/// Lines describing the differences of `got` from `want`, field by field.
pub type Breakdown = Box<dyn Fn(&[u32], &[u32]) -> Vec<String>>;

/// A check to build when it runs (inputs and references are made then, not up front).
pub struct Planned {
    /// What is checked, e.g. `convert_probe every 16-bit pattern`.
    pub name: String,
    /// Makes the inputs, the launch and the reference.
    pub build: Box<dyn FnOnce() -> Check>,
}

fn plan(name: impl Into<String>, build: impl FnOnce() -> Check + 'static) -> Planned {
    Planned {
        name: name.into(),
        build: Box::new(build),
    }
}

/// A parity check.
pub struct Check {
    /// The PTX entry (a check runs on a PTX build only if it has the entry).
    pub kernel: &'static str,
    /// Runs the launch(es).
    pub run: Run,
    /// The CPU reference output (canaries included).
    pub reference: Vec<u32>,
    /// How the emulator's and the GPU's outputs must agree with `reference`.
    pub vs_cpu: Compare,
    /// How the GPU's output must agree with the emulator's.
    pub vs_emulator: Compare,
    /// The outputs are f32 (the report gives ulp distances).
    pub f32_words: bool,
    /// Names output word `i` in diagnostics.
    pub label: Label,
    /// Optional per-field breakdown of differences (got, want) for diagnostics.
    pub breakdown: Option<Breakdown>,
}

impl Check {
    /// A check whose output must equal the CPU reference and the emulator's, bit for bit.
    fn exact(
        kernel: &'static str,
        run: Run,
        reference: Vec<u32>,
        f32_words: bool,
        label: Label,
    ) -> Check {
        Check {
            kernel,
            run,
            reference,
            vs_cpu: Compare::Exact,
            vs_emulator: Compare::Exact,
            f32_words,
            label,
            breakdown: None,
        }
    }
}

/// An output buffer of `len` [`SENTINEL`] words followed by the canaries.
fn output(device: &Device, len: usize) -> Result<DeviceBuffer<u32>, LaunchError> {
    let mut init = vec![SENTINEL; len + CANARY_WORDS];
    init[len..].fill(CANARY);
    device.upload(&init)
}

/// `want` followed by the canaries.
fn canaried(mut want: Vec<u32>) -> Vec<u32> {
    want.extend([CANARY; CANARY_WORDS]);
    want
}

/// `count` as the kernels' `u32`.
fn count_u32(count: usize, what: &str) -> Result<u32, LaunchError> {
    u32::try_from(count).map_err(|_| LaunchError::InvalidConfig {
        kernel: what.to_string(),
        reason: format!("{count} exceeds u32"),
    })
}

/// Labels word `i` of `segments` concatenated outputs of `len` words (plus canaries) each.
fn segmented_label(len: usize, inner: impl Fn(usize, usize) -> String + 'static) -> Label {
    Box::new(move |i| {
        let (segment, j) = (i / (len + CANARY_WORDS), i % (len + CANARY_WORDS));
        if j >= len {
            format!("launch {segment}, canary {} after the output", j - len)
        } else {
            format!("launch {segment}, {}", inner(segment, j))
        }
    })
}

fn plain_label(len: usize, what: &'static str) -> Label {
    Box::new(move |i| {
        if i >= len {
            format!("canary {} after the output", i - len)
        } else {
            format!("{what} {i}")
        }
    })
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

// ---------------------------------------------------------------------------------------------
// Hand-written kernels
// ---------------------------------------------------------------------------------------------

/// `vec_add` of `a` and `b`, `threads` per block; reference `a + b` in f32 on the host.
fn vec_add(a: Vec<f32>, b: Vec<f32>, threads: u32, vs_cpu: Compare) -> Check {
    let n = a.len();
    let reference = canaried(a.iter().zip(&b).map(|(x, y)| (x + y).to_bits()).collect());
    let (a, b) = (bits(&a), bits(&b));
    let run: Run = Box::new(move |device, module| {
        let (da, db, out) = (device.upload(&a)?, device.upload(&b)?, output(device, n)?);
        let per_block = threads as usize * VEC_ADD_ELEMENTS_PER_THREAD as usize;
        let config =
            LaunchConfig::linear(count_u32(n.div_ceil(per_block).max(1), "vec_add")?, threads);
        let args = (
            da.ptr().cast(),
            db.ptr().cast(),
            out.ptr().cast(),
            count_u32(n, "vec_add")?,
        );
        device.launch(module, VEC_ADD, config, args)?;
        out.download()
    });
    Check {
        kernel: VEC_ADD.name,
        run,
        reference,
        vs_cpu,
        vs_emulator: Compare::Exact,
        f32_words: true,
        label: plain_label(n, "element"),
        breakdown: None,
    }
}

/// Random operands: three in four uniform in [-4, 4), one in four a random finite f32 of any
/// exponent (subnormals and overflow to infinity included).
fn mixed_f32(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            if rng.one_in(4) {
                rng.finite_f32()
            } else {
                4.0 * rng.next_f32()
            }
        })
        .collect()
}

fn vec_add_random(n: usize, threads: u32, seed: u64) -> Check {
    let mut rng = Rng(seed);
    let a = mixed_f32(&mut rng, n);
    let b = mixed_f32(&mut rng, n);
    vec_add(a, b, threads, Compare::Exact)
}

/// Every pair of special operands: NaN payloads, infinities, zeros, subnormals, extremes.
fn vec_add_specials() -> Check {
    let mut values = inputs::special_f32();
    values.extend(bits(&[1.0, -1.0, 3.5, 1e-38, -2.5e-38]));
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in &values {
        for &y in &values {
            a.push(f32::from_bits(x));
            b.push(f32::from_bits(y));
        }
    }
    // NaN results of host arithmetic keep an operand's payload (x86); the GPU's are the
    // canonical 0x7fffffff, which the emulator gives too (vec_add adds with
    // tessera::device::add_f32). The CPU reference is plain host `+`, so it matches any NaN with
    // any NaN; the GPU must match the emulator bit for bit.
    vec_add(a, b, 128, Compare::NanClass)
}

fn copy(n: usize, threads: u32, seed: u64) -> Check {
    let mut rng = Rng(seed);
    // Any bit pattern, NaN payloads included: a copy must keep every bit.
    let x: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let reference = canaried(x.clone());
    let run: Run = Box::new(move |device, module| {
        let (dx, out) = (device.upload(&x)?, output(device, n)?);
        let per_block = threads as usize * COPY_ELEMENTS_PER_THREAD as usize;
        let config =
            LaunchConfig::linear(count_u32(n.div_ceil(per_block).max(1), "copy")?, threads);
        device.launch(
            module,
            COPY,
            config,
            (dx.ptr().cast(), out.ptr().cast(), count_u32(n, "copy")?),
        )?;
        out.download()
    });
    Check::exact(COPY.name, run, reference, false, plain_label(n, "element"))
}

/// `row_sum` of an `m`×`n` matrix of random floats; the reference replays the kernel's order
/// in f32 (lane `l` sums columns `l, l + 32, …`, then a butterfly over offsets 16, 8, 4, 2, 1),
/// so it is exact, not approximate.
fn row_sum(m: usize, n: usize, threads: u32, seed: u64) -> Check {
    let mut rng = Rng(seed);
    let x: Vec<f32> = (0..m * n).map(|_| 4.0 * rng.next_f32()).collect();
    let want: Vec<u32> = (0..m)
        .map(|r| {
            let mut lanes = [0f32; 32];
            for (lane, sum) in lanes.iter_mut().enumerate() {
                for c in (lane..n).step_by(32) {
                    *sum += x[r * n + c];
                }
            }
            for offset in [16, 8, 4, 2, 1] {
                let before = lanes;
                for (lane, sum) in lanes.iter_mut().enumerate() {
                    *sum = before[lane] + before[lane ^ offset];
                }
            }
            lanes[0].to_bits()
        })
        .collect();
    let xb = bits(&x);
    let run: Run = Box::new(move |device, module| {
        let (dx, out) = (device.upload(&xb)?, output(device, m)?);
        let rows_per_block = (threads / 32) as usize;
        let config =
            LaunchConfig::linear(count_u32(m.div_ceil(rows_per_block), "row_sum")?, threads);
        let args = (
            dx.ptr().cast(),
            out.ptr().cast(),
            count_u32(m, "row_sum")?,
            count_u32(n, "row_sum")?,
        );
        device.launch(module, ROW_SUM, config, args)?;
        out.download()
    });
    Check::exact(
        ROW_SUM.name,
        run,
        canaried(want),
        true,
        plain_label(m, "row"),
    )
}

fn transpose32(n: usize, padded: bool, seed: u64) -> Check {
    let mut rng = Rng(seed);
    let x: Vec<u32> = (0..n * n).map(|_| rng.next_u32()).collect();
    let want: Vec<u32> = (0..n * n).map(|i| x[(i % n) * n + i / n]).collect();
    let run: Run = Box::new(move |device, module| {
        let (dx, out) = (device.upload(&x)?, output(device, n * n)?);
        let tiles = count_u32(n / 32, "transpose32")?;
        let config = LaunchConfig {
            grid: [tiles, tiles, 1],
            block: [32, 8, 1],
            shared_bytes: 32 * 33 * 4,
        };
        let args = (
            dx.ptr().cast(),
            out.ptr().cast(),
            count_u32(n, "transpose32")?,
            padded as u32,
        );
        device.launch(module, TRANSPOSE32, config, args)?;
        out.download()
    });
    Check::exact(
        TRANSPOSE32.name,
        run,
        canaried(want),
        false,
        Box::new(move |i| {
            if i >= n * n {
                format!("canary {}", i - n * n)
            } else {
                format!("out[{}][{}]", i / n, i % n)
            }
        }),
    )
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

/// The fields of `convert_probe`'s 12 output words: (word, shift, width, conversion).
#[rustfmt::skip] // A table: one field per line.
const CONVERT_FIELDS: [(usize, u32, u32, &str); 19] = [
    (0, 0, 16, "f32→f16 (cvt.rn.f16.f32)"),
    (0, 16, 16, "f32→bf16 (cvt.rn.bf16.f32)"),
    (1, 0, 8, "f32→e4m3 (cvt.rn.satfinite.e4m3x2.f32 on sm_89+)"),
    (1, 8, 8, "f32→e5m2 (cvt.rn.satfinite.e5m2x2.f32 on sm_89+)"),
    (1, 16, 16, "word 1 bits 16..32 (zero)"),
    (2, 0, 32, "f32→i32 rn (cvt.rni.s32.f32)"),
    (3, 0, 32, "f32→u32 rz (cvt.rzi.u32.f32)"),
    (4, 0, 32, "f16→f32 of bits 0..16 (cvt.f32.f16)"),
    (5, 0, 32, "bf16→f32 of bits 0..16 (shl.b32)"),
    (6, 0, 16, "e4m3→f16 of bits 0..8 (cvt.rn.f16x2.e4m3x2 on sm_89+)"),
    (6, 16, 16, "e5m2→f16 of bits 0..8 (cvt.rn.f16x2.e5m2x2 on sm_89+)"),
    (7, 0, 32, "i32→f32 (cvt.rn.f32.s32)"),
    (8, 0, 32, "f32→i32 rz (cvt.rzi.s32.f32)"),
    (9, 0, 32, "f32→u32 rn (cvt.rni.u32.f32)"),
    (10, 0, 32, "u32→f32 (cvt.rn.f32.u32)"),
    (11, 0, 8, "e4m3x2 low = e4m3(x)"),
    (11, 8, 8, "e4m3x2 high = e4m3(-x)"),
    (11, 16, 8, "e5m2x2 low = e5m2(x)"),
    (11, 24, 8, "e5m2x2 high = e5m2(2x)"),
];

fn convert(input: Vec<u32>) -> Check {
    let n = input.len();
    let reference = canaried(input.iter().flat_map(|&w| convert_reference(w)).collect());
    let input = Rc::new(input);
    let for_run = Rc::clone(&input);
    let run: Run = Box::new(move |device, module| {
        let (din, out) = (device.upload(&for_run)?, output(device, 12 * n)?);
        let blocks = count_u32(n.div_ceil(256), "convert_probe")?;
        device.launch(
            module,
            CONVERT_PROBE,
            LaunchConfig::linear(blocks, 256),
            (din.ptr(), out.ptr(), count_u32(n, "convert_probe")?),
        )?;
        out.download()
    });
    let for_label = Rc::clone(&input);
    let label = Box::new(move |i: usize| {
        if i >= 12 * n {
            return format!("canary {}", i - 12 * n);
        }
        let fields: Vec<&str> = CONVERT_FIELDS
            .iter()
            .filter(|f| f.0 == i % 12)
            .map(|f| f.3)
            .collect();
        format!(
            "input {:#010x}, word {}: {}",
            for_label[i / 12],
            i % 12,
            fields.join(" | ")
        )
    });
    let breakdown = Box::new(move |got: &[u32], want: &[u32]| {
        let mut lines = Vec::new();
        for &(word, shift, width, what) in &CONVERT_FIELDS {
            let mask = if width == 32 {
                u32::MAX
            } else {
                (1 << width) - 1
            };
            let mut count = 0;
            let mut first = None;
            for (i, &w) in input.iter().enumerate() {
                let k = 12 * i + word;
                let (Some(&g), Some(&r)) = (got.get(k), want.get(k)) else {
                    continue;
                };
                let (g, r) = (g >> shift & mask, r >> shift & mask);
                if g != r {
                    count += 1;
                    first.get_or_insert((w, g, r));
                }
            }
            if let Some((w, g, r)) = first {
                lines.push(format!(
                    "{what}: {count} of {n} differ, first input {w:#010x}: got {g:#x}, want {r:#x}"
                ));
            }
        }
        lines
    });
    Check {
        kernel: CONVERT_PROBE.name,
        run,
        reference,
        vs_cpu: Compare::Exact,
        vs_emulator: Compare::Exact,
        f32_words: false,
        label,
        breakdown: Some(breakdown),
    }
}

// ---------------------------------------------------------------------------------------------
// Data movement and geometry probes
// ---------------------------------------------------------------------------------------------

/// Element (r, c) of matrix m of the 128-word input of the matrix probes.
fn probe_element(x: &[u32], m: usize, r: usize, c: usize) -> u32 {
    (x[m * 32 + r * 4 + c / 2] >> (16 * (c % 2))) & 0xffff
}

fn matrix_inputs(seed: u64) -> Vec<Vec<u32>> {
    let mut rng = Rng(seed);
    vec![
        (0..128u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x5555)
            .collect(),
        // Element (m, r, c) = 0xMRC: a wrong element names where it came from.
        (0..128usize)
            .map(|w| {
                let element = |c: usize| (0x100 * (w / 32) + 0x10 * (w % 32 / 4) + c) as u32;
                element(2 * (w % 4)) | element(2 * (w % 4) + 1) << 16
            })
            .collect(),
        (0..128).map(|_| rng.next_u32()).collect(),
    ]
}

fn ldmatrix() -> Check {
    let inputs = matrix_inputs(300);
    let mut want = Vec::new();
    for x in &inputs {
        let pair = |lo: u32, hi: u32| lo | hi << 16;
        let mut out = vec![0u32; 32 * 12];
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            let w = &mut out[12 * lane..12 * lane + 12];
            let direct = |m| {
                pair(
                    probe_element(x, m, g, 2 * t),
                    probe_element(x, m, g, 2 * t + 1),
                )
            };
            let trans = |m| {
                pair(
                    probe_element(x, m, 2 * t, g),
                    probe_element(x, m, 2 * t + 1, g),
                )
            };
            w[0] = direct(0);
            w[1] = trans(1);
            for m in 0..4 {
                w[2 + m] = trans(m);
            }
            w[6..8].copy_from_slice(&x[2 * lane..2 * lane + 2]);
            w[8..10].copy_from_slice(&x[64 + 2 * lane..64 + 2 * lane + 2]);
        }
        want.extend(canaried(out));
    }
    let run = one_warp_per_input(LDMATRIX_PROBE, inputs, 32 * 12);
    const WHAT: [&str; 12] = [
        "ldmatrix.x1",
        "ldmatrix.x1.trans",
        "ldmatrix.x4.trans reg 0",
        "ldmatrix.x4.trans reg 1",
        "ldmatrix.x4.trans reg 2",
        "ldmatrix.x4.trans reg 3",
        "ld/st.shared.v2 word 0",
        "ld/st.shared.v2 word 1",
        "cp.async 8 B copy word 0",
        "cp.async 8 B copy word 1",
        "zero",
        "zero",
    ];
    Check::exact(
        LDMATRIX_PROBE.name,
        run,
        want,
        false,
        segmented_label(32 * 12, |_, j| format!("lane {} {}", j / 12, WHAT[j % 12])),
    )
}

/// Runs the one-warp probe `kernel` (2 KiB of shared memory) once per input, each into
/// `out_words` output words (and canaries); gives all outputs in order.
fn one_warp_per_input(
    kernel: Kernel<(Ptr<u32>, Ptr<u32>)>,
    inputs: Vec<Vec<u32>>,
    out_words: usize,
) -> Run {
    Box::new(move |device, module| {
        let mut words = Vec::new();
        for x in &inputs {
            let (dx, out) = (device.upload(x)?, output(device, out_words)?);
            let config = LaunchConfig::linear(1, 32).with_shared_bytes(2048);
            device.launch(module, kernel, config, (dx.ptr(), out.ptr()))?;
            words.extend(out.download()?);
        }
        Ok(words)
    })
}

fn stmatrix() -> Check {
    let inputs = matrix_inputs(310);
    let want: Vec<u32> = inputs.iter().flat_map(|x| canaried(x.repeat(3))).collect();
    let run = one_warp_per_input(STMATRIX_PROBE, inputs, 3 * 128);
    const WHAT: [&str; 3] = [
        "x4.trans round trip",
        "x4 round trip",
        "x1/x1.trans/x2/x2.trans round trip",
    ];
    Check::exact(
        STMATRIX_PROBE.name,
        run,
        want,
        false,
        segmented_label(3 * 128, |_, j| {
            format!("{} word {}", WHAT[j / 128], j % 128)
        }),
    )
}

fn shuffle() -> Check {
    let want: Vec<u32> = (0..64u32).flat_map(shuffle_reference).collect();
    let run: Run = Box::new(move |device, module| {
        let out = output(device, 64 * 12)?;
        device.launch(
            module,
            SHUFFLE_PROBE,
            LaunchConfig::linear(1, 64),
            (out.ptr(),),
        )?;
        out.download()
    });
    const WHAT: [&str; 12] = [
        "shfl.idx",
        "shfl.bfly 5",
        "shfl.up 1",
        "shfl.down 3",
        "shfl.idx c=8 segments",
        "shfl.bfly 5 c=8",
        "shfl.up 1 c=8",
        "shfl.down 3 c=8",
        "64-bit shfl.down 2 low",
        "64-bit shfl.down 2 high",
        "%laneid",
        "warp id",
    ];
    Check::exact(
        SHUFFLE_PROBE.name,
        run,
        canaried(want),
        false,
        Box::new(|i| {
            if i >= 64 * 12 {
                format!("canary {}", i - 64 * 12)
            } else {
                format!("thread {} {}", i / 12, WHAT[i % 12])
            }
        }),
    )
}

fn geometry(grid: [u32; 3], block: [u32; 3]) -> Check {
    let threads = block.iter().product::<u32>() as usize;
    let total = grid.iter().product::<u32>() as usize * threads;
    let mut want = Vec::with_capacity(16 * total);
    for g in 0..total {
        let (b, t) = ((g / threads) as u32, (g % threads) as u32);
        want.extend([
            t % block[0],
            t / block[0] % block[1],
            t / (block[0] * block[1]),
            b % grid[0],
            b / grid[0] % grid[1],
            b / (grid[0] * grid[1]),
            block[0],
            block[1],
            block[2],
            grid[0],
            grid[1],
            grid[2],
            t % 32,
            t / 32,
            t,
            0x600d,
        ]);
    }
    let run: Run = Box::new(move |device, module| {
        let out = output(device, 16 * total)?;
        let config = LaunchConfig {
            grid,
            block,
            shared_bytes: 0,
        };
        device.launch(module, GEOMETRY_PROBE, config, (out.ptr(),))?;
        out.download()
    });
    const WHAT: [&str; 16] = [
        "%tid.x",
        "%tid.y",
        "%tid.z",
        "%ctaid.x",
        "%ctaid.y",
        "%ctaid.z",
        "%ntid.x",
        "%ntid.y",
        "%ntid.z",
        "%nctaid.x",
        "%nctaid.y",
        "%nctaid.z",
        "%laneid",
        "warp id",
        "linear thread id",
        "marker",
    ];
    Check::exact(
        GEOMETRY_PROBE.name,
        run,
        canaried(want),
        false,
        Box::new(move |i| {
            if i >= 16 * total {
                format!("canary {}", i - 16 * total)
            } else {
                format!("global thread {} {}", i / 16, WHAT[i % 16])
            }
        }),
    )
}

/// Every check, in the order run.
pub fn all() -> Vec<Planned> {
    let mut checks = Vec::new();
    for (n, threads, seed) in [
        (1usize, 256u32, 1u64),
        (5, 256, 2),
        (1025, 256, 3),
        (65_543, 256, 4),
        (1029, 64, 5),
    ] {
        checks.push(plan(format!("vec_add n={n} block={threads}"), move || {
            vec_add_random(n, threads, seed)
        }));
    }
    checks.push(plan(
        "vec_add every pair of special operands (NaN, inf, subnormal)",
        vec_add_specials,
    ));
    for (n, seed) in [(3usize, 6u64), (1025, 7), (65_543, 8)] {
        checks.push(plan(
            format!("copy n={n} block=256 (random bit patterns)"),
            move || copy(n, 256, seed),
        ));
    }
    for (m, n, threads, seed) in [
        (3, 31, 256, 9),
        (7, 33, 256, 10),
        (64, 100, 256, 11),
        (33, 1000, 256, 12),
        (5, 77, 32, 13),
    ] {
        checks.push(plan(
            format!("row_sum {m}x{n} block={threads} (random floats)"),
            move || row_sum(m, n, threads, seed),
        ));
    }
    for padded in [false, true] {
        let stride = if padded { 33 } else { 32 };
        checks.push(plan(
            format!("transpose32 128x128 stride {stride}"),
            move || transpose32(128, padded, 14 + padded as u64),
        ));
    }
    for m_valid in [16u32, 11, 1] {
        checks.push(plan(
            format!("mma_f16_tile small integers, m_valid={m_valid}"),
            move || mma_f16_small(m_valid),
        ));
    }
    checks.push(plan(
        "mma_f16_tile f16 subnormals x small integers",
        mma_f16_subnormal,
    ));
    checks.push(plan("mma_f16_tile random in [-2, 2)", mma_f16_uniform));
    checks.push(plan(
        "mma_f16_tile random finite f16 (every exponent)",
        mma_f16_any_exponent,
    ));
    checks.push(plan(
        "mma_f16_tile inf/NaN/65504 among small integers",
        mma_f16_specials,
    ));
    checks.push(plan("mma_bf16_tile small integers", mma_bf16_small));
    checks.push(plan("mma_bf16_tile random in [-1, 1)", mma_bf16_uniform));
    checks.push(plan(
        "mma_bf16_tile random, magnitudes 2^-40..2^40",
        mma_bf16_wide,
    ));
    checks.push(plan("mma_s8_tile random", mma_s8_random));
    checks.push(plan(
        "mma_s8_tile extremes, accumulators that wrap",
        mma_s8_extremes,
    ));
    checks.push(plan("convert_probe every 16-bit pattern", || {
        convert((0..1 << 16).collect())
    }));
    checks.push(plan("convert_probe every bf16 value as f32", || {
        convert((0..1u32 << 16).map(|h| h << 16).collect())
    }));
    checks.push(plan("convert_probe f16 rounding midpoints ±1 ulp", || {
        convert(inputs::f16_midpoints())
    }));
    checks.push(plan(
        "convert_probe bf16 rounding midpoints ±1 ulp",
        || convert(inputs::bf16_midpoints()),
    ));
    checks.push(plan(
        "convert_probe f8 e4m3/e5m2 midpoints and saturation",
        || convert(inputs::f8_edges()),
    ));
    checks.push(plan("convert_probe integer conversion edges", || {
        convert(inputs::integer_edges())
    }));
    checks.push(plan(
        "convert_probe NaN payloads, inf, zeros, subnormals",
        || convert(inputs::special_f32()),
    ));
    checks.push(plan("convert_probe 2^18 random words", || {
        let mut rng = Rng(200);
        convert((0..1 << 18).map(|_| rng.next_u32()).collect())
    }));
    checks.push(plan(
        "ldmatrix_probe x1/x1.trans/x4.trans, cp.async 4/8 B (3 inputs)",
        ldmatrix,
    ));
    checks.push(plan(
        "stmatrix_probe x1/x2/x4 (+.trans) round trips (3 inputs)",
        stmatrix,
    ));
    checks.push(plan(
        "shuffle_probe idx/bfly/up/down, 8-lane segments, 64-bit",
        shuffle,
    ));
    for (grid, block) in [
        ([3, 2, 2], [8, 5, 2]),
        ([1, 1, 1], [1024, 1, 1]),
        ([5, 1, 1], [33, 1, 1]),
        ([2, 3, 4], [4, 4, 4]),
        ([2, 2, 2], [16, 2, 3]),
        ([1, 1, 1], [32, 32, 1]),
        ([70_000, 1, 1], [2, 1, 1]),
        ([1, 1, 3], [1, 1, 64]),
    ] {
        checks.push(plan(
            format!("geometry_probe grid {grid:?} block {block:?}"),
            move || geometry(grid, block),
        ));
    }
    checks
}
