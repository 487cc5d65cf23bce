//! Lemma 9.4 against a brute-force bank simulator, on thousands of seeded random pairs, and the
//! seeds' 16×32 fp32 transpose.

mod common;
#[path = "common/plan_gen.rs"]
mod plan_gen;

use common::Rng;
use plan_gen::*;
use std::collections::{BTreeMap, BTreeSet};
use tessera_layout::plan::bank::{bank_wavefronts, BankAccess};
use tessera_layout::plan::nonzero_bases;
use tessera_layout::{Label, LinearLayout};

/// Wavefronts by simulation: 32 banks × 4 bytes; every access instruction of every warp, split
/// into its phases (a 64-bit access serves 16 lanes at a time, a 128-bit one 8); per phase the
/// number of distinct 4-byte words touched in the busiest bank. Also checks that each vector of
/// the plan really is contiguous and aligned in memory. Returns (min, max) over all phases.
fn simulate(
    memory: &LinearLayout,
    distributed: &LinearLayout,
    bits: u32,
    access: &BankAccess,
) -> (u32, u32) {
    let inverse = memory_inverse(memory);
    let vec_regs = &access.vector.registers;
    let vec = access.vector.elements;
    let others: Vec<u32> = nonzero_bases(distributed, Label::Register)
        .iter()
        .map(|&(k, _)| k)
        .filter(|k| !vec_regs.contains(k))
        .collect();
    let lane_bits = distributed.in_bits(Label::Lane);
    let warps = distributed.in_size(Label::Warp);
    let phase_bits = access.phases.trailing_zeros();
    let lanes_per_phase = 1u32 << lane_bits.saturating_sub(phase_bits);
    let (mut lo, mut hi) = (u32::MAX, 0);
    for chunk in 0..(1u32 << others.len()) {
        let base_reg: u32 = others
            .iter()
            .enumerate()
            .filter(|(i, _)| chunk >> i & 1 == 1)
            .map(|(_, &k)| 1 << k)
            .sum();
        for warp in 0..warps {
            for phase in 0..access.phases.min(1 << lane_bits) {
                let mut words: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
                for low in 0..lanes_per_phase {
                    let lane = low | (phase << (lane_bits - phase_bits.min(lane_bits)));
                    let offsets: Vec<u64> = (0..vec)
                        .map(|j| {
                            let reg = vec_regs
                                .iter()
                                .enumerate()
                                .filter(|(i, _)| j >> i & 1 == 1)
                                .fold(base_reg, |r, (_, &k)| r | 1 << k);
                            let element = image(
                                distributed,
                                &[
                                    (Label::Register, reg),
                                    (Label::Lane, lane),
                                    (Label::Warp, warp),
                                ],
                            );
                            inverse[element as usize]
                        })
                        .collect();
                    assert_eq!(offsets[0] % vec as u64, 0, "vector not aligned");
                    for (j, &o) in offsets.iter().enumerate() {
                        assert_eq!(o, offsets[0] + j as u64, "vector not contiguous");
                    }
                    let start = offsets[0] * bits as u64 / 8;
                    let end = start + (vec * bits / 8) as u64;
                    for word in start / 4..end.div_ceil(4) {
                        words.entry(word % 32).or_default().insert(word);
                    }
                }
                let w = words.values().map(|s| s.len() as u32).max().unwrap_or(1);
                lo = lo.min(w);
                hi = hi.max(w);
            }
        }
    }
    (lo, hi)
}

