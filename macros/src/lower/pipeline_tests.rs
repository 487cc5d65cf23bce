//! Pipelined loops with several dots: flash attention's `s = q · kᵀ` and `acc = dot(p, v, acc)`
//! on sm_90a, `k` and `v` copied into rings of their own.

use crate::frontend::analyze;
use crate::infer::{infer_with, AlignmentPolicy, Inference};
use crate::ir::Target;
use crate::lower::tests::lower_with_plans;
use proc_macro2::TokenStream;
use quote::quote;

/// The flash-attention kernel of the guide (`docs/guide/tutorials/src/attention.rs`: f16, causal
/// or not by its `CAUSAL` parameter, the body of `kernels/tiled/attention/src/lib.rs`), without its
/// attributes: the attribute is the test's.
fn attention_item() -> TokenStream {
    let tutorial = include_str!("../../../docs/guide/tutorials/src/attention.rs");
    let file: syn::File = syn::parse_str(tutorial).expect("the tutorial parses");
    let mut kernel = file
        .items
        .into_iter()
        .find_map(|item| match item {
            syn::Item::Fn(f) if f.sig.ident == "attention" => Some(f),
            _ => None,
        })
        .expect("the tutorial defines `fn attention`");
    kernel.attrs.clear();
    quote!(#kernel)
}

/// The attention kernel, not causal, inferred for `target` with `attr`.
fn attention(attr: &str, target: Target) -> Inference {
    let attr = format!("{attr}, CAUSAL = 0");
    let mut kernel = analyze(attr.parse().unwrap(), attention_item())
        .unwrap()
        .remove(0);
    kernel.target = target;
    infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap()
}

/// `k` and `v` get rings of their own (`k` through its transpose), `q` is stored from registers
/// and `p` read from registers (`_rs`: its layout, the first dot's accumulator, holds the A
/// fragments); one `cp.async` group per iteration holds both rings' copies. The first dot waits
/// for its own `wgmma` group; the second's group stays in flight into the next iteration, where
/// the first dot's wait retires it before `acc` is read (the rings get a fourth slot).
#[test]
fn attention_pipelines_k_and_v_into_rings_of_their_own() {
    let inf = attention(
        "num_warps = 4, num_stages = 3, BM = 64, BN = 64, D = 64",
        Target::Hopper,
    );
    let [p] = inf.pipelines.as_slice() else {
        panic!("one pipelined loop: {:?}", inf.pipelines);
    };
    let loads: Vec<&str> = p.loads.iter().map(|l| l.what.as_str()).collect();
    assert_eq!(
        loads,
        ["k_tile f16[64, 64]", "v_tile f16[64, 64]"],
        "{}",
        p.text()
    );
    assert!(p.loads[0].transposed.is_some() && p.loads[1].transposed.is_none());
    assert_eq!(p.wgmma.len(), 2, "{}", p.text());
    assert_eq!(p.wgmma[0].rings, [None, Some(0)]);
    assert_eq!(p.wgmma[1].rings, [None, Some(1)]);
    assert!(p
        .wgmma
        .iter()
        .all(|w| w.in_flight == 0 && w.synchronous.is_some()));
    assert_eq!(p.wgmma[0].deferred, None);
    let deferred = p.wgmma[1]
        .deferred
        .as_ref()
        .expect("p · v retired in the next iteration");
    assert_eq!(deferred.retired_by, p.wgmma[0].dot);
    assert_eq!(p.slots(), 4);
    let text = p.text();
    assert!(
        text.contains("its group left in flight into the next iteration"),
        "{text}"
    );
    assert!(text.contains("k_tile f16[64, 64] from its ring"), "{text}");
    assert!(
        text.contains("(a stored once before the loop, k_tile"),
        "{text}"
    );
    assert_eq!(
        p.wgmma[0].hoisted,
        [true, false],
        "q is from before the loop"
    );
    assert!(text.contains("(a from registers, v_tile"), "{text}");

    let (calls, body) = lower_with_plans(&inf);
    let count = |name: &str| calls.iter().filter(|c| *c == name).count();
    // 4 copies per thread per ring, issued in the prologue and in the steady state.
    assert_eq!(count("cp_async_cg_zfill"), 2 * (4 + 4), "{calls:?}");
    assert_eq!(count("cp_async_commit_group"), 2, "{calls:?}");
    assert_eq!(count("cp_async_wait_group"), 1, "{calls:?}");
    assert!(body.contains("cp_async_wait_group :: < 1u32 >"), "{body}");
    // Before the loop the first dot's `a` (q: 4 vector stores) is stored once and fenced. The
    // loop: wait, barrier (no proxy fence: the rings are written by cp.async), issue ahead, then the first dot issues 4 wgmmas on q's region
    // and k's slot and waits for its group, which also retires the second dot's group of the
    // previous iteration (a second wait tied to its accumulator); the second issues 4 wgmmas
    // with A from p's registers and commits; after the loop a wait retires its last group.
    let wait = calls
        .iter()
        .position(|c| c == "cp_async_wait_group")
        .unwrap();
    assert_eq!(
        calls[wait..wait + 2],
        ["cp_async_wait_group", "sync_threads"]
    );
    assert_eq!(
        count("fence_proxy_async_shared_cta"),
        1,
        "q's only: {calls:?}"
    );
    assert_eq!(count("wgmma_m64n64k16_f16"), 4, "{calls:?}");
    assert_eq!(count("wgmma_m64n64k16_f16_rs"), 4, "{calls:?}");
    assert_eq!(count("wgmma_wait_group"), 3, "{calls:?}");
    assert_eq!(count("wgmma_commit_group"), 2, "{calls:?}");
    let commits: Vec<usize> = (0..calls.len())
        .filter(|&i| calls[i] == "wgmma_commit_group")
        .collect();
    assert_eq!(
        calls[commits[0] + 1..commits[0] + 3],
        ["wgmma_wait_group", "wgmma_wait_group"],
        "the first dot's wait, then the deferred group's"
    );
    let after_second = &calls[commits[1]..];
    let next_wait = after_second.iter().position(|c| c == "wgmma_wait_group");
    let wait_all = after_second.iter().position(|c| c == "cp_async_wait_all");
    assert!(
        wait_all < next_wait,
        "no wait between the second dot's commit and the end of the loop: {calls:?}"
    );
    assert!(body.contains("wgmma_wait_group :: < 0"), "{body}");
    assert!(!body.contains("wgmma_wait_group :: < 1"), "{body}");
    assert_eq!(
        count("st_shared_v4"),
        4 + 4,
        "q once before the loop and the output conversion"
    );
    assert_eq!(count("st_shared_v1"), 0, "p is not stored");
    // q's stores come before the loop's wait, followed by their fence; in the loop nothing is
    // stored before the first dot's wgmmas.
    let q_stores = calls[..wait]
        .iter()
        .rposition(|c| c == "st_shared_v4")
        .expect("q stored before the loop");
    assert_eq!(calls[q_stores + 1], "fence_proxy_async_shared_cta");
    let first_dot = calls.iter().position(|c| c == "wgmma_fence").unwrap();
    assert!(first_dot > wait);
    assert!(
        !calls[wait..first_dot]
            .iter()
            .any(|c| c.starts_with("st_shared")),
        "{:?}",
        &calls[wait..first_dot]
    );
    assert!(
        calls.iter().position(|c| c == "cp_async_wait_all").unwrap()
            < calls.iter().rposition(|c| c == "wgmma_wait_group").unwrap(),
        "the deferred group is retired after the loop"
    );
}

/// Without `num_stages` nothing is planned, and on sm_80 (`mma.sync`) the loop still pipelines
/// `v` (its conversion to the dot operand goes through shared memory).
#[test]
fn attention_on_sm80_pipelines_through_conversions() {
    let off = attention("num_warps = 4, BM = 64, BN = 64, D = 64", Target::Hopper);
    assert!(off.pipelines.is_empty());
    let inf = attention(
        "num_warps = 4, num_stages = 2, BM = 64, BN = 64, D = 64",
        Target::Ampere,
    );
    let [p] = inf.pipelines.as_slice() else {
        panic!("one pipelined loop: {:?}", inf.pipelines);
    };
    assert!(p.wgmma.is_empty(), "{}", p.text());
    assert!(
        p.loads.iter().any(|l| l.what.starts_with("v_tile")),
        "{}",
        p.text()
    );
    let (calls, _) = lower_with_plans(&inf);
    assert!(
        calls.iter().any(|c| c == "cp_async_wait_group"),
        "{calls:?}"
    );
}

/// A matmul of two `k` loops, each with its own `num_stages(…)` or none (`""`), inferred for
/// sm_90a with the attribute `attr`: the pipelined loops' labels and stages, in body order.
fn two_loop_stages(attr: &str, first: &str, second: &str) -> Vec<(String, u32)> {
    let range = |stages: &str| -> TokenStream {
        let range = quote!((0..k));
        if stages.is_empty() {
            range
        } else {
            let s: TokenStream = stages.parse().unwrap();
            quote!(#range.num_stages(#s))
        }
    };
    let (r1, r2) = (range(first), range(second));
    let item = quote! {
        fn mm<const BM: usize, const BN: usize, const BK: usize>(
            a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>, k: i32,
        ) {
            let rm = arange(0, BM);
            let rn = arange(0, BN);
            let rk = arange(0, BK);
            let a_ptrs = a + rm.expand_dims(1) * BK + rk.expand_dims(0);
            let b_ptrs = b + rk.expand_dims(1) * BN + rn.expand_dims(0);
            let mut acc = zeros::<f32>([BM, BN]);
            for first in #r1 {
                acc = dot(load(a_ptrs + first * BK), load(b_ptrs + first * BK * BN), acc);
            }
            for second in #r2 {
                acc = dot(load(a_ptrs + second * BK), load(b_ptrs + second * BK * BN), acc);
            }
            store(c + rm.expand_dims(1) * BN + rn.expand_dims(0), acc);
        }
    };
    let mut kernel = analyze(attr.parse().unwrap(), item).unwrap().remove(0);
    kernel.target = Target::Hopper;
    let inf = infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap();
    inf.pipelines
        .iter()
        .map(|p| (p.label.clone(), p.stages))
        .collect()
}

