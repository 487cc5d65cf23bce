//! Every generated kernel of this build, run on the CPU emulator and compared with the
//! evaluator on the same expression tree. Two argument sets per kernel: everything in bounds
//! (`n`, `m` past every size, one loop trip) and ragged (`n`, `m` cutting the last axis of loads
//! and the store, 0 to 3 loop trips).
//!
//! Tolerances: i32 values, and f32 values the grammar marks exact (no rounding below them:
//! loads, `+ - max min abs neg`, `where_`, shape ops, reductions of such values; the inputs are
//! multiples of 1/64 in [-4, 4), so those sums are exact) must match bit for bit; other f32
//! values within `1e-3 · (1 + max |want|)` over the tile (products, `exp`, `sqrt`, `dot` and
//! sums whose order differs); NaN matches NaN, infinities match only themselves. Masked-off outputs and the elements past the tile keep their
//! sentinel.
//!
//! The second test runs them again as AMD code (the emulator emulating amdgpu): the kernels
//! with a body planned for AMD (conversions without `ldmatrix`, dots by `v_mfma`) run it, those
//! with a `dot` no AMD instruction serves (i8 or f8 operands, an odd `num_warps`, a tile smaller
//! than one `mfma` per wave) are refused as NVIDIA-only and counted apart, every other launch is
//! checked as in the first.

use std::io::Write;
use std::time::Instant;
use tessera::emulator::{with_target, EmulatedTarget};
use tessera::launch::{Device, LaunchError};
use tessera::{tile_kernel, Ptr};
use tessera_gen_tests::eval::{eval, unflatten, Inputs};
use tessera_gen_tests::grammar::{self, DType, INPUT_LEN};

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

const SEED: &str = env!("TESSERA_GEN_SEED_BUILT");

/// Written to every output element before a launch; a store must leave masked elements so.
const SENTINEL: f64 = -7777.0;

/// Elements past the tile in the output buffer (a store there is a failure).
const SLACK: usize = 16;

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// SplitMix64 values: multiples of 1/64 in [-4, 4) (f32) and i32 spread over small and large
/// magnitudes.
fn inputs(seed: u64) -> (Vec<f32>, Vec<f32>, Vec<i32>) {
    let mut rng = grammar::Rng::new(seed);
    let mut floats = || -> Vec<f32> {
        (0..INPUT_LEN)
            .map(|_| ((rng.next_u64() >> 55) as f32 - 256.0) / 64.0)
            .collect()
    };
    let (fa, fb) = (floats(), floats());
    let ia = (0..INPUT_LEN)
        .map(|_| {
            let bits = rng.next_u64();
            let v = (bits >> 32) as i32;
            if bits.is_multiple_of(4) {
                v
            } else {
                v >> 22
            }
        })
        .collect();
    (fa, fb, ia)
}

/// What a pass over the generated kernels found.
struct Pass {
    seed: u64,
    /// Launches compared with the evaluator.
    checked: usize,
    /// Kernels refused as NVIDIA-only (AMD mode).
    nvidia_only: usize,
    /// Kernels with a body planned for AMD (`EXPLAIN`'s `(amdgpu)` entries) that ran.
    own_amd_bodies: usize,
    failures: Vec<String>,
}

