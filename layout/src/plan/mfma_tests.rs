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

/// The instruction as the CDNA3 ISA defines it, independently of the layout families: element
/// `i` of lane `l`'s first source is `(row l % nd, k (64 / nd)·… )`, i.e. `k = 4·(l / nd) + i`;
/// the second source's is `(k, col l % nd)`; accumulator register `v` of lane `l` is
/// `(row, col l % nd)` with row `8·(v / 4) + 4·(l / 32) + v % 4` (32×32) or `4·(l / 16) + v`
/// (16×16). `src0[l][i]`, `src1[l][i]`, `c[l][v]` per lane; returns `d[l][v]`.
fn isa_mfma(nd: usize, src0: &[[i64; 4]], src1: &[[i64; 4]], c: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let k_len = 64 / nd * 4;
    let mut s0 = vec![vec![0i64; k_len]; nd];
    let mut s1 = vec![vec![0i64; nd]; k_len];
    for l in 0..64 {
        for i in 0..4 {
            s0[l % nd][4 * (l / nd) + i] = src0[l][i];
            s1[4 * (l / nd) + i][l % nd] = src1[l][i];
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
            let src0: Vec<[i64; 4]> = (0..64)
                .map(|l| s.src0.map(|r| b[t0 + l][r as usize]))
                .collect();
            let src1: Vec<[i64; 4]> = (0..64)
                .map(|l| s.src1.map(|r| a[t0 + l][r as usize]))
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
    for instr in [F16_32, F16_16] {
        let nd = instr.nd;
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

/// Law: the relabelling is the same map: the wave layout at (register, wave lane, wave) equals
/// the warp layout at (register, lane mod 32, 2·wave + lane / 32).
#[test]
fn wave_as_warps_keeps_every_element_in_place() {
    let shape = [32, 32, 8];
    let waves = [2, 2];
    let family = AmdMfma::new(3, &shape, true, &waves);
    for wave_layout in [
        family.to_linear_layout(&[128, 64]).unwrap(),
        family.dot_operand(0, 4, &[128, 32]).unwrap(),
        family.dot_operand(1, 4, &[32, 64]).unwrap(),
    ] {
        let warps = wave_as_warps(&wave_layout).unwrap();
        assert_eq!(warps.in_size(Label::Lane), 32);
        assert_eq!(
            warps.in_size(Label::Warp),
            2 * wave_layout.in_size(Label::Warp)
        );
        for r in 0..wave_layout.in_size(Label::Register) {
            for lane in 0..64 {
                for wave in 0..wave_layout.in_size(Label::Warp) {
                    let at = |l: &LinearLayout, lane: u32, warp: u32| {
                        l.apply(&[
                            (Label::Register, r),
                            (Label::Lane, lane),
                            (Label::Warp, warp),
                        ])
                        .unwrap()
                    };
                    assert_eq!(
                        at(&wave_layout, lane, wave),
                        at(&warps, lane % 32, 2 * wave + lane / 32)
                    );
                }
            }
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
}
