//! Malformed input never panics the macro: a corpus of broken kernels must each give a real
//! error, and every truncation and single-token deletion of the example kernels must expand to a
//! `compile_error!` without panicking.

use crate::expand::tile_kernel;
use crate::frontend::analyze;
use proc_macro2::{Group, TokenStream, TokenTree};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// (attribute arguments, item) pairs; each is wrong in some way.
const BROKEN: &[(&str, &str)] = &[
    // Truncated or empty bodies and signatures (balanced, as rustc hands them to a macro).
    ("", ""),
    ("", "fn"),
    ("", "fn k"),
    ("", "fn k(x: Ptr<f32>)"),
    ("", "fn k(x: Ptr<f32>) { let a = }"),
    ("", "fn k(x: Ptr<f32>) { let a = load(x, ); store() }"),
    ("", "fn k(x: Ptr<f32>) { let a = load(x + arange(0, 128)) store(x, a); }"),
    ("", "fn k(x: Ptr<f32>) { for i in 0.. { } }"),
    ("", "fn k(x: Ptr<f32>) { for i in { } }"),
    ("", "fn k(x: Ptr<f32>) { if { } }"),
    ("", "fn k(x: Ptr<f32>) { let (a, b) = ; }"),
    ("", "fn k(x: Ptr<f32>) { x. }"),
    ("", "fn k(x: Ptr<f32>) { let t = arange(0, 128).; }"),
    ("num_warps", "fn k(x: Ptr<f32>) {}"),
    ("num_warps =", "fn k(x: Ptr<f32>) {}"),
    ("BLOCK = [,]", "fn k<const BLOCK: usize>() {}"),
    ("BLOCK = [128,,]", "fn k<const BLOCK: usize>() {}"),
    ("BLOCK = (128) 256", "fn k<const BLOCK: usize>() {}"),
    // Wrong types.
    ("", "fn k(x: Ptr) {}"),
    ("", "fn k(x: Ptr<Ptr<f32>>) {}"),
    ("", "fn k(x: [f32; 4]) {}"),
    ("", "fn k(x: &mut f32) {}"),
    ("", "fn k(x: String) {}"),
    ("", "fn k(x: Ptr<f32>) { let v = load(x + 1.5); }"),
    ("", "fn k(x: Ptr<f32>) { let v = load(x) + x; }"),
    ("", "fn k(x: Ptr<f32>) { store(x, true); }"),
    ("", "fn k(x: Ptr<f32>) { let v = -load(x + arange(0, 8)) as u32; let w = -v; }"),
    ("", "fn k(x: Ptr<f32>) { let v = !1.5; }"),
    ("", "fn k(x: Ptr<f32>) { let v = 1 && 2; }"),
    ("", "fn k(x: Ptr<f32>) { let v = 300u8; }"),
    ("", "fn k(x: Ptr<f32>) { let v = 1 as bool; }"),
    ("", "fn k(x: Ptr<f32>) { let v = x as Ptr<f16>; }"),
    ("", "fn k(x: Ptr<f32>) { let v = f8e4m3::INFINITY; }"),
    ("", "fn k(x: Ptr<f32>) { let v = \"text\"; }"),
    ("", "fn k(x: Ptr<f32>) { let v = 1 / 0; }"),
    ("", "fn k(n: i32) { if n { } }"),
    ("", "fn k(n: i32) { let mut a = 1; a = 2.5; }"),
    // Unknown operations and names.
    ("", "fn k(x: Ptr<f32>) { let v = softmax(x); }"),
    ("", "fn k(x: Ptr<f32>) { let v = tl::load(x); }"),
    ("", "fn k(x: Ptr<f32>) { let v = load::<f32>(x); }"),
    ("", "fn k(x: Ptr<f32>) { let v = y; }"),
    ("", "fn k(x: Ptr<f32>) { let v = x.to(); }"),
    ("", "fn k(x: Ptr<f32>) { let v = (|a| a)(x); }"),
    ("", "fn k(x: Ptr<f32>) { return; }"),
    ("", "fn k(x: Ptr<f32>) { loop {} }"),
    ("", "fn k(x: Ptr<f32>) { match x { _ => {} } }"),
    ("", "fn k(x: Ptr<f32>) { fn inner() {} }"),
    ("", "fn k(x: Ptr<f32>) { const L: u32 = 1; }"),
    ("", "fn k(x: Ptr<f32>) { let v = convert_layout(zeros::<f32>([8]), 3); }"),
    ("", "fn k(x: Ptr<f32>) { let v = convert_layout(1.0, L); }"),
    ("", "struct NotAFunction;"),
    ("", "impl X { fn k() {} }"),
    ("", "#[inline] fn k() {}"),
    // Huge shapes and constants.
    ("", "fn k() { let t = zeros::<f32>([1 << 62, 1 << 62]); }"),
    ("", "fn k() { let t = zeros::<f32>([4294967296, 4294967296, 4294967296, 4294967296]); }"),
    ("", "fn k() { let t = arange(0, 1 << 40); }"),
    ("", "fn k() { let t = arange(0, 1 << 200); }"),
    ("", "fn k() { let t = arange(0, 340282366920938463463374607431768211455); }"),
    ("", "fn k() { let t = arange(-2147483649, 0); }"),
    ("", "fn k() { let t = arange(5, 5); }"),
    ("", "fn k() { let t = full([0], 1.0); }"),
    ("", "fn k() { let t = full([-4], 1.0); }"),
    ("", "fn k() { let t = zeros::<f32>([65536]).reshape([1 << 63, 2]); }"),
    ("", "fn k() { let t = zeros::<f32>([2]).expand_dims(0).expand_dims(0).expand_dims(0).expand_dims(0).expand_dims(0).expand_dims(0); }"),
    ("", "fn k() { let t = zeros::<f32>([1 << 20]).sum(0); }"),
    ("BLOCK = [18446744073709551616]", "fn k<const BLOCK: usize>() {}"),
    ("BLOCK = [1, 2, 4, 8, 16, 32, 64, 128, 256], B2 = [1, 2, 4, 8, 16, 32, 64, 128]", "fn k<const BLOCK: usize, const B2: usize>() {}"),
    ("num_warps = 64", "fn k() {}"),
    ("num_warps = 0", "fn k() {}"),
    ("num_warps = [4, 4]", "fn k() {}"),
    ("num_warps = [4, 3]", "fn k() {}"),
    ("T = [f16]", "fn k() {}"),
    ("", "fn k<T>(x: Ptr<T>) {}"),
    ("T = [f64x]", "fn k<T>(x: Ptr<T>) {}"),
    ("T = [1]", "fn k<T>(x: Ptr<T>) {}"),
    ("BLOCK = [f32]", "fn k<const BLOCK: usize>() {}"),
    ("T = [f16, f16]", "fn k<T>(x: Ptr<T>) {}"),
    ("T = [f32, i32]", "fn k<T>(x: Ptr<T>) { store(x, load(x).exp()); }"),
    ("BLOCK = [128]", "fn k<const BLOCK: usize>() { let t = arange(0, BLOCK * BLOCK * BLOCK); }"),
];

