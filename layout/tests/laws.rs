//! Laws of the layout algebra, checked on thousands of seeded random layouts (see `tessera_test_support::random`).
//! Each law names its seed; a failure prints the case number and the layouts involved.

use tessera_layout::f2::EchelonBasis;
use tessera_layout::{Label, LinearLayout};
use tessera_test_support::random::*;
use tessera_test_support::Rng;

/// Random layouts per law.
const CASES: usize = 3000;

/// A random layout from `even` in even cases and from `odd` in the others.
fn alternating(
    case: usize,
    rng: &mut Rng,
    even: fn(&mut Rng) -> LinearLayout,
    odd: fn(&mut Rng) -> LinearLayout,
) -> LinearLayout {
    if case.is_multiple_of(2) {
        even(rng)
    } else {
        odd(rng)
    }
}

/// The input dimensions of `l`, in order.
fn in_labels(l: &LinearLayout) -> Vec<Label> {
    (0..l.num_in_dims()).map(|i| l.in_label(i)).collect()
}

/// The output dimensions of `l`, in order.
fn out_labels(l: &LinearLayout) -> Vec<Label> {
    (0..l.num_out_dims()).map(|o| l.out_label(o)).collect()
}

/// A random layout and a random outer layout that composes with it.
fn random_composable(rng: &mut Rng) -> (LinearLayout, LinearLayout) {
    let inner = random_layout(rng);
    let outer = random_outer(rng, &inner);
    (inner, outer)
}

/// A random layout with its input and output dimensions.
fn random_layout_and_dims(rng: &mut Rng) -> (LinearLayout, Vec<Label>, Vec<Label>) {
    let l = random_layout(rng);
    let (ins, outs) = (in_labels(&l), out_labels(&l));
    (l, ins, outs)
}

/// Every input of `layout` as (label, value) pairs, with its packed image by brute force.
fn all_inputs(layout: &LinearLayout) -> Vec<(Vec<(Label, u32)>, u64)> {
    brute_force_table(layout)
        .into_iter()
        .enumerate()
        .map(|(flat, image)| {
            let values = split_input(layout, flat as u64);
            let named = values
                .iter()
                .enumerate()
                .map(|(i, &v)| (layout.in_label(i), v))
                .collect();
            (named, image)
        })
        .collect()
}

/// A packed output of `layout` as named coordinates.
fn named_outputs(layout: &LinearLayout, packed: u64) -> Vec<(Label, u32)> {
    (0..layout.num_out_dims())
        .map(|o| (layout.out_label(o), layout.coord(packed, o)))
        .collect()
}

/// `layout` applied to named inputs by the definition (XOR of bases), packed.
fn eval(layout: &LinearLayout, inputs: &[(Label, u32)]) -> u64 {
    let mut out = 0;
    for &(label, value) in inputs {
        let i = layout.in_index(label).expect("input dimension");
        for k in 0..layout.in_bits_at(i) {
            if value >> k & 1 == 1 {
                out ^= layout.packed_basis(i, k as usize);
            }
        }
    }
    out
}

/// The identity layout on `layout`'s output dimensions.
fn identity_on_outs(layout: &LinearLayout) -> LinearLayout {
    let ins: Vec<(Label, Vec<u64>)> = (0..layout.num_out_dims())
        .map(|o| {
            let offset = layout.out_offset(o);
            (
                layout.out_label(o),
                (0..layout.out_bits_at(o))
                    .map(|b| 1u64 << (offset + b))
                    .collect(),
            )
        })
        .collect();
    let outs: Vec<(Label, u32)> = (0..layout.num_out_dims())
        .map(|o| (layout.out_label(o), 1u32 << layout.out_bits_at(o)))
        .collect();
    layout_from_packed(&ins, &outs)
}

