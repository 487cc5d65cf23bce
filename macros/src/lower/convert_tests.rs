//! Tests of the conversion code: movements executed on a CTA model that follows PTX semantics,
//! on thousands of seeded random layout pairs, and the structure of the rendered tokens.
#![allow(clippy::needless_range_loop)] // (warp, lane, register) indexing, as the hardware

use super::*;
use std::collections::HashMap;
use tessera_layout::plan::conversion::shared_plan;
use tessera_layout::plan::conversion::{plan_conversion, shuffle_plan, ConversionPlan};
use tessera_layout::plan::conversion_code::{movement_for, plan_conversion_code};
use tessera_layout::plan::movement::*;
use tessera_layout::plan::shared_steps::*;
use tessera_layout::plan::{bases, Vendor};
use tessera_layout::{Label, LinearLayout};

pub(crate) use tessera_test_support::plan_gen::{self, random_tile};
pub(crate) use tessera_test_support::random::layout_from_packed as from_packed;
pub(crate) use tessera_test_support::Rng;

/// A distributed layout of 32 lanes and `2^warp_bits` warps on `out_dims`: the tile's unit
/// vectors dealt at random, broadcast (zero) bases where the tile is too small, and sometimes
/// broadcast registers, lanes or warps.
pub(crate) fn random_warp_layout(
    rng: &mut Rng,
    out_dims: &[(Label, u32)],
    warp_bits: u32,
) -> LinearLayout {
    let tile_bits: u32 = out_dims.iter().map(|&(_, s)| s.trailing_zeros()).sum();
    let shape = plan_gen::random_warp_shape_fixed(rng, tile_bits, 5, warp_bits);
    plan_gen::random_warp_layout(rng, out_dims, shape)
}

/// A layout with `a`'s warp bases whose registers and lanes hold the rest at random: the
/// conversion from `a` stays inside each warp (shuffles possible).
pub(crate) fn random_sharing_warps(rng: &mut Rng, a: &LinearLayout) -> LinearLayout {
    let out_dims = out_dims_of(a);
    let warps = bases(a, Label::Warp);
    let mut units: Vec<u64> = (0..a.total_out_bits())
        .map(|b| 1u64 << b)
        .filter(|u| !warps.contains(u))
        .collect();
    rng.shuffle(&mut units);
    let lane_zeros = 5u32.saturating_sub(units.len() as u32);
    let mut lanes: Vec<u64> = units.drain(..(5 - lane_zeros) as usize).collect();
    lanes.extend((0..lane_zeros).map(|_| 0));
    rng.shuffle(&mut lanes);
    let mut regs = units;
    if rng.chance(1, 4) {
        regs.push(0);
        rng.shuffle(&mut regs);
    }
    from_packed(
        &[
            (Label::Register, regs),
            (Label::Lane, lanes),
            (Label::Warp, warps),
        ],
        &out_dims,
    )
}

pub(crate) fn out_dims_of(a: &LinearLayout) -> Vec<(Label, u32)> {
    (0..a.num_out_dims())
        .map(|o| (a.out_label(o), 1u32 << a.out_bits_at(o)))
        .collect()
}

/// `a` with registers permuted and, where `a` has a broadcast lane, that lane taking over a
/// register direction: a register permutation, possibly lane-selected.
pub(crate) fn random_register_variant(rng: &mut Rng, a: &LinearLayout) -> LinearLayout {
    let mut regs = bases(a, Label::Register);
    let mut lanes = bases(a, Label::Lane);
    rng.shuffle(&mut regs);
    if let (Some(k), Some(j)) = (
        lanes.iter().position(|&v| v == 0),
        regs.iter().position(|&v| v != 0),
    ) {
        if rng.chance(1, 2) {
            lanes[k] = regs[j];
            regs[j] = 0;
        }
    }
    from_packed(
        &[
            (Label::Register, regs),
            (Label::Lane, lanes),
            (Label::Warp, bases(a, Label::Warp)),
        ],
        &out_dims_of(a),
    )
}

/// Registers of one CTA: `values[warp][lane][register]`, `None` where nothing was written.
pub(crate) type Registers = Vec<Vec<Vec<Option<u64>>>>;

