use super::*;
use std::string::ToString;
use std::vec;

const F16_32: MfmaInstr = MfmaInstr {
    input: MfmaInput::F16,
    nd: 32,
};
const F16_16: MfmaInstr = MfmaInstr {
    input: MfmaInput::F16,
    nd: 16,
};
const I8_32: MfmaInstr = MfmaInstr {
    input: MfmaInput::I8,
    nd: 32,
};
const I8_16: MfmaInstr = MfmaInstr {
    input: MfmaInput::I8,
    nd: 16,
};

/// The instruction as the CDNA3 ISA defines it, independently of the layout families: element
/// `i` of lane `l`'s first source (`kw` elements: 4 for 16-bit operands, 8 for i8) is
/// `(row l % nd, k kw·(l / nd) + i)`; the second source's is `(k, col l % nd)`; accumulator
/// register `v` of lane `l` is `(row, col l % nd)` with row `8·(v / 4) + 4·(l / 32) + v % 4`
/// (32×32) or `4·(l / 16) + v` (16×16). `src0[l][i]`, `src1[l][i]`, `c[l][v]` per lane;
/// returns `d[l][v]`.
fn isa_mfma(nd: usize, src0: &[Vec<i64>], src1: &[Vec<i64>], c: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let kw = src0[0].len();
    let k_len = 64 / nd * kw;
    let mut s0 = vec![vec![0i64; k_len]; nd];
    let mut s1 = vec![vec![0i64; nd]; k_len];
    for l in 0..64 {
        for i in 0..kw {
            s0[l % nd][kw * (l / nd) + i] = src0[l][i];
            s1[kw * (l / nd) + i][l % nd] = src1[l][i];
        }
    }
    let row = |l: usize, v: usize| {
        if nd == 32 {
            8 * (v / 4) + 4 * (l / 32) + v % 4
        } else {
            4 * (l / 16) + v
        }
    };
    (0..64)
        .map(|l| {
            (0..c[l].len())
                .map(|v| {
                    let (r, col) = (row(l, v), l % nd);
                    c[l][v] + (0..k_len).map(|k| s0[r][k] * s1[k][col]).sum::<i64>()
                })
                .collect()
        })
        .collect()
}

/// The register file of `layout` holding matrix `value(row, col)`: `[thread][register]`, thread
/// `warp · 32 + lane`.
fn registers(layout: &LinearLayout, value: impl Fn(u32, u32) -> i64) -> Vec<Vec<i64>> {
    let threads = 32 * layout.in_size(Label::Warp);
    (0..threads)
        .map(|t| {
            (0..layout.in_size(Label::Register))
                .map(|r| {
                    let at = layout
                        .apply(&[
                            (Label::Register, r),
                            (Label::Lane, t % 32),
                            (Label::Warp, t / 32),
                        ])
                        .unwrap();
                    value(at[0], at[1])
                })
                .collect()
        })
        .collect()
}

/// Runs `plan` wave by wave with [`isa_mfma`]: the accumulator registers after the dot.
fn run(plan: &MfmaPlan, a: &[Vec<i64>], b: &[Vec<i64>], acc: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let mut out = acc.to_vec();
    let nd = plan.instr.nd as usize;
    for wave in 0..out.len() / 64 {
        let t0 = 64 * wave;
        for s in &plan.steps {
            let src0: Vec<Vec<i64>> = (0..64)
                .map(|l| s.src0.iter().map(|&r| b[t0 + l][r as usize]).collect())
                .collect();
            let src1: Vec<Vec<i64>> = (0..64)
                .map(|l| s.src1.iter().map(|&r| a[t0 + l][r as usize]).collect())
                .collect();
            let c: Vec<Vec<i64>> = (0..64)
                .map(|l| s.c.iter().map(|&r| out[t0 + l][r as usize]).collect())
                .collect();
            let d = isa_mfma(nd, &src0, &src1, &c);
            for l in 0..64 {
                for (v, &r) in s.c.iter().enumerate() {
                    out[t0 + l][r as usize] = d[l][v];
                }
            }
        }
        for regs in &mut out[t0..t0 + 64] {
            for &(dst, src) in &plan.duplicates {
                regs[dst as usize] = regs[src as usize];
            }
        }
    }
    out
}

/// Law: for every instruction, wave tiling and shape, running the plan by the ISA's definition
/// of the instruction leaves `acc + a·b` in the accumulator's registers, every register of
/// every thread (the layouts from [`mfma_layouts`]).
#[test]
fn planned_mfmas_compute_the_product_in_every_register() {
    let av = |m: u32, k: u32| (m as i64 * 7 + k as i64 * 3) % 11 - 5;
    let bv = |k: u32, n: u32| (k as i64 * 5 + n as i64 * 2) % 13 - 6;
    let cv = |m: u32, n: u32| (m as i64 * 31 + n as i64) % 17;
    for instr in [F16_32, F16_16, I8_32, I8_16] {
        let nd = instr.nd;
        assert_eq!(instr.k(), 64 / nd * instr.k_width());
        for waves in [[1, 1], [2, 1], [1, 2], [2, 2], [4, 1]] {
            for (mt, nt, kt) in [(1, 1, 1), (2, 1, 2), (1, 2, 4), (2, 2, 1)] {
                let (m, n, k) = (nd * waves[0] * mt, nd * waves[1] * nt, instr.k() * kt);
                let [la, lb, lc] = mfma_layouts(instr, waves, [m, n, k]).unwrap();
                assert_eq!(mfma_instr_of(instr.input, &lc), Some(instr));
                let plan = plan_mfma_dot(instr, &la, &lb, &lc).unwrap();
                assert_eq!(plan.steps.len() as u32, mt * nt * kt);
                let out = run(
                    &plan,
                    &registers(&la, av),
                    &registers(&lb, bv),
                    &registers(&lc, cv),
                );
                let want = registers(&lc, |r, c| {
                    cv(r, c) + (0..k).map(|kk| av(r, kk) * bv(kk, c)).sum::<i64>()
                });
                assert_eq!(out, want, "{instr} waves {waves:?} [{m}, {n}, {k}]");
            }
        }
    }
}