/// A layout whose inputs are `layout`'s outputs (each possibly larger, in a shuffled order) with
/// random bases into fresh output dimensions.
fn random_outer(rng: &mut Rng, layout: &LinearLayout) -> LinearLayout {
    let mut ins: Vec<(Label, u32)> = (0..layout.num_out_dims())
        .map(|o| (layout.out_label(o), layout.out_bits_at(o) + rng.range(0, 1)))
        .collect();
    rng.shuffle(&mut ins);
    let out_bits = rng.range(0, MAX_TEST_BITS);
    let num_outs = rng.range(1, 3) as usize;
    let outs = random_out_dims(rng, num_outs, out_bits);
    random_layout_with(rng, &ins, &outs)
}

#[test]
fn generators_keep_their_promises() {
    let mut rng = Rng::new(0x5eed_0001);
    for _ in 0..CASES {
        let d = random_distributed(&mut rng);
        assert!(d.is_surjective() && d.is_distributed_layout(), "{d}");
        let s = random_surjective(&mut rng);
        assert!(s.is_surjective(), "{s}");
        let m = random_memory(&mut rng);
        assert!(m.is_invertible(), "{m}");
        let i = random_injective(&mut rng, &HARDWARE_DIMS);
        assert!(i.is_injective(), "{i}");
        let l = random_layout(&mut rng);
        assert!(l.total_in_bits() <= MAX_TEST_BITS && l.total_out_bits() <= MAX_TEST_BITS);
        for (flat, &out) in brute_force_table(&l).iter().enumerate() {
            assert_eq!(l.apply_packed(&split_input(&l, flat as u64)), out);
        }
    }
}

/// `apply` agrees with the definition, and `apply(outer ∘ inner) = apply(outer) ∘ apply(inner)`.
#[test]
fn compose_is_applying_one_after_the_other() {
    let mut rng = Rng::new(0x5eed_0002);
    for case in 0..CASES {
        let (inner, outer) = random_composable(&mut rng);
        let composed = inner.compose(&outer).unwrap();
        assert_eq!(composed.num_in_dims(), inner.num_in_dims());
        for (inputs, image) in all_inputs(&inner) {
            let coords = inner.apply(&inputs).unwrap();
            let named = named_outputs(&inner, image);
            assert_eq!(
                &coords[..inner.num_out_dims()],
                &named.iter().map(|p| p.1).collect::<Vec<_>>()[..]
            );
            let expected = eval(&outer, &named);
            assert_eq!(
                eval(&composed, &inputs),
                expected,
                "case {case}: inner {inner}\nouter {outer}\ncomposed {composed}"
            );
        }
    }
}

#[test]
fn compose_is_associative() {
    let mut rng = Rng::new(0x5eed_0003);
    for case in 0..CASES {
        let (first, second) = random_composable(&mut rng);
        let third = random_outer(&mut rng, &second);
        let left = first.compose(&second).unwrap().compose(&third).unwrap();
        let right = first.compose(&second.compose(&third).unwrap()).unwrap();
        assert_eq!(left, right, "case {case}: {first}\n{second}\n{third}");
    }
}

/// For a bijection, `L⁻¹ ∘ L` and `L ∘ L⁻¹` are identities, and `invert = pseudo_invert`.
#[test]
fn inverse_of_a_bijection_is_two_sided() {
    let mut rng = Rng::new(0x5eed_0004);
    for case in 0..CASES {
        let l = if case % 2 == 0 {
            random_memory(&mut rng)
        } else {
            // A bijective distributed layout: no zero bases.
            let d = random_distributed(&mut rng);
            if !d.is_invertible() {
                continue;
            }
            d
        };
        let inverse = l.invert().unwrap();
        assert_eq!(inverse, l.pseudo_invert().unwrap());
        assert_eq!(
            inverse.compose(&l).unwrap(),
            identity_on_outs(&l),
            "case {case}: {l}"
        );
        assert_eq!(
            l.compose(&inverse).unwrap(),
            identity_on_outs(&inverse),
            "case {case}: {l}"
        );
    }
}

