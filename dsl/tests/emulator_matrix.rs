//! `ldmatrix`, `stmatrix` and `mma.sync` on the emulator.
//!
//! The expected fragments are written out here from the PTX ISA tables ("Matrix Fragments for
//! mma.m16n8k16 with floating point type", "... for mma.m16n8k32", and the `ldmatrix` figure:
//! lane `l` holds row `l / 4`, columns `2 (l % 4)`, `2 (l % 4) + 1`). MMA results are compared
//! with a plain CPU matmul of the matrices the fragments encode, and the `ldmatrix` → `mma`
//! combination that real kernels use (A via `x4`, B via `x2.trans` of row-major B or `x2` of
//! Bᵀ) is checked end to end.

// Lane, matrix and element indices index several arrays at once; plain ranges read best.
#![allow(clippy::needless_range_loop)]

mod emulator_support;

use emulator_support::{run_warp_with_output, Buffer, Rng};
use tessera::device::*;
use tessera::dtype::{bf16, f16, pack_bf16x2, pack_f16x2, pack_s8x4};
use tessera::emulator::{run_grid, EmulatorError};
use tessera::Ptr;

/// Test value of element (r, c) of matrix m.
fn value(m: usize, r: usize, c: usize) -> u16 {
    (m * 1000 + r * 10 + c) as u16
}

/// Byte offset of row r of matrix m inside the shared buffer: rows scattered (not contiguous)
/// but 16-byte aligned, as ldmatrix allows.
fn row_offset(m: usize, r: usize) -> u32 {
    (((r * 5 + 3) % 8) * 4 + m) as u32 * 16 + 512
}

/// Runs ldmatrix of `num` matrices (`trans` or not) and returns every lane's registers.
/// `ldmatrix` of `num` 8×8 matrices (`.trans` if `trans`) at `addr`, the registers past `num`
/// zero; unsafe as the `ldmatrix_*` it calls.
unsafe fn ldmatrix(num: usize, trans: bool, addr: u32) -> [u32; 4] {
    match (num, trans) {
        (1, false) => [ldmatrix_x1(addr)[0], 0, 0, 0],
        (2, false) => {
            let r = ldmatrix_x2(addr);
            [r[0], r[1], 0, 0]
        }
        (4, false) => ldmatrix_x4(addr),
        (1, true) => [ldmatrix_x1_trans(addr)[0], 0, 0, 0],
        (2, true) => {
            let r = ldmatrix_x2_trans(addr);
            [r[0], r[1], 0, 0]
        }
        _ => ldmatrix_x4_trans(addr),
    }
}

fn run_ldmatrix(num: usize, trans: bool) -> Vec<[u32; 4]> {
    let out = run_warp_with_output(2048, 32 * 4, |out_ptr: Ptr<u32>| unsafe {
        let lane = lane_id() as usize;
        let base = dynamic_shared_base();
        // Lanes 0..8 fill the shared buffer (each its row of each matrix).
        if lane < 8 {
            for m in 0..4 {
                for c in (0..8).step_by(2) {
                    let pair = value(m, lane, c) as u32 | (value(m, lane, c + 1) as u32) << 16;
                    st_shared_v1(base + row_offset(m, lane) + 2 * c as u32, pair);
                }
            }
        }
        sync_threads();
        // Lanes that supply no row address pass an invalid one: it must be ignored.
        let addr = if lane < 8 * num {
            base + row_offset(lane / 8, lane % 8)
        } else {
            0xffff_fff0
        };
        let regs = ldmatrix(num, trans, addr);
        st_global_v4(out_ptr.offset(4 * lane as isize), true, regs);
    });
    out.to_u32()
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect()
}

#[test]
fn ldmatrix_fragments_follow_the_ptx_layout() {
    for trans in [false, true] {
        for num in [1, 2, 4] {
            let got = run_ldmatrix(num, trans);
            for lane in 0..32 {
                let (g, t) = (lane / 4, lane % 4);
                for m in 0..num {
                    let (lo, hi) = if trans {
                        (value(m, 2 * t, g), value(m, 2 * t + 1, g))
                    } else {
                        (value(m, g, 2 * t), value(m, g, 2 * t + 1))
                    };
                    assert_eq!(
                        got[lane][m],
                        lo as u32 | (hi as u32) << 16,
                        "x{num} trans={trans} lane {lane} matrix {m}"
                    );
                }
            }
        }
    }
}