/// `(a..b).num_stages(S)` (Triton's `tl.range(…, num_stages=S)`) sets one loop's depth: it
/// pipelines a loop of a kernel without the attribute, replaces the attribute's depth for its
/// loop only, and `num_stages(1)` keeps its loop unpipelined.
#[test]
fn a_loop_sets_its_own_num_stages() {
    let attr = "num_warps = 4, BM = 64, BN = 64, BK = 32";
    let own = |s: u32| ("first".to_string(), s);
    let second = |s: u32| ("second".to_string(), s);
    assert_eq!(two_loop_stages(attr, "", ""), []);
    assert_eq!(two_loop_stages(attr, "3", ""), [own(3)]);
    assert_eq!(two_loop_stages(attr, "2", "4"), [own(2), second(4)]);
    let attr = "num_warps = 4, num_stages = 3, BM = 64, BN = 64, BK = 32";
    assert_eq!(two_loop_stages(attr, "", ""), [own(3), second(3)]);
    assert_eq!(two_loop_stages(attr, "1", ""), [second(3)]);
    assert_eq!(two_loop_stages(attr, "2", ""), [own(2), second(3)]);
}

/// A loop's `num_stages` is a literal from 1 to 8, and a loop without a `dot` has nothing to
/// pipeline: each an error at the argument.
#[test]
fn a_loops_num_stages_is_checked_at_its_argument() {
    let message = |body: TokenStream| -> String {
        let item = quote! {
            fn k(x: Ptr<f32>, n: i32) {
                let mut acc = zeros::<f32>([16]);
                #body
                store(x + arange(0, 16), acc);
            }
        };
        match analyze("num_warps = 4".parse().unwrap(), item) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    };
    for bad in [quote!(0), quote!(9), quote!(n), quote!(3u32)] {
        let text = message(quote! {
            for i in (0..n).num_stages(#bad) {
                acc = acc + load(x + i * 16 + arange(0, 16));
            }
        });
        assert!(
            text.contains("`num_stages` of a loop is one integer literal from 1"),
            "{bad}: {text}"
        );
    }
    let text = message(quote! {
        for i in (0..n).num_stages(3) {
            acc = acc + load(x + i * 16 + arange(0, 16));
        }
    });
    assert!(
        text.contains("`num_stages(3)` on a loop that computes no `dot`"),
        "{text}"
    );
    // The planner pipelines a loop whose own body computes the `dot`, not an outer loop.
    let item = quote! {
        fn k(a: Ptr<f16>, c: Ptr<f32>, n: i32) {
            let r = arange(0, 16);
            let tile = r.expand_dims(1) * 16 + r.expand_dims(0);
            let mut acc = zeros::<f32>([16, 16]);
            for i in (0..n).num_stages(3) {
                for j in 0..n {
                    let x = load(a + (i + j) * 256 + tile);
                    acc = dot(x, x, acc);
                }
            }
            store(c + tile, acc);
        }
    };
    let text = match analyze("num_warps = 4".parse().unwrap(), item) {
        Ok(_) => panic!("accepted a dot only in a nested loop"),
        Err(e) => e.to_string(),
    };
    assert!(
        text.contains("`num_stages(3)` on a loop that computes no `dot`"),
        "{text}"
    );
    let unpipelined = quote! {
        for i in (0..n).step_by(2).num_stages(1) {
            acc = acc + load(x + i * 16 + arange(0, 16));
        }
        store(x + arange(0, 16), acc);
    };
    let item = quote!(fn k(x: Ptr<f32>, n: i32) { let mut acc = zeros::<f32>([16]); #unpipelined });
    assert!(analyze("num_warps = 4".parse().unwrap(), item).is_ok());
}

/// Pointers moved by the same scalar each iteration (`a_ptrs += step`, `b_ptrs += BK * n`) are
/// copied ahead as their value before the loop plus one running offset, so the copies' addresses
/// are `base + offset` and the loop carries one scalar per pointer tile; a pointer moved by the
/// induction variable keeps a copy advanced by its yield.
#[test]
fn pointers_moved_by_an_invariant_step_are_issued_as_base_plus_offset() {
    let item = quote! {
        fn mm<const BM: usize, const BN: usize, const BK: usize>(
            a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>, k: i32, n: i32, step: i32,
        ) {
            let rm = arange(0, BM);
            let rn = arange(0, BN);
            let rk = arange(0, BK);
            let mut a_ptrs = a + rm.expand_dims(1) * BK + rk.expand_dims(0);
            let mut b_ptrs = b + rk.expand_dims(1) * n + rn.expand_dims(0);
            let mut acc = zeros::<f32>([BM, BN]);
            for kk in (0..k).num_stages(3) {
                acc = dot(load(a_ptrs), load(b_ptrs), acc);
                a_ptrs += step;
                b_ptrs += kk * BK * n;
            }
            store(c + rm.expand_dims(1) * BN + rn.expand_dims(0), acc);
        }
    };
    let attr = "num_warps = 4, BM = 64, BN = 64, BK = 32";
    for target in [Target::Hopper, Target::Ampere] {
        let mut kernel = analyze(attr.parse().unwrap(), item.clone())
            .unwrap()
            .remove(0);
        kernel.target = target;
        let inf = infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap();
        let [p] = inf.pipelines.as_slice() else {
            panic!("one pipelined loop: {:?}", inf.pipelines);
        };
        assert_eq!(p.loads.len(), 2, "{}", p.text());
        let steps: Vec<(&str, bool)> = p
            .carried
            .iter()
            .map(|c| (c.name.as_str(), c.step.is_some()))
            .collect();
        assert_eq!(steps, [("a_ptrs", true), ("b_ptrs", false)], "{target:?}");
        // The issue ops advance `b_ptrs` by its yield, and not `a_ptrs` (its running offset
        // does): the `addptr` of `b_ptrs += …` is issued, the one of `a_ptrs += step` is not.
        let body = &kernel
            .body
            .ops
            .iter()
            .find(|op| matches!(op.kind, crate::ir::OpKind::For))
            .expect("the loop")
            .regions[0];
        let issued_yields: Vec<bool> = p
            .carried
            .iter()
            .map(|c| {
                let yielded = body.yields[c.carried];
                p.issue_ops
                    .iter()
                    .any(|&i| body.ops[i].results.contains(&yielded))
            })
            .collect();
        assert_eq!(issued_yields, [false, true], "{target:?}");
        let text = p.text();
        assert!(
            text.contains(
                "the copies address `a_ptrs` as the pointers before the loop plus one running \
                 offset"
            ),
            "{text}"
        );
        let (_, body) = lower_with_plans(&inf);
        // One running offset advanced by `step` (the prologue's and the steady state's issue),
        // and the copies' pointers made from it.
        let advances = body.matches("wrapping_add (v5_step as isize)").count();
        assert_eq!(advances, 2, "{target:?}");
        // (`__tessera_base__r0`: register 0 of the pointers before the loop, `super::scalarise`.)
        assert!(body.contains("__tessera_base__r0 . offset ("), "{target:?}");
    }
}

/// A matmul whose K loop reads `a` and `b` by `load_block`, as inferred for the aligned sm_90a
/// variant with `attr`.
fn block_matmul(attr: &str) -> Inference {
    block_matmul_with(attr, AlignmentPolicy::Aligned)
}

/// [`block_matmul`] inferred under `policy`.
fn block_matmul_with(attr: &str, policy: AlignmentPolicy) -> Inference {
    let item = quote! {
        fn block_matmul<const BM: usize, const BN: usize, const BK: usize>(
            a: Tensor<f16, 2>,
            b: Tensor<f16, 2>,
            c: Tensor<f16, 2>,
        ) {
            let (m0, n0) = (program_id(0) * BM, program_id(1) * BN);
            let mut acc = zeros::<f32>([BM, BN]);
            for kk in 0..cdiv(a.size(1), BK) {
                let a_tile = load_block(a, [m0, kk * BK], [BM, BK]);
                let b_tile = load_block(b, [kk * BK, n0], [BK, BN]);
                acc = dot(a_tile, b_tile, acc);
            }
            let rm = m0 + arange(0, BM);
            let rn = n0 + arange(0, BN);
            store(
                c + rm.expand_dims(1) * c.stride(0) + rn.expand_dims(0) * c.stride(1),
                acc.to::<f16>(),
                (rm.expand_dims(1) < c.size(0)) & (rn.expand_dims(0) < c.size(1)),
            );
        }
    };
    let mut kernel = crate::tests::analyze_desugared(attr.parse().unwrap(), item)
        .unwrap()
        .remove(0);
    kernel.target = Target::Hopper;
    infer_with(&mut kernel, policy).unwrap()
}

/// `load_block` ring loads of the aligned sm_90a variant are copied by TMA: thread 0 expects
/// the slot's bytes on its mbarrier and issues one box for `a` (128 × 64, 128-byte swizzle)
/// and two for `b` (64 × 64 each, side by side), in the prologue and in the steady state; every thread waits on the slot's mbarrier at
/// the phase of its use; the maps are hidden parameters; no `cp.async` remains.
#[test]
fn block_loads_of_aligned_tensors_are_copied_by_tma() {
    let inf = block_matmul("num_warps = 8, num_stages = 3, BM = 128, BN = 128, BK = 64");
    let [p] = inf.pipelines.as_slice() else {
        panic!("one pipelined loop: {:?}", inf.pipelines);
    };
    assert!(p.uses_tma(), "{}", p.text());
    let boxes: Vec<usize> = p
        .loads
        .iter()
        .map(|l| l.tma.as_ref().unwrap().plan.boxes.len())
        .collect();
    assert_eq!(boxes, [1, 2], "{}", p.text());
    let text = p.text();
    assert!(text.contains("TMA cp.async.bulk.tensor.2d"), "{text}");
    assert!(text.contains("phase parity"), "{text}");
    let (calls, body) = lower_with_plans(&inf);
    let count = |name: &str| calls.iter().filter(|c| c.as_str() == name).count();
    // The issue code is written twice: the prologue's and the steady state's.
    assert_eq!(count("tma_load_2d"), 6, "{calls:?}");
    assert_eq!(count("mbarrier_arrive_expect_tx"), 2, "{calls:?}");
    assert_eq!(count("mbarrier_wait_parity"), 1, "{calls:?}");
    assert_eq!(
        count("cp_async_cg_zfill") + count("cp_async_commit_group"),
        0,
        "{calls:?}"
    );
    assert!(body.contains("__tessera_map0") && body.contains("__tessera_map1"));
}

/// The unaligned variant (nothing assumed of the tensors' alignment, so no 16-byte vectors)
/// copies nothing by TMA (the boxes need 16-byte aligned rows); its element-wide loads are
/// not pipelined at all.
#[test]
fn block_loads_without_alignment_are_not_copied_by_tma() {
    let inf = block_matmul_with(
        "num_warps = 8, num_stages = 3, BM = 128, BN = 128, BK = 64",
        AlignmentPolicy::Natural,
    );
    let [p] = inf.pipelines.as_slice() else {
        panic!("one pipelined loop: {:?}", inf.pipelines);
    };
    assert!(!p.uses_tma(), "{}", p.text());
    let (calls, _) = lower_with_plans(&inf);
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("tma") || c.starts_with("mbarrier")),
        "{calls:?}"
    );
}