/// For a surjective `L`, `L⁻¹` is a right inverse (`L(L⁻¹(y)) = y` for every element `y`), so
/// `L ∘ L⁻¹ = id` on the image; it is the minimum-norm choice: it never sets a free variable of `L`.
#[test]
fn pseudo_inverse_is_a_minimum_norm_right_inverse() {
    let mut rng = Rng::new(0x5eed_0005);
    for case in 0..CASES {
        let l = alternating(case, &mut rng, random_surjective, random_distributed);
        let right = l.pseudo_invert().unwrap();
        assert_eq!(
            right.compose(&l).unwrap(),
            identity_on_outs(&l),
            "case {case}: {l}\nright inverse {right}"
        );
        // The result lives in l's inputs; free-variable bits of l are never set.
        let masks = l.free_variable_masks();
        for i in 0..right.num_in_dims() {
            for k in 0..right.in_bits_at(i) as usize {
                let v = right.packed_basis(i, k);
                for (o, mask) in masks.iter().enumerate().take(right.num_out_dims()) {
                    assert_eq!(right.out_label(o), l.in_label(o));
                    assert_eq!(right.coord(v, o) & mask, 0, "case {case}: {l}\n{right}");
                }
            }
        }
        // On the image, reading back and mapping again gives the same element.
        for (inputs, image) in all_inputs(&l) {
            let y = named_outputs(&l, image);
            let back = eval(&right, &y);
            let x = named_outputs(&right, back);
            assert_eq!(eval(&l, &x), image, "case {case}: {inputs:?}");
        }
    }
}

/// `C = a.invert_and_compose(b)` satisfies `b(C(x)) = a(x)` for every `x`; dimensions on which `a`
/// and `b` agree map by the identity; elsewhere `C` sets no free variable of `b`.
#[test]
fn invert_and_compose_solves_b_of_c_equals_a() {
    let mut rng = Rng::new(0x5eed_0006);
    let (mut shared_identity, mut fallbacks) = (0, 0);
    for case in 0..CASES {
        let a = alternating(case, &mut rng, random_distributed, random_surjective);
        // b: a surjective layout onto the same tile, its output dimensions in another order;
        // every third case shares a's warps (exercising the identity dimensions).
        let mut outs: Vec<(Label, u32)> = (0..a.num_out_dims())
            .map(|o| (a.out_label(o), 1u32 << a.out_bits_at(o)))
            .collect();
        let total = a.total_out_bits();
        let mut columns = random_invertible_columns(&mut rng, total);
        for _ in 0..rng.range(0, 2) {
            let v = rng.bits(total);
            columns.push(v);
        }
        rng.shuffle(&mut columns);
        let cut1 = rng.range(0, columns.len() as u32) as usize;
        let cut2 = rng.range(cut1 as u32, columns.len() as u32) as usize;
        let mut ins = vec![
            (Label::Register, columns[..cut1].to_vec()),
            (Label::Lane, columns[cut1..cut2].to_vec()),
            (Label::Warp, columns[cut2..].to_vec()),
        ];
        let share_warp = case % 3 == 0;
        if share_warp {
            let w = a.in_index(Label::Warp).unwrap();
            ins[2].1 = (0..a.in_bits_at(w) as usize)
                .map(|k| a.packed_basis(w, k))
                .collect();
            ins[1].1.extend(columns[cut2..].iter().copied());
        }
        let b_same_order = layout_from_packed(&ins, &outs);
        rng.shuffle(&mut outs);
        let order: Vec<Label> = outs.iter().map(|p| p.0).collect();
        let b = b_same_order.transpose_outs(&order).unwrap();
        let c = a
            .invert_and_compose(&b)
            .unwrap_or_else(|e| panic!("case {case}: {e}\na {a}\nb {b}"));
        for (inputs, image) in all_inputs(&a) {
            let hw = named_outputs(&c, eval(&c, &inputs));
            let through_b = eval(&b_same_order, &hw);
            assert_eq!(
                through_b, image,
                "case {case}: {inputs:?}\na {a}\nb {b}\nc {c}"
            );
        }
        // Triton's shortcut: dimensions with equal bases in a and b map by the identity, when
        // the rest of a is reachable from the rest of b (else the whole system is solved).
        let same: Vec<Label> = HARDWARE_DIMS
            .iter()
            .copied()
            .filter(|&d| {
                let (i, j) = (a.in_index(d).unwrap(), b_same_order.in_index(d).unwrap());
                a.in_bits_at(i) == b_same_order.in_bits_at(j)
                    && (0..a.in_bits_at(i) as usize)
                        .all(|k| a.packed_basis(i, k) == b_same_order.packed_basis(j, k))
            })
            .collect();
        let mut rest_of_b = EchelonBasis::new();
        for d in HARDWARE_DIMS.iter().filter(|d| !same.contains(d)) {
            let j = b_same_order.in_index(*d).unwrap();
            for k in 0..b_same_order.in_bits_at(j) as usize {
                rest_of_b.insert(b_same_order.packed_basis(j, k));
            }
        }
        let shortcut_solvable = HARDWARE_DIMS
            .iter()
            .filter(|d| !same.contains(d))
            .all(|&d| {
                let i = a.in_index(d).unwrap();
                (0..a.in_bits_at(i) as usize).all(|k| rest_of_b.contains(a.packed_basis(i, k)))
            });
        if shortcut_solvable {
            for &d in &same {
                let (w, o) = (c.in_index(d).unwrap(), c.out_index(d).unwrap());
                for k in 0..c.in_bits_at(w) as usize {
                    assert_eq!(
                        c.packed_basis(w, k),
                        1u64 << (c.out_offset(o) + k as u32),
                        "case {case}: {d} is not the identity\na {a}\nb {b}\nc {c}"
                    );
                }
            }
            shared_identity += same.len() * usize::from(share_warp);
        } else {
            fallbacks += 1;
        }
    }
    // Both paths are exercised: shared dimensions kept as the identity, and the fallback.
    assert!(shared_identity > CASES / 4, "{shared_identity}");
    assert!(fallbacks > 0);
    println!("invert_and_compose: {fallbacks} of {CASES} cases needed the full solve");
}

