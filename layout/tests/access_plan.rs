//! The global-memory access planner: vector width, dimension, vector registers, mask predicate
//! and warp coverage from a layout and the proven address facts.

use tessera_layout::families::blocked::blocked;
use tessera_layout::plan::access::{plan_access, DimFacts};
use tessera_layout::{expect_layout, LinearLayout};

fn facts(contiguity: u64, alignment: u64, mask_constancy: Option<u64>) -> DimFacts {
    DimFacts {
        contiguity,
        alignment,
        mask_constancy,
    }
}

/// 4 consecutive f32 per thread, 32 lanes, 4 warps, over 1024 elements.
fn blocked_1024() -> LinearLayout {
    expect_layout(blocked(&[4], &[32], &[4], &[0], &[1024]))
}

#[test]
fn contiguous_aligned_addresses_give_128_bit_vectors() {
    let plan = plan_access(&blocked_1024(), 32, &[facts(1024, 16, None)], false);
    assert_eq!((plan.elements, plan.dim), (4, 0));
    assert_eq!(plan.registers, [0, 1]);
    assert!(plan.mask_uniform);
    assert_eq!(plan.layout_elements, 4);
    // 32 lanes continue the vector: 128 elements of 4 bytes per warp instruction.
    assert_eq!(plan.warp_bytes, 512);
    assert_eq!(plan.vector_starts(4), [0]);
    assert_eq!(plan.vector_registers(0), [0, 1, 2, 3]);
}

#[test]
fn facts_limit_the_width() {
    let l = blocked_1024();
    // 8-byte alignment: 2 f32; 4-byte alignment or contiguity 1: scalar.
    assert_eq!(
        plan_access(&l, 32, &[facts(1024, 8, None)], false).elements,
        2
    );
    let scalar = plan_access(&l, 32, &[facts(1024, 4, None)], false);
    assert_eq!((scalar.elements, scalar.warp_bytes), (1, 4));
    assert!(scalar.registers.is_empty());
    assert_eq!(
        plan_access(&l, 32, &[facts(1, 16, None)], false).elements,
        1
    );
    // Nothing known at all: scalar.
    assert_eq!(plan_access(&l, 32, &[], false).elements, 1);
    // f8: the layout holds 4 consecutive registers, less than 128 bits allow.
    assert_eq!(
        plan_access(&l, 8, &[facts(1024, 16, None)], false).elements,
        4
    );
}

#[test]
fn the_mask_needs_one_predicate_per_vector_only_when_constant_over_it() {
    let l = blocked_1024();
    let uniform = plan_access(&l, 32, &[facts(1024, 16, Some(4))], true);
    assert_eq!((uniform.elements, uniform.mask_uniform), (4, true));
    // A mask constant over 2 elements: the same vectors, checked per element.
    let split = plan_access(&l, 32, &[facts(1024, 16, Some(2))], true);
    assert_eq!((split.elements, split.mask_uniform), (4, false));
    // Masked with nothing known of the mask.
    assert!(!plan_access(&l, 32, &[facts(1024, 16, None)], true).mask_uniform);
}

#[test]
fn the_vector_runs_along_the_contiguous_dimension() {
    // 8 f16 per thread along dim1 of a 32 × 64 tile.
    let l = expect_layout(blocked(&[1, 8], &[4, 8], &[4, 1], &[1, 0], &[32, 64]));
    let rows = facts(1, 16, None);
    let plan = plan_access(&l, 16, &[rows, facts(64, 16, None)], false);
    assert_eq!((plan.elements, plan.dim), (8, 1));
    assert_eq!(plan.registers, [0, 1, 2]);
    // Contiguous along rows instead: each thread's registers run along columns, so scalar.
    let plan = plan_access(&l, 16, &[facts(32, 16, None), facts(1, 16, None)], false);
    assert_eq!(plan.elements, 1);
}
