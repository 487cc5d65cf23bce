use super::*;
use crate::plan::access::DimFacts;
use crate::plan::movement::{LdmatrixStep, StoreStep, VectorAccess};
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
                access: VectorAccess {
                    thread_offset: Affine {
                        constant: 0,
                        lane: vec![16, 32],
                        warp: vec![],
                    },
                    chunks,
                    elements: order.to_vec(),
                    stride,
                },
            }),
            Step::Barrier,
            ldmatrix.clone(),
        ],
        src_registers: 16,
        dst_registers: 8,
        element_bits: 16,
        shared_bytes: 4000,
        description: "test".into(),
        lanes: crate::plan::wave::Lanes::Warp,
    }
}

/// The copies of a masked load of `elements` per vector (uniform mask) into a movement that
/// stores 16-byte vectors at two chunk offsets.
fn sixteen_byte_store_copies(elements: u32) -> AsyncCopyPlan {
    let m = movement(&[0, 1, 2, 3, 4, 5, 6, 7], vec![(0, 0), (8, 1024)], 2);
    plan_async_copy(&access(elements, true), &m, true).unwrap()
}

#[test]
fn sixteen_byte_vectors_become_cg_copies_at_the_store_offsets() {
    let plan = sixteen_byte_store_copies(8);
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
    let plan = sixteen_byte_store_copies(4);
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
fn ring_bytes_round_slots_to_their_alignment() {
    assert_eq!(ring_bytes(3, &[(8192, 16), (4000, 16)]), 3 * (8192 + 4000));
    assert_eq!(ring_bytes(2, &[(10, 16)]), 32);
    // A 1024-byte aligned ring: slots rounded to 1024, and room to align the ring.
    assert_eq!(ring_bytes(4, &[(1000, 1024)]), 4 * 1024 + 1008);
}

/// A `wgmma` operand of `[128, 64]` f16 loaded row-major (8 contiguous elements per thread, 8
/// warps): the copies are 16-byte `cp.async.cg` into the NVMMA layout (128-byte swizzle), and
/// every thread's every copy puts each of its 8 elements at the byte the layout gives it; the
/// copies cover the slot exactly once.
#[test]
fn wgmma_operands_are_copied_into_their_nvmma_layout() {
    use crate::families::Blocked;
    use crate::plan::wgmma_dot::{plan_wgmma_dot, wgmma_shape, WgmmaInput};
    use crate::{Label, LinearLayout};
    let row_major = |shape: [u32; 2]| -> LinearLayout {
        let lanes_1 = (shape[1] / 8).min(32);
        Blocked::new(&[1, 8], &[32 / lanes_1, lanes_1], &[8, 1], &[1, 0])
            .to_linear_layout(&shape)
            .unwrap()
    };
    let shape = wgmma_shape(WgmmaInput::F16, [128, 128, 64], 8).unwrap();
    let (a, b) = (row_major([128, 64]), row_major([64, 128]));
    let plan = plan_wgmma_dot(shape, &a, &b, &shape.accumulator_layout().unwrap()).unwrap();
    for (operand, src, dims) in [(&plan.a, &a, [128u32, 64]), (&plan.b, &b, [64, 128])] {
        let copy =
            plan_wgmma_operand_copy(&access(8, true), operand, plan.alignment, true).unwrap();
        assert_eq!((copy.bytes, copy.bypass_l1, copy.elements), (16, true, 8));
        assert!(copy.reads.is_empty());
        assert_eq!(copy.slot_alignment, plan.alignment);
        assert_eq!(copy.slot_bytes % plan.alignment, 0);
        // Element (row, col) → byte offset in the NVMMA layout.
        let memory = operand.shared.to_linear_layout(&dims).unwrap();
        let mut byte_of = std::collections::HashMap::new();
        for o in 0..dims[0] * dims[1] {
            let c = memory.apply(&[(Label::Offset, o)]).unwrap();
            byte_of.insert((c[0], c[1]), 2 * o);
        }
        let mut written = vec![0u32; (operand.bytes / 16) as usize];
        for warp in 0..8 {
            for lane in 0..32 {
                for g in &copy.groups {
                    if lane & g.lane_guard != 0 || warp & g.warp_guard != 0 {
                        continue;
                    }
                    let thread = g.thread_offset.eval(lane, warp);
                    for &(first, off) in &g.copies {
                        let dst = off ^ thread;
                        assert_eq!(dst % 16, 0);
                        written[(dst / 16) as usize] += 1;
                        for j in 0..8 {
                            let c = src
                                .apply(&[
                                    (Label::Register, first + j),
                                    (Label::Lane, lane),
                                    (Label::Warp, warp),
                                ])
                                .unwrap();
                            assert_eq!(byte_of[&(c[0], c[1])], dst + 2 * j);
                        }
                    }
                }
            }
        }
        assert!(written.iter().all(|&w| w == 1), "{written:?}");
    }
}

#[test]
fn wgmma_operand_copies_need_a_uniform_mask() {
    use crate::families::Blocked;
    use crate::plan::wgmma_dot::{plan_wgmma_dot, wgmma_shape, WgmmaInput};
    let l = Blocked::new(&[1, 8], &[4, 8], &[4, 1], &[1, 0])
        .to_linear_layout(&[64, 64])
        .unwrap();
    let shape = wgmma_shape(WgmmaInput::F16, [64, 64, 64], 4).unwrap();
    let plan = plan_wgmma_dot(shape, &l, &l, &shape.accumulator_layout().unwrap()).unwrap();
    let why =
        plan_wgmma_operand_copy(&access(8, false), &plan.a, plan.alignment, true).unwrap_err();
    assert!(why.contains("mask"), "{why}");
    // Unmasked, the same load is copied.
    assert!(plan_wgmma_operand_copy(&access(8, false), &plan.a, plan.alignment, false).is_ok());
}

/// The TMA boxes of `wgmma` operands: `a` `[128, 64]` f16 (one 128 × 64 box, 128-byte swizzle),
/// `b` `[64, 256]` f16 (four 64 × 64 boxes side by side), and `b` as the transpose of a
/// `[128, 64]` load (attention's `kᵀ`, K-major: one box). The planner checks each element's
/// byte itself; here the boxes and their order are pinned, and an operand whose layout is not
/// the boxes' (a narrower swizzle than a box row) is refused.
#[test]
fn tma_boxes_write_the_wgmma_operands_nvmma_layout() {
    use crate::families::Blocked;
    use crate::plan::wgmma_dot::{plan_wgmma_dot, wgmma_shape, WgmmaInput};
    let row_major = |shape: [u32; 2]| -> crate::LinearLayout {
        let lanes_1 = (shape[1] / 8).min(32);
        Blocked::new(&[1, 8], &[32 / lanes_1, lanes_1], &[8, 1], &[1, 0])
            .to_linear_layout(&shape)
            .unwrap()
    };
    let shape = wgmma_shape(WgmmaInput::F16, [128, 256, 64], 8).unwrap();
    let (a, b) = (row_major([128, 64]), row_major([64, 256]));
    let plan = plan_wgmma_dot(shape, &a, &b, &shape.accumulator_layout().unwrap()).unwrap();
    let tma_a = plan_tma_operand_copy(&plan.a, [128, 64], false).unwrap();
    assert_eq!(tma_a.box_shape, [128, 64]);
    assert_eq!(tma_a.boxes, vec![(0, [0, 0])]);
    assert_eq!((tma_a.bytes, tma_a.swizzle_bytes), (128 * 64 * 2, 128));
    let tma_b = plan_tma_operand_copy(&plan.b, [64, 256], false).unwrap();
    assert_eq!(tma_b.box_shape, [64, 64]);
    let box_bytes = 64 * 64 * 2;
    assert_eq!(
        tma_b.boxes,
        vec![
            (0, [0, 0]),
            (box_bytes, [0, 64]),
            (2 * box_bytes, [0, 128]),
            (3 * box_bytes, [0, 192])
        ]
    );
    // The operand read as its transpose: rows and columns swapped, refused.
    assert!(plan_tma_operand_copy(&plan.a, [64, 128], true).is_err());

    // `q · kᵀ` with `k` loaded `[128, 64]` row-major: `b = kᵀ` is `[64, 128]`, K-major.
    let shape = wgmma_shape(WgmmaInput::F16, [128, 128, 64], 8).unwrap();
    let q = row_major([128, 64]);
    let k_t = {
        let k = row_major([128, 64]);
        crate::families::shape::permute_out_coords(&k, &[1, 0]).unwrap()
    };
    let plan = plan_wgmma_dot(shape, &q, &k_t, &shape.accumulator_layout().unwrap()).unwrap();
    let tma_k = plan_tma_operand_copy(&plan.b, [128, 64], true).unwrap();
    assert_eq!(tma_k.box_shape, [128, 64]);
    assert_eq!(tma_k.boxes, vec![(0, [0, 0])]);
}
