//! Optimal swizzling: the seeds' 16×32 transpose, and seeded random write/read pairs checked
//! against the brute-force bank simulator and the Lemma 9.5 bounds.

use tessera_layout::plan::bank::{bank_wavefronts, bank_wavefronts_on, Side};
use tessera_layout::plan::swizzle::{classic_xor_swizzle, optimal_swizzle, optimal_swizzle_on};
use tessera_layout::plan::Vendor;
use tessera_layout::LinearLayout;
use tessera_test_support::plan_gen::*;
use tessera_test_support::Rng;

#[test]
fn transpose_16x32_finds_n_xor_2m() {
    let (store, read) = transpose_layouts();
    let swizzle = optimal_swizzle(&store, &read, 32).unwrap();
    assert_eq!(swizzle.memory, xor_swizzle(2), "{}", swizzle.memory);
    assert_eq!(swizzle.vector_elements(), 1);
    assert_eq!((swizzle.write.wavefronts, swizzle.read.wavefronts), (1, 1));
    // 16 row stores and 16 column-pair loads: 16 + 16 wavefronts for the whole tile.
    assert_eq!(
        (
            swizzle.write.total_wavefronts(),
            swizzle.read.total_wavefronts()
        ),
        (16, 16)
    );
    assert!(swizzle.conflict_free_achievable());
    // The classic n ⊕ m: the store stays conflict-free, the read has 2-way conflicts.
    let classic = classic_xor_swizzle(&store, 32).unwrap().unwrap();
    assert_eq!(classic, xor_swizzle(1));
    let r = bank_wavefronts(&classic, &read, 32).unwrap();
    let w = bank_wavefronts(&classic, &store, 32).unwrap();
    assert_eq!((w.wavefronts, r.wavefronts), (1, 2));
    assert_eq!((w.total_wavefronts(), r.total_wavefronts()), (16, 32));
    // Both by brute force too.
    assert_eq!(
        brute_force_wavefronts(&swizzle.memory, &read, 32, &swizzle.read),
        (1, 1)
    );
    assert_eq!(brute_force_wavefronts(&classic, &read, 32, &r), (2, 2));
}

/// A random write/read pair of one tile and an element width. A quarter of the pairs have 64
/// lanes (a whole AMD wave; on NVIDIA, more lanes than one line of banks can separate, so some
/// conflicts are unavoidable and the fallback of the segment choice is exercised); a third share
/// registers (vectors exist), half of those being the same layout.
fn random_pair(rng: &mut Rng) -> (LinearLayout, LinearLayout, u32) {
    let tile_bits = rng.range(6, 11);
    let out_dims = random_tile(rng, tile_bits);
    let lanes = if rng.chance(1, 4) { 6 } else { 5 };
    let shape_a = random_warp_shape_with_lanes(rng, tile_bits, lanes);
    let shape_b = random_warp_shape_with_lanes(rng, tile_bits, lanes);
    let a = random_warp_layout(rng, &out_dims, shape_a);
    let b = if rng.chance(1, 3) {
        let b = random_warp_layout(rng, &out_dims, shape_a);
        if rng.chance(1, 2) {
            a
        } else {
            b
        }
    } else {
        random_warp_layout(rng, &out_dims, shape_b)
    };
    let bits = rng.pick(&[8u32, 16, 32, 64, 128]);
    (a, b, bits)
}

