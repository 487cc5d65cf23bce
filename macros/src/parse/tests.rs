use super::*;
use crate::diag::{Diagnostics, LocIds};
use crate::types::{DType, Scalar};
use proc_macro2::TokenStream;
use quote::quote;
use quote::ToTokens;

fn attr(tokens: TokenStream) -> (KernelAttr, Vec<String>) {
    let mut ids = LocIds::default();
    let mut diags = Diagnostics::default();
    let a = parse_attr(tokens, &mut ids, &mut diags);
    (a, diags.iter().map(|d| d.message.clone()).collect())
}

/// The specialisations of `a` on `s`, and the messages of the errors found.
fn specialise(a: &KernelAttr, s: &Signature) -> (Vec<Specialisation>, Vec<String>) {
    let mut diags = Diagnostics::default();
    let specs = specialisations(a, s, &mut diags);
    (specs, diags.iter().map(|d| d.message.clone()).collect())
}

/// Message `i` contains `parts[i]`, for every part.
#[track_caller]
fn assert_messages(messages: &[String], parts: &[&str]) {
    for (i, part) in parts.iter().enumerate() {
        assert!(
            messages.get(i).is_some_and(|m| m.contains(part)),
            "message {i} should contain {part:?}: {messages:?}"
        );
    }
}

fn sig(tokens: TokenStream) -> (Signature, Vec<String>) {
    let mut ids = LocIds::default();
    let mut diags = Diagnostics::default();
    let f: syn::ItemFn = syn::parse2(tokens).unwrap();
    let s = parse_signature(&f.sig, &mut ids, &mut diags);
    (s, diags.iter().map(|d| d.message.clone()).collect())
}

#[test]
fn attribute_lists() {
    let (a, errors) = attr(quote!(num_warps = 8, BLOCK = [256, 1024], K = 64));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.num_warps, Some(vec![8]));
    assert_eq!(a.consts.len(), 2);
    assert_eq!(a.consts[0].name, "BLOCK");
    let values: Vec<AttrValue> = a.consts[0].values.iter().map(|v| v.0).collect();
    assert_eq!(values, [AttrValue::Int(256), AttrValue::Int(1024)]);
    assert_eq!(a.consts[1].values[0].0, AttrValue::Int(64));
    let (a, errors) = attr(quote!());
    assert!(errors.is_empty());
    assert_eq!(a.num_warps, Some(vec![DEFAULT_NUM_WARPS]));
}

#[test]
fn attribute_errors() {
    let (a, errors) = attr(quote!(num_warps = 3));
    assert_eq!(a.num_warps, None);
    assert_messages(&errors, &["num_warps = 3 is not allowed"]);
    let (_, errors) = attr(quote!(num_warps 4));
    assert_messages(&errors, &["name = value"]);
    let (_, errors) = attr(quote!(BLOCK = [1.5, x], BLOCK = 4));
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("integer literals"));
    assert!(errors[2].contains("given twice"));
    let (_, errors) = attr(quote!(BLOCK = []));
    assert!(errors[0].contains("at least one value"), "{errors:?}");
}

/// `targets` lists sm_80 and sm_90a, each once; the default is both.
#[test]
fn targets_attribute() {
    use crate::ir::Target;
    let (a, errors) = attr(quote!(num_warps = 4));
    assert!(errors.is_empty());
    assert_eq!(a.targets, [Target::Ampere, Target::Hopper]);
    let (a, errors) = attr(quote!(targets = [sm_90a]));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.targets, [Target::Hopper]);
    let (a, errors) = attr(quote!(targets = sm_80));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.targets, [Target::Ampere]);
    let (a, errors) = attr(quote!(targets = [sm_90]));
    assert_messages(
        &errors,
        &["`sm_90` is not a target: `targets` lists `sm_80`"],
    );
    assert_eq!(a.targets, [Target::Ampere, Target::Hopper]);
    let (_, errors) = attr(quote!(targets = [sm_90a, sm_90a]));
    assert_messages(&errors, &["`sm_90a` is listed twice in `targets`"]);
    let (_, errors) = attr(quote!(targets = []));
    assert_messages(&errors, &["`targets` needs at least one target"]);
    let (_, errors) = attr(quote!(targets = ["sm_90a"]));
    assert_messages(&errors, &["`\"sm_90a\"` is not a target"]);
}