#[test]
fn stmatrix_is_the_inverse_of_ldmatrix() {
    for trans in [false, true] {
        for num in [1usize, 2, 4] {
            let mut out = Buffer::zeros(32 * 4);
            let out_ptr: Ptr<u32> = out.ptr();
            let mut mem = Buffer::zeros(4 * 64);
            let mem_ptr: Ptr<u32> = mem.ptr();
            run_grid([1, 1, 1], [32, 1, 1], 2048, &|| unsafe {
                let lane = lane_id() as usize;
                let (g, t) = (lane / 4, lane % 4);
                let base = dynamic_shared_base();
                let mut regs = [0u32; 4];
                for (m, reg) in regs.iter_mut().enumerate().take(num) {
                    let (lo, hi) = if trans {
                        (value(m, 2 * t, g), value(m, 2 * t + 1, g))
                    } else {
                        (value(m, g, 2 * t), value(m, g, 2 * t + 1))
                    };
                    *reg = lo as u32 | (hi as u32) << 16;
                }
                let addr = if lane < 8 * num {
                    base + row_offset(lane / 8, lane % 8)
                } else {
                    0xffff_fff0
                };
                match (num, trans) {
                    (1, false) => stmatrix_x1(addr, [regs[0]]),
                    (2, false) => stmatrix_x2(addr, [regs[0], regs[1]]),
                    (4, false) => stmatrix_x4(addr, regs),
                    (1, true) => stmatrix_x1_trans(addr, [regs[0]]),
                    (2, true) => stmatrix_x2_trans(addr, [regs[0], regs[1]]),
                    _ => stmatrix_x4_trans(addr, regs),
                }
                sync_threads();
                // Read the stored matrices back element-wise: lane l < 8 reads row l.
                if lane < 8 {
                    for m in 0..num {
                        let row: [u32; 4] = ld_shared_v4(base + row_offset(m, lane));
                        st_global_v4(mem_ptr.offset((64 * m + 4 * lane) as isize), true, row);
                    }
                }
                // And load them again with ldmatrix: same registers as stored.
                let again = ldmatrix(num, trans, addr);
                let ok = (0..num).all(|m| again[m] == regs[m]) as u32;
                st_global_v1(out_ptr.offset(lane as isize), true, ok);
            })
            .unwrap();
            let ok = out.to_u32();
            assert!(
                ok[..32].iter().all(|&o| o == 1),
                "x{num} trans={trans}: {ok:?}"
            );
            let mem = mem.to_u32();
            for m in 0..num {
                for r in 0..8 {
                    for c in 0..8 {
                        let word = mem[64 * m + 4 * r + c / 2];
                        let half = (word >> (16 * (c % 2))) as u16;
                        assert_eq!(half, value(m, r, c), "x{num} trans={trans} m{m} ({r},{c})");
                    }
                }
            }
        }
    }
}

#[test]
fn ldmatrix_out_of_bounds_names_the_lane_that_gave_the_address() {
    let err = run_grid([1, 1, 1], [32, 1, 1], 256, &|| unsafe {
        let lane = lane_id();
        let addr = dynamic_shared_base() + if lane == 6 { 4096 } else { 16 * (lane % 16) };
        ldmatrix_x2(addr);
    })
    .unwrap_err();
    match err {
        EmulatorError::SharedOutOfBounds {
            thread,
            address,
            op,
            ..
        } => {
            assert_eq!(thread.thread, [6, 0, 0]);
            assert_eq!(address, 0x400 + 4096);
            assert!(op.starts_with("ldmatrix"));
        }
        other => panic!("expected out of bounds, got {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// mma
// ---------------------------------------------------------------------------------------------

/// Fragment coordinates written out from the PTX ISA tables (g = lane / 4, t = lane % 4).
fn a16816(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if matches!(i, 0 | 1 | 4 | 5) { g } else { g + 8 };
    let col = t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 };
    (row, col)
}
fn b16816(g: usize, t: usize, i: usize) -> (usize, usize) {
    (t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 }, g)
}
fn c16816(g: usize, t: usize, i: usize) -> (usize, usize) {
    (g + if i >= 2 { 8 } else { 0 }, t * 2 + (i & 1))
}
fn a16832(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if i < 4 || (8..12).contains(&i) {
        g
    } else {
        g + 8
    };
    (row, t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 })
}
fn b16832(g: usize, t: usize, i: usize) -> (usize, usize) {
    (t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 }, g)
}

