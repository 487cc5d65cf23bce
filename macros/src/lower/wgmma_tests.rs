//! The rendered `wgmma` dot: its calls in the order the PTX memory model needs them.

use crate::frontend::analyze;
use crate::infer::{infer_with, AlignmentPolicy};
use crate::ir::{DotCode, OpKind, Target};
use crate::lower::{lower_kernel, Facts};
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

/// The device-call names of `tokens` in order (identifiers after `::tessera::device::`).
fn device_calls(tokens: &TokenStream, out: &mut Vec<String>) {
    let tts: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, tt) in tts.iter().enumerate() {
        match tt {
            TokenTree::Group(g) => device_calls(&g.stream(), out),
            TokenTree::Ident(d) if d == "device" => {
                if let Some(TokenTree::Ident(name)) = tts.get(i + 3) {
                    out.push(name.to_string());
                }
            }
            _ => {}
        }
    }
}

fn matmul(num_warps: u32, bm: u32, bn: u32, bk: u32) -> (TokenStream, TokenStream) {
    let attr = format!("num_warps = {num_warps}, BM = {bm}, BN = {bn}, BK = {bk}");
    let item = quote! {
        fn mm<const BM: usize, const BN: usize, const BK: usize>(
            a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>, k: i32,
        ) {
            let rm = arange(0, BM);
            let rn = arange(0, BN);
            let rk = arange(0, BK);
            let mut a_ptrs = a + rm.expand_dims(1) * BK + rk.expand_dims(0);
            let mut b_ptrs = b + rk.expand_dims(1) * BN + rn.expand_dims(0);
            let mut acc = zeros::<f32>([BM, BN]);
            for kk in 0..k {
                acc = dot(load(a_ptrs), load(b_ptrs), acc);
                a_ptrs += BK;
                b_ptrs += BK * BN;
            }
            store(c + rm.expand_dims(1) * BN + rn.expand_dims(0), acc);
        }
    };
    (attr.parse().unwrap(), item)
}

fn lowered(num_warps: u32, shape: [u32; 3], target: Target) -> (Vec<String>, Option<DotCode>) {
    let (attr, item) = matmul(num_warps, shape[0], shape[1], shape[2]);
    let mut kernel = analyze(attr, item).unwrap().remove(0);
    kernel.target = target;
    let inference = infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap();
    let mut code = None;
    inference.kernel.walk(&mut |op| {
        if let OpKind::Dot { plan: Some(p) } = &op.kind {
            code = Some((**p).clone());
        }
    });
    let body = lower_kernel(&inference.kernel, &Facts::default())
        .unwrap()
        .body;
    let mut calls = Vec::new();
    device_calls(&body, &mut calls);
    (calls, code)
}

#[test]
fn hopper_dot_stores_fences_issues_commits_and_waits_in_order() {
    let (calls, code) = lowered(8, [128, 128, 64], Target::Hopper);
    let Some(DotCode::Wgmma(plan)) = code else {
        panic!("a wgmma plan on Hopper: {code:?}");
    };
    assert_eq!((plan.shape.instr_n, plan.shape.warpgroups), (128, [2, 1]));
    // The dot's calls: up to its wait (a conversion of the result follows).
    let end = calls.iter().position(|c| c == "wgmma_wait_group").unwrap();
    let calls = &calls[..=end];
    let first = |name: &str| calls.iter().position(|c| c.starts_with(name)).unwrap();
    let last = |name: &str| calls.iter().rposition(|c| c.starts_with(name)).unwrap();
    let wgmma = calls
        .iter()
        .filter(|c| c.starts_with("wgmma_m64n128k16_f16"))
        .count();
    assert_eq!(wgmma, 4, "{calls:?}");
    let fence_async = first("fence_proxy_async_shared_cta");
    assert!(last("st_shared_v") < fence_async, "{calls:?}");
    assert!(fence_async < first("wgmma_fence"));
    assert_eq!(calls[fence_async + 1], "sync_threads");
    assert!(first("wgmma_fence") < first("wgmma_m64n"));
    assert!(last("wgmma_m64n") < first("wgmma_commit_group"));
    assert!(first("wgmma_commit_group") < first("wgmma_wait_group"));
    assert!(
        calls.iter().all(|c| !c.starts_with("mma_m16n8")),
        "{calls:?}"
    );
}

#[test]
fn ampere_and_small_hopper_dots_use_mma_sync() {
    let (calls, code) = lowered(8, [128, 128, 64], Target::Ampere);
    assert!(matches!(
        code,
        Some(DotCode::MmaSync { fallback: None, .. })
    ));
    assert!(calls.iter().all(|c| !c.starts_with("wgmma")), "{calls:?}");
    // 2 warps are no warpgroup: mma.sync, with the reason.
    let (calls, code) = lowered(2, [64, 64, 32], Target::Hopper);
    let Some(DotCode::MmaSync {
        fallback: Some(why),
        ..
    }) = code
    else {
        panic!("mma.sync with a reason: {code:?}");
    };
    assert!(why.contains("num_warps = 2"), "{why}");
    assert!(
        calls.iter().any(|c| c.starts_with("mma_m16n8")),
        "{calls:?}"
    );
}