/// Expands; a panic fails the test with the input that caused it.
fn expand(attr: &TokenStream, item: &TokenStream) -> String {
    let result = catch_unwind(AssertUnwindSafe(|| {
        tile_kernel(attr.clone(), item.clone()).to_string()
    }));
    match result {
        Ok(out) => out,
        Err(_) => panic!("the macro panicked on #[tile_kernel({attr})] {item}"),
    }
}

#[test]
fn every_broken_kernel_gets_an_error() {
    for (attr, item) in BROKEN {
        let attr: TokenStream = attr.parse().expect("corpus attributes lex");
        let item: TokenStream = item.parse().expect("corpus items lex");
        let out = expand(&attr, &item);
        assert!(
            out.contains("compile_error") && analyze(attr.clone(), item.clone()).is_err(),
            "no error for #[tile_kernel({attr})] {item}:\n{out}"
        );
    }
}

const SOFTMAX: &str =
    "fn softmax<const BLOCK: usize>(out: Ptr<f32>, inp: Ptr<f32>, stride: i32, n: i32) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let mask = cols < n;
    let x = load(inp + row * stride + cols, mask, f32::NEG_INFINITY);
    let num = exp(x - x.max(0));
    store(out + row * stride + cols, num / num.sum(0), mask);
}";

const MATMUL: &str = "fn matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f16>, m: i32, n: i32, k: i32, sa: i32, sb: i32, sc: i32) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let rk = arange(0, BK);
    let mut pa = a + rm.expand_dims(1) * sa + rk.expand_dims(0);
    let mut pb = b + rk.expand_dims(1) * sb + rn.expand_dims(0);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in (0..k).step_by(BK) {
        acc = dot(load(pa, rk.expand_dims(0) < k - kk, 0.0), load(pb, rk.expand_dims(1) < k - kk, 0.0), acc);
        pa += BK;
        pb += BK * sb;
    }
    let (lo, hi) = join(acc, acc).split();
    if m > 0 { store(c + rm.expand_dims(1) * sc + rn.expand_dims(0), (lo + hi).to::<f16>()); }
}";