#[test]
fn lemma_9_4_matches_brute_force_on_random_pairs() {
    let mut rng = Rng::new(0xba4c_0001);
    let (mut cases, mut conflicted, mut vectorized, mut narrow_differs) = (0, 0, 0, 0);
    for case in 0..4000 {
        let tile_bits = rng.range(5, 11);
        let out_dims = random_tile(&mut rng, tile_bits);
        let shape = random_warp_shape(&mut rng, tile_bits);
        let distributed = random_warp_layout(&mut rng, &out_dims, shape);
        let memory = if rng.chance(1, 4) {
            random_any_memory(&mut rng, &out_dims)
        } else {
            let v = rng.range(0, 4);
            random_memory_for(&mut rng, &distributed, v)
        };
        let bits = rng.pick(&[8u32, 16, 32, 64, 128]);
        let access = bank_wavefronts(&memory, &distributed, bits).expect("plan");
        let (lo, hi) = simulate(&memory, &distributed, bits, &access);
        assert_eq!(
            lo, hi,
            "case {case}: phases differ\n{distributed}\n{memory}"
        );
        assert_eq!(
            access.exact_wavefronts, hi,
            "case {case}: bits {bits}, {access:?}\n{distributed}\n{memory}"
        );
        if access.vector.bits >= 32 {
            assert_eq!(access.wavefronts, hi, "case {case}: Lemma 9.4 exact");
        } else {
            assert!(
                access.wavefronts <= hi,
                "case {case}: Lemma 9.4 lower bound"
            );
            narrow_differs += (access.wavefronts != hi) as u32;
        }
        cases += 1;
        conflicted += (hi > 1) as u32;
        vectorized += (access.vector.elements > 1) as u32;
    }
    // The generators must exercise both conflicts and vectorization.
    assert!(
        conflicted > cases / 4,
        "{conflicted}/{cases} with conflicts"
    );
    assert!(vectorized > cases / 4, "{vectorized}/{cases} vectorized");
    println!(
        "{cases} pairs: {conflicted} with conflicts, {vectorized} vectorized, {narrow_differs} sub-word accesses above the lemma's count"
    );
}

/// The seeds' transpose: one warp, 16×32 fp32 (`m` = dim0 rows, `n` = dim1 columns).
/// Store: lane → column, register → row. Read: lanes 0–15 → rows, lane 4 → column parity,
/// registers → column pairs.
pub fn transpose_layouts() -> (LinearLayout, LinearLayout) {
    let tile = [(Label::Dim(0), 16), (Label::Dim(1), 32)];
    let store = LinearLayout::distributed(
        &[
            (Label::Register, &[&[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
            (Label::Lane, &[&[0, 1], &[0, 2], &[0, 4], &[0, 8], &[0, 16]]),
        ],
        &tile,
    )
    .unwrap();
    let read = LinearLayout::distributed(
        &[
            (Label::Register, &[&[0, 2], &[0, 4], &[0, 8], &[0, 16]]),
            (Label::Lane, &[&[1, 0], &[2, 0], &[4, 0], &[8, 0], &[0, 1]]),
        ],
        &tile,
    )
    .unwrap();
    (store, read)
}

/// `offset(m, n) = 32 m + (n ⊕ shift·m)` (shift 0 = unswizzled) as a memory layout.
fn xor_swizzle(shift: u32) -> LinearLayout {
    let mut bases: Vec<Vec<u32>> = (0..5).map(|b| vec![0, 1 << b]).collect();
    for j in 0..4 {
        let n = if shift == 0 { 0 } else { (shift << j) & 31 };
        bases.push(vec![1 << j, n]);
    }
    let refs: Vec<&[u32]> = bases.iter().map(|b| b.as_slice()).collect();
    LinearLayout::memory(
        &[(Label::Offset, &refs)],
        &[(Label::Dim(0), 16), (Label::Dim(1), 32)],
    )
    .unwrap()
}

#[test]
fn transpose_16x32_wavefronts() {
    let (store, read) = transpose_layouts();
    for (shift, expected_read) in [(0, 16), (1, 2), (2, 1)] {
        let memory = xor_swizzle(shift);
        let w = bank_wavefronts(&memory, &store, 32).unwrap();
        let r = bank_wavefronts(&memory, &read, 32).unwrap();
        assert_eq!(
            (w.wavefronts, r.wavefronts),
            (1, expected_read),
            "shift {shift}"
        );
        assert_eq!(
            simulate(&memory, &read, 32, &r),
            (expected_read, expected_read)
        );
        assert_eq!(simulate(&memory, &store, 32, &w), (1, 1));
        // 16 accesses of one row / one column pair each.
        assert_eq!((w.instructions, r.instructions), (16, 16));
    }
}
