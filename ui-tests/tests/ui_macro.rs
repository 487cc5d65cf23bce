//! Compile-fail tests of `#[tile_kernel]`'s diagnostics: each file under `tests/ui_macro/` must
//! fail with the messages pinned in the `.stderr` beside it (regenerate with
//! `TRYBUILD=overwrite`, then read every file). `convert_layout_*` are user layouts that rustc
//! rejects in the `const` checks the generated code carries.

#[test]
fn ui_macro() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui_macro/*.rs");
}