#[derive(Clone, Copy, PartialEq)]
enum FloatKind {
    F16,
    Bf16,
}

fn to_bits(kind: FloatKind, x: f32) -> u16 {
    match kind {
        FloatKind::F16 => f16::from_f32(x).to_bits(),
        FloatKind::Bf16 => bf16::from_f32(x).to_bits(),
    }
}

fn pack2(kind: FloatKind, lo: f32, hi: f32) -> u32 {
    match kind {
        FloatKind::F16 => pack_f16x2(f16::from_f32(lo), f16::from_f32(hi)),
        FloatKind::Bf16 => pack_bf16x2(bf16::from_f32(lo), bf16::from_f32(hi)),
    }
}

/// Runs the float mma with fragments built from the formulas; returns D (16×8).
/// Runs one warp in which lane `l` reads its mma fragments from words `10 l..10 l + 10` of
/// `frags` (`a`: 4 words, `b`: 2, `c`: 4) and stores the 4 words of `mma(a, b, c)` at `4 l`;
/// gives the 128 stored words.
fn run_mma_fragments(
    frags: &[u32],
    mma: impl Fn([u32; 4], [u32; 2], [u32; 4]) -> [u32; 4] + Sync,
) -> Vec<u32> {
    let mut input = Buffer::from_u32(frags);
    let in_ptr: Ptr<u32> = input.ptr();
    let out = run_warp_with_output(0, 32 * 4, |out_ptr: Ptr<u32>| unsafe {
        let lane = lane_id() as isize;
        let p = in_ptr.offset(10 * lane);
        let word = |k: isize| ld_global_v1(p.offset(k), true, 0u32);
        let d = mma(
            [0, 1, 2, 3].map(word),
            [4, 5].map(word),
            [6, 7, 8, 9].map(word),
        );
        st_global_v4(out_ptr.offset(4 * lane), true, d);
    });
    out.to_u32()
}

fn mma_float_from_fragments(
    kind: FloatKind,
    a: &[[f32; 16]; 16],
    b: &[[f32; 8]; 16],
    c: &[[f32; 8]; 16],
) -> [[f32; 8]; 16] {
    let mut frags = Vec::new();
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        let mut fa = [0u32; 4];
        for (r, reg) in fa.iter_mut().enumerate() {
            let (r0, c0) = a16816(g, t, 2 * r);
            let (r1, c1) = a16816(g, t, 2 * r + 1);
            *reg = pack2(kind, a[r0][c0], a[r1][c1]);
        }
        let mut fb = [0u32; 2];
        for (r, reg) in fb.iter_mut().enumerate() {
            let (k0, n0) = b16816(g, t, 2 * r);
            let (k1, n1) = b16816(g, t, 2 * r + 1);
            *reg = pack2(kind, b[k0][n0], b[k1][n1]);
        }
        let mut fc = [0u32; 4];
        for (i, reg) in fc.iter_mut().enumerate() {
            let (r, n) = c16816(g, t, i);
            *reg = c[r][n].to_bits();
        }
        frags.extend_from_slice(&fa);
        frags.extend_from_slice(&fb);
        frags.extend_from_slice(&fc);
    }
    let d_frag: Vec<f32> = run_mma_fragments(&frags, |a, b, c| {
        let c = c.map(f32::from_bits);
        let d = match kind {
            FloatKind::F16 => mma_m16n8k16_f16_f32(a, b, c),
            FloatKind::Bf16 => mma_m16n8k16_bf16_f32(a, b, c),
        };
        d.map(f32::to_bits)
    })
    .into_iter()
    .map(f32::from_bits)
    .collect();
    let mut d = [[f32::NAN; 8]; 16];
    for lane in 0..32 {
        for i in 0..4 {
            let (r, n) = c16816(lane / 4, lane % 4, i);
            d[r][n] = d_frag[4 * lane + i];
        }
    }
    d
}