#[test]
fn signature() {
    let (s, errors) = sig(quote!(
        fn k<const BLOCK: usize, const K: i32>(x: Ptr<f16>, mut n: i32, s: f32) {}
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(s.name, "k");
    assert_eq!(s.consts.len(), 2);
    assert_eq!(s.consts[1].ty, "i32");
    assert_eq!(s.params[0].dtype, Some(DType::Ptr(Scalar::F16)));
    assert!(s.params[1].mutable);
    assert_eq!(s.params[2].dtype, Some(DType::Scalar(Scalar::F32)));
}

#[test]
fn signature_errors() {
    let (s, errors) = sig(quote!(
        async unsafe fn k<'a, T: Copy, const B: bool>(&self, x: &f32, y: Ptr<fp32>, x: i32) -> f32 {
        }
    ));
    assert_eq!(s.params.len(), 2);
    let all = errors.join("\n");
    for needle in [
        "cannot be `async`",
        "cannot be `unsafe`",
        "returns nothing",
        "no lifetime",
        "type parameter `T` takes its element types from the attribute, without bounds",
        "const generics of a tile kernel must be integer types",
        "no `self`",
        "unsupported parameter type",
        "did you mean `f32`",
        "bound more than once",
    ] {
        assert!(all.contains(needle), "missing {needle:?} in\n{all}");
    }
}

#[test]
fn specialisation_product() {
    let (a, _) = attr(quote!(M = [64, 128], N = [32, 64, 128]));
    let (s, _) = sig(quote!(
        fn k<const M: usize, const N: usize>() {}
    ));
    let mut diags = Diagnostics::default();
    let specs = specialisations(&a, &s, &mut diags);
    assert!(diags.is_empty());
    assert_eq!(specs.len(), 6);
    assert_eq!(specs[0].describe(), "M = 64, N = 32");
    assert_eq!(specs[5].describe(), "M = 128, N = 128");
}

#[test]
fn specialisation_errors() {
    let (a, _) = attr(quote!(BLCK = [64], N = [-1]));
    let (s, _) = sig(quote!(
        fn k<const BLOCK: usize, const N: usize>() {}
    ));
    let (specs, all) = specialise(&a, &s);
    assert_messages(
        &all,
        &[
            "did you mean `BLOCK`",
            "`BLOCK` has no values",
            "N = -1 does not fit",
        ],
    );
    assert_eq!(specs.len(), 1);
    assert_eq!(
        specs[0].consts,
        [("BLOCK".into(), None), ("N".into(), None)]
    );

    let (a, _) = attr(quote!(
        A = [1, 2, 4, 8, 16],
        B = [1, 2, 4, 8, 16],
        C = [1, 2, 4]
    ));
    let (s, _) = sig(quote!(
        fn k<const A: usize, const B: usize, const C: usize>() {}
    ));
    assert_messages(&specialise(&a, &s).1, &["75 specialisations"]);
}

#[test]
fn type_and_warp_axes() {
    let (a, errors) = attr(quote!(T = [f16, bf16], num_warps = [4, 8], BLOCK = 64));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(a.num_warps, Some(vec![4, 8]));
    let types: Vec<AttrValue> = a.consts[0].values.iter().map(|v| v.0).collect();
    assert_eq!(
        types,
        [AttrValue::Type(Scalar::F16), AttrValue::Type(Scalar::BF16)]
    );
    let (s, errors) = sig(quote!(
        fn k<T, const BLOCK: usize>(x: Ptr<f32>) {}
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(s.types[0].name, "T");
    let (specs, errors) = specialise(&a, &s);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(specs.len(), 4);
    assert_eq!(specs[0].describe(), "T = f16, BLOCK = 64, num_warps = 4");
    assert_eq!(specs[3].describe(), "T = bf16, BLOCK = 64, num_warps = 8");
}

#[test]
fn type_axis_errors() {
    let (a, errors) = attr(quote!(T = [f16, f64x], U = [f32]));
    assert_messages(&errors, &["`f64x` is not an element type"]);
    let (s, _) = sig(quote!(
        fn k<T, V, const B: usize>(x: Ptr<T>) {}
    ));
    let (specs, all) = specialise(&a, &s);
    assert_messages(
        &all,
        &[
            "`U` is not a const parameter of `k` (did you mean",
            "type parameter `V` has no element types",
            "const parameter `B` has no values",
        ],
    );
    assert_eq!(specs.len(), 1);

    let (a, _) = attr(quote!(T = [4], B = [f32], num_warps = [4, 4]));
    assert_messages(
        &specialise(&a, &s).1,
        &[
            "`T` is a type parameter: list element types",
            "the values of `B` must be integer literals",
        ],
    );
    let (_, errors) = attr(quote!(num_warps = [4, 4]));
    assert_messages(&errors, &["num_warps = 4 is listed twice"]);
}

#[test]
fn types_substitute_in_parameters_and_body() {
    let f: syn::ItemFn = syn::parse2(quote!(
        fn k<T>(x: Ptr<T>) {
            store(x, load(x).to::<T>() + T::MAX);
        }
    ))
    .unwrap();
    let typed = substitute_types(&f, &[("T".to_string(), Scalar::BF16)]);
    let text = typed.to_token_stream().to_string();
    assert!(text.contains("x : Ptr < bf16 >"), "{text}");
    assert!(text.contains("to :: < bf16 > () + bf16 :: MAX"), "{text}");
    assert!(text.starts_with("fn k < T >"), "{text}");
}
