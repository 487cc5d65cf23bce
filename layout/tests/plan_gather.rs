//! Gather plans executed on data by the warp-level simulator, on seeded random layouts: each
//! output position receives `src` at its column with the axis coordinate taken from its index.

use std::collections::BTreeMap;
use tessera_layout::plan::gather::{plan_gather, GatherPlan};
use tessera_layout::{Label, LinearLayout};
use tessera_test_support::plan_gen::*;
use tessera_test_support::simulate::{execute_gather, RegisterFile};
use tessera_test_support::Rng;

/// Index values for every position of `index` (equal on positions holding the same element),
/// and the expected output: the packed source element each position must receive.
fn data(
    rng: &mut Rng,
    src: &LinearLayout,
    index: &LinearLayout,
    axis: usize,
) -> (RegisterFile, RegisterFile) {
    let mut values = RegisterFile::holding_elements(index);
    let mut expected = values.clone();
    let axis_size = 1u64 << src.out_bits_at(axis);
    let table: Vec<u64> = (0..1u64 << index.total_out_bits())
        .map(|_| rng.below(axis_size))
        .collect();
    for (warp, expected_warp) in values.values.iter_mut().zip(expected.values.iter_mut()) {
        for (lane, expected_lane) in warp.iter_mut().zip(expected_warp.iter_mut()) {
            for (value, want) in lane.iter_mut().zip(expected_lane.iter_mut()) {
                let element = value.unwrap();
                let idx = table[element as usize];
                let mut coords = index.unpack(element);
                coords[axis] = idx as u32;
                *want = Some(src.pack(&coords[..src.num_out_dims()]));
                *value = Some(idx);
            }
        }
    }
    (values, expected)
}

#[test]
fn gather_plans_deliver_the_indexed_elements() {
    let mut rng = Rng::new(0x9a7e_0001);
    let mut kinds: BTreeMap<&str, u32> = BTreeMap::new();
    for case in 0..2000 {
        let tile_bits = rng.range(5, 10);
        let out_dims = random_tile(&mut rng, tile_bits);
        let axis = rng.below(out_dims.len() as u64) as usize;
        let shape = random_warp_shape(&mut rng, tile_bits);
        let src = random_warp_layout(&mut rng, &out_dims, shape);
        let index = match rng.below(4) {
            0 => src,
            1 => random_local_index_layout(&mut rng, &src, axis),
            2 => random_warp_layout(&mut rng, &out_dims, shape),
            _ => {
                // An index tile of another size along the axis.
                let mut dims = out_dims.clone();
                let bits = dims[axis].1.trailing_zeros();
                let new_bits = if bits > 0 && rng.chance(1, 2) {
                    bits - 1
                } else {
                    bits + 1
                };
                dims[axis].1 = 1 << new_bits;
                let total = tile_bits - bits + new_bits;
                let shape_i = random_warp_shape_fixed(&mut rng, total, 5, shape.warp_bits);
                random_warp_layout(&mut rng, &dims, shape_i)
            }
        };
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let ctx = format!("case {case}, axis {axis}, bits {bits}\nsrc:\n{src}\nindex:\n{index}");
        let plan =
            plan_gather(&src, &index, axis as u32, bits).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        *kinds.entry(plan.kind()).or_default() += 1;
        if let GatherPlan::WarpShuffle(p) = &plan {
            // Rounds per index register: one per source register along the axis.
            let along_axis = (0..src.out_bits_at(axis))
                .filter(|&b| {
                    let unit = 1u64 << (src.out_offset(axis) + b);
                    tessera_layout::plan::bases(&src, Label::Register).contains(&unit)
                })
                .count();
            assert!(p.rounds.iter().all(|r| r.len() == 1 << along_axis), "{ctx}");
        }
        let (values, expected) = data(&mut rng, &src, &index, axis);
        let out = execute_gather(&plan, &RegisterFile::holding_elements(&src), &values)
            .unwrap_or_else(|e| panic!("{ctx}: {} plan failed: {e}", plan.kind()));
        assert!(
            out == expected,
            "{ctx}: {} plan delivers wrong elements",
            plan.kind()
        );
    }
    println!("{kinds:?}");
    assert!(
        kinds.get("warp shuffle").is_some_and(|&n| n >= 300),
        "{kinds:?}"
    );
    assert!(
        kinds.get("shared memory").is_some_and(|&n| n >= 300),
        "{kinds:?}"
    );
}
