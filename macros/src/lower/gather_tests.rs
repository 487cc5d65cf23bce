//! Gathers executed on a CTA model (PTX `shfl.sync.idx` and shared-memory semantics) for
//! seeded random source/index layouts and index values, and the rendered structure.
#![allow(clippy::needless_range_loop)] // (warp, lane, register) indexing, as the hardware

use super::*;
use crate::lower::convert::tests::{
    holding_elements, random_tile, random_warp_layout, store_to_shared, Registers, Rng,
};
use proc_macro2::Span;
use quote::format_ident;
use std::collections::HashMap;
use tessera_layout::plan::gather_code::plan_gather_code;
use tessera_layout::{Label, LinearLayout};
use tessera_test_support::plan_gen::random_local_index_layout;

/// Runs `g` with the source holding its element ids and the index holding `values`; returns
/// the result registers and the shuffles issued.
fn execute(
    g: &GatherCode,
    src: &Registers,
    values: &Registers,
) -> Result<(Registers, u32), String> {
    let warps = values.len();
    // 32 lanes a warp, or (a wave gather) 64 a wave: the index's.
    let lanes = values[0].len();
    let mut out: Registers = vec![vec![vec![None; g.registers as usize]; lanes]; warps];
    let mut shuffles = 0;
    let value = |w: usize, l: usize, r: usize| -> Result<u32, String> {
        values[w][l][r]
            .map(|v| v as u32 & (g.axis_size - 1))
            .ok_or_else(|| format!("index register {r} empty"))
    };
    match &g.steps {
        GatherSteps::Shuffle {
            rounds,
            register,
            lane,
        } => {
            for w in 0..warps {
                for (r, (reg_c, lane_c, candidates)) in rounds.iter().enumerate() {
                    for &c in candidates {
                        shuffles += (g.element_bits as usize).div_ceil(32) as u32;
                        for l in 0..lanes {
                            let v = value(w, l, r)?;
                            let reg = reg_c ^ register.eval(l as u32, w as u32, v);
                            let from = lane_c ^ lane.eval(l as u32, w as u32, v);
                            if from as usize >= lanes {
                                return Err(format!("lane {l} reads lane {from}"));
                            }
                            if reg == c {
                                out[w][l][r] = src[w][from as usize][c as usize];
                            }
                        }
                    }
                }
            }
        }
        GatherSteps::Shared {
            store,
            shared_bytes,
            offsets,
            thread,
            stride,
        } => {
            let mut memory: HashMap<u32, u64> = HashMap::new();
            store_to_shared(store, src, *shared_bytes, &mut memory)?;
            for w in 0..warps {
                for l in 0..lanes {
                    for (r, &c) in offsets.iter().enumerate() {
                        let at = c ^ thread.eval(l as u32, w as u32, value(w, l, r)?);
                        if !at.is_multiple_of(*stride) || at + stride > *shared_bytes {
                            return Err(format!("load at {at}"));
                        }
                        out[w][l][r] = Some(
                            *memory
                                .get(&at)
                                .ok_or_else(|| format!("offset {at} read, never written"))?,
                        );
                    }
                }
            }
        }
    }
    Ok((out, shuffles))
}

/// Random index values for `index` (each position its own), some beyond the axis size.
fn random_values(rng: &mut Rng, index: &LinearLayout, axis_size: u32) -> Registers {
    let mut regs = holding_elements(index);
    for warp in regs.iter_mut() {
        for lane in warp.iter_mut() {
            for v in lane.iter_mut() {
                *v = Some(rng.below(axis_size as u64 * 2));
            }
        }
    }
    regs
}