/// A batched matmul over rank-3 tensors (`[batch, m, k]`): the blocks of one batch entry are
/// copied by 3-D TMA boxes, the batch index the boxes' third coordinate.
#[test]
fn block_loads_of_rank_3_tensors_are_copied_by_3d_tma() {
    let item = quote! {
        fn batched<const BM: usize, const BN: usize, const BK: usize>(
            a: Tensor<f16, 3>,
            b: Tensor<f16, 3>,
            c: Tensor<f16, 3>,
        ) {
            let z = program_id(2);
            let (m0, n0) = (program_id(0) * BM, program_id(1) * BN);
            let mut acc = zeros::<f32>([BM, BN]);
            for kk in 0..cdiv(a.size(2), BK) {
                let a_tile = load_block(a, [z, m0, kk * BK], [BM, BK]);
                let b_tile = load_block(b, [z, kk * BK, n0], [BK, BN]);
                acc = dot(a_tile, b_tile, acc);
            }
            let rm = m0 + arange(0, BM);
            let rn = n0 + arange(0, BN);
            store(
                c + z * c.stride(0) + rm.expand_dims(1) * c.stride(1) + rn.expand_dims(0) * c.stride(2),
                acc.to::<f16>(),
                (rm.expand_dims(1) < c.size(1)) & (rn.expand_dims(0) < c.size(2)),
            );
        }
    };
    let attr = "num_warps = 4, num_stages = 3, BM = 64, BN = 128, BK = 64";
    let mut kernel = crate::tests::analyze_desugared(attr.parse().unwrap(), item)
        .unwrap()
        .remove(0);
    kernel.target = Target::Hopper;
    let inf = infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap();
    let [p] = inf.pipelines.as_slice() else {
        panic!("one pipelined loop: {:?}", inf.pipelines);
    };
    assert!(p.uses_tma(), "{}", p.text());
    let (calls, body) = lower_with_plans(&inf);
    let count = |name: &str| calls.iter().filter(|c| c.as_str() == name).count();
    // `a`: one 64 × 64 box, `b`: two 64 × 64 boxes; prologue and steady state.
    assert_eq!(count("tma_load_3d"), 6, "{calls:?}");
    assert_eq!(count("tma_load_2d"), 0, "{calls:?}");
    assert!(body.contains("__tessera_map1"), "{body}");
}