/// Law: gfx90a's pair of K = 4 instructions (bytes 0..4 of each lane's 8, then 4..8) computes
/// what gfx942's one i8 instruction does, for every planned step of an i8 dot.
#[test]
fn gfx90a_instruction_pairs_compute_the_i8_product() {
    for instr in [I8_32, I8_16] {
        let nd = instr.nd as usize;
        let (m, n, k) = (2 * instr.nd, instr.nd, 2 * instr.k());
        let [la, lb, lc] = mfma_layouts(instr, [1, 1], [m, n, k]).unwrap();
        let plan = plan_mfma_dot(instr, &la, &lb, &lc).unwrap();
        let a = registers(&la, |r, c| (r as i64 * 7 + c as i64 * 3) % 255 - 127);
        let b = registers(&lb, |r, c| (r as i64 * 5 + c as i64 * 11) % 255 - 128);
        for s in &plan.steps {
            let frag = |x: &[Vec<i64>], regs: &[u32], half: std::ops::Range<usize>| {
                (0..64)
                    .map(|l| {
                        regs[half.clone()]
                            .iter()
                            .map(|&r| x[l][r as usize])
                            .collect()
                    })
                    .collect::<Vec<Vec<i64>>>()
            };
            let zero = vec![vec![0i64; instr.acc_registers() as usize]; 64];
            let whole = isa_mfma(
                nd,
                &frag(&b, &s.src0, 0..8),
                &frag(&a, &s.src1, 0..8),
                &zero,
            );
            let low = isa_mfma(
                nd,
                &frag(&b, &s.src0, 0..4),
                &frag(&a, &s.src1, 0..4),
                &zero,
            );
            let pair = isa_mfma(nd, &frag(&b, &s.src0, 4..8), &frag(&a, &s.src1, 4..8), &low);
            assert_eq!(pair, whole, "{instr}");
        }
    }
}

#[test]
fn operands_in_other_layouts_are_refused_naming_the_basis() {
    let [la, lb, lc] = mfma_layouts(F16_32, [1, 1], [32, 32, 16]).unwrap();
    // The 16×16 instruction's accumulator for a 32×32 dot: lanes differ.
    let [_, other_b, other] = mfma_layouts(F16_16, [2, 1], [32, 32, 16]).unwrap();
    let e = plan_mfma_dot(F16_32, &la, &lb, &other)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lane bit") && e.contains("the accumulator"),
        "{e}"
    );
    // b of the 16×16 instruction: lane bit 4 runs along K.
    let e = plan_mfma_dot(F16_32, &la, &other_b, &lc)
        .unwrap_err()
        .to_string();
    assert!(e.contains("of b"), "{e}");
    assert!(plan_mfma_dot(F16_32, &la, &lb, &lc).is_ok());
    // i8 operands hold 8 K per lane: f16's operands (4) leave the instruction's third register
    // basis in no register of `a`.
    let [i8a, i8b, i8c] = mfma_layouts(I8_32, [1, 1], [32, 32, 32]).unwrap();
    assert!(plan_mfma_dot(I8_32, &i8a, &i8b, &i8c).is_ok());
    let e = plan_mfma_dot(I8_32, &la, &i8b, &i8c)
        .unwrap_err()
        .to_string();
    assert!(e.contains("of a"), "{e}");
}

/// The i8 instructions are gfx942's (K 16 and 32) and name gfx90a's pair; the f8 ones are
/// gfx950's (K 16 and 32) and name the f16 pair of gfx942 and gfx90a.
#[test]
fn instruction_names_and_depths() {
    assert_eq!((I8_32.k(), I8_16.k()), (16, 32));
    assert_eq!(
        I8_32.to_string(),
        "v_mfma_i32_32x32x16_i8 (gfx90a: 2 × v_mfma_i32_32x32x8i8)"
    );
    assert_eq!(I8_16.isa_name_halves(), "v_mfma_i32_16x16x16i8");
    let f8 = MfmaInstr {
        input: MfmaInput::F8E5m2,
        nd: 16,
    };
    assert_eq!((f8.k(), f8.isa_name()), (32, "v_mfma_f32_16x16x32_bf8_bf8"));
    assert_eq!(
        f8.to_string(),
        "v_mfma_f32_16x16x32_bf8_bf8 (gfx950; gfx942, gfx90a: 2 × v_mfma_f32_16x16x16f16 on \
         f8e5m2 widened to f16)"
    );
    let e4m3 = MfmaInstr {
        input: MfmaInput::F8E4m3,
        nd: 32,
    };
    assert_eq!((e4m3.k(), e4m3.k_width()), (16, 8));
    assert_eq!(e4m3.isa_name(), "v_mfma_f32_32x32x16_fp8_fp8");
    assert_eq!(F16_32.to_string(), "v_mfma_f32_32x32x8f16");
}