fn cpu_matmul(
    a: &[[f32; 16]; 16],
    b: &[[f32; 8]; 16],
    c: &[[f32; 8]; 16],
    round: impl Fn(f32) -> f32,
) -> [[f64; 8]; 16] {
    let mut d = [[0f64; 8]; 16];
    for r in 0..16 {
        for n in 0..8 {
            let mut acc = c[r][n] as f64;
            for k in 0..16 {
                acc += round(a[r][k]) as f64 * round(b[k][n]) as f64;
            }
            d[r][n] = acc;
        }
    }
    d
}

fn check_float_mma(kind: FloatKind, exact_inputs: bool, seed: u64) {
    let mut rng = Rng(seed);
    let gen = |rng: &mut Rng| -> f32 {
        if exact_inputs {
            // Multiples of 1/8 in [-4, 4): products and sums are exact in f32.
            ((rng.next_u32() % 64) as f32 - 32.0) / 8.0
        } else {
            rng.next_f32() * 3.0
        }
    };
    let mut a = [[0f32; 16]; 16];
    let mut b = [[0f32; 8]; 16];
    let mut c = [[0f32; 8]; 16];
    a.iter_mut().flatten().for_each(|x| *x = gen(&mut rng));
    b.iter_mut().flatten().for_each(|x| *x = gen(&mut rng));
    c.iter_mut().flatten().for_each(|x| *x = gen(&mut rng));
    let round = |x: f32| match kind {
        FloatKind::F16 => f16::from_f32(x).to_f32(),
        FloatKind::Bf16 => bf16::from_f32(x).to_f32(),
    };
    let got = mma_float_from_fragments(kind, &a, &b, &c);
    let want = cpu_matmul(&a, &b, &c, round);
    for r in 0..16 {
        for n in 0..8 {
            let (g, w) = (got[r][n] as f64, want[r][n]);
            if exact_inputs {
                assert_eq!(g, w, "({r},{n})");
            } else {
                assert!(
                    (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                    "({r},{n}): {g} vs {w}"
                );
            }
        }
    }
}

#[test]
fn mma_f16_matches_cpu_matmul_of_the_fragments() {
    check_float_mma(FloatKind::F16, true, 1);
    check_float_mma(FloatKind::F16, false, 2);
}

#[test]
fn mma_bf16_matches_cpu_matmul_of_the_fragments() {
    check_float_mma(FloatKind::Bf16, true, 3);
    check_float_mma(FloatKind::Bf16, false, 4);
}

#[test]
fn mma_s8_matches_cpu_matmul_of_the_fragments() {
    let mut rng = Rng(5);
    let mut a = [[0i8; 32]; 16];
    let mut b = [[0i8; 8]; 32];
    let mut c = [[0i32; 8]; 16];
    a.iter_mut()
        .flatten()
        .for_each(|x| *x = rng.next_u32() as i8);
    b.iter_mut()
        .flatten()
        .for_each(|x| *x = rng.next_u32() as i8);
    c.iter_mut()
        .flatten()
        .for_each(|x| *x = (rng.next_u32() % 100_000) as i32 - 50_000);
    let mut frags = Vec::new();
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for reg in 0..4 {
            let v = [0, 1, 2, 3].map(|j| {
                let (r, k) = a16832(g, t, 4 * reg + j);
                a[r][k]
            });
            frags.push(pack_s8x4(v));
        }
        for reg in 0..2 {
            let v = [0, 1, 2, 3].map(|j| {
                let (k, n) = b16832(g, t, 4 * reg + j);
                b[k][n]
            });
            frags.push(pack_s8x4(v));
        }
        for i in 0..4 {
            let (r, n) = c16816(g, t, i);
            frags.push(c[r][n] as u32);
        }
    }
    let d: Vec<i32> = run_mma_fragments(&frags, |a, b, c| {
        mma_m16n8k32_s8_s32(a, b, c.map(|w| w as i32)).map(|v| v as u32)
    })
    .into_iter()
    .map(|w| w as i32)
    .collect();
    for lane in 0..32 {
        for i in 0..4 {
            let (r, n) = c16816(lane / 4, lane % 4, i);
            let want: i32 = c[r][n]
                + (0..32)
                    .map(|k| a[r][k] as i32 * b[k][n] as i32)
                    .sum::<i32>();
            assert_eq!(d[4 * lane + i], want, "lane {lane} c{i} = ({r},{n})");
        }
    }
}

