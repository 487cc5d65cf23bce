//! Tests of layout inference on whole kernels (token streams through the front end).

use super::*;
use crate::tests::ok;
use proc_macro2::TokenStream;
use quote::quote;

/// Every specialisation of a kernel, inferred.
fn infer_all(attr: TokenStream, item: TokenStream) -> Vec<Inference> {
    ok(attr, item)
        .into_iter()
        .map(|mut k| match infer(&mut k) {
            Ok(i) => i,
            Err(e) => panic!("inference failed: {e}\n{k}"),
        })
        .collect()
}

#[test]
fn softmax_debug() {
    let inf = infer_all(
        quote!(num_warps = 4, BLOCK = [1024]),
        quote! {
            fn softmax<const BLOCK: usize>(out: Ptr<f32>, inp: Ptr<f32>, row_stride: i32, n_cols: i32) {
                let row = program_id(0);
                let cols = arange(0, BLOCK);
                let mask = cols < n_cols;
                let x = load(inp + row * row_stride + cols, mask, f32::NEG_INFINITY);
                let shifted = x - x.max(0);
                let num = exp(shifted);
                let den = num.sum(0);
                store(out + row * row_stride + cols, num / den, mask);
            }
        },
    );
    println!("{}", inf[0]);
}