/// Runs every generated kernel on both argument sets and compares with the evaluator; with
/// `amd`, a launch refused as NVIDIA-only is counted, not failed.
fn run_all(amd: bool) -> Pass {
    let seed: u64 = SEED.parse().expect("build.rs sets a decimal seed");
    let device = Device::emulator();
    let (fa, fb, ia) = inputs(seed);
    let (dfa, dfb, dia) = (
        device.upload(&fa).unwrap(),
        device.upload(&fb).unwrap(),
        device.upload(&ia).unwrap(),
    );
    let mut pass = Pass {
        seed,
        checked: 0,
        nvidia_only: 0,
        own_amd_bodies: 0,
        failures: Vec::new(),
    };
    for index in 0..KERNELS {
        let kernel = grammar::kernel(seed, index);
        let shape = &kernel.root.shape;
        let len: usize = shape.iter().product();
        let last = shape[shape.len() - 1] as i32;
        let mut rng = grammar::Rng::new(seed.wrapping_add(index as u64));
        let ragged = (
            rng.index(33) as i32,
            rng.index(last as usize + 1) as i32,
            rng.index(4) as i32,
        );
        for (n, m, t) in [(1 << 20, 1 << 20, 1), ragged] {
            let out_f = device.upload(&vec![SENTINEL as f32; len + SLACK]).unwrap();
            let out_i = device.upload(&vec![SENTINEL as i32; len + SLACK]).unwrap();
            let launched = run(
                index,
                out_f.ptr(),
                out_i.ptr(),
                dfa.ptr(),
                dfb.ptr(),
                dia.ptr(),
                n,
                m,
                t,
            );
            let context = || {
                format!(
                    "kernel {index} (seed {seed}), n = {n}, m = {m}, t = {t}:\n#[tile_kernel({})]\n{}",
                    grammar::attribute(&kernel),
                    grammar::function(&kernel)
                )
            };
            match launched {
                Err(LaunchError::NvidiaOnly { .. }) if amd => {
                    pass.nvidia_only += 1;
                    break;
                }
                Err(err) => {
                    pass.failures
                        .push(format!("launch failed: {err}\n{}", context()));
                    continue;
                }
                Ok(()) => {}
            }
            if amd && (n, m, t) == ragged && explain(index).contains(" (amdgpu)\n") {
                pass.own_amd_bodies += 1;
            }
            let got: Vec<f64> = match kernel.root.dtype {
                DType::F32 => out_f
                    .download()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect(),
                _ => out_i
                    .download()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect(),
            };
            let want = eval(
                &kernel.root,
                &Inputs {
                    fa: &fa,
                    fb: &fb,
                    ia: &ia,
                    n,
                    t,
                },
            );
            let scale = want
                .data
                .iter()
                .filter(|v| v.is_finite())
                .fold(0f64, |s, v| s.max(v.abs()));
            let tolerance = if kernel.root.exact {
                0.0
            } else {
                1e-3 * (1.0 + scale)
            };
            let mut bad = Vec::new();
            for (flat, &g) in got.iter().enumerate() {
                let expected = if flat >= len {
                    SENTINEL
                } else {
                    let index = unflatten(shape, flat);
                    if (index[index.len() - 1] as i32) < m {
                        want.data[flat]
                    } else {
                        SENTINEL
                    }
                };
                let ok = g == expected
                    || (g.is_nan() && expected.is_nan())
                    || (g - expected).abs() <= tolerance;
                if !ok && bad.len() < 4 {
                    bad.push(format!("[{flat}] = {g}, want {expected}"));
                }
            }
            if !bad.is_empty() {
                pass.failures.push(format!(
                    "wrong values ({}, tolerance {tolerance}): {}\n{}",
                    if kernel.root.exact {
                        "exact"
                    } else {
                        "rounded"
                    },
                    bad.join(", "),
                    context()
                ));
            }
            pass.checked += 1;
        }
    }
    pass
}

/// Fails with the first failures of `pass`.
fn assert_passed(pass: &Pass) {
    assert!(
        pass.failures.is_empty(),
        "{} failing launch(es); the first:\n\n{}",
        pass.failures.len(),
        pass.failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

fn build_kind() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

#[test]
fn generated_kernels_match_the_evaluator() {
    let start = Instant::now();
    let pass = run_all(false);
    say(&format!(
        "generated kernels: seed {} (rebuild with TESSERA_GEN_SEED={} to replay), {KERNELS} kernels",
        pass.seed, pass.seed
    ));
    say(&format!(
        "generated kernels: {} launches of {KERNELS} kernels checked in {:.1} s ({}), {} failed",
        pass.checked,
        start.elapsed().as_secs_f64(),
        build_kind(),
        pass.failures.len()
    ));
    assert_passed(&pass);
}

#[test]
fn generated_kernels_match_the_evaluator_as_amd_code() {
    let start = Instant::now();
    let pass = with_target(EmulatedTarget::Amdgpu, || run_all(true));
    say(&format!(
        "generated kernels as AMD code (seed {}): {} launches checked in {:.1} s ({}), {} \
         kernels among them with a body planned for AMD, {} kernels NVIDIA-only (a dot without an \
         mfma), {} failed",
        pass.seed,
        pass.checked,
        start.elapsed().as_secs_f64(),
        build_kind(),
        pass.own_amd_bodies,
        pass.nvidia_only,
        pass.failures.len()
    ));
    assert!(pass.checked > 0, "no generated kernel ran as AMD code");
    assert_passed(&pass);
}
