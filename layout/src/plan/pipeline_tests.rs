use super::*;
use crate::plan::access::DimFacts;
use crate::plan::movement::{LdmatrixStep, StoreStep};
use std::vec;

/// An access plan of `elements` f16 registers per vector (register bits 0.. in memory order).
fn access(elements: u32, mask_uniform: bool) -> AccessPlan {
    AccessPlan {
        elements,
        element_bits: 16,
        dim: 1,
        registers: (0..elements.trailing_zeros()).collect(),
        mask_uniform,
        facts: DimFacts {
            contiguity: 8,
            alignment: 8,
            mask_constancy: None,
        },
        layout_elements: 8,
        warp_bytes: 512,
    }
}

/// `[Barrier, Store(vectors of `store` elements in `order`), Barrier, Ldmatrix]` over 16 f16
/// registers.
fn movement(order: &[u32], chunks: Vec<(u32, u32)>, stride: u32) -> Movement {
    let ldmatrix = Step::Ldmatrix(LdmatrixStep {
        matrices: 4,
        transposed: false,
        row_offset: Affine::constant(0),
        chunks: vec![(0, vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]])],
    });
    Movement {
        steps: vec![
            Step::Barrier,
            Step::Store(StoreStep {
                lane_guard: 0,
                warp_guard: 2,
                thread_offset: Affine {
                    constant: 0,
                    lane: vec![16, 32],
                    warp: vec![],
                },
                chunks,
                elements: order.to_vec(),
                stride,
            }),
            Step::Barrier,
            ldmatrix.clone(),
        ],
        src_registers: 16,
        dst_registers: 8,
        element_bits: 16,
        shared_bytes: 4000,
        description: "test".into(),
    }
}

#[test]
fn sixteen_byte_vectors_become_cg_copies_at_the_store_offsets() {
    let m = movement(&[0, 1, 2, 3, 4, 5, 6, 7], vec![(0, 0), (8, 1024)], 2);
    let plan = plan_async_copy(&access(8, true), &m, true).unwrap();
    assert_eq!((plan.bytes, plan.bypass_l1, plan.elements), (16, true, 8));
    assert_eq!(plan.instruction(), "cp.async.cg 16 B");
    assert_eq!(plan.slot_bytes, 4000);
    assert_eq!(plan.groups.len(), 1);
    let g = &plan.groups[0];
    assert_eq!((g.lane_guard, g.warp_guard), (0, 2));
    assert_eq!(g.thread_offset.lane, vec![16, 32]);
    assert_eq!(g.copies, vec![(0, 0), (8, 1024)]);
    assert_eq!(plan.reads.len(), 1);
    assert!(matches!(plan.reads[0], Step::Ldmatrix(_)));
    assert_eq!(plan.dst_registers, 8);
}

#[test]
fn a_narrower_access_splits_each_store_into_runs() {
    let m = movement(&[0, 1, 2, 3, 4, 5, 6, 7], vec![(0, 0), (8, 1024)], 2);
    let plan = plan_async_copy(&access(4, true), &m, true).unwrap();
    assert_eq!((plan.bytes, plan.bypass_l1, plan.elements), (8, false, 4));
    assert_eq!(plan.instruction(), "cp.async.ca 8 B");
    assert_eq!(
        plan.groups[0].copies,
        vec![(0, 0), (4, 8), (8, 1024), (12, 1024 ^ 8)]
    );
}

#[test]
fn a_narrower_store_gives_narrower_copies() {
    let m = movement(&[0, 1, 2, 3], vec![(0, 0), (4, 64), (8, 128), (12, 192)], 2);
    let plan = plan_async_copy(&access(8, true), &m, false).unwrap();
    assert_eq!((plan.bytes, plan.elements), (8, 4));
    assert_eq!(plan.copies_per_thread(), 4);
}

#[test]
fn refusals_say_why() {
    let m = movement(&[0, 1, 2, 3, 4, 5, 6, 7], vec![(0, 0), (8, 1024)], 2);
    let scalar = plan_async_copy(&access(1, true), &m, false).unwrap_err();
    assert!(scalar.contains("2 bytes"), "{scalar}");
    let masked = plan_async_copy(&access(8, false), &m, true).unwrap_err();
    assert!(masked.contains("mask"), "{masked}");
    // An unmasked access needs no uniform mask.
    assert!(plan_async_copy(&access(8, false), &m, false).is_ok());
    let shuffled = movement(&[0, 2, 1, 3, 4, 6, 5, 7], vec![(0, 0), (8, 1024)], 2);
    let err = plan_async_copy(&access(8, true), &shuffled, false).unwrap_err();
    assert!(err.contains("not contiguous"), "{err}");
    let widened = movement(&[0, 1, 2, 3], vec![(0, 0)], 4);
    let err = plan_async_copy(&access(8, true), &widened, false).unwrap_err();
    assert!(err.contains("widens"), "{err}");
    let mut no_store = m.clone();
    no_store.steps.retain(|s| !matches!(s, Step::Store(_)));
    let err = plan_async_copy(&access(8, true), &no_store, false).unwrap_err();
    assert!(err.contains("not a store"), "{err}");
}

#[test]
fn ring_bytes_round_slots_to_16() {
    assert_eq!(ring_bytes(3, &[8192, 4000]), 3 * (8192 + 4000));
    assert_eq!(ring_bytes(2, &[10]), 32);
}
