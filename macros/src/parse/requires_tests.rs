//! `requires = […]`: what the checker accepts (the conditions it stores, as written) and each
//! error, at the user's code.

use crate::expand::tensor_params::desugar;
use crate::frontend::analyze_kernel;
use crate::parse::{Arith, Compare, Condition, Float, Integer, Requirement};
use proc_macro2::TokenStream;
use quote::quote;

/// The requirements of a kernel over `BLOCK` with a tensor `x: [_, _]`, a pointer `p` and
/// scalars `n: i32`, `m: u64`, `s: f32`, under `requires = #requires`; or the errors.
fn requirements(requires: TokenStream) -> Result<Vec<Requirement>, Vec<String>> {
    let item = quote! {
        fn k<const BLOCK: usize>(x: Tensor<f32, 2>, p: Ptr<f32>, n: i32, m: u64, s: f32) {
            let offs = arange(0, BLOCK);
            store(p + offs, load(x + offs, offs < n, 0.0) * s);
        }
    };
    let (item, _) = desugar(item).unwrap();
    match analyze_kernel(quote!(BLOCK = 64, requires = #requires), item) {
        Ok((kernels, _)) => Ok(kernels[0].requires.clone()),
        Err(errors) => Err(errors.into_iter().map(|e| e.to_string()).collect()),
    }
}

fn errors(requires: TokenStream) -> Vec<String> {
    requirements(requires).expect_err("expected errors")
}

#[test]
fn conditions_are_stored_as_written_with_their_leaves() {
    let got = requirements(quote!([
        n <= BLOCK,
        x.size(1) % (m + 2) == 0 || !(x.stride(0) > -1)
    ]))
    .unwrap();
    let texts: Vec<&str> = got.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "n <= BLOCK",
            "x.size(1) % (m + 2) == 0 || !(x.stride(0) > -1)"
        ]
    );
    let param = |param: &str, written: &str| {
        Box::new(Integer::Param {
            param: param.to_string(),
            written: written.to_string(),
        })
    };
    assert_eq!(
        got[0].condition,
        Condition::Compare(
            Compare::Le,
            param("n", "n"),
            Box::new(Integer::Const("BLOCK".to_string()))
        )
    );
    let Condition::Or(left, right) = &got[1].condition else {
        panic!("{:?}", got[1].condition);
    };
    assert_eq!(
        **left,
        Condition::Compare(
            Compare::Eq,
            Box::new(Integer::Arith(
                Arith::Rem,
                param("x__size1", "x.size(1)"),
                Box::new(Integer::Arith(
                    Arith::Add,
                    param("m", "m"),
                    Box::new(Integer::Literal(2))
                ))
            )),
            Box::new(Integer::Literal(0))
        )
    );
    assert!(matches!(**right, Condition::Not(_)));
    let mut leaves = Vec::new();
    got[1].condition.leaves(&mut leaves);
    assert_eq!(leaves.len(), 3, "x.size(1), m, x.stride(0): {leaves:?}");
}

#[test]
fn a_comparison_with_a_float_parameter_compares_floats() {
    let got = requirements(quote!([s > 0.0, -s <= 2, s != s])).unwrap();
    let s = || Box::new(Float::Param("s".to_string()));
    let literal = |digits: &str| Box::new(Float::Literal(digits.to_string()));
    let want = [
        Condition::CompareFloat(Compare::Gt, s(), literal("0.0")),
        Condition::CompareFloat(Compare::Le, Box::new(Float::Neg(s())), literal("2")),
        Condition::CompareFloat(Compare::Ne, s(), s()),
    ];
    let got: Vec<Condition> = got.into_iter().map(|r| r.condition).collect();
    assert_eq!(got, want);
}

#[test]
fn each_misuse_is_an_error_naming_it() {
    let cases: [(TokenStream, &str); 11] = [
        (quote!(n <= 4), "`requires` takes a list of conditions"),
        (
            quote!([nn <= 4]),
            "`requires` names `nn`, which is not a parameter of `k` (did you mean `n`?)",
        ),
        (
            quote!([p == 0]),
            "`p` is a pointer: `requires` compares integers",
        ),
        (
            quote!([s + 1.0 < 2.0]),
            "`requires` does no arithmetic on floats",
        ),
        (
            quote!([s * 2 < 2]),
            "`s` is a float (`f32`): `requires` does no arithmetic on floats",
        ),
        (quote!([s < n]), "an integer compared with a float"),
        (
            quote!([x.size(2) == 1]),
            "`x` is a tensor of rank 2: it has no dimension 2",
        ),
        (quote!([n.size(0) == 1]), "`n` is not a `Tensor` parameter"),
        (
            quote!([x.len() == 1]),
            "`requires` reads a tensor parameter's sizes and strides",
        ),
        (quote!([n + 1]), "this is an integer, not a condition"),
        (
            quote!([(n < 1) + 2 == 3]),
            "a condition where an integer is expected",
        ),
    ];
    for (requires, want) in cases {
        let got = errors(requires.clone());
        assert!(
            got.iter().any(|e| e.contains(want)),
            "requires = {requires}: {got:?} does not contain {want:?}"
        );
    }
}
