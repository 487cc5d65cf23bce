//! Compile-fail tests of `#[tile_kernel]`'s diagnostics: each file under `tests/ui_macro/` must
//! fail with the messages pinned in the `.stderr` beside it (regenerate with
//! `TRYBUILD=overwrite`, then read every file). Until code generation exists, a kernel that passes
//! every check fails too, with the "not implemented yet" message (`not_implemented_yet.rs`).

#[test]
fn ui_macro() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui_macro/*.rs");
}
