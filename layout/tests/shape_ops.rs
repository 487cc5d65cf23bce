//! Laws of the tile shape transforms (`trans`, `reshape`, `expand_dims`, `broadcast`, `join`,
//! `split`, the slice of a reduction) on blocked layouts of several shapes, and each transform
//! checked element by element against its definition.

use tessera_layout::families::blocked::blocked;
use tessera_layout::{Label, LinearLayout};

/// Blocked layouts (128 threads in 4 warps) of 2-D and 3-D tiles, several orders.
fn layouts() -> Vec<LinearLayout> {
    let mut out = Vec::new();
    for shape in [[16u32, 32], [64, 8], [4, 128], [2, 2]] {
        for (spt, tpw, order) in [
            ([1u32, 4], [4u32, 8], [1u32, 0]),
            ([2, 1], [8, 4], [0, 1]),
            ([1, 1], [32, 1], [0, 1]),
        ] {
            out.push(blocked(&spt, &tpw, &[2, 2], &order, &shape).expect("blocked"));
        }
    }
    for shape in [[4u32, 8, 16], [2, 32, 2]] {
        out.push(blocked(&[1, 1, 2], &[2, 4, 4], &[1, 2, 2], &[2, 1, 0], &shape).expect("blocked"));
    }
    out
}

/// The coordinates of every element each hardware input holds: `(inputs, coordinates)`.
fn table(l: &LinearLayout) -> Vec<(Vec<u32>, Vec<u32>)> {
    let sizes: Vec<u32> = (0..l.num_in_dims()).map(|i| 1 << l.in_bits_at(i)).collect();
    let total: u32 = sizes.iter().product();
    (0..total)
        .map(|mut flat| {
            let inputs: Vec<u32> = sizes
                .iter()
                .map(|&s| {
                    let v = flat % s;
                    flat /= s;
                    v
                })
                .collect();
            let named: Vec<(Label, u32)> = inputs
                .iter()
                .enumerate()
                .map(|(i, &v)| (l.in_label(i), v))
                .collect();
            let out = l.apply(&named).expect("inputs in range");
            (inputs, out[..l.num_out_dims()].to_vec())
        })
        .collect()
}

fn shape(l: &LinearLayout) -> Vec<u32> {
    (0..l.num_out_dims())
        .map(|o| 1 << l.out_bits_at(o))
        .collect()
}

/// Row-major index of `coords` in `shape`.
fn row_major(coords: &[u32], shape: &[u32]) -> u64 {
    coords
        .iter()
        .zip(shape)
        .fold(0, |acc, (&c, &s)| acc * u64::from(s) + u64::from(c))
}

#[test]
fn trans_moves_coordinates_and_its_inverse_undoes_it() {
    for l in layouts() {
        let rank = l.num_out_dims();
        let perm: Vec<usize> = (0..rank).rev().collect();
        let t = l.trans(&perm).expect("trans");
        for ((ins, c), (ins2, c2)) in table(&l).iter().zip(table(&t)) {
            assert_eq!(*ins, ins2);
            let moved: Vec<u32> = perm.iter().map(|&p| c[p]).collect();
            assert_eq!(moved, c2);
        }
        let mut inverse = vec![0; rank];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        assert_eq!(t.trans(&inverse).expect("trans back"), l);
    }
    let l = &layouts()[0];
    assert!(l.trans(&[0, 0]).is_err(), "a repeated dimension");
    assert!(l.trans(&[0]).is_err(), "another rank");
    assert!(l.trans(&[0, 2]).is_err(), "a missing dimension");
}

#[test]
fn reshape_keeps_row_major_order_and_round_trips() {
    for l in layouts() {
        let old = shape(&l);
        let total: u32 = old.iter().product();
        for new in [vec![total], vec![2, total / 2], vec![total / 4, 2, 2]] {
            let r = l.reshape(&new).expect("reshape");
            assert_eq!(shape(&r), new);
            for ((_, c), (_, c2)) in table(&l).iter().zip(table(&r)) {
                assert_eq!(row_major(c, &old), row_major(&c2, &new));
            }
            assert_eq!(r.reshape(&old).expect("reshape back"), l);
        }
        assert!(l.reshape(&[total * 2]).is_err(), "another element count");
    }
}