/// Each position of `layout` holding the packed index of its element.
pub(crate) fn holding_elements(layout: &LinearLayout) -> Registers {
    let (regs, lanes, warps) = (
        bases(layout, Label::Register),
        bases(layout, Label::Lane),
        bases(layout, Label::Warp),
    );
    let image = |t: &[u64], x: usize| {
        t.iter()
            .enumerate()
            .filter(|&(k, _)| x >> k & 1 == 1)
            .fold(0u64, |a, (_, &v)| a ^ v)
    };
    (0..1usize << warps.len())
        .map(|w| {
            (0..1usize << lanes.len())
                .map(|l| {
                    (0..1usize << regs.len())
                        .map(|r| Some(image(&regs, r) ^ image(&lanes, l) ^ image(&warps, w)))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// What a movement cost on the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Per memory step (in order): (instructions over all warps, wavefronts, ideal wavefronts).
    pub memory: Vec<(u32, u32, u32)>,
    pub shuffles: u32,
}

fn get(regs: &Registers, w: usize, l: usize, r: u32, what: &str) -> Result<u64, String> {
    regs[w][l]
        .get(r as usize)
        .copied()
        .flatten()
        .ok_or_else(|| format!("warp {w} lane {l}: {what} register {r} holds nothing"))
}

/// Executes `m` on `input` (the source registers of every thread). Shared memory is a map from
/// byte address to the element stored there; every access is checked for bounds and alignment,
/// loads after stores need a barrier in between, `ldmatrix` follows the PTX fragment rules.
pub(crate) fn execute(m: &Movement, input: &Registers) -> Result<(Registers, Stats), String> {
    let warps = input.len();
    // 32 lanes a warp, or (a wave movement) 64 a wave: the input's.
    let lanes = input[0].len();
    let mut out: Registers = vec![vec![vec![None; m.dst_registers as usize]; lanes]; warps];
    let mut memory: HashMap<u32, u64> = HashMap::new();
    let mut stats = Stats::default();
    let mut stored_since_barrier = false;
    let bits = m.element_bits;
    let check = |at: u32, bytes: u32| check_shared_access(at, bytes, m.shared_bytes);
    for step in &m.steps {
        if matches!(step, Step::Store(_) | Step::Load(_) | Step::Ldmatrix(_)) {
            let accesses: Vec<Vec<Vec<(u32, u32)>>> =
                (0..warps as u32).map(|w| step_accesses(step, w)).collect();
            let (mut instructions, mut wave, mut ideal) = (0, 0, 0);
            for a in accesses.iter().flatten() {
                instructions += 1;
                wave += wavefronts(a);
                ideal += (words_touched(a).len() as u32).div_ceil(32);
            }
            stats.memory.push((instructions, wave, ideal));
        }
        match step {
            Step::Copy { dst, src } => {
                for w in 0..warps {
                    for l in 0..lanes {
                        out[w][l][*dst as usize] = Some(get(input, w, l, *src, "source")?);
                    }
                }
            }
            Step::Select { dst, base, select } => {
                for w in 0..warps {
                    for l in 0..lanes {
                        let r = base ^ select.eval(l as u32, w as u32);
                        out[w][l][*dst as usize] = Some(get(input, w, l, r, "source")?);
                    }
                }
            }
            Step::Duplicate { dst, src } => {
                for w in 0..warps {
                    for l in 0..lanes {
                        out[w][l][*dst as usize] = Some(get(&out, w, l, *src, "destination")?);
                    }
                }
            }
            Step::Shuffle(s) => {
                let n = s.send_offsets.len() as u32;
                if n > 1 && n * bits > 32 {
                    return Err(format!("a shuffle packs {} bits", n * bits));
                }
                stats.shuffles += (n * bits).div_ceil(32) * warps as u32;
                for w in 0..warps {
                    let wire: Vec<Option<Vec<u64>>> = (0..lanes)
                        .map(|l| {
                            let base = s.send.eval(l as u32, w as u32);
                            s.send_offsets
                                .iter()
                                .map(|&o| input[w][l].get((base ^ o) as usize).copied().flatten())
                                .collect()
                        })
                        .collect();
                    for l in 0..lanes {
                        if s.active >> l & 1 == 0 {
                            continue;
                        }
                        let from = s.source_lane.eval(l as u32, w as u32);
                        if from as usize >= lanes {
                            return Err(format!("lane {l} reads lane {from}"));
                        }
                        let values = wire[from as usize].as_ref().ok_or_else(|| {
                            format!("warp {w} lane {l} reads lane {from}, which sent nothing")
                        })?;
                        let base = s.receive.eval(l as u32, w as u32);
                        for (j, &o) in s.receive_offsets.iter().enumerate() {
                            out[w][l][(base ^ o) as usize] = Some(values[j]);
                        }
                    }
                }
            }
            Step::Barrier => stored_since_barrier = false,
            Step::Store(s) => {
                store_to_shared(s, input, m.shared_bytes, &mut memory)?;
                stored_since_barrier = true;
            }
            Step::Load(s) => {
                if stored_since_barrier {
                    return Err("a load follows a store without a barrier".into());
                }
                for_each_element(s, warps, lanes, m.shared_bytes, |w, l, register, addr| {
                    let v = memory
                        .get(&addr)
                        .ok_or_else(|| format!("offset {addr} read, never written"))?;
                    out[w][l][register as usize] = Some(*v);
                    Ok(())
                })?;
            }
            Step::Ldmatrix(s) => {
                if stored_since_barrier {
                    return Err("ldmatrix follows a store without a barrier".into());
                }
                let bytes = bits / 8;
                for w in 0..warps {
                    for (off, targets) in &s.chunks {
                        let row = |l: u32| -> Result<u32, String> {
                            let at = off ^ s.row_offset.eval(l, w as u32);
                            check(at, 16)?;
                            Ok(at)
                        };
                        for t in 0..32u32 {
                            for m in 0..s.matrices {
                                let per_word = targets[m as usize].len() as u32;
                                for j in 0..per_word {
                                    let addr = if s.transposed {
                                        row(8 * m + 2 * (t % 4) + j)? + 2 * (t / 4)
                                    } else {
                                        row(8 * m + t / 4)? + 4 * (t % 4) + j * bytes
                                    };
                                    let v = memory.get(&addr).ok_or_else(|| {
                                        format!("ldmatrix reads offset {addr}, never written")
                                    })?;
                                    out[w][t as usize][targets[m as usize][j as usize] as usize] =
                                        Some(*v);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok((out, stats))
}

/// Executes store step `s` of the registers `input` into `memory` (`shared_bytes` long): each
/// access aligned and inside, and no offset written with two values.
pub(crate) fn store_to_shared(
    s: &StoreStep,
    input: &Registers,
    shared_bytes: u32,
    memory: &mut HashMap<u32, u64>,
) -> Result<(), String> {
    for_each_element(
        &s.access,
        input.len(),
        input[0].len(),
        shared_bytes,
        |w, l, register, addr| {
            if l as u32 & s.lane_guard != 0 || w as u32 & s.warp_guard != 0 {
                return Ok(());
            }
            let v = get(input, w, l, register, "source")?;
            match memory.insert(addr, v) {
                Some(old) if old != v => Err(format!("offset {addr} written with {old} and {v}")),
                _ => Ok(()),
            }
        },
    )
}

/// Calls `f(warp, lane, register, byte address)` for each element that `access` moves in
/// `warps` warps of `lanes` lanes, after checking each instruction's alignment and bounds.
fn for_each_element(
    access: &VectorAccess,
    warps: usize,
    lanes: usize,
    shared_bytes: u32,
    mut f: impl FnMut(usize, usize, u32, u32) -> Result<(), String>,
) -> Result<(), String> {
    for w in 0..warps {
        for l in 0..lanes {
            for &(first, off) in &access.chunks {
                let at = access.address(off, l as u32, w as u32);
                check_shared_access(at, access.bytes(), shared_bytes)?;
                for (j, &e) in access.elements.iter().enumerate() {
                    f(w, l, first ^ e, at + j as u32 * access.stride)?;
                }
            }
        }
    }
    Ok(())
}

/// An access of `bytes` at `at` must be aligned (to `bytes`, at most 16) and inside
/// `shared_bytes`.
fn check_shared_access(at: u32, bytes: u32, shared_bytes: u32) -> Result<(), String> {
    if !at.is_multiple_of(bytes.min(16)) || at + bytes > shared_bytes {
        Err(format!(
            "access of {bytes} B at {at} misaligned or outside {shared_bytes} B"
        ))
    } else {
        Ok(())
    }
}

/// Plans `a → b`, builds the movement of `plan` for NVIDIA, executes it and checks every
/// destination register; returns the movement and what it cost.
pub(crate) fn run_plan(
    plan: &ConversionPlan,
    a: &LinearLayout,
    b: &LinearLayout,
    bits: u32,
    ctx: &str,
) -> (Movement, Stats) {
    run_plan_on(plan, a, b, bits, Vendor::Nvidia, ctx)
}

/// [`run_plan`] for `vendor`'s GPUs.
pub(crate) fn run_plan_on(
    plan: &ConversionPlan,
    a: &LinearLayout,
    b: &LinearLayout,
    bits: u32,
    vendor: Vendor,
    ctx: &str,
) -> (Movement, Stats) {
    let movement =
        movement_for(plan, a, b, bits, vendor).unwrap_or_else(|e| panic!("{ctx}: movement: {e}"));
    let (out, stats) = execute(&movement, &holding_elements(a))
        .unwrap_or_else(|e| panic!("{ctx}: {} failed: {e}", movement.description));
    assert!(
        out == holding_elements(b),
        "{ctx}: {} delivers wrong elements",
        movement.description
    );
    (movement, stats)
}

#[test]
fn lane_functions_fit_affine_tables_and_keep_others() {
    let affine: Vec<Option<u32>> = (0..32u32)
        .map(|l| Some(5 ^ ((l & 3) << 2) ^ ((l >> 4) * 9)))
        .collect();
    match LaneFn::fit(&affine) {
        LaneFn::Affine(a) => {
            assert_eq!(a.constant, 5);
            assert_eq!(a.lane, vec![4, 8, 0, 0, 9]);
        }
        t => panic!("not affine: {t:?}"),
    }
    // Undefined entries are free: l ↦ l ^ 1 on even lanes only is affine.
    let partial: Vec<Option<u32>> = (0..32u32).map(|l| (l % 2 == 0).then_some(l ^ 1)).collect();
    let f = LaneFn::fit(&partial);
    for l in (0..32).step_by(2) {
        assert_eq!(f.eval(l, 0), l ^ 1);
    }
    // l ↦ l + 1 is not XOR-affine.
    let table: Vec<Option<u32>> = (0..32u32).map(|l| Some((l + 1) % 32)).collect();
    let f = LaneFn::fit(&table);
    assert!(matches!(f, LaneFn::Table(_)));
    for l in 0..32 {
        assert_eq!(f.eval(l, 0), (l + 1) % 32);
    }
    assert_eq!(f.values().len(), 32);
}

#[test]
fn affine_values_and_rendering() {
    let a = Affine {
        constant: 1,
        lane: vec![2, 0, 2, 4],
        warp: vec![6],
    };
    assert_eq!(a.values(), vec![1, 3, 5, 7]);
    assert_eq!(a.shifted(2).eval(0b1001, 1), (1 ^ 2 ^ 4 ^ 6) << 2);
    let (lane, warp) = (quote!(__lane), quote!(__warp));
    let text = a.render(&lane, &warp).to_string();
    assert_eq!(
        text,
        "(1u32 ^ :: tessera :: tile_move :: bit_term (__lane , 0u32 , 2u32) ^ :: tessera :: tile_move :: bit_term (__lane , 2u32 , 2u32) ^ :: tessera :: tile_move :: bit_term (__lane , 3u32 , 4u32) ^ :: tessera :: tile_move :: bit_term (__warp , 0u32 , 6u32))"
    );
    assert_eq!(
        Affine::constant(0).render(&lane, &warp).to_string(),
        "(0u32)"
    );
}

#[test]
fn every_plan_executes_on_the_model() {
    let mut rng = Rng(0x6702_0001);
    let mut kinds: HashMap<String, u32> = HashMap::new();
    let mut ldmatrix = 0;
    for case in 0..600 {
        let tile_bits = rng.range(5, 10);
        let out_dims = random_tile(&mut rng, tile_bits);
        let warp_bits = rng.range(0, 2);
        let a = random_warp_layout(&mut rng, &out_dims, warp_bits);
        let b = match rng.below(4) {
            0 => random_register_variant(&mut rng, &a),
            1 | 2 => random_sharing_warps(&mut rng, &a),
            _ => random_warp_layout(&mut rng, &out_dims, warp_bits),
        };
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let ctx = format!("case {case}, bits {bits}\nA:\n{a}\nB:\n{b}");
        let conversion = plan_conversion(&a, &b, bits).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let (m, _) = run_plan(&conversion.plan, &a, &b, bits, &ctx);
        *kinds.entry(conversion.plan.kind().to_string()).or_default() += 1;
        ldmatrix += m.description.contains("ldmatrix") as u32;
        if let Some(shuffle) = shuffle_plan(&a, &b, bits) {
            run_plan(
                &ConversionPlan::WarpShuffle(Box::new(shuffle)),
                &a,
                &b,
                bits,
                &ctx,
            );
        }
        if !matches!(conversion.plan, ConversionPlan::NoOp) {
            let shared = shared_plan(&a, &b, bits).unwrap();
            let warps = a.in_size(Label::Warp);
            let planned = (
                shared.write().total_wavefronts() * warps,
                shared.read().total_wavefronts() * warps,
            );
            let memory = shared.swizzle.memory;
            let shared = ConversionPlan::SharedMemory(Box::new(shared));
            let (m, _) = run_plan(&shared, &a, &b, bits, &ctx);
            ldmatrix += m.description.contains("ldmatrix") as u32;
            // For AMD (no `ldmatrix`): vector loads, delivering the same registers.
            let (amd, _) = run_plan_on(&shared, &a, &b, bits, Vendor::Amd, &ctx);
            assert!(
                !amd.steps.iter().any(|s| matches!(s, Step::Ldmatrix(_))),
                "{ctx}: {}",
                amd.description
            );
            // Through the plan's own memory (when not widened), the emulator's whole-warp bank
            // model never counts more than the planner's per-phase count (Lemma 9.4).
            if let Some((own, _)) = shared_candidate(&memory, &a, &b, bits, false, Vendor::Nvidia) {
                let (out, stats) = execute(&own, &holding_elements(&a)).unwrap();
                assert!(out == holding_elements(&b), "{ctx}: {}", own.description);
                assert!(
                    stats.memory[0].1 <= planned.0,
                    "{ctx}: store {stats:?} vs {planned:?}"
                );
                if !own.description.contains("ldmatrix") {
                    assert!(
                        stats.memory[1].1 <= planned.1,
                        "{ctx}: load {stats:?} vs {planned:?}"
                    );
                }
            }
        }
    }
    for kind in ConversionPlan::KINDS {
        assert!(
            kinds.get(kind).copied().unwrap_or(0) > 20,
            "too few {kind} plans: {kinds:?}"
        );
    }
    assert!(ldmatrix > 0, "no conversion used ldmatrix");
}

/// A layout whose waves hold what `wave`'s do (a layout on 64-lane waves), registers and lanes
/// dealt the rest at random: a conversion from `wave` stays inside each wave.
fn random_sharing_waves(rng: &mut Rng, wave: &LinearLayout) -> LinearLayout {
    let waves = bases(wave, Label::Warp);
    let mut units: Vec<u64> = (0..wave.total_out_bits())
        .map(|b| 1u64 << b)
        .filter(|u| !waves.contains(u))
        .collect();
    rng.shuffle(&mut units);
    let lane_count = units.len().min(6);
    let mut lanes: Vec<u64> = units.drain(..lane_count).collect();
    lanes.resize(6, 0);
    rng.shuffle(&mut lanes);
    from_packed(
        &[
            (Label::Register, units),
            (Label::Lane, lanes),
            (Label::Warp, waves),
        ],
        &out_dims_of(wave),
    )
}

/// Law (AMD's waves): a conversion whose elements cross warp bit 0 but no other warp bit is
/// planned for AMD as shuffles of the 64-lane wave when they cost less than shared memory, and
/// the wave movement, executed on the wave view (warp bit 0 as lane bit 5), delivers every
/// element; NVIDIA's plan of the same pair never uses waves.
#[test]
fn amd_plans_shuffle_across_a_wave_where_warps_need_shared_memory() {
    use tessera_layout::plan::wave::{warps_as_wave, wave_as_warps, Lanes};
    let mut rng = Rng(0x6702_0064);
    let (mut wave_plans, mut warp_plans) = (0, 0);
    for case in 0..400 {
        let tile_bits = rng.range(6, 11);
        let out_dims = random_tile(&mut rng, tile_bits);
        let warp_bits = rng.range(1, 3);
        let a = random_warp_layout(&mut rng, &out_dims, warp_bits);
        let wave_a = warps_as_wave(&a).expect("five lane bits and a warp bit");
        let wave_b = random_sharing_waves(&mut rng, &wave_a);
        let b = wave_as_warps(&wave_b).unwrap();
        let bits = rng.pick(&[8u32, 16, 32, 64]);
        let ctx = format!("case {case}, bits {bits}\nA:\n{a}\nB:\n{b}");
        let nvidia = plan_conversion_code(&a, &b, bits, Vendor::Nvidia).unwrap();
        assert_eq!(nvidia.lanes, Lanes::Warp, "{ctx}");
        let amd = plan_conversion_code(&a, &b, bits, Vendor::Amd).unwrap();
        assert_eq!(amd.lanes, amd.movement.lanes, "{ctx}");
        let (input, expected) = match amd.lanes {
            Lanes::Wave => {
                wave_plans += 1;
                assert!(amd.cost() < amd.shared_cost.unwrap(), "{ctx}");
                assert_eq!(amd.movement.shared_bytes, 0, "{ctx}");
                (holding_elements(&wave_a), holding_elements(&wave_b))
            }
            Lanes::Warp => {
                warp_plans += 1;
                (holding_elements(&a), holding_elements(&b))
            }
        };
        let (out, _) = execute(&amd.movement, &input)
            .unwrap_or_else(|e| panic!("{ctx}: {} failed: {e}", amd.movement.description));
        assert!(
            out == expected,
            "{ctx}: {} delivers wrong elements",
            amd.movement.description
        );
    }
    assert!(
        wave_plans > 100 && warp_plans > 0,
        "wave {wave_plans}, warp {warp_plans}"
    );
}

/// The layouts of a `[m, k] × [k, n]` f16 matmul with 4 warps: the blocked load layouts of A and
/// B (8 contiguous elements per thread along the contiguous dimension) and the mma v2 operand
/// layouts (`k_width` 2), as the inference anchors them.
pub(crate) fn matmul_layouts(m: u32, n: u32, k: u32) -> [LinearLayout; 4] {
    use tessera_layout::families::{Blocked, DotOperand, MmaParent, NvidiaMma};
    let load_a = Blocked::new(&[1, 8], &[8, 4], &[4, 1], &[1, 0])
        .to_linear_layout(&[m, k])
        .unwrap();
    let load_b = Blocked::new(&[1, 8], &[2, 16], &[4, 1], &[1, 0])
        .to_linear_layout(&[k, n])
        .unwrap();
    let mma = NvidiaMma::new(2, 0, &[2, 2], &[16, 8]);
    let op_a = DotOperand::new(0, 2, MmaParent::Nvidia(mma))
        .to_linear_layout(&[m, k])
        .unwrap();
    let op_b = DotOperand::new(1, 2, MmaParent::Nvidia(mma))
        .to_linear_layout(&[k, n])
        .unwrap();
    [load_a, load_b, op_a, op_b]
}

#[test]
fn matmul_operands_go_through_ldmatrix() {
    for (m, n, k) in [(64, 64, 32), (128, 64, 32), (32, 32, 16), (64, 128, 64)] {
        let [load_a, load_b, op_a, op_b] = matmul_layouts(m, n, k);
        for (name, src, dst) in [("A", load_a, op_a), ("B", load_b, op_b)] {
            let ctx = format!("{name} of {m}x{n}x{k}");
            let conversion = plan_conversion(&src, &dst, 16).unwrap();
            let (movement, stats) = run_plan(&conversion.plan, &src, &dst, 16, &ctx);
            let read = if name == "A" {
                "ldmatrix.x4 loads"
            } else {
                "ldmatrix.x4.trans"
            };
            assert!(
                movement.description.contains("8-element stores")
                    && movement.description.contains(read),
                "{ctx}: {}",
                movement.description
            );
            // The ldmatrix read is conflict-free.
            assert_eq!(stats.memory[1].1, stats.memory[1].2, "{ctx}: {stats:?}");
        }
    }
}

/// Renders `movement` with the context the lowering uses and checks it parses as an expression.
pub(crate) fn rendered(movement: &Movement, elem: TokenStream) -> String {
    let rc = Render {
        lane: quote!(__lane),
        warp: quote!(__warp),
        lanes: Lanes::Warp,
        elem,
        span: Span::call_site(),
        shared_offset: 256,
    };
    let tokens = render_movement(movement, &format_ident!("src"), &rc);
    syn::parse2::<syn::Expr>(tokens.clone()).unwrap_or_else(|e| panic!("{e}: {tokens}"));
    tokens.to_string()
}

#[test]
fn rendered_code_has_the_planned_instructions() {
    // Matmul operands: barrier, 128-bit stores, barrier, ldmatrix (.trans for B).
    let [load_a, load_b, op_a, op_b] = matmul_layouts(64, 64, 32);
    for (src, dst, call) in [
        (load_a, op_a, "ldmatrix_x4 ("),
        (load_b, op_b, "ldmatrix_x4_trans ("),
    ] {
        let plan = plan_conversion(&src, &dst, 16).unwrap().plan;
        let m = movement_for(&plan, &src, &dst, 16, Vendor::Nvidia).unwrap();
        let text = rendered(&m, quote!(::tessera::f16));
        assert_eq!(text.matches("sync_threads ()").count(), 2, "{text}");
        assert!(text.contains("st_shared_v4 :: < u32 >"), "{text}");
        assert!(text.contains(call), "{text}");
        assert!(text.contains("dynamic_shared_base () + 256u32"), "{text}");
        assert!(!text.contains("ld_shared"), "{text}");
        // For AMD the same conversion goes through the plan's own memory (its optimal swizzle),
        // read by vector loads.
        let (m, _) = run_plan_on(&plan, &src, &dst, 16, Vendor::Amd, "amd operand");
        let text = rendered(&m, quote!(::tessera::f16));
        assert_eq!(text.matches("sync_threads ()").count(), 2, "{text}");
        assert!(text.contains("st_shared_v"), "{text}");
        assert!(text.contains("ld_shared_v"), "{text}");
        assert!(!text.contains("ldmatrix"), "{text}");
    }
    // A shuffle conversion: shfl.sync.idx, no shared memory.
    let tile = [(Label::Dim(0), 32), (Label::Dim(1), 8)];
    let a = one_warp(
        &[&[0, 1], &[0, 2], &[0, 4]],
        &[&[1, 0], &[2, 0], &[4, 0], &[8, 0], &[16, 0]],
        &tile,
    );
    let b = one_warp(
        &[&[1, 0], &[2, 0], &[4, 0]],
        &[&[0, 1], &[0, 2], &[0, 4], &[8, 0], &[16, 0]],
        &tile,
    );
    let plan = plan_of_kind(&a, &b, "warp shuffle");
    let m = movement_for(&plan, &a, &b, 32, Vendor::Nvidia).unwrap();
    let text = rendered(&m, quote!(f32));
    assert_eq!(text.matches("shfl_idx_b32").count(), 8, "{text}");
    assert!(!text.contains("shared"), "{text}");
    // A register permutation whose source depends on the lane: a match on the lane bit.
    let c = one_warp(
        &[&[0, 2], &[0, 1], &[0, 4]],
        &[&[1, 0], &[2, 0], &[4, 0], &[8, 0], &[16, 4]],
        &tile,
    );
    let plan = plan_of_kind(&c, &a, "register permutation");
    let (m, _) = run_plan(&plan, &c, &a, 32, "lane-selected");
    let text = rendered(&m, quote!(f32));
    assert!(text.contains("match"), "{text}");
    assert!(text.contains("bit_term (__lane , 4u32"), "{text}");
    // A no-op is a plain copy of registers.
    let plan = plan_conversion(&a, &a, 32).unwrap().plan;
    let m = movement_for(&plan, &a, &a, 32, Vendor::Nvidia).unwrap();
    assert_eq!(
        rendered(&m, quote!(f32)),
        "{ let __tessera_copy : [f32 ; 8] = [src [0] , src [1] , src [2] , src [3] , src [4] , src [5] , src [6] , src [7]] ; __tessera_copy }"
    );
}

/// The plan of the conversion `src → dst` of 32-bit elements, which must be of `kind`.
#[track_caller]
fn plan_of_kind(src: &LinearLayout, dst: &LinearLayout, kind: &str) -> ConversionPlan {
    let plan = plan_conversion(src, dst, 32).unwrap().plan;
    assert_eq!(plan.kind(), kind);
    plan
}

/// The one-warp layout onto `tile` with these register and lane bases.
fn one_warp(registers: &[&[u32]], lanes: &[&[u32]], tile: &[(Label, u32)]) -> LinearLayout {
    let bases = [
        (Label::Register, registers),
        (Label::Lane, lanes),
        (Label::Warp, &[][..]),
    ];
    LinearLayout::distributed(&bases, tile).unwrap()
}

/// A one-warp `b × b` transpose: registers hold one dimension, lanes the other.
fn warp_transpose_pair(b: u32) -> (LinearLayout, LinearLayout) {
    let bits = b.trailing_zeros();
    let tile = [(Label::Dim(0), b), (Label::Dim(1), b)];
    let unit = |d: usize, k: u32| -> u64 { 1u64 << (d as u32 * bits + k) };
    let mut lanes_a: Vec<u64> = (0..bits.min(5)).map(|k| unit(0, k)).collect();
    let mut lanes_b: Vec<u64> = (0..bits.min(5)).map(|k| unit(1, k)).collect();
    // 32 lanes: the rest of the lanes hold the other dimension (or copies).
    let extra_a: Vec<u64> = (0..(5 - bits.min(5))).map(|k| unit(1, k)).collect();
    let extra_b: Vec<u64> = (0..(5 - bits.min(5))).map(|k| unit(0, k)).collect();
    lanes_a.extend(&extra_a);
    lanes_b.extend(&extra_b);
    let regs_a: Vec<u64> = (extra_a.len() as u32..bits).map(|k| unit(1, k)).collect();
    let regs_b: Vec<u64> = (extra_b.len() as u32..bits).map(|k| unit(0, k)).collect();
    let make = |regs: Vec<u64>, lanes: Vec<u64>| {
        from_packed(
            &[
                (Label::Register, regs),
                (Label::Lane, lanes),
                (Label::Warp, vec![]),
            ],
            &tile,
        )
    };
    (make(regs_a, lanes_a), make(regs_b, lanes_b))
}

#[test]
fn lane_dependent_selects_can_send_a_shuffle_plan_to_shared_memory() {
    for (b, expect_shared) in [(8u32, false), (32, true)] {
        let (a, d) = warp_transpose_pair(b);
        let conversion = plan_conversion(&a, &d, 32).unwrap();
        assert_eq!(conversion.plan.kind(), "warp shuffle", "b {b}");
        let code = plan_conversion_code(&a, &d, 32, Vendor::Nvidia).unwrap();
        let m = &code.movement;
        assert_eq!(
            code.shuffles_need_selects, expect_shared,
            "b {b}: {}",
            m.description
        );
        assert_eq!(code.plan.kind() == "shared memory", expect_shared, "b {b}");
        let (out, _) = execute(m, &holding_elements(&a)).unwrap();
        assert!(out == holding_elements(&d), "b {b}: {}", m.description);
    }
}
