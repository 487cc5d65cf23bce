//! `shared/oracle/bank_conflicts.json` (Triton 3.6's `bankConflictsMemDesc`): our Lemma 9.4
//! count minus one equals Triton's `conflicts` on every case, and the brute-force bank simulator
//! agrees with our exact count on every case.

mod common;
#[path = "common/plan_gen.rs"]
mod plan_gen;

use plan_gen::brute_force_wavefronts;
use tessera_layout::plan::bank::{bank_wavefronts, check_bank_case};
use tessera_layout::spec::{field, layout_from_spec, parse_json, shape_from_json, uint};

/// `$TESSERA_ORACLE_DIR`, else `shared/oracle` beside the repository (CI: `../shared`) or
/// inside it. A missing oracle fails the test.
fn oracle_file(name: &str) -> String {
    let mut candidates = Vec::new();
    if let Ok(dir) = std::env::var("TESSERA_ORACLE_DIR") {
        candidates.push(format!("{dir}/{name}"));
    }
    let repo = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    candidates.push(format!("{repo}/../shared/oracle/{name}"));
    candidates.push(format!("{repo}/shared/oracle/{name}"));
    for path in &candidates {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text;
        }
    }
    panic!("oracle file {name} not found; tried {candidates:?} (set TESSERA_ORACLE_DIR)");
}

#[test]
fn bank_conflicts_match_triton_and_brute_force() {
    let root = parse_json(&oracle_file("bank_conflicts.json")).unwrap();
    let cases = root.get("cases").and_then(|c| c.as_array()).unwrap();
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
