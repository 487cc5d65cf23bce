//! Whole kernels that pass the front end, and the IR they produce.

use super::ok;
use crate::check::named_type;
use crate::ir::{Kernel, OpKind};
use quote::quote;

fn ops_named(k: &Kernel, name: &str) -> usize {
    let mut n = 0;
    k.walk(&mut |op| n += usize::from(op.kind.name() == name));
    n
}

#[test]
fn softmax() {
    let kernels = ok(
        quote!(num_warps = 4, BLOCK = [1024, 4096]),
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
    assert_eq!(kernels.len(), 2);
    assert_eq!(kernels[1].consts, [("BLOCK".to_string(), 4096)]);
    let k = &kernels[0];
    println!("{k}");
    assert_eq!(named_type(k, "x").unwrap().to_string(), "f32[1024]");
    assert_eq!(named_type(k, "den").unwrap().to_string(), "f32");
    assert_eq!(
        named_type(&kernels[1], "num").unwrap().to_string(),
        "f32[4096]"
    );
    assert_eq!(ops_named(k, "load"), 1);
    assert_eq!(ops_named(k, "store"), 1);
    assert_eq!(ops_named(k, "reduce.max"), 1);
    assert_eq!(ops_named(k, "reduce.sum"), 1);
}

#[test]
fn matmul() {
    let kernels = ok(
        quote!(
            num_warps = 8,
            BLOCK_M = 128,
            BLOCK_N = 128,
            BLOCK_K = [32, 64]
        ),
        quote! {
            fn matmul<const BLOCK_M: usize, const BLOCK_N: usize, const BLOCK_K: usize>(
                a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f16>,
                m: i32, n: i32, k: i32,
                stride_am: i32, stride_ak: i32,
                stride_bk: i32, stride_bn: i32,
                stride_cm: i32, stride_cn: i32,
            ) {
                let rm = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
                let rn = program_id(1) * BLOCK_N + arange(0, BLOCK_N);
                let rk = arange(0, BLOCK_K);
                let mut a_ptrs = a + rm.expand_dims(1) * stride_am + rk.expand_dims(0) * stride_ak;
                let mut b_ptrs = b + rk.expand_dims(1) * stride_bk + rn.expand_dims(0) * stride_bn;
                let mut acc = zeros::<f32>([BLOCK_M, BLOCK_N]);
                for kk in 0..cdiv(k, BLOCK_K) {
                    let k_left = k - kk * BLOCK_K;
                    let a_tile = load(a_ptrs, rk.expand_dims(0) < k_left, 0.0);
                    let b_tile = load(b_ptrs, rk.expand_dims(1) < k_left, 0.0);
                    acc = dot(a_tile, b_tile, acc);
                    a_ptrs += BLOCK_K * stride_ak;
                    b_ptrs += BLOCK_K * stride_bk;
                }
                let c_ptrs = c + rm.expand_dims(1) * stride_cm + rn.expand_dims(0) * stride_cn;
                let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
                store(c_ptrs, acc.to::<f16>(), c_mask);
            }
        },
    );
    assert_eq!(kernels.len(), 2);
    let k = &kernels[0];
    println!("{k}");
    let mut fors = Vec::new();
    k.walk(&mut |op| {
        if let OpKind::For = op.kind {
            fors.push(op.clone());
        }
    });
    assert_eq!(fors.len(), 1);
    let for_op = &fors[0];
    // Carried: a_ptrs, b_ptrs, acc (in order of first assignment: acc, a_ptrs, b_ptrs).
    assert_eq!(for_op.results.len(), 3);
    let carried: Vec<String> = for_op
        .results
        .iter()
        .map(|&r| k.ty(r).to_string())
        .collect();
    assert_eq!(
        carried,
        ["f32[128, 128]", "Ptr<f16>[128, 32]", "Ptr<f16>[32, 128]"]
    );
    assert_eq!(for_op.regions[0].args.len(), 4);
    assert_eq!(for_op.regions[0].yields.len(), 3);
    assert_eq!(ops_named(k, "dot"), 1);
}