/// `(A × B).divide_left(A) = B` (Definition 4.4), and `divide_right` likewise.
#[test]
fn product_and_division_round_trip() {
    let mut rng = Rng::new(0x5eed_0007);
    let mut partial = 0;
    for case in 0..CASES {
        let a = random_layout(&mut rng);
        let b = if case % 2 == 0 {
            // Same dimensions as A, in the same order: the quotient is B itself.
            let ins: Vec<(Label, u32)> = (0..a.num_in_dims())
                .map(|i| (a.in_label(i), rng.range(0, 2)))
                .collect();
            let outs: Vec<(Label, u32)> = (0..a.num_out_dims())
                .map(|o| (a.out_label(o), 1 << rng.range(0, 2)))
                .collect();
            random_layout_with(&mut rng, &ins, &outs)
        } else {
            random_layout(&mut rng)
        };
        let p = a.product(&b).unwrap();
        let c = p
            .divide_left(&a)
            .unwrap_or_else(|| panic!("case {case}: {a}\n{b}\n{p}"));
        // Equal up to the order of the input dimensions: the product orders them by Triton's
        // supremum, which need not reproduce P's order from A and C.
        let p_ins = in_labels(&p);
        let b_ins = in_labels(&b);
        assert_eq!(
            a.product(&c).unwrap().transpose_ins(&p_ins).unwrap(),
            p,
            "case {case}"
        );
        if case % 2 == 0 {
            assert_eq!(c.transpose_ins(&b_ins).unwrap(), b, "case {case}");
        } else {
            partial += 1;
            // C has P's dimensions; on B's dimensions it is B, elsewhere it is empty.
            let ins = in_labels(&b);
            let outs = out_labels(&b);
            let restricted = c.sublayout(&ins, &outs).unwrap();
            assert_eq!(
                restricted
                    .transpose_ins(&ins)
                    .unwrap()
                    .transpose_outs(&outs)
                    .unwrap(),
                b
            );
            assert_eq!(c.total_in_bits(), b.total_in_bits());
            assert_eq!(c.total_out_bits(), b.total_out_bits());
            let d = p
                .divide_right(&b)
                .unwrap_or_else(|| panic!("case {case}: right"));
            assert_eq!(
                d.product(&b).unwrap().transpose_ins(&p_ins).unwrap(),
                p,
                "case {case}"
            );
        }
        // Something that is not a factor: a nonzero low basis replaced.
        if let Some(i) = (0..a.num_in_dims()).find(|&i| a.in_bits_at(i) > 0) {
            let mut wrong = a;
            let v = a.packed_basis(i, 0) ^ 1;
            if a.total_out_bits() > 0 {
                wrong.set_packed_basis(i, 0, v);
                assert_eq!(p.divide_left(&wrong), None, "case {case}");
            }
        }
    }
    assert!(partial > CASES / 3);
}

