//! `autotune(…)`: parsing, the checks against the signature, and the specialisations `configs`
//! keeps, through the front end.

use crate::frontend::analyze_kernel;
use crate::parse::{Autotune, KeyEntry};
use proc_macro2::TokenStream;
use quote::quote;

/// A kernel over `BM`, `BK` and the warps, with scalar parameters `m`, `n`, `scale` and a
/// pointer `x`, under the attribute `attr`.
fn kernel(attr: TokenStream) -> Result<(Vec<String>, Option<Autotune>), Vec<String>> {
    let item = quote! {
        fn k<const BM: usize, const BK: usize>(x: Ptr<f32>, m: i32, n: u64, scale: f32, h: f16) {
            let offs = arange(0, BM) + arange(0, BK).sum(0);
            store(x + offs, load(x + offs, offs < m, 0.0) * scale);
        }
    };
    match analyze_kernel(attr, item) {
        Ok((kernels, autotune)) => {
            let specs = kernels
                .iter()
                .map(|k| {
                    let consts: Vec<String> =
                        k.consts.iter().map(|(c, v)| format!("{c}={v}")).collect();
                    format!("{} w{}", consts.join(" "), k.num_warps)
                })
                .collect();
            Ok((specs, autotune))
        }
        Err(errors) => Err(errors.into_iter().map(|e| e.to_string()).collect()),
    }
}

fn errors(attr: TokenStream) -> Vec<String> {
    kernel(attr).expect_err("expected errors")
}

#[test]
fn every_specialisation_is_a_candidate_without_configs() {
    let (specs, autotune) = kernel(quote!(
        BM = [64, 128],
        BK = 32,
        num_warps = [4, 8],
        autotune(key = [m, n, scale])
    ))
    .unwrap();
    assert_eq!(
        specs,
        [
            "BM=64 BK=32 w4",
            "BM=64 BK=32 w8",
            "BM=128 BK=32 w4",
            "BM=128 BK=32 w8"
        ]
    );
    assert_eq!(
        autotune,
        Some(Autotune {
            key: ["m", "n", "scale"].map(KeyEntry::scalar).to_vec()
        })
    );
    // An empty key: one choice per device.
    let (_, autotune) = kernel(quote!(BM = [64, 128], BK = 32, autotune(key = []))).unwrap();
    assert_eq!(autotune, Some(Autotune { key: Vec::new() }));
    // No autotune: nothing tuned.
    let (specs, autotune) = kernel(quote!(BM = [64, 128], BK = 32)).unwrap();
    assert_eq!((specs.len(), autotune), (2, None));
}

#[test]
fn configs_keep_the_matching_specialisations_in_order() {
    let (specs, _) = kernel(quote!(
        BM = [64, 128],
        BK = [32, 64],
        num_warps = [4, 8],
        autotune(
            key = [m],
            configs = [(BM = 128, num_warps = 8), (BM = 64, BK = 32, num_warps = 4)]
        )
    ))
    .unwrap();
    // A config naming fewer axes keeps every value of the others.
    assert_eq!(
        specs,
        ["BM=64 BK=32 w4", "BM=128 BK=32 w8", "BM=128 BK=64 w8"]
    );
}

