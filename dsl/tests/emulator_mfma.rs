//! AMD `v_mfma` on the emulator (AMD mode): a collective of a wave's 64 threads.
//!
//! The fragments are written out here from the CDNA3 ISA's description (the AMD matrix
//! instruction calculator's tables): lane `l` of a wave holds A's row `l % nd` at K
//! `4·(l / nd) + i`, B's column `l % nd` at the same K, and accumulator register `i` at column
//! `l % nd`, row `8·(i / 4) + 4·(l / 32) + i % 4` (32×32) or `4·(l / 16) + i` (16×16). Results
//! are compared with a plain CPU matmul of the matrices the fragments encode (small integers:
//! exact).

#![allow(clippy::needless_range_loop)]

mod emulator_support;

use emulator_support::{assert_mentions, deadlock_message, run_block, Buffer};
use tessera::device::*;
use tessera::dtype::{bf16, f16};
use tessera::emulator::{run_grid, with_target, EmulatedTarget, EmulatorError};
use tessera::Ptr;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Instr {
    F16x32,
    Bf16x32,
    F16x16,
    Bf16x16,
}

impl Instr {
    fn nd(self) -> usize {
        match self {
            Instr::F16x32 | Instr::Bf16x32 => 32,
            _ => 16,
        }
    }
    fn bf16(self) -> bool {
        matches!(self, Instr::Bf16x32 | Instr::Bf16x16)
    }
}

/// A(wave, row, k), B(wave, k, col), C(wave, row, col): small integers, different per wave.
fn a_value(w: usize, r: usize, k: usize) -> f32 {
    ((r * 3 + k * 5 + w * 7) % 9) as f32 - 4.0
}
fn b_value(w: usize, k: usize, c: usize) -> f32 {
    ((k * 7 + c * 2 + w) % 11) as f32 - 5.0
}
fn c_value(w: usize, r: usize, c: usize) -> f32 {
    ((r * 13 + c * 3 + w * 5) % 17) as f32
}

/// Row of accumulator register `i` of wave lane `l`.
fn acc_row(nd: usize, l: usize, i: usize) -> usize {
    if nd == 32 {
        8 * (i / 4) + 4 * (l / 32) + i % 4
    } else {
        4 * (l / 16) + i
    }
}

/// Two 16-bit values of `instr`'s type in one word.
fn pack(instr: Instr, lo: f32, hi: f32) -> u32 {
    let bits = |x: f32| {
        if instr.bf16() {
            bf16::from_f32(x).to_bits()
        } else {
            f16::from_f32(x).to_bits()
        }
    };
    bits(lo) as u32 | (bits(hi) as u32) << 16
}

/// This thread's `mfma` of `instr` on its wave's matrices; the 16 (or 4) results stored at
/// `out[16 · thread ..]`.
fn issue(instr: Instr, out: Ptr<f32>) {
    let t = linear_thread_id() as usize;
    let (w, l, nd) = (t / 64, t % 64, instr.nd());
    let k0 = 4 * (l / nd);
    let fragment = |value: &dyn Fn(usize) -> f32| {
        [
            pack(instr, value(k0), value(k0 + 1)),
            pack(instr, value(k0 + 2), value(k0 + 3)),
        ]
    };
    let a = fragment(&|k| a_value(w, l % nd, k));
    let b = fragment(&|k| b_value(w, k, l % nd));
    let c16: [f32; 16] = std::array::from_fn(|i| c_value(w, acc_row(nd, l, i % 8), l % nd));
    let c4: [f32; 4] = std::array::from_fn(|i| c_value(w, acc_row(nd, l, i), l % nd));
    let d: Vec<f32> = match instr {
        Instr::F16x32 => mfma_f32_32x32x8_f16(a, b, c16).to_vec(),
        Instr::Bf16x32 => mfma_f32_32x32x8_bf16(a, b, c16).to_vec(),
        Instr::F16x16 => mfma_f32_16x16x16_f16(a, b, c4).to_vec(),
        Instr::Bf16x16 => mfma_f32_16x16x16_bf16(a, b, c4).to_vec(),
    };
    for (i, &x) in d.iter().enumerate() {
        // SAFETY: the output buffer holds 16 words per thread.
        unsafe { st_global_v1(out.offset((16 * t + i) as isize), true, x) };
    }
}

#[test]
fn mfma_gives_each_lane_its_fragment_of_the_product() {
    let threads = 128;
    for instr in [Instr::F16x32, Instr::Bf16x32, Instr::F16x16, Instr::Bf16x16] {
        let mut out = Buffer::zeros(16 * threads);
        let ptr: Ptr<f32> = out.ptr();
        with_target(EmulatedTarget::Amdgpu, || {
            run_grid([1, 1, 1], [threads as u32, 1, 1], 0, &|| issue(instr, ptr))
        })
        .unwrap_or_else(|e| panic!("{instr:?}: {e}"));
        let got = out.to_f32();
        let nd = instr.nd();
        let k_len = 64 / nd * 4;
        for t in 0..threads {
            let (w, l) = (t / 64, t % 64);
            for i in 0..nd * nd / 64 {
                // The 32×32 test's c registers 8..16 repeat rows of 0..8 (`i % 8` above).
                let r = acc_row(nd, l, i);
                let c_row = if nd == 32 { acc_row(nd, l, i % 8) } else { r };
                let col = l % nd;
                let want = c_value(w, c_row, col)
                    + (0..k_len)
                        .map(|k| a_value(w, r, k) * b_value(w, k, col))
                        .sum::<f32>();
                assert_eq!(got[16 * t + i], want, "{instr:?} thread {t} register {i}");
            }
        }
    }
}