#[test]
fn expand_dims_inserts_a_size_one_dimension_and_the_slice_removes_it() {
    for l in layouts() {
        for axis in 0..=l.num_out_dims() {
            let e = l.expand_dims(axis).expect("expand_dims");
            let mut expected = shape(&l);
            expected.insert(axis, 1);
            assert_eq!(shape(&e), expected);
            for ((_, c), (_, c2)) in table(&l).iter().zip(table(&e)) {
                let mut with_zero = c.clone();
                with_zero.insert(axis, 0);
                assert_eq!(with_zero, c2);
            }
            // The slice along the new axis is the layout without its zero registers.
            assert_eq!(
                e.remove_dim(axis).expect("slice"),
                l.remove_zero_bases(Label::Register).unwrap()
            );
        }
    }
}

#[test]
fn the_slice_of_a_reduction_drops_the_axis_and_repeated_registers() {
    for l in layouts() {
        for axis in 0..l.num_out_dims() {
            let s = l.remove_dim(axis).expect("slice");
            let mut expected = shape(&l);
            expected.remove(axis);
            assert_eq!(shape(&s), expected);
            let r = l.in_index(Label::Register).unwrap();
            let zero = (0..s.in_bits_at(r)).any(|k| s.packed_basis(r, k as usize) == 0);
            assert!(!zero, "a zero register basis is left");
            assert_eq!(
                s.in_size(Label::Lane) * s.in_size(Label::Warp),
                l.in_size(Label::Lane) * l.in_size(Label::Warp)
            );
        }
        assert!(l.remove_dim(l.num_out_dims()).is_err());
    }
}

#[test]
fn broadcast_places_copies_on_lanes_first_and_unbroadcast_undoes_it() {
    for l in layouts() {
        let full = shape(&l);
        for axis in 0..full.len() {
            // The operand: the layout's slice along `axis`, with `axis` back as size 1.
            let operand = l
                .remove_dim(axis)
                .and_then(|s| s.expand_dims(axis))
                .expect("operand");
            let b = operand.broadcast(&full).expect("broadcast");
            assert_eq!(shape(&b), full);
            b.check_surjective().expect("every element held");
            // Each input holds the operand's element, at any coordinate along `axis`.
            for (ins, c) in table(&operand) {
                let named: Vec<(Label, u32)> = ins
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (operand.in_label(i), v))
                    .collect();
                let mut held = b.apply(&named).unwrap()[..full.len()].to_vec();
                held[axis] = 0;
                assert_eq!(held, c);
            }
            assert_eq!(
                b.unbroadcast(&shape(&operand)).expect("unbroadcast"),
                operand.remove_zero_bases(Label::Register).unwrap()
            );
        }
        let mut wrong = full.clone();
        wrong[0] *= 2;
        assert!(
            l.broadcast(&wrong).is_err(),
            "a dimension that is not 1 grows"
        );
        assert!(l.unbroadcast(&wrong).is_err());
    }
}

#[test]
fn join_then_split_is_the_identity() {
    for l in layouts() {
        let j = l.join().expect("join");
        let mut expected = shape(&l);
        expected.push(2);
        assert_eq!(shape(&j), expected);
        // Register bit 0 picks the half; the other bits hold what they held.
        for (ins, c) in table(&j) {
            let mut inner = ins.clone();
            inner[0] >>= 1;
            let named: Vec<(Label, u32)> = inner
                .iter()
                .enumerate()
                .map(|(i, &v)| (l.in_label(i), v))
                .collect();
            let original = l.apply(&named).unwrap();
            assert_eq!(c[..l.num_out_dims()], original[..l.num_out_dims()]);
            assert_eq!(c[l.num_out_dims()], ins[0] & 1);
        }
        assert_eq!(j.split().expect("split"), l);
    }
    // Halves held by lanes cannot be split.
    let lanes = blocked(&[1, 1], &[16, 2], &[2, 2], &[1, 0], &[16, 2]).unwrap();
    assert!(lanes.split().is_err());
}
