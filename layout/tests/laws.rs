//! Laws of the layout algebra, checked on thousands of seeded random layouts (see `common`).

mod common;

use common::*;

/// The generators produce what they promise (the other laws rely on it).
#[test]
fn generators_keep_their_promises() {
    let mut rng = Rng::new(0x5eed_0001);
    for _ in 0..2000 {
        let d = random_distributed(&mut rng);
        assert!(d.is_surjective(), "{d}");
        let s = random_surjective(&mut rng);
        assert!(s.is_surjective(), "{s}");
        let m = random_memory(&mut rng);
        assert!(m.is_invertible(), "{m}");
        let i = random_injective(&mut rng, &HARDWARE_DIMS);
        assert!(i.is_injective(), "{i}");
        let l = random_layout(&mut rng);
        assert!(l.total_in_bits() <= MAX_TEST_BITS && l.total_out_bits() <= MAX_TEST_BITS);
        let table = brute_force_table(&l);
        for (flat, &out) in table.iter().enumerate() {
            assert_eq!(l.apply_packed(&split_input(&l, flat as u64)), out);
        }
    }
}
