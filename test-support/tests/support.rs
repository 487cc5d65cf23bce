//! The shared test code itself: the RNG stream, the generators' promises, the oracle files.

use tessera_test_support::oracle::{self, check_case, OracleFile};
use tessera_test_support::random::{brute_force_table, random_layout, random_memory};
use tessera_test_support::Rng;

#[test]
fn rng_is_splitmix64() {
    // The reference outputs of splitmix64 from seed 0 (Vigna's splitmix64.c).
    let mut rng = Rng(0);
    assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    let mut a = Rng::new(7);
    let mut b = Rng(7);
    assert_eq!(a.next_f32(), b.next_f32());
    for _ in 0..1000 {
        let x = a.next_f32();
        assert!((-1.0..1.0).contains(&x), "{x}");
        assert!(a.range(3, 5) >= 3 && a.range(3, 5) <= 5);
    }
}

#[test]
fn generated_layouts_keep_their_promises() {
    let mut rng = Rng(0x7e57);
    for _ in 0..200 {
        let memory = random_memory(&mut rng);
        assert!(memory.is_invertible(), "{memory}");
        let layout = random_layout(&mut rng);
        let table = brute_force_table(&layout);
        assert_eq!(table.len() as u64, 1u64 << layout.total_in_bits());
        assert_eq!(table[0], 0, "a linear map sends 0 to 0: {layout}");
    }
}

#[test]
fn oracle_files_ship_with_the_repository() {
    for (name, cases) in [
        ("layouts.json", 1695),
        ("algebra.json", 420),
        ("bank_conflicts.json", 1531),
    ] {
        let file = OracleFile::load(name);
        assert_eq!(file.triton_version, "3.6.0", "{name}");
        assert_eq!(file.cases.len(), cases, "{name}");
    }
    assert!(oracle::dir().join("README.md").exists());
}

#[test]
fn bad_oracle_files_and_cases_are_errors() {
    let e = OracleFile::parse(r#"{"triton_version": "3.6.0", "seed": 1}"#).unwrap_err();
    assert!(e.contains("missing field `cases`"), "{e}");
    let e = OracleFile::parse(r#"{"triton_version": "3.6.0", "seed": 1, "cases": [{"id": 1, "id": 2}], "rejected_by_triton": []}"#).unwrap_err();
    assert!(e.contains("duplicate key"), "{e}");
    let case = tessera_layout::spec::parse_json(r#"{"id": "nothing-1"}"#).unwrap();
    assert!(check_case(&case).unwrap_err()[0].contains("unknown case kind"));
}
