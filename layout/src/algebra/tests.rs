use super::*;
use crate::expect_layout;
use std::string::ToString;
use Label::*;

/// A blocked layout over a 32×8 tile: 4 registers along dim1, 32 lanes (2 along dim1, 16
/// along dim0), 2 warps along dim0.
const BLOCKED: LinearLayout = expect_layout(LinearLayout::distributed(
    &[
        (Register, &[&[0, 1], &[0, 2]]),
        (Lane, &[&[0, 4], &[1, 0], &[2, 0], &[4, 0], &[8, 0]]),
        (Warp, &[&[16, 0]]),
    ],
    &[(Dim(0), 32), (Dim(1), 8)],
));

/// The algebra runs in `const` evaluation.
const BLOCKED_INVERSE: LinearLayout = expect_layout(BLOCKED.invert());
const BLOCKED_ROUND_TRIP: LinearLayout = expect_layout(BLOCKED.compose(&BLOCKED_INVERSE));

fn layout(bases: &[(Label, &[&[u32]])], outs: &[(Label, u32)]) -> LinearLayout {
    LinearLayout::from_bases(bases, outs).unwrap()
}

#[test]
fn invert_then_compose_is_identity() {
    let identity = layout(
        &[
            (Register, &[&[1, 0, 0], &[2, 0, 0]]),
            (
                Lane,
                &[&[0, 1, 0], &[0, 2, 0], &[0, 4, 0], &[0, 8, 0], &[0, 16, 0]],
            ),
            (Warp, &[&[0, 0, 1]]),
        ],
        &[(Register, 4), (Lane, 32), (Warp, 2)],
    );
    assert_eq!(BLOCKED_ROUND_TRIP, identity);
    // dim0 = 1 is lane 2; dim1 = 4 is lane 1.
    assert_eq!(
        BLOCKED_INVERSE.apply(&[(Dim(0), 1)]).unwrap()[..3],
        [0, 2, 0]
    );
    assert_eq!(
        BLOCKED_INVERSE.apply(&[(Dim(1), 4)]).unwrap()[..3],
        [0, 1, 0]
    );
}

#[test]
fn compose_evaluates_each_basis_through_the_outer_layout() {
    // self: register → dim0 (x ↦ 2x); outer: dim0 → offset with a swizzle-like XOR.
    let inner = layout(&[(Register, &[&[2], &[4]])], &[(Dim(0), 8)]);
    let outer = layout(&[(Dim(0), &[&[1], &[3], &[4]])], &[(Offset, 8)]);
    let c = inner.compose(&outer).unwrap();
    assert_eq!(c, layout(&[(Register, &[&[3], &[4]])], &[(Offset, 8)]));
    // Output dimension not an input of outer, or larger than it.
    let other = layout(&[(Dim(1), &[&[1]])], &[(Offset, 2)]);
    assert_eq!(
        inner.compose(&other).unwrap_err().to_string(),
        "invalid linear layout: cannot compose: an output dimension of the inner layout is not an input dimension of the outer layout"
    );
    let small = layout(&[(Dim(0), &[&[1], &[2]])], &[(Offset, 4)]);
    assert!(inner.compose(&small).is_err());
}

#[test]
fn transposes_and_sublayouts_keep_the_map() {
    let t = BLOCKED.transpose_outs(&[Dim(1), Dim(0)]).unwrap();
    assert_eq!(t.out_label(0), Dim(1));
    assert_eq!(t.basis(Lane, 0).unwrap()[..2], [4, 0]);
    assert_eq!(t.transpose_outs(&[Dim(0), Dim(1)]).unwrap(), BLOCKED);
    let t = BLOCKED.transpose_ins(&[Warp, Register, Lane]).unwrap();
    assert_eq!(t.in_label(0), Warp);
    assert_eq!(t.transpose_ins(&[Register, Lane, Warp]).unwrap(), BLOCKED);
    assert_eq!(
        BLOCKED.transpose_ins(&[Warp, Register]).unwrap_err(),
        LayoutError::Incompatible {
            what: "a new order of dimensions must list every dimension of the layout exactly once"
        }
    );
    assert_eq!(
        BLOCKED.transpose_outs(&[Dim(0), Dim(0)]).unwrap_err(),
        LayoutError::DuplicateDim { dim: Dim(0) }
    );
    let s = BLOCKED.sublayout(&[Lane], &[Dim(1)]).unwrap();
    assert_eq!(
        s,
        layout(&[(Lane, &[&[4], &[0], &[0], &[0], &[0]])], &[(Dim(1), 8)])
    );
    assert_eq!(
        BLOCKED.sublayout(&[Offset], &[]).unwrap_err(),
        LayoutError::UnknownDim { dim: Offset }
    );
}

