//! The oracle's `algebra.json` (Triton 3.6's `LinearLayout`): invert_and_compose, pseudo-inverse,
//! inverse, product and the injective/surjective/invertible predicates, compared exactly.

use tessera_layout::spec::parse_json;
use tessera_test_support::oracle::{check_algebra_case, check_file, OracleFile};

#[test]
fn oracle_algebra_json_matches() {
    let file = OracleFile::load("algebra.json");
    let (matched, lines) = check_file(&file);
    let total = file.cases.len();
    for line in &lines {
        println!("{line}");
    }
    println!("{matched}/{total} cases match");
    assert_eq!(total, 420, "algebra.json has 420 cases");
    assert_eq!(matched, total, "{matched}/{total} cases match");
}

#[test]
fn unknown_kind_and_bad_case_are_mismatches() {
    let case = parse_json(r#"{"id": "tensor-00001"}"#).unwrap();
    assert!(check_algebra_case(&case).is_err());
    let case = parse_json(r#"{"id": "memory-00001", "a": {}}"#).unwrap();
    let lines = check_algebra_case(&case).unwrap_err();
    assert!(lines[0].contains("cannot read"), "{lines:?}");
}
