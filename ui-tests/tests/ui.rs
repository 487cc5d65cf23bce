//! Compile-fail tests: each file under `tests/ui/` must fail to compile with the message pinned in
//! the `.stderr` beside it (regenerate with `TRYBUILD=overwrite`, then read every file).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