#[test]
fn reshapes_regroup_bits_first_dimension_minor() {
    // 32×8 → 256: dim1's bits sit above dim0's.
    let flat = BLOCKED.reshape_outs(&[(Dim(0), 256)]).unwrap();
    assert_eq!(flat.basis(Register, 0).unwrap()[0], 32);
    assert_eq!(flat.basis(Warp, 0).unwrap()[0], 16);
    assert_eq!(
        flat.reshape_outs(&[(Dim(0), 32), (Dim(1), 8)]).unwrap(),
        BLOCKED
    );
    assert_eq!(BLOCKED.flatten_outs().unwrap(), flat);
    let ins = BLOCKED
        .reshape_ins(&[(Register, 8), (Lane, 16), (Warp, 2)])
        .unwrap();
    assert_eq!(ins.basis(Register, 2).unwrap()[..2], [0, 4]);
    assert_eq!(ins.in_bits(Lane), 4);
    assert!(BLOCKED.reshape_ins(&[(Register, 8)]).is_err());
    assert!(BLOCKED.reshape_outs(&[(Dim(0), 6)]).is_err());
    let split = BLOCKED.split_in(Lane, (Lane, 4), (Block, 8)).unwrap();
    assert_eq!(split.in_label(2), Block);
    assert_eq!(split.basis(Block, 0).unwrap()[..2], [2, 0]);
    assert_eq!(
        split
            .reshape_ins(&[(Register, 4), (Lane, 32), (Warp, 2)])
            .unwrap(),
        BLOCKED
    );
}

#[test]
fn pseudo_invert_reads_broadcast_elements_from_one_place() {
    // Lane 1 and lane 2 hold the same element (dim0 = 1): the right inverse uses lane 1
    // (the pivot) only, and never the broadcast register bit.
    let l = layout(
        &[(Register, &[&[0]]), (Lane, &[&[1], &[1], &[2]])],
        &[(Dim(0), 4)],
    );
    let r = l.pseudo_invert().unwrap();
    assert_eq!(
        r,
        layout(
            &[(Dim(0), &[&[0, 1], &[0, 4]])],
            &[(Register, 2), (Lane, 8)]
        )
    );
    assert!(l.invert().is_err());
    let not_onto = layout(&[(Lane, &[&[1]])], &[(Dim(0), 4)]);
    assert_eq!(
        not_onto.pseudo_invert().unwrap_err(),
        LayoutError::NotSurjective {
            out_dim: Dim(0),
            bit: 1
        }
    );
}

#[test]
fn invert_and_compose_keeps_shared_dimensions_as_identity() {
    // Same warps in both layouts: warps map to themselves even though both broadcast.
    let a = layout(
        &[(Register, &[&[1], &[2]]), (Warp, &[&[0]])],
        &[(Dim(0), 4)],
    );
    let b = layout(
        &[(Register, &[&[2], &[1]]), (Warp, &[&[0]])],
        &[(Dim(0), 4)],
    );
    let c = a.invert_and_compose(&b).unwrap();
    assert_eq!(
        c,
        layout(
            &[(Register, &[&[2, 0], &[1, 0]]), (Warp, &[&[0, 1]])],
            &[(Register, 4), (Warp, 2)]
        )
    );
    // Not reachable: b covers only half of dim0.
    let half = layout(&[(Register, &[&[1]])], &[(Dim(0), 4)]);
    assert!(a.invert_and_compose(&half).is_err());
}