#[test]
fn transposes_and_reshapes_round_trip() {
    let mut rng = Rng::new(0x5eed_0008);
    for case in 0..CASES {
        let (l, ins, outs) = random_layout_and_dims(&mut rng);
        let mut perm_outs = outs.clone();
        rng.shuffle(&mut perm_outs);
        let mut perm_ins = ins.clone();
        rng.shuffle(&mut perm_ins);
        let t = l
            .transpose_outs(&perm_outs)
            .unwrap()
            .transpose_ins(&perm_ins)
            .unwrap();
        for (inputs, image) in all_inputs(&l) {
            let mut want = named_outputs(&l, image);
            want.sort_by_key(|p| perm_outs.iter().position(|q| *q == p.0));
            assert_eq!(named_outputs(&t, eval(&t, &inputs)), want, "case {case}");
        }
        assert_eq!(
            t.transpose_outs(&outs)
                .unwrap()
                .transpose_ins(&ins)
                .unwrap(),
            l,
            "case {case}"
        );
        // Reshape outputs to random new dims and back; inputs likewise.
        let num_outs = rng.range(1, 3) as usize;
        let new_outs = random_out_dims(&mut rng, num_outs, l.total_out_bits());
        let r = l.reshape_outs(&new_outs).unwrap();
        let old_outs: Vec<(Label, u32)> = (0..l.num_out_dims())
            .map(|o| (l.out_label(o), 1 << l.out_bits_at(o)))
            .collect();
        assert_eq!(r.reshape_outs(&old_outs).unwrap(), l, "case {case}");
        assert_eq!(r.flatten_outs().unwrap(), l.flatten_outs().unwrap());
        let mut new_ins: Vec<(Label, u32)> = random_out_dims(&mut rng, 3, l.total_in_bits())
            .into_iter()
            .zip(HARDWARE_DIMS)
            .map(|((_, size), label)| (label, size))
            .collect();
        rng.shuffle(&mut new_ins);
        let r = l.reshape_ins(&new_ins).unwrap();
        assert_eq!(r.flatten_ins().unwrap().total_in_bits(), l.total_in_bits());
        let old_ins: Vec<(Label, u32)> = (0..l.num_in_dims())
            .map(|i| (l.in_label(i), 1 << l.in_bits_at(i)))
            .collect();
        assert_eq!(r.reshape_ins(&old_ins).unwrap(), l, "case {case}");
        // Splitting an input dimension is a reshape of that dimension alone.
        let i = rng.below(l.num_in_dims() as u64) as usize;
        let low = rng.range(0, l.in_bits_at(i));
        let split = l
            .split_in(
                l.in_label(i),
                (l.in_label(i), 1 << low),
                (Label::Dim(7), 1 << (l.in_bits_at(i) - low)),
            )
            .unwrap();
        let (total, low_part) = (l.in_bits_at(i), low);
        assert_eq!(split.in_bits(Label::Dim(7)), total - low_part);
        assert_eq!(split.reshape_ins(&old_ins).unwrap(), l, "case {case}");
    }
}