/// The element ids the gather must deliver.
fn expected(
    src: &LinearLayout,
    index: &LinearLayout,
    axis: usize,
    values: &Registers,
) -> Registers {
    let positions = holding_elements(index);
    let axis_size = 1u32 << src.out_bits_at(axis);
    positions
        .iter()
        .zip(values)
        .map(|(wp, wv)| {
            wp.iter()
                .zip(wv)
                .map(|(lp, lv)| {
                    lp.iter()
                        .zip(lv)
                        .map(|(p, v)| {
                            let mut coords = index.unpack(p.unwrap());
                            coords[axis] = v.unwrap() as u32 & (axis_size - 1);
                            Some(src.pack(&coords[..src.num_out_dims()]))
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

#[test]
fn every_gather_plan_executes_on_the_model() {
    let mut rng = Rng(0x6702_0002);
    let (mut shuffle_runs, mut shared_runs) = (0, 0);
    for case in 0..400 {
        let tile_bits = rng.range(5, 10);
        let mut out_dims = random_tile(&mut rng, tile_bits);
        if out_dims.len() == 1 {
            out_dims.push((Label::Dim(1), 1));
        }
        let axis = rng.below(2) as usize;
        let warp_bits = rng.range(0, 2);
        let src = random_warp_layout(&mut rng, &out_dims, warp_bits);
        let index = if rng.chance(1, 2) {
            random_local_index_layout(&mut rng, &src, axis)
        } else {
            // Another extent along the axis, any arrangement.
            let mut dims = out_dims.clone();
            let bits = rng.range(0, 4);
            dims[axis].1 = 1 << bits;
            let total: u32 = dims.iter().map(|d| d.1.trailing_zeros()).sum();
            if total < 5 + warp_bits {
                continue;
            }
            random_warp_layout(&mut rng, &dims, warp_bits)
        };
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let ctx = format!("case {case}, axis {axis}, bits {bits}\nS:\n{src}\nI:\n{index}");
        let g = plan_gather_code(&src, &index, axis, bits).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let values = random_values(&mut rng, &index, 1 << src.out_bits_at(axis));
        let (out, _) =
            execute(&g, &holding_elements(&src), &values).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert!(
            out == expected(&src, &index, axis, &values),
            "{ctx}: wrong elements ({:?})",
            std::mem::discriminant(&g.steps)
        );
        match g.steps {
            GatherSteps::Shuffle { .. } => shuffle_runs += 1,
            GatherSteps::Shared { .. } => shared_runs += 1,
        }
    }
    assert!(
        shuffle_runs > 50 && shared_runs > 50,
        "{shuffle_runs} {shared_runs}"
    );
}

/// Law (AMD's waves): a gather whose elements cross warp bit 0 but stay in a 64-lane wave is
/// planned for AMD as the wave's shuffles where those cost less than shared memory, and its
/// code, executed on the wave views (warp bit 0 as lane bit 5), delivers every element; NVIDIA's
/// plan of the same pair never uses waves.
#[test]
fn amd_gathers_shuffle_across_a_wave_where_warps_need_shared_memory() {
    use tessera_layout::plan::gather_code::{gather_code_on, plan_gather_on};
    use tessera_layout::plan::wave::{warps_as_wave, wave_as_warps, Lanes};
    use tessera_layout::plan::Vendor;
    let mut rng = Rng(0x6702_0065);
    let (mut wave_runs, mut warp_runs) = (0, 0);
    for case in 0..300 {
        let tile_bits = rng.range(6, 10);
        let mut out_dims = random_tile(&mut rng, tile_bits);
        if out_dims.len() == 1 {
            out_dims.push((Label::Dim(1), 1));
        }
        let axis = rng.below(2) as usize;
        let warp_bits = rng.range(1, 3);
        let src = random_warp_layout(&mut rng, &out_dims, warp_bits);
        let wave_src = warps_as_wave(&src).expect("five lane bits and a warp bit");
        let wave_index = random_local_index_layout(&mut rng, &wave_src, axis);
        let index = wave_as_warps(&wave_index).unwrap();
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let ctx = format!("case {case}, axis {axis}, bits {bits}\nS:\n{src}\nI:\n{index}");
        let nvidia = plan_gather_on(Vendor::Nvidia, &src, &index, axis as u32, bits).unwrap();
        assert_eq!(nvidia.lanes, Lanes::Warp, "{ctx}");
        let amd = plan_gather_on(Vendor::Amd, &src, &index, axis as u32, bits).unwrap();
        let (plan, lanes) = (&amd.plan, amd.lanes);
        assert!(lanes == Lanes::Warp || amd.cost < nvidia.cost, "{ctx}");
        let g = gather_code_on(plan, lanes, &src, &index, axis, bits)
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert_eq!(g.lanes, lanes, "{ctx}");
        let (s, i) = match lanes {
            Lanes::Wave => {
                wave_runs += 1;
                assert!(matches!(g.steps, GatherSteps::Shuffle { .. }), "{ctx}");
                (wave_src, wave_index)
            }
            Lanes::Warp => {
                warp_runs += 1;
                (src, index)
            }
        };
        let values = random_values(&mut rng, &i, 1 << s.out_bits_at(axis));
        let (out, _) =
            execute(&g, &holding_elements(&s), &values).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert!(
            out == expected(&s, &i, axis, &values),
            "{ctx}: wrong elements"
        );
    }
    assert!(
        wave_runs > 50 && warp_runs > 0,
        "wave {wave_runs}, warp {warp_runs}"
    );
}

#[test]
fn rendered_gathers_use_shuffles_or_shared_memory() {
    // [32, 32] f32, 4 warps; rows across lanes/warps, the 32 columns: 4 lanes × 8 registers.
    let tile = [(Label::Dim(0), 32), (Label::Dim(1), 32)];
    let src = LinearLayout::distributed(
        &[
            (Label::Register, &[&[0, 1], &[0, 2], &[0, 4]]),
            (Label::Lane, &[&[0, 8], &[0, 16], &[1, 0], &[2, 0], &[4, 0]]),
            (Label::Warp, &[&[8, 0], &[16, 0]]),
        ],
        &tile,
    )
    .unwrap();
    let rc = Render {
        lane: quote!(__lane),
        warp: quote!(__warp),
        lanes: super::super::convert::Lanes::Warp,
        elem: quote!(f32),
        span: Span::call_site(),
        shared_offset: 0,
    };
    let (s, i) = (format_ident!("src"), format_ident!("idx"));
    let along_columns = plan_gather_code(&src, &src, 1, 32).unwrap();
    assert!(matches!(along_columns.steps, GatherSteps::Shuffle { .. }));
    let text = render_gather(&along_columns, &s, &i, &rc);
    syn::parse2::<syn::Expr>(text.clone()).unwrap();
    let text = text.to_string();
    // 8 registers, 8 candidate registers each: 64 shuffles, no shared memory.
    assert_eq!(text.matches("shfl_idx_b32").count(), 64, "{text}");
    assert!(!text.contains("shared"), "{text}");
    let along_rows = plan_gather_code(&src, &src, 0, 32).unwrap();
    assert!(matches!(along_rows.steps, GatherSteps::Shared { .. }));
    let text = render_gather(&along_rows, &s, &i, &rc);
    syn::parse2::<syn::Expr>(text.clone()).unwrap();
    let text = text.to_string();
    assert!(text.contains("st_shared_v4"), "{text}");
    assert_eq!(text.matches("ld_shared_v1").count(), 8, "{text}");
    assert_eq!(text.matches("sync_threads").count(), 2, "{text}");
}