#[test]
fn divide_left_undoes_product() {
    let inner = layout(&[(Register, &[&[1], &[2]])], &[(Dim(0), 4)]);
    let outer = layout(
        &[(Register, &[&[0, 1]]), (Lane, &[&[1, 0]])],
        &[(Dim(0), 2), (Dim(1), 2)],
    );
    let p = inner.product(&outer).unwrap();
    assert_eq!(p.divide_left(&inner), Some(outer));
    // The first bases must be the divisor's.
    let other = layout(&[(Register, &[&[2], &[1]])], &[(Dim(0), 4)]);
    assert_eq!(p.divide_left(&other), None);
    // A larger divisor does not divide.
    assert_eq!(inner.divide_left(&p), None);
    let right = layout(&[(Register, &[&[1]])], &[(Dim(1), 2)]);
    let q = outer.product(&right).unwrap();
    assert_eq!(q.divide_right(&right), Some(outer));
}

#[test]
fn concat_resize_and_masks() {
    let a = layout(&[(Register, &[&[1], &[0]])], &[(Dim(0), 2)]);
    let b = layout(&[(Lane, &[&[1]])], &[(Dim(0), 2)]);
    let ab = a.concat_ins(&b).unwrap();
    assert_eq!(
        ab,
        layout(
            &[(Register, &[&[1], &[0]]), (Lane, &[&[1]])],
            &[(Dim(0), 2)]
        )
    );
    assert_eq!(ab.free_variable_masks()[..2], [0b10, 0b1]);
    assert_eq!(ab.free_variable_mask(Lane), 1);
    assert_eq!(
        a.concat_ins(&a).unwrap_err(),
        LayoutError::DuplicateDim { dim: Register }
    );
    let c = layout(&[(Register, &[&[0], &[1]])], &[(Dim(1), 2)]);
    assert_eq!(
        a.concat_outs(&c).unwrap(),
        layout(
            &[(Register, &[&[1, 0], &[0, 1]])],
            &[(Dim(0), 2), (Dim(1), 2)]
        )
    );
    let r = ab.resize_in_dim(Register, 8).unwrap();
    assert_eq!(r.basis(Register, 2).unwrap()[0], 0);
    assert_eq!(r.resize_in_dim(Register, 4).unwrap(), ab);
    let wide = layout(&[(Lane, &[&[1], &[6], &[2]])], &[(Dim(0), 8)]);
    assert_eq!(
        wide.resize_out_dim(Dim(0), 4).unwrap(),
        layout(&[(Lane, &[&[1], &[0], &[2]])], &[(Dim(0), 4)])
    );
    assert_eq!(wide.remove_zero_bases(Lane).unwrap(), wide);
    assert_eq!(
        a.remove_zero_bases(Register).unwrap(),
        layout(&[(Register, &[&[1]])], &[(Dim(0), 2)])
    );
}

#[test]
fn equality_ignoring_sizes_and_consecutive_elements() {
    let a = layout(&[(Register, &[&[1], &[2]])], &[(Dim(0), 4)]);
    let b = layout(&[(Register, &[&[1], &[2]])], &[(Dim(0), 8)]);
    assert!(a.equal_ignoring_out_dim_sizes(&b));
    assert_ne!(a, b);
    assert_eq!(a.get_num_consecutive_in_out(), 4);
    // Registers 0,1 consecutive in dim0, then a lane at dim0 = 2 caps at 2.
    assert_eq!(BLOCKED.get_num_consecutive_in_out(), 1);
    let v = layout(
        &[(Register, &[&[1, 0], &[2, 0], &[0, 1]]), (Lane, &[&[2, 0]])],
        &[(Dim(0), 4), (Dim(1), 2)],
    );
    assert_eq!(v.get_num_consecutive_in_out(), 2);
    // The first in-dim's consecutive bases cannot run past the first out-dim's size.
    let short = layout(
        &[(Register, &[&[1, 0], &[0, 1]])],
        &[(Dim(0), 2), (Dim(1), 2)],
    );
    assert_eq!(short.get_num_consecutive_in_out(), 2);
}

