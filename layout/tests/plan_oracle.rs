//! The oracle's `bank_conflicts.json` (Triton 3.6's `bankConflictsMemDesc`): our Lemma 9.4
//! count minus one equals Triton's `conflicts` on every case, and the brute-force bank simulator
//! agrees with our exact count on every case.

use tessera_layout::plan::bank::bank_wavefronts;
use tessera_layout::spec::{field, layout_from_spec, shape_from_json, uint};
use tessera_test_support::oracle::{check_bank_case, OracleFile};
use tessera_test_support::plan_gen::brute_force_wavefronts;

#[test]
fn bank_conflicts_match_triton_and_brute_force() {
    let file = OracleFile::load("bank_conflicts.json");
    let cases = &file.cases;
    assert_eq!(cases.len(), 1531);
    let mut mismatches = Vec::new();
    let mut narrow_above = 0;
    for case in cases {
        if let Err(lines) = check_bank_case(case) {
            mismatches.extend(lines);
        }
        let shape = shape_from_json(field(case, "", "shape").unwrap(), "shape").unwrap();
        let distributed = layout_from_spec(case.get("distributed").unwrap(), &shape).unwrap();
        let shared = layout_from_spec(case.get("shared").unwrap(), &shape).unwrap();
        let bits = uint(case.get("element_bits").unwrap(), "element_bits").unwrap();
        let access = bank_wavefronts(&shared, &distributed, bits).unwrap();
        let (lo, hi) = brute_force_wavefronts(&shared, &distributed, bits, &access);
        let id = case.get("id").and_then(|v| v.as_str()).unwrap();
        assert_eq!(
            (lo, hi),
            (access.exact_wavefronts, access.exact_wavefronts),
            "{id}"
        );
        narrow_above += (access.exact_wavefronts != access.wavefronts) as u32;
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
    println!("1531/1531 match Triton; {narrow_above} sub-word cases where the hardware count exceeds Lemma 9.4");
}
