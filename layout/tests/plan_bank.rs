//! Lemma 9.4 against a brute-force bank simulator, on thousands of seeded random pairs, and the
//! seeds' 16×32 fp32 transpose.

use tessera_layout::plan::bank::{
    bank_wavefronts, bank_wavefronts_on, phase_lanes, phase_of, phased_wavefronts, Side,
};
use tessera_layout::plan::Vendor;
use tessera_layout::LinearLayout;
use tessera_test_support::plan_gen::*;
use tessera_test_support::Rng;

/// A random distributed layout, a memory layout of its tile (a quarter of them arbitrary, the
/// others with some of its registers contiguous) and an element width.
fn random_access(rng: &mut Rng) -> (LinearLayout, LinearLayout, u32) {
    let tile_bits = rng.range(5, 11);
    let out_dims = random_tile(rng, tile_bits);
    let shape = random_warp_shape(rng, tile_bits);
    let distributed = random_warp_layout(rng, &out_dims, shape);
    let memory = if rng.chance(1, 4) {
        random_any_memory(rng, &out_dims)
    } else {
        let v = rng.range(0, 4);
        random_memory_for(rng, &distributed, v)
    };
    let bits = rng.pick(&[8u32, 16, 32, 64, 128]);
    (distributed, memory, bits)
}

#[test]
fn lemma_9_4_matches_brute_force_on_random_pairs() {
    let mut rng = Rng::new(0xba4c_0001);
    let (mut cases, mut conflicted, mut vectorized, mut narrow_differs) = (0, 0, 0, 0);
    for case in 0..4000 {
        let (distributed, memory, bits) = random_access(&mut rng);
        let access = bank_wavefronts(&memory, &distributed, bits).expect("plan");
        let (lo, hi) = brute_force_wavefronts(&memory, &distributed, bits, &access);
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
            brute_force_wavefronts(&memory, &read, 32, &r),
            (expected_read, expected_read)
        );
        assert_eq!(brute_force_wavefronts(&memory, &store, 32, &w), (1, 1));
        // 16 accesses of one row / one column pair each.
        assert_eq!((w.instructions, r.instructions), (16, 16));
    }
}

/// Lemma 9.4 with AMD's LDS phases (`phase_lanes`: a subspace of lane indices, the
/// `ds_read_b128` groups included) against the brute-force simulator driven by the hardware's
/// lane groups written out (`amd_lds_phase`), for stores and loads.
#[test]
fn amd_phases_match_brute_force_on_random_pairs() {
    let mut rng = Rng::new(0xba4c_0a3d);
    let (mut cases, mut conflicted, mut reads_differ) = (0, 0, 0);
    for case in 0..3000 {
        let (distributed, memory, bits) = random_access(&mut rng);
        let mut exact = [0; 2];
        for (i, side) in [Side::Write, Side::Read].into_iter().enumerate() {
            let access =
                bank_wavefronts_on(Vendor::Amd, side, &memory, &distributed, bits).expect("plan");
            let vector_bits = access.vector.bits;
            let load = side == Side::Read;
            let (lo, hi) =
                brute_force_phased_wavefronts(&memory, &distributed, bits, &access, &|lane| {
                    amd_lds_phase(vector_bits, load, lane)
                });
            let ctx = format!("case {case}: {side:?}, bits {bits}\n{distributed}\n{memory}");
            assert_eq!(lo, hi, "{ctx}: phases differ");
            assert_eq!(access.exact_wavefronts, hi, "{ctx}\n{access:?}");
            if vector_bits >= 32 {
                assert_eq!(access.wavefronts, hi, "{ctx}: Lemma 9.4 exact");
            }
            exact[i] = hi;
            conflicted += (hi > 1) as u32;
        }
        let nvidia = bank_wavefronts(&memory, &distributed, bits).expect("plan");
        reads_differ += (nvidia.vector.bits == 128 && exact[1] != nvidia.exact_wavefronts) as u32;
        cases += 1;
    }
    println!("{cases} pairs: {conflicted} accesses with conflicts, {reads_differ} 128-bit reads counted differently from NVIDIA's quarter warps");
    assert!(
        conflicted > cases / 4,
        "{conflicted}/{cases} with conflicts"
    );
    assert!(reads_differ > 0, "the ds_read_b128 groups never mattered");
}

/// `phased_wavefronts` (the count of the emulator's amdgpu mode and of the AMD shared-memory
/// plans) on accesses written out: one bank row of 16-byte vectors per 8 lanes, lane 4 moving
/// a row down and lane 2 along the row as well. NVIDIA's quarter warps and AMD's stores
/// (lanes 0–7, …) see 8 vectors in distinct banks; `ds_read_b128`'s groups pair lane `l` with
/// `l ⊕ 20`, which lands in the same banks one row down: 2 wavefronts a phase.
#[test]
fn ds_read_b128_lane_groups_conflict_where_quarter_warps_do_not() {
    let address = |l: u32| {
        let bit = |b: u32| l >> b & 1;
        16 * (l & 3) + 64 * (bit(2) ^ bit(4)) + 128 * bit(4) + 256 * bit(3)
    };
    let access: Vec<(u32, u32, u32)> = (0..32).map(|l| (l, address(l), 16)).collect();
    assert_eq!(phased_wavefronts(Vendor::Amd, Side::Write, &access), 4);
    assert_eq!(phased_wavefronts(Vendor::Amd, Side::Read, &access), 8);
    assert_eq!(phased_wavefronts(Vendor::Nvidia, Side::Read, &access), 4);
    // The groups, as phase_of sees them: lane 0's phase is {0–3, 20–23}.
    let group: Vec<u32> = (0..32)
        .filter(|&l| phase_of(Vendor::Amd, Side::Read, 128, l) == 0)
        .collect();
    assert_eq!(group, [0, 1, 2, 3, 20, 21, 22, 23]);
    let group: Vec<u32> = (0..32)
        .filter(|&l| phase_of(Vendor::Amd, Side::Write, 128, l) == 0)
        .collect();
    assert_eq!(group, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(phase_lanes(Vendor::Amd, Side::Read, 64, 5), [1, 2, 4, 8]);
    assert_eq!(
        phase_lanes(Vendor::Amd, Side::Read, 16, 5),
        [1, 2, 4, 8, 16]
    );
    // A wave of 64 lanes: its halves are separate phases on AMD, one warp's on NVIDIA.
    assert_eq!(
        phase_lanes(Vendor::Amd, Side::Write, 32, 6),
        [1, 2, 4, 8, 16]
    );
    assert_eq!(
        phase_lanes(Vendor::Nvidia, Side::Write, 32, 6),
        [1, 2, 4, 8, 16, 32]
    );
}