/// The stream with one token tree deleted, for every tree at every depth.
fn deletions(ts: &TokenStream) -> Vec<TokenStream> {
    let trees: Vec<TokenTree> = ts.clone().into_iter().collect();
    let mut out = Vec::new();
    for i in 0..trees.len() {
        let mut without = trees.clone();
        without.remove(i);
        out.push(without.into_iter().collect());
        if let TokenTree::Group(g) = &trees[i] {
            for inner in deletions(&g.stream()) {
                let mut with = trees.clone();
                with[i] = TokenTree::Group(Group::new(g.delimiter(), inner));
                out.push(with.into_iter().collect());
            }
        }
    }
    out
}

/// The stream cut after every token, at every depth (open groups closed, as rustc balances them).
fn truncations(ts: &TokenStream) -> Vec<TokenStream> {
    let trees: Vec<TokenTree> = ts.clone().into_iter().collect();
    let mut out = Vec::new();
    for i in 0..trees.len() {
        out.push(trees[..i].iter().cloned().collect());
        if let TokenTree::Group(g) = &trees[i] {
            for inner in truncations(&g.stream()) {
                let mut cut: Vec<TokenTree> = trees[..i].to_vec();
                cut.push(TokenTree::Group(Group::new(g.delimiter(), inner)));
                out.push(cut.into_iter().collect());
            }
        }
    }
    out
}

#[test]
fn mutations_of_valid_kernels_never_panic() {
    let cases = [
        ("num_warps = 4, BLOCK = [1024, 2048]", SOFTMAX),
        ("num_warps = 8, BM = 64, BN = 64, BK = [32, 64]", MATMUL),
    ];
    let mut checked = 0;
    for (attr, item) in cases {
        let attr: TokenStream = attr.parse().unwrap();
        let item: TokenStream = item.parse().unwrap();
        // The unmutated kernel passes every check.
        assert!(analyze(attr.clone(), item.clone()).is_ok());
        expand(&attr, &item);
        // A mutation the front end rejects expands to an error; one it accepts (deleting a
        // statement can leave a valid kernel) goes through inference and lowering: no panic.
        for variant in deletions(&item).iter().chain(&truncations(&item)) {
            let out = expand(&attr, variant);
            assert!(
                out.contains("compile_error") || analyze(attr.clone(), variant.clone()).is_ok(),
                "no compile_error for {variant}"
            );
            checked += 1;
        }
        for variant in deletions(&attr).iter().chain(&truncations(&attr)) {
            let out = expand(variant, &item);
            assert!(
                out.contains("compile_error") || analyze(variant.clone(), item.clone()).is_ok(),
                "no compile_error for #[tile_kernel({variant})]"
            );
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} mutations");
}