/// `sublayout` is the block of the matrix; `concat_ins`/`concat_outs` put blocks side by side.
#[test]
fn sublayout_and_concatenation_are_blocks() {
    let mut rng = Rng::new(0x5eed_0009);
    for case in 0..CASES {
        let (l, ins, outs) = random_layout_and_dims(&mut rng);
        let keep_in: Vec<Label> = ins.iter().copied().filter(|_| rng.chance(1, 2)).collect();
        let keep_out: Vec<Label> = outs.iter().copied().filter(|_| rng.chance(2, 3)).collect();
        let s = l.sublayout(&keep_in, &keep_out).unwrap();
        for (inputs, image) in all_inputs(&l) {
            let restricted: Vec<(Label, u32)> = inputs
                .iter()
                .copied()
                .filter(|p| keep_in.contains(&p.0))
                .collect();
            let full: Vec<(Label, u32)> = inputs
                .iter()
                .map(|&(label, v)| (label, if keep_in.contains(&label) { v } else { 0 }))
                .collect();
            let want: Vec<(Label, u32)> = named_outputs(&l, eval(&l, &full))
                .into_iter()
                .filter(|p| keep_out.contains(&p.0))
                .collect();
            assert_eq!(
                named_outputs(&s, eval(&s, &restricted)),
                want,
                "case {case}"
            );
            let _ = image;
        }
        // Cutting the inputs (then the outputs) in two and concatenating the two sublayouts
        // gives the layout back, its dimensions in the order of the cut.
        for inputs in [true, false] {
            let (all, keep) = if inputs {
                (&ins, &keep_in)
            } else {
                (&outs, &keep_out)
            };
            let (part, other): (Vec<Label>, Vec<Label>) =
                all.iter().copied().partition(|l| keep.contains(l));
            let order: Vec<Label> = part.iter().chain(&other).copied().collect();
            let (joined, transposed) = if inputs {
                let halves = (l.sublayout(&part, &outs), l.sublayout(&other, &outs));
                (
                    halves.0.unwrap().concat_ins(&halves.1.unwrap()),
                    l.transpose_ins(&order),
                )
            } else {
                let halves = (l.sublayout(&ins, &part), l.sublayout(&ins, &other));
                (
                    halves.0.unwrap().concat_outs(&halves.1.unwrap()),
                    l.transpose_outs(&order),
                )
            };
            assert_eq!(joined.unwrap(), transposed.unwrap(), "case {case}");
        }
    }
}

/// Free variables: a column is free exactly when it is in the span of the columns before it;
/// the number of distinct images is `2^(in bits − free bits)`; zero bases are always free.
#[test]
fn free_variable_masks_count_the_kernel() {
    let mut rng = Rng::new(0x5eed_000a);
    for case in 0..CASES {
        let l = random_layout(&mut rng);
        let masks = l.free_variable_masks();
        let free: u32 = masks.iter().map(|m| m.count_ones()).sum();
        let mut images = brute_force_table(&l);
        images.sort_unstable();
        images.dedup();
        assert_eq!(
            images.len() as u64,
            1u64 << (l.total_in_bits() - free),
            "case {case}: {l}"
        );
        assert_eq!(l.rank(), l.total_in_bits() - free);
        for (i, mask) in masks.iter().enumerate().take(l.num_in_dims()) {
            assert_eq!(
                l.zero_bases_mask(l.in_label(i)) & !mask,
                0,
                "case {case}: a zero basis is not free\n{l}"
            );
        }
        // Brute force: column j free iff some combination of earlier columns equals it.
        let (columns, n) = l.columns();
        let mut flat = 0;
        for (i, &mask) in masks.iter().enumerate().take(l.num_in_dims()) {
            for k in 0..l.in_bits_at(i) {
                let reachable = (0u64..1 << flat).any(|s| {
                    (0..flat)
                        .filter(|j| s >> j & 1 == 1)
                        .fold(0, |acc, j| acc ^ columns[j as usize])
                        == columns[flat as usize]
                });
                assert_eq!(mask >> k & 1 == 1, reachable, "case {case}");
                flat += 1;
            }
        }
        assert_eq!(flat as usize, n);
    }
}