/// Checks that each attribute `BM = [64, 128], BK = 32, <rest>` is rejected with a first error
/// containing each of the messages.
fn first_errors_contain(cases: &[(TokenStream, &[&str])]) {
    for (rest, messages) in cases {
        let e = errors(quote!(BM = [64, 128], BK = 32, #rest));
        for message in *messages {
            assert!(e[0].contains(message), "{rest}: {e:?}");
        }
    }
}

#[test]
fn key_errors() {
    first_errors_contain(&[
        (
            quote!(autotune(key = [mm])),
            &["the autotune key names `mm`, which is not a parameter of `k` (did you mean `m`?)"],
        ),
        (
            quote!(autotune(key = [x])),
            &[
                "scalar parameters of type i32, u32, i64, u64 or f32",
                "`x` is a pointer (`Ptr<f32>`)",
            ],
        ),
        (quote!(autotune(key = [h])), &["`h` is of type `f16`"]),
        (
            quote!(autotune(key = [m, m])),
            &["`m` is listed twice in the key"],
        ),
        (
            quote!(autotune(key = [m + 1])),
            &["the key lists parameter names"],
        ),
        (
            quote!(autotune(configs = [(BM = 64)])),
            &["`autotune` needs `key = [...]`"],
        ),
        (
            quote!(autotune(key = [m], kye = [n])),
            &["unknown `autotune` argument `kye`"],
        ),
        (
            quote!(autotune(key = [m]), autotune(key = [n])),
            &["`autotune` is given twice"],
        ),
    ]);
}

#[test]
fn config_errors() {
    first_errors_contain(&[
        (
            quote!(autotune(key = [m], configs = [(BM = 256)])),
            &["BM = 256 is not compiled: the attribute lists BM = [64, 128]"],
        ),
        (
            quote!(autotune(key = [m], configs = [(BN = 64)])),
            &["`BN` in an autotune config is neither a const parameter of `k` nor `num_warps`"],
        ),
        (
            quote!(autotune(key = [m], configs = [])),
            &["`configs` is empty"],
        ),
        (
            quote!(autotune(key = [m], configs = [BM])),
            &["`configs` takes a list of tuples"],
        ),
        (
            quote!(autotune(key = [m], configs = [(BM = x)])),
            &["a config gives integer values by name"],
        ),
    ]);
}

#[test]
fn one_candidate_is_nothing_to_tune() {
    let e = errors(quote!(BM = 64, BK = 32, autotune(key = [m])));
    assert!(
        e[0].contains("nothing to autotune: the attribute's lists make 1 specialisation"),
        "{e:?}"
    );
    first_errors_contain(&[(
        quote!(autotune(key = [m], configs = [(BM = 64)])),
        &["nothing to autotune: `configs` keeps 1 specialisation"],
    )]);
}

/// A kernel with a `Tensor<f32, 2>` parameter `x`, a pointer `p` and a scalar `n` (desugared as
/// the macro does) under `BM = [64, 128], BK = 32, <rest>`: its autotune, or its errors.
fn tensor_kernel(rest: TokenStream) -> Result<Option<Autotune>, Vec<String>> {
    let item = quote! {
        fn k<const BM: usize, const BK: usize>(x: Tensor<f32, 2>, p: Ptr<f32>, n: i32) {
            let offs = arange(0, BM) + arange(0, BK).sum(0);
            store(x + offs * x.stride(1), load(p + offs, offs < x.size(0), 0.0));
        }
    };
    let (item, _) = crate::expand::tensor_params::desugar(item).unwrap();
    match analyze_kernel(quote!(BM = [64, 128], BK = 32, #rest), item) {
        Ok((_, autotune)) => Ok(autotune),
        Err(errors) => Err(errors.into_iter().map(|e| e.to_string()).collect()),
    }
}

#[test]
fn the_key_takes_tensor_sizes_and_strides() {
    let autotune = tensor_kernel(quote!(autotune(key = [x.size(0), n, x.stride(1)])))
        .unwrap()
        .unwrap();
    let entry = |name: &str, param: &str| KeyEntry {
        name: name.to_string(),
        param: param.to_string(),
    };
    assert_eq!(
        autotune.key,
        [
            entry("x.size(0)", "x__size0"),
            entry("n", "n"),
            entry("x.stride(1)", "x__stride1")
        ]
    );
}

#[test]
fn tensor_key_errors() {
    for (rest, message) in [
        (
            quote!(autotune(key = [x.size(2)])),
            "`x` is a tensor of rank 2: it has no dimension 2",
        ),
        (
            quote!(autotune(key = [p.size(0)])),
            "`p.size(0)` in the key: `p` is not a `Tensor` parameter (only a tensor has sizes and \
             strides)",
        ),
        (
            quote!(autotune(key = [y.size(0)])),
            "the autotune key names `y`, which is not a parameter of `k`",
        ),
        (
            quote!(autotune(key = [x])),
            "`x` is a tensor: the key takes its sizes or strides, e.g. `x.size(0)`",
        ),
        (
            quote!(autotune(key = [x.size(n)])),
            "`x.size(d)` takes the dimension as an integer literal",
        ),
        (
            quote!(autotune(key = [x.len()])),
            "the key takes a tensor parameter's sizes and strides as `x.size(d)` and `x.stride(d)`",
        ),
        (
            quote!(autotune(key = [x.size(0), x.size(0)])),
            "`x.size(0)` is listed twice in the key",
        ),
    ] {
        let errors = tensor_kernel(rest.clone()).expect_err("expected errors");
        assert!(errors[0].contains(message), "{rest}: {errors:?}");
    }
}

/// `x.size($d)` with `$d:literal` from a `macro_rules!` arrives as `x.size(«0»)`, the literal in
/// an invisible group: its dimension is read through the group, as `x.size(0)`'s.
#[test]
fn a_tensor_dimension_in_an_invisible_group_is_read() {
    use crate::parse::TensorPart;
    use proc_macro2::{Delimiter, Group};
    let zero = Group::new(Delimiter::None, quote!(0));
    let call: syn::ExprMethodCall = syn::parse2(quote!(x.size(#zero))).expect("a method call");
    let part = TensorPart::of(&call).expect("a tensor part");
    assert_eq!(part.dim, Some(0));
    let call: syn::ExprMethodCall = syn::parse2(quote!(x.stride(n))).expect("a method call");
    assert_eq!(TensorPart::of(&call).expect("a tensor part").dim, None);
}
