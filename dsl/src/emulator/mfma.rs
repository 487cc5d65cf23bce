//! AMD `v_mfma` of a wave (64 threads: warps `2w` and `2w + 1`), as the CDNA3 ISA defines its
//! fragments.
//!
//! An `mfma` is a wave collective (`emulator/wave.rs`): the 64 threads rendezvous, every one
//! issuing the same instruction from the same site; the last to arrive computes every thread's
//! result from their payloads (here). Fragments, with `nd` the instruction's M = N (32 or 16),
//! lane `l`, element or register `i` and `kw` elements a lane (4 of 16 bits, 8 of 8 bits, in two
//! words):
//! - first source (`a` of the ISA): row `l % nd`, K `kw·(l / nd) + i`;
//! - second source (`b`): column `l % nd`, K `kw·(l / nd) + i`;
//! - accumulator `c`/`d`: column `l % nd`, row `8·(i / 4) + 4·(l / 32) + i % 4` (32×32, 16
//!   registers) or `4·(l / 16) + i` (16×16, 4 registers).
//!
//! Floats: `D = A·B + C` with exact products summed in f64 and rounded once to f32 (a NaN result
//! is the canonical quiet NaN). i8: exact, wrapped to i32 as the hardware's adders wrap. The i8
//! instructions are gfx942's (gfx90a's pairs compute the same: `device/mfma.rs`).

use std::panic::Location;

use super::cta::with_thread;
use super::wave::WaveOp;
use crate::device::canonicalize_nan_f32;
use crate::{bf16, f16, f8e4m3, f8e5m2};
pub(crate) use tessera_layout::plan::mfma::{MfmaInput, MfmaInstr};

/// The ISA name of `instr` on the emulator's messages.
pub(super) fn name(instr: MfmaInstr) -> &'static str {
    instr.isa_name()
}

/// The value of element `i` (0..k_width) of a fragment's two words.
fn element(input: MfmaInput, words: [u32; 2], i: usize) -> f64 {
    let bits = |width: usize| (words[i * width / 32] >> (i * width % 32)) as u16;
    match input {
        MfmaInput::F16 => f16::from_bits(bits(16)).to_f32() as f64,
        MfmaInput::Bf16 => bf16::from_bits(bits(16)).to_f32() as f64,
        MfmaInput::I8 => bits(8) as u8 as i8 as f64,
        MfmaInput::F8E4m3 => f8e4m3::from_bits(bits(8) as u8).to_f32() as f64,
        MfmaInput::F8E5m2 => f8e5m2::from_bits(bits(8) as u8).to_f32() as f64,
    }
}

/// Every lane's `d` of one instruction from every lane's payload (module docs).
pub(super) fn compute(instr: MfmaInstr, payloads: &[[u32; 20]; 64]) -> [[u32; 16]; 64] {
    let nd = instr.nd as usize;
    let kw = instr.k_width() as usize;
    let k_len = 64 / nd * kw;
    let mut a = vec![vec![0f64; k_len]; nd];
    let mut b = vec![vec![0f64; nd]; k_len];
    for (l, p) in payloads.iter().enumerate() {
        for i in 0..kw {
            a[l % nd][kw * (l / nd) + i] = element(instr.input, [p[0], p[1]], i);
            b[kw * (l / nd) + i][l % nd] = element(instr.input, [p[2], p[3]], i);
        }
    }
    let row = |l: usize, i: usize| {
        if nd == 32 {
            8 * (i / 4) + 4 * (l / 32) + i % 4
        } else {
            4 * (l / 16) + i
        }
    };
    let mut out = [[0u32; 16]; 64];
    for (l, o) in out.iter_mut().enumerate() {
        for (i, o) in o
            .iter_mut()
            .take(instr.acc_registers() as usize)
            .enumerate()
        {
            let (r, c) = (row(l, i), l % nd);
            if instr.input.integer() {
                // |a·b| ≤ 2¹⁴ per term: the f64 sum of ≤ 32 terms is exact.
                let sum: f64 = (0..k_len).map(|k| a[r][k] * b[k][c]).sum();
                *o = (payloads[l][4 + i] as i32).wrapping_add(sum as i32) as u32;
                continue;
            }
            let mut acc = f32::from_bits(payloads[l][4 + i]) as f64;
            for k in 0..k_len {
                acc += a[r][k] * b[k][c];
            }
            *o = canonicalize_nan_f32(acc as f32).to_bits();
        }
    }
    out
}

/// `v_mfma` of this thread's wave: `a`, `b` this lane's source fragments (4 elements in 2 words
/// each), `c` its accumulator registers; returns its `d`.
#[track_caller]
pub(crate) fn mfma<const N: usize>(
    instr: MfmaInstr,
    a: [u32; 2],
    b: [u32; 2],
    c: [u32; N],
) -> [u32; N] {
    super::target::amd_instruction(name(instr));
    let site = Location::caller();
    let mut payload = [0u32; 20];
    payload[..2].copy_from_slice(&a);
    payload[2..4].copy_from_slice(&b);
    payload[4..4 + N].copy_from_slice(&c);
    let d = with_thread(|t| t.cta.wave_collective(t, WaveOp::Mfma(instr), payload, site));
    core::array::from_fn(|i| d[i])
}
