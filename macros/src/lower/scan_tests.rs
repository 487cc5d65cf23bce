//! Rendered scans: each level of the stored plan becomes register moves, one shuffle per
//! register, or a round through shared memory, and EXPLAIN prints the plan.

use crate::frontend::analyze;
use crate::infer::{explain, infer_with, AlignmentPolicy};
use crate::ir::OpKind;
use crate::lower::{lower_kernel, Facts};
use quote::quote;
use tessera_layout::plan::scan::ScanPlan;

/// The plans of the kernel's scans, the lowered body and the explain text.
fn lowered(num_warps: u32, body: proc_macro2::TokenStream) -> (Vec<ScanPlan>, String, String) {
    let attr: proc_macro2::TokenStream = format!("num_warps = {num_warps}").parse().unwrap();
    let item = quote! {
        fn k(x: Ptr<i32>, out: Ptr<i32>) { #body }
    };
    let mut kernel = analyze(attr, item).unwrap().remove(0);
    let inference = infer_with(&mut kernel, AlignmentPolicy::Aligned).unwrap();
    let mut plans = Vec::new();
    inference.kernel.walk(&mut |op| {
        if let OpKind::Scan { plan, .. } = &op.kind {
            plans.push(*plan.clone().expect("a scan without its plan"));
        }
    });
    let text = lower_kernel(&inference.kernel, &Facts::default())
        .unwrap()
        .body
        .to_string();
    (plans, text, explain(&inference))
}

#[test]
fn a_scan_over_lanes_and_warps_shuffles_and_goes_through_shared_memory() {
    let (plans, text, explained) = lowered(
        4,
        quote! {
            let offs = arange(0, 1024);
            store(out + offs, load(x + offs).cumsum(0));
        },
    );
    let [plan] = plans.as_slice() else {
        panic!("one scan: {plans:?}")
    };
    assert_eq!(plan.levels.len(), 10);
    let (registers, shuffles, shared) = plan.counts();
    assert_eq!(registers + shuffles + shared, 10);
    assert!(shuffles > 0 && shared > 0, "{plan:?}");
    let regs = 1024 / (32 * 4);
    assert_eq!(text.matches("shfl_bfly").count(), shuffles * regs, "{text}");
    assert_eq!(text.matches("ld_shared_elem").count(), shared * regs);
    assert!(explained.contains(&format!("[{plan}]")), "{explained}");
}

#[test]
fn a_scan_within_one_warp_needs_no_shared_memory() {
    let (plans, text, _) = lowered(
        1,
        quote! {
            let rows = arange(0, 8).expand_dims(1);
            let offs = rows * 64 + arange(0, 64).expand_dims(0);
            store(out + offs, load(x + offs).cumsum(1, true));
        },
    );
    let [plan] = plans.as_slice() else {
        panic!("one scan: {plans:?}")
    };
    assert_eq!(plan.counts().2, 0, "{plan:?}");
    assert!(!text.contains("ld_shared_elem"), "{text}");
}