#[test]
fn mfma_is_refused_emulating_nvidia_and_outside_whole_waves() {
    // Emulating sm_80: an AMD-only instruction.
    let mut buffer = Buffer::zeros(16 * 64);
    let p: Ptr<f32> = buffer.ptr();
    let e = run_grid([1, 1, 1], [64, 1, 1], 0, &|| issue(Instr::F16x32, p)).unwrap_err();
    assert!(matches!(e, EmulatorError::AmdInstruction { .. }), "{e}");
    assert_mentions(
        &e.to_string(),
        &["v_mfma_f32_32x32x8f16 at ", "an AMD-only instruction"],
    );
    // A block of one warp: half a wave.
    let e = with_target(EmulatedTarget::Amdgpu, || {
        run_grid([1, 1, 1], [32, 1, 1], 0, &|| issue(Instr::F16x16, p))
    })
    .unwrap_err();
    assert_mentions(&e.to_string(), &["wave 0 has 32 of its 64 threads"]);
    // Divergent instructions in one wave.
    let e = with_target(EmulatedTarget::Amdgpu, || {
        run_block(64, 0, |t| {
            issue(
                if t < 32 {
                    Instr::F16x16
                } else {
                    Instr::Bf16x16
                },
                p,
            )
        })
    })
    .unwrap_err();
    assert_mentions(
        &e.to_string(),
        &["every thread of a wave must execute the same mfma"],
    );
    // A thread that never arrives: the wave waits forever.
    let message = deadlock_message(with_target(EmulatedTarget::Amdgpu, || {
        run_block(64, 0, |t| {
            if t != 40 {
                issue(Instr::F16x16, p)
            }
        })
    }));
    assert_mentions(
        &message,
        &[
            "wave 0 (threads 0..64): 63 threads wait in v_mfma_f32_16x16x16f16",
            "threads 40 never arrived",
        ],
    );
}

/// The i8 instructions (gfx942's `v_mfma_i32_32x32x16_i8` and `16x16x32_i8`): lane `l` holds A's
/// row `l % nd` at K `8·(l / nd) + i` (8 bytes, byte `i` of the two words), B's column `l % nd`
/// at the same K; accumulators as the f32 ones, added with i32 wrapping (C near `i32::MAX`).
#[test]
fn i8_mfma_gives_each_lane_its_fragment_of_the_exact_product() {
    let threads = 128;
    let a_i8 = |w: usize, r: usize, k: usize| ((r * 37 + k * 11 + w * 5) % 255) as i32 - 127;
    let b_i8 = |w: usize, k: usize, c: usize| ((k * 23 + c * 13 + w) % 256) as i32 - 128;
    let c_i32 = |w: usize, r: usize, c: usize| i32::MAX - ((r * 7 + c + w) % 5) as i32;
    for nd in [32usize, 16] {
        let mut out = Buffer::zeros(16 * threads);
        let ptr: Ptr<i32> = out.ptr();
        let issue = || {
            let t = linear_thread_id() as usize;
            let (w, l) = (t / 64, t % 64);
            let k0 = 8 * (l / nd);
            let fragment = |value: &dyn Fn(usize) -> i32| {
                let byte = |i: usize| (value(k0 + i) as u8 as u32) << (8 * (i % 4));
                [
                    (0..4).map(byte).fold(0, |x, y| x | y),
                    (4..8).map(byte).fold(0, |x, y| x | y),
                ]
            };
            let a = fragment(&|k| a_i8(w, l % nd, k));
            let b = fragment(&|k| b_i8(w, k, l % nd));
            let d: Vec<i32> = if nd == 32 {
                let c = std::array::from_fn(|i| c_i32(w, acc_row(nd, l, i), l % nd));
                mfma_i32_32x32x16_i8(a, b, c).to_vec()
            } else {
                let c = std::array::from_fn(|i| c_i32(w, acc_row(nd, l, i), l % nd));
                mfma_i32_16x16x32_i8(a, b, c).to_vec()
            };
            for (i, &x) in d.iter().enumerate() {
                // SAFETY: the output buffer holds 16 words per thread.
                unsafe { st_global_v1(ptr.offset((16 * t + i) as isize), true, x) };
            }
        };
        with_target(EmulatedTarget::Amdgpu, || {
            run_grid([1, 1, 1], [threads as u32, 1, 1], 0, &issue)
        })
        .unwrap_or_else(|e| panic!("i8 {nd}: {e}"));
        let got = out.to_i32();
        let k_len = 64 / nd * 8;
        for t in 0..threads {
            let (w, l) = (t / 64, t % 64);
            for i in 0..nd * nd / 64 {
                let (r, col) = (acc_row(nd, l, i), l % nd);
                let want = (0..k_len)
                    .map(|k| a_i8(w, r, k) * b_i8(w, k, col))
                    .fold(c_i32(w, r, col), i32::wrapping_add);
                assert_eq!(
                    got[16 * t + i],
                    want,
                    "i8 {nd}×{nd} thread {t} register {i}"
                );
            }
        }
    }
}
