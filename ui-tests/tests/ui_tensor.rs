//! Compile-fail tests of kernels with `Tensor` parameters: the macro's diagnostics for the
//! parameters, and the mistakes the generated launcher's types reject (an output aliasing an
//! input, a tensor of another element type). Each file under `tests/ui_tensor/` must fail with
//! the messages pinned in the `.stderr` beside it (regenerate with `TRYBUILD=overwrite`, then
//! read every file).

#[test]
fn ui_tensor() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui_tensor/*.rs");
}