/// A and B in shared memory, fragments loaded with ldmatrix as real kernels do.
#[test]
fn ldmatrix_feeds_mma_end_to_end() {
    let mut rng = Rng(9);
    let a: Vec<f32> = (0..256)
        .map(|_| ((rng.next_u32() % 32) as f32 - 16.0) / 4.0)
        .collect();
    let b: Vec<f32> = (0..128)
        .map(|_| ((rng.next_u32() % 32) as f32 - 16.0) / 4.0)
        .collect();
    // A row-major 16x16; B row-major 16x8 (k, n); Bt row-major 8x16 (n, k).
    let mut halves: Vec<u16> = a.iter().map(|&x| to_bits(FloatKind::F16, x)).collect();
    halves.extend(b.iter().map(|&x| to_bits(FloatKind::F16, x)));
    for n in 0..8 {
        for k in 0..16 {
            halves.push(to_bits(FloatKind::F16, b[k * 8 + n]));
        }
    }
    let words: Vec<u32> = halves
        .chunks(2)
        .map(|p| p[0] as u32 | (p[1] as u32) << 16)
        .collect();
    let mut input = Buffer::from_u32(&words); // 256 words: A 128, B 64, Bt 64
    let in_ptr: Ptr<u32> = input.ptr();
    let out = run_warp_with_output(1024, 2 * 128, |out_ptr: Ptr<f32>| unsafe {
        let lane = lane_id();
        let base = dynamic_shared_base();
        // Stage all 1024 bytes into shared memory with cp.async (16 bytes per lane, 2 rounds).
        for round in 0..2u32 {
            let chunk = round * 32 + lane;
            cp_async_cg(base + 16 * chunk, in_ptr.offset(4 * chunk as isize));
        }
        cp_async_wait_all();
        sync_threads();
        let a_base = base;
        let b_base = base + 512;
        let bt_base = base + 768;
        let a_frag = ldmatrix_x4(a_base + (lane % 16) * 32 + (lane / 16) * 16);
        let b_frag = ldmatrix_x2_trans(b_base + (lane % 16) * 16);
        let bt_frag = ldmatrix_x2(bt_base + (lane % 8) * 32 + ((lane / 8) % 2) * 16);
        let d1 = mma_m16n8k16_f16_f32(a_frag, b_frag, [0.0; 4]);
        let d2 = mma_m16n8k16_f16_f32(a_frag, bt_frag, [0.0; 4]);
        for (k, d) in [d1, d2].iter().enumerate() {
            for i in 0..4u32 {
                let (g, t) = (lane / 4, lane % 4);
                let r = g + if i >= 2 { 8 } else { 0 };
                let n = 2 * t + (i & 1);
                st_global_v1(
                    out_ptr.offset((128 * k as u32 + r * 8 + n) as isize),
                    true,
                    d[i as usize],
                );
            }
        }
    });
    let got = out.to_f32();
    for r in 0..16 {
        for n in 0..8 {
            let want: f32 = (0..16).map(|k| a[r * 16 + k] * b[k * 8 + n]).sum();
            assert_eq!(got[r * 8 + n], want, "ldmatrix.trans path ({r},{n})");
            assert_eq!(got[128 + r * 8 + n], want, "ldmatrix of Bt path ({r},{n})");
        }
    }
}

#[test]
fn mma_in_a_partial_warp_is_an_error() {
    let err = run_grid([1, 1, 1], [16, 1, 1], 0, &|| {
        mma_m16n8k16_f16_f32([0; 4], [0; 2], [0.0; 4]);
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("mma.sync.aligned.m16n8k16"),
        "{err}"
    );
}