#[test]
fn trivial_over_and_quotient() {
    let l = layout(
        &[(Register, &[&[1, 0]]), (Block, &[&[0, 1], &[0, 2]])],
        &[(Dim(0), 2), (Block, 4)],
    );
    assert!(l.is_trivial_over(&[Block]));
    assert_eq!(
        l.quotient(&[Block]),
        Some(layout(&[(Register, &[&[1]])], &[(Dim(0), 2)]))
    );
    let mixed = layout(
        &[(Register, &[&[1, 1]]), (Block, &[&[0, 1], &[0, 2]])],
        &[(Dim(0), 2), (Block, 4)],
    );
    assert!(!mixed.is_trivial_over(&[Block]));
    assert_eq!(mixed.quotient(&[Block]), None);
    assert!(!l.is_trivial_over(&[Warp]));
    assert!(l.is_trivial_over(&[]));
}

#[test]
fn definitions_4_10_and_4_14() {
    assert!(BLOCKED.is_distributed_layout());
    let repeated = layout(
        &[(Register, &[&[1]]), (Lane, &[&[1], &[2]])],
        &[(Dim(0), 4)],
    );
    assert!(repeated.is_surjective() && !repeated.is_distributed_layout());
    let mixed = layout(&[(Lane, &[&[3], &[2]])], &[(Dim(0), 4)]);
    assert!(mixed.is_surjective() && !mixed.is_distributed_layout());
    let broadcast = layout(&[(Lane, &[&[1], &[0], &[2]])], &[(Dim(0), 4)]);
    assert!(broadcast.is_distributed_layout());
    let not_hw = layout(&[(Offset, &[&[1], &[2]])], &[(Dim(0), 4)]);
    assert!(!not_hw.is_distributed_layout());
    // mma swizzle [[I, C], [0, I]] with C one bit per column: columns of 1 or 2 bits.
    let swizzle = layout(
        &[(Offset, &[&[1, 0], &[2, 0], &[0, 1], &[2, 2]])],
        &[(Dim(0), 4), (Dim(1), 4)],
    );
    assert!(swizzle.is_memory_layout());
    assert!(!not_hw.resize_out_dim(Dim(0), 8).unwrap().is_memory_layout());
    let three_bits = layout(
        &[(Offset, &[&[1, 0], &[3, 1], &[0, 2]])],
        &[(Dim(0), 4), (Dim(1), 4)],
    );
    assert!(!three_bits.is_memory_layout());
    assert!(!BLOCKED.is_memory_layout());
}

#[test]
fn product_matches_triton_example() {
    // identity_1d(4, register, dim0) × strided_1d(2, 8, lane, dim1) × zeros_1d(1, warp, dim0),
    // the oracle's product-00001.
    let p = LinearLayout::identity_1d(4, Register, Dim(0))
        .unwrap()
        .product(&LinearLayout::strided_1d(2, 8, Lane, Dim(1)).unwrap())
        .unwrap()
        .product(&LinearLayout::zeros_1d(1, Warp, Dim(0)).unwrap())
        .unwrap();
    let expected = LinearLayout::from_bases(
        &[
            (Register, &[&[1, 0], &[2, 0]]),
            (Lane, &[&[0, 8]]),
            (Warp, &[]),
        ],
        &[(Dim(0), 4), (Dim(1), 16)],
    )
    .unwrap();
    assert_eq!(p, expected);
}

#[test]
fn product_merges_dimension_orders_like_triton() {
    // [lane] × [register, lane] orders its inputs [register, lane] (Triton's supremum).
    let inner = LinearLayout::identity_1d(2, Lane, Dim(0)).unwrap();
    let outer =
        LinearLayout::from_bases(&[(Register, &[&[1]]), (Lane, &[&[2]])], &[(Dim(0), 4)]).unwrap();
    let p = inner.product(&outer).unwrap();
    assert_eq!(p.in_label(0), Register);
    assert_eq!(p.in_label(1), Lane);
    assert_eq!(p.basis(Lane, 0).unwrap()[0], 1);
    assert_eq!(p.basis(Lane, 1).unwrap()[0], 4);
    assert_eq!(p.basis(Register, 0).unwrap()[0], 2);
    // Like Triton, disagreeing orders resolve in favour of the inner layout's.
    let ab = LinearLayout::from_bases(&[(Register, &[]), (Lane, &[])], &[]).unwrap();
    let ba = LinearLayout::from_bases(&[(Lane, &[]), (Register, &[])], &[]).unwrap();
    let p = ab.product(&ba).unwrap();
    assert_eq!((p.in_label(0), p.in_label(1)), (Register, Lane));
}
