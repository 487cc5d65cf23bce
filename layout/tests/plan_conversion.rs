//! Conversion plans executed on data by the warp-level simulator: for thousands of seeded random
//! pairs of distributed layouts every plan (the chosen one and the alternatives) moves every
//! element to where the destination wants it, broadcast copies included.

use std::collections::BTreeMap;
use tessera_layout::plan::conversion::{
    plan_conversion, shared_plan, shuffle_plan, ConversionPlan,
};
use tessera_layout::{Label, LinearLayout};
use tessera_test_support::plan_gen::*;
use tessera_test_support::simulate::{execute_conversion, RegisterFile};
use tessera_test_support::Rng;

fn run(plan: &ConversionPlan, a: &LinearLayout, b: &LinearLayout, ctx: &str) {
    let input = RegisterFile::holding_elements(a);
    let out = execute_conversion(plan, &input, RegisterFile::shape_of(b))
        .unwrap_or_else(|e| panic!("{ctx}: {} plan failed: {e}", plan.kind()));
    assert!(
        out == RegisterFile::holding_elements(b),
        "{ctx}: {} plan delivers wrong elements",
        plan.kind()
    );
}

#[test]
fn every_plan_moves_every_element() {
    let mut rng = Rng::new(0xc0de_0001);
    let mut chosen: BTreeMap<&str, u32> = BTreeMap::new();
    let mut alternatives_run: BTreeMap<&str, u32> = BTreeMap::new();
    let mut lane_dependent = 0;
    for case in 0..2500 {
        let tile_bits = rng.range(5, 10);
        let out_dims = random_tile(&mut rng, tile_bits);
        let shape = random_warp_shape(&mut rng, tile_bits);
        let a = random_warp_layout(&mut rng, &out_dims, shape);
        let b = match rng.below(5) {
            0 => a,
            1 => random_register_variant(&mut rng, &a),
            2 | 3 => {
                let (rz, lz) = (rng.range(0, 1), rng.range(0, 1));
                random_layout_sharing_warps(&mut rng, &a, rz, lz)
            }
            _ => {
                let shape_b = random_warp_shape_fixed(&mut rng, tile_bits, 5, shape.warp_bits);
                random_warp_layout(&mut rng, &out_dims, shape_b)
            }
        };
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let ctx = format!("case {case}, bits {bits}\nA:\n{a}\nB:\n{b}");
        let conversion = plan_conversion(&a, &b, bits).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        *chosen.entry(conversion.plan.kind()).or_default() += 1;
        if let ConversionPlan::RegisterPermutation(p) = &conversion.plan {
            lane_dependent += !p.is_thread_uniform() as u32;
        }
        run(&conversion.plan, &a, &b, &ctx);
        // The alternatives must be right too.
        let mut alternatives = Vec::new();
        if let Some(shuffle) = shuffle_plan(&a, &b, bits) {
            assert_eq!(shuffle.rounds.len().count_ones(), 1);
            alternatives.push(ConversionPlan::WarpShuffle(Box::new(shuffle)));
        }
        if !matches!(conversion.plan, ConversionPlan::NoOp) {
            let shared = shared_plan(&a, &b, bits).unwrap();
            alternatives.push(ConversionPlan::SharedMemory(Box::new(shared)));
        }
        for plan in &alternatives {
            run(plan, &a, &b, &ctx);
            *alternatives_run.entry(plan.kind()).or_default() += 1;
        }
    }
    println!("chosen: {chosen:?} ({lane_dependent} register plans select by lane); alternatives executed: {alternatives_run:?}");
    assert!(lane_dependent >= 20);
    for kind in ConversionPlan::KINDS {
        assert!(
            chosen.get(kind).is_some_and(|&n| n >= 50),
            "{kind}: {chosen:?}"
        );
    }
}

#[test]
fn transpose_16x32_by_shuffles() {
    let (store, read) = transpose_layouts();
    let conversion = plan_conversion(&store, &read, 32).unwrap();
    let ConversionPlan::WarpShuffle(plan) = &conversion.plan else {
        panic!("expected shuffles, got {}", conversion.plan.kind());
    };
    // No common register direction (V = ∅); C = {n0}, G pairs n1..n4 with m0..m3: |S| = 5,
    // 2^(9 − 5) = 16 rounds of one 32-bit shuffle, against 16 + 16 wavefronts + a barrier.
    assert!(plan.vector.is_empty());
    assert_eq!(plan.rounds.len(), 16);
    assert_eq!(conversion.shuffle_cost, Some(16));
    assert_eq!(conversion.shared_cost, Some(16 + 16 + 8));
    run(&conversion.plan, &store, &read, "transpose");
}

#[test]
fn cross_cta_conversions_are_errors() {
    let tile = [(Label::Dim(0), 4), (Label::Dim(1), 2)];
    // Two CTAs: one register, one lane, the block bit on the other dimension.
    let two_ctas = |register: &[u32], block: &[u32]| {
        let bases: [(Label, &[&[u32]]); 4] = [
            (Label::Register, &[register]),
            (Label::Lane, &[&[2, 0]]),
            (Label::Warp, &[]),
            (Label::Block, &[block]),
        ];
        LinearLayout::distributed(&bases, &tile).unwrap()
    };
    let a = two_ctas(&[1, 0], &[0, 1]);
    let b = two_ctas(&[0, 1], &[1, 0]);
    let err = plan_conversion(&a, &b, 32).unwrap_err();
    assert!(err.to_string().contains("cross-CTA"), "{err}");
}
