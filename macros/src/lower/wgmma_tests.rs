//! The rendered `wgmma` dot: its calls in the order the PTX memory model needs them.

use crate::frontend::analyze;
use crate::infer::{infer_with, AlignmentPolicy};
use crate::ir::{DotCode, OpKind, Target};
use crate::lower::tests::{device_calls, lower_with_plans};
use crate::lower::{lower_kernel, Facts};
use proc_macro2::TokenStream;
use quote::quote;

/// The test matmul: `acc = dot(a, b, acc)` over `k` steps of `BK`, `epilogue` applied to the
/// accumulator in the loop after the `dot`.
fn matmul_item(epilogue: TokenStream) -> TokenStream {
    quote! {
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
                #epilogue
                a_ptrs += BK;
                b_ptrs += BK * BN;
            }
            store(c + rm.expand_dims(1) * BN + rn.expand_dims(0), acc);
        }
    }
}

fn matmul(num_warps: u32, bm: u32, bn: u32, bk: u32) -> (TokenStream, TokenStream) {
    let attr = format!("num_warps = {num_warps}, BM = {bm}, BN = {bn}, BK = {bk}");
    let item = matmul_item(TokenStream::new());
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

/// A `num_stages = 3` matmul on Hopper (4 warps, 64 × 64 × 32), `epilogue` applied to the
/// accumulator in the loop: its pipeline's explain text and the lowered body's device calls
/// (and the body's tokens as text).
fn pipelined(epilogue: TokenStream) -> (String, Vec<String>, String) {
    let attr: TokenStream = "num_warps = 4, num_stages = 3, BM = 64, BN = 64, BK = 32"
        .parse()
        .unwrap();
    let item = matmul_item(epilogue);
    let mut kernel = analyze(attr, item).unwrap().remove(0);
    kernel.target = Target::Hopper;
    let inference = infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap();
    let [p] = inference.pipelines.as_slice() else {
        panic!("one pipelined loop: {:?}", inference.pipelines);
    };
    let (calls, body) = lower_with_plans(&inference);
    (p.text(), calls, body)
}

#[test]
fn pipelined_hopper_dot_reads_ring_slots_with_one_group_in_flight() {
    let (text, calls, body) = pipelined(quote!());
    assert!(text.contains("3 stages"), "{text}");
    assert!(
        text.contains("cp.async.cg 16 B into a shared ring of 4 ×"),
        "{text}"
    );
    assert!(text.contains("one wgmma group in flight"), "{text}");
    // No stores of the operands in the loop: the copies write the NVMMA layouts (the epilogue
    // after `cp_async_wait_all` converts the accumulator through shared memory).
    let end = calls.iter().position(|c| c == "cp_async_wait_all").unwrap();
    assert!(
        calls[..end].iter().all(|c| !c.starts_with("st_shared")),
        "{calls:?}"
    );
    // The steady state: wait, barrier, the copies of i+2, then the wgmmas; no proxy fence
    // (the slots are written by cp.async, not from registers).
    let wait = calls
        .iter()
        .position(|c| c == "cp_async_wait_group")
        .unwrap();
    assert_eq!(
        &calls[wait..wait + 2],
        ["cp_async_wait_group", "sync_threads"]
    );
    assert!(
        !calls.iter().any(|c| c == "fence_proxy_async_shared_cta"),
        "{calls:?}"
    );
    let after: Vec<&String> = calls[wait..].iter().collect();
    let at = |name: &str| after.iter().position(|c| c.starts_with(name)).unwrap();
    assert!(at("cp_async_cg_zfill") < at("wgmma_fence"));
    assert!(at("wgmma_fence") < at("wgmma_m64n64k16_f16"));
    assert!(at("wgmma_m64n64k16_f16") < at("wgmma_commit_group"));
    assert!(at("wgmma_commit_group") < at("wgmma_wait_group"));
    // wait_group 1 in the loop, wait_group 0 after it (after the copies' wait_all).
    assert!(body.contains("wgmma_wait_group :: < 1"), "{body}");
    let all = body.find("cp_async_wait_all").unwrap();
    assert!(body[all..].contains("wgmma_wait_group :: < 0"));
}

#[test]
fn pipelined_hopper_dot_with_ops_on_the_accumulator_waits_for_each_group() {
    let (text, _, body) = pipelined(quote!(acc = acc * 0.5;));
    assert!(text.contains("wgmma.wait_group 0 per iteration"), "{text}");
    assert!(text.contains("does not carry the dot's result"), "{text}");
    assert!(text.contains("into a shared ring of 3 ×"), "{text}");
    assert!(!body.contains("wgmma_wait_group :: < 1"));
}

/// A warpgroup's block offsets become arithmetic exactly when they step evenly upwards.
#[test]
fn affine_stride_of_block_offsets() {
    assert_eq!(super::affine_stride(&[0, 8192]), Some(8192));
    assert_eq!(super::affine_stride(&[32, 8224, 16416, 24608]), Some(8192));
    assert_eq!(super::affine_stride(&[0, 8192, 16385]), None);
    assert_eq!(super::affine_stride(&[8192, 0]), None);
    assert_eq!(super::affine_stride(&[64]), None);
}