#[test]
fn swizzle_reaches_the_lemma_9_5_bounds_on_random_pairs() {
    let mut rng = Rng::new(0x5e1e_0001);
    let (mut cases, mut achievable, mut conflicted, mut vectorized, mut wider) = (0, 0, 0, 0, 0);
    for case in 0..3000 {
        let (a, b, bits) = random_pair(&mut rng);
        let swizzle = optimal_swizzle(&a, &b, bits).unwrap();
        let write = brute_force_wavefronts(&swizzle.memory, &a, bits, &swizzle.write);
        let read = brute_force_wavefronts(&swizzle.memory, &b, bits, &swizzle.read);
        let ctx = format!(
            "case {case}, bits {bits}\nA:\n{a}\nB:\n{b}\nmemory:\n{}",
            swizzle.memory
        );
        assert_eq!(
            write,
            (
                swizzle.write.exact_wavefronts,
                swizzle.write.exact_wavefronts
            ),
            "{ctx}"
        );
        assert_eq!(
            read,
            (swizzle.read.exact_wavefronts, swizzle.read.exact_wavefronts),
            "{ctx}"
        );
        let got = (
            swizzle.write.exact_wavefronts,
            swizzle.read.exact_wavefronts,
        );
        assert!(
            got.0 <= swizzle.optimum.0 && got.1 <= swizzle.optimum.1,
            "{ctx}\n{got:?} vs {:?}",
            swizzle.optimum
        );
        if got != swizzle.optimum {
            wider += 1;
        }
        if swizzle.conflict_free_achievable() {
            achievable += 1;
            assert_eq!(got, (1, 1), "{ctx}");
        }
        cases += 1;
        conflicted += (got != (1, 1)) as u32;
        vectorized += (swizzle.vector_elements() > 1) as u32;
    }
    println!("{cases} pairs: {achievable} conflict-free achievable, {conflicted} with unavoidable conflicts, {vectorized} vectorized, {wider} below the bound");
    assert!(achievable > cases / 4 && conflicted > cases / 20 && vectorized > cases / 10);
}

/// The optimal swizzle planned for AMD's LDS phases (`optimal_swizzle_on(Vendor::Amd, …)`) on
/// random pairs: both sides counted by the brute-force simulator with the hardware's lane groups
/// (`amd_lds_phase`), within the Lemma 9.5 bounds and conflict-free where they allow it; and
/// where NVIDIA's swizzle leaves `ds_read_b128` conflicts that AMD's avoids.
#[test]
fn amd_swizzle_reaches_the_lemma_9_5_bounds_under_amd_phases() {
    let mut rng = Rng::new(0x5e1e_0a3d);
    let (mut cases, mut achievable, mut nvidia_worse) = (0, 0, 0);
    for case in 0..2000 {
        let (a, b, bits) = random_pair(&mut rng);
        let swizzle = optimal_swizzle_on(Vendor::Amd, &a, &b, bits).unwrap();
        let phased = |layout, access: &tessera_layout::plan::bank::BankAccess, load| {
            let vector_bits = access.vector.bits;
            brute_force_phased_wavefronts(&swizzle.memory, layout, bits, access, &|lane| {
                amd_lds_phase(vector_bits, load, lane)
            })
        };
        let write = phased(&a, &swizzle.write, false);
        let read = phased(&b, &swizzle.read, true);
        let ctx = format!(
            "case {case}, bits {bits}\nA:\n{a}\nB:\n{b}\nmemory:\n{}",
            swizzle.memory
        );
        let got = (
            swizzle.write.exact_wavefronts,
            swizzle.read.exact_wavefronts,
        );
        assert_eq!((write, read), ((got.0, got.0), (got.1, got.1)), "{ctx}");
        assert!(
            got.0 <= swizzle.optimum.0 && got.1 <= swizzle.optimum.1,
            "{ctx}\n{got:?} vs {:?}",
            swizzle.optimum
        );
        if swizzle.conflict_free_achievable() {
            achievable += 1;
            assert_eq!(got, (1, 1), "{ctx}");
            // NVIDIA's swizzle of the same pair, read by ds_read_b128.
            let nvidia = optimal_swizzle(&a, &b, bits).unwrap();
            let read_on_amd =
                bank_wavefronts_on(Vendor::Amd, Side::Read, &nvidia.memory, &b, bits).unwrap();
            nvidia_worse += (read_on_amd.exact_wavefronts > 1) as u32;
        }
        cases += 1;
    }
    println!("{cases} pairs: {achievable} conflict-free achievable, {nvidia_worse} of them with ds_read_b128 conflicts under NVIDIA's swizzle");
    assert!(achievable > cases / 4);
    assert!(nvidia_worse > 0, "the AMD phases never changed the swizzle");
}
