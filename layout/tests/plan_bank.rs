//! Lemma 9.4 against a brute-force bank simulator, on thousands of seeded random pairs, and the
//! seeds' 16×32 fp32 transpose.

use tessera_layout::plan::bank::bank_wavefronts;
use tessera_test_support::plan_gen::*;
use tessera_test_support::Rng;

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
