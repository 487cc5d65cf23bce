//! A conversion as generated code runs it: the plan of the cost model
//! ([`plan_conversion_on`], §5.4) refined by what the code costs, resolved to a [`Movement`] of
//! per-thread steps. A code generator renders the stored movement and decides nothing.
//!
//! - **Shuffles vs. shared memory.** The cost model prices shuffles by their count; a round whose
//!   send or receive register depends on the lane also needs a register select per candidate
//!   register and element (`SEL`/`MOV` on the ALU, a quarter of a shared-memory-pipe slot each,
//!   [`shuffle_cost_quarters`]). When that makes the shuffles dearer than the cost model's
//!   shared-memory alternative, the conversion goes through shared memory
//!   ([`ConversionCode::shuffles_need_selects`]).
//! - **Shared memory.** The memory layout, vector widths and `ldmatrix` reads (on a
//!   [`Vendor`] that has them) are chosen by [`shared_movement`] (see `shared_steps`).
//! - **Waves (AMD).** A conversion the warp view sends through shared memory because elements
//!   cross warp bit 0 may need no shared memory on AMD, where warps `2w` and `2w + 1` are one
//!   64-lane wave (`plan::wave`): the planner also plans it on the wave view and takes the wave's
//!   shuffles (`ds_bpermute` over 64 lanes) when they cost less; its movement's lanes are then
//!   [`Lanes::Wave`].
//! - **Costs.** [`ConversionCode::cost`] is the cost model's cost of the plan the code follows;
//!   [`conversion_code_cost`] gives it without resolving the movement (for searches over many
//!   layout pairs).

use super::conversion::{plan_conversion_on, ConversionPlan, RegisterPlan, ShufflePlan};
use super::movement::{
    duplicate_steps, vector_offsets, word_count, xor_bits, Affine, LaneFn, Movement, ShuffleStep,
    Step,
};
use super::shared_steps::shared_movement;
use super::wave::{warps_as_wave, Lanes};
use super::{PlanError, Vendor};
use crate::{Label, LinearLayout};
use std::boxed::Box;
use std::format;
use std::string::ToString;
use std::vec::Vec;

/// A conversion as it runs.
#[derive(Clone, Debug)]
pub struct ConversionCode {
    /// The plan the code follows.
    pub plan: ConversionPlan,
    /// The steps that execute it.
    pub movement: Movement,
    /// Cost of the warp-shuffle plan (shuffle count), when one exists.
    pub shuffle_cost: Option<u32>,
    /// Cost of the shared-memory plan, when it was considered (not for no-ops and register
    /// permutations).
    pub shared_cost: Option<u32>,
    /// The cost model chose shuffles, but their lane-dependent register selects made them
    /// dearer than shared memory, which the code uses instead.
    pub shuffles_need_selects: bool,
    /// Whose GPUs the code is for (their instructions and bank phases).
    pub vendor: Vendor,
    /// Whether the plan is the warp view's or (AMD) the wave view's ([`Lanes::Wave`]: its
    /// shuffles exchange within 64-lane waves).
    pub lanes: Lanes,
}

impl ConversionCode {
    /// The cost model's cost of the plan the code follows: 0 for no-ops and register
    /// permutations, the shuffle count, or the shared-memory cost.
    pub fn cost(&self) -> u32 {
        plan_cost(&self.plan, self.shared_cost)
    }
}

/// Plans the conversion of a tile from distributed layout `src` to `dst`, elements of
/// `element_bits` bits, as generated code runs it on `vendor`'s GPUs (see the module docs).
pub fn plan_conversion_code(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    vendor: Vendor,
) -> Result<ConversionCode, PlanError> {
    let choice = choose(src, dst, element_bits, vendor)?;
    let movement = match choice.shuffle_movement {
        Some(m) if matches!(choice.plan, ConversionPlan::WarpShuffle(_)) => m,
        _ => movement_for(&choice.plan, src, dst, element_bits, vendor)?,
    };
    Ok(ConversionCode {
        lanes: movement.lanes,
        plan: choice.plan,
        movement,
        shuffle_cost: choice.shuffle_cost,
        shared_cost: choice.shared_cost,
        shuffles_need_selects: choice.shuffles_need_selects,
        vendor,
    })
}

/// [`ConversionCode::cost`] of [`plan_conversion_code`], without resolving the movement (the
/// cost model prices the plan on `vendor`'s bank phases, not its `ldmatrix` reads).
pub fn conversion_code_cost(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    vendor: Vendor,
) -> Result<u32, PlanError> {
    let choice = choose(src, dst, element_bits, vendor)?;
    Ok(plan_cost(&choice.plan, choice.shared_cost))
}

/// The cost model's cost of `plan`, given the shared-memory cost.
fn plan_cost(plan: &ConversionPlan, shared_cost: Option<u32>) -> u32 {
    match plan {
        ConversionPlan::NoOp | ConversionPlan::RegisterPermutation(_) => 0,
        ConversionPlan::WarpShuffle(s) => s.shuffles(),
        ConversionPlan::SharedMemory(_) => shared_cost.unwrap_or(0),
    }
}

/// The plan the code follows, the costs, and the movement of the shuffle plan when it was
/// built to price its register selects.
struct Choice {
    plan: ConversionPlan,
    shuffle_cost: Option<u32>,
    shared_cost: Option<u32>,
    shuffles_need_selects: bool,
    shuffle_movement: Option<Movement>,
}

/// The cost model's plan on `vendor`'s GPUs, with shuffles replaced by shared memory when their
/// register selects cost more, and on AMD by the wave view's shuffles when those cost less than
/// the shared memory the warp view needs (see the module docs).
fn choose(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    vendor: Vendor,
) -> Result<Choice, PlanError> {
    let choice = choose_on(src, dst, element_bits, vendor)?;
    if vendor != Vendor::Amd || !matches!(choice.plan, ConversionPlan::SharedMemory(_)) {
        return Ok(choice);
    }
    let (Some(wave_src), Some(wave_dst)) = (warps_as_wave(src), warps_as_wave(dst)) else {
        return Ok(choice);
    };
    // Layouts that fit together on warps fit on waves (the same map relabelled); a wave plan
    // that fails leaves the warp view's.
    let Ok(wave) = choose_on(&wave_src, &wave_dst, element_bits, vendor) else {
        return Ok(choice);
    };
    let cheaper =
        plan_cost(&wave.plan, wave.shared_cost) < plan_cost(&choice.plan, choice.shared_cost);
    match wave.plan {
        ConversionPlan::WarpShuffle(plan) if cheaper => {
            let mut movement = match wave.shuffle_movement {
                Some(m) => m,
                None => {
                    let shuffles = ConversionPlan::WarpShuffle(plan.clone());
                    movement_for(&shuffles, &wave_src, &wave_dst, element_bits, vendor)?
                }
            };
            movement.lanes = Lanes::Wave;
            movement.description = format!("wave {}", movement.description);
            Ok(Choice {
                plan: ConversionPlan::WarpShuffle(plan),
                shuffle_cost: wave.shuffle_cost,
                shared_cost: choice.shared_cost,
                shuffles_need_selects: false,
                shuffle_movement: Some(movement),
            })
        }
        _ => Ok(choice),
    }
}

/// [`choose`] on the layouts' own lanes (a warp's, or a wave's when they have six lane bits).
fn choose_on(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    vendor: Vendor,
) -> Result<Choice, PlanError> {
    let conversion = plan_conversion_on(vendor, src, dst, element_bits)?;
    let mut choice = Choice {
        plan: conversion.plan,
        shuffle_cost: conversion.shuffle_cost,
        shared_cost: conversion.shared_cost,
        shuffles_need_selects: false,
        shuffle_movement: None,
    };
    if let (ConversionPlan::WarpShuffle(_), Some(shared), Some(shared_cost)) = (
        &choice.plan,
        conversion.shared_alternative,
        conversion.shared_cost,
    ) {
        // Shuffles, whatever the vendor.
        let movement = movement_for(&choice.plan, src, dst, element_bits, Vendor::Nvidia)?;
        if shuffle_cost_quarters(&movement) > 4 * shared_cost {
            choice.plan = ConversionPlan::SharedMemory(Box::new(shared));
            choice.shuffles_need_selects = true;
        } else {
            choice.shuffle_movement = Some(movement);
        }
    }
    Ok(choice)
}

/// The movement that executes `plan` (a plan of `src → dst` on `element_bits`-bit elements) on
/// `vendor`'s GPUs.
pub fn movement_for(
    plan: &ConversionPlan,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    vendor: Vendor,
) -> Result<Movement, PlanError> {
    let src_registers = src.in_size(Label::Register);
    let dst_registers = dst.in_size(Label::Register);
    let mut movement = Movement {
        steps: Vec::new(),
        src_registers,
        dst_registers,
        element_bits,
        shared_bytes: 0,
        description: plan.kind().to_string(),
        lanes: Lanes::Warp,
    };
    match plan {
        ConversionPlan::NoOp => {
            if dst_registers > src_registers {
                return Err(PlanError::NoOpRegisters {
                    src: src_registers,
                    dst: dst_registers,
                });
            }
            movement.steps = (0..dst_registers)
                .map(|r| Step::Copy { dst: r, src: r })
                .collect();
        }
        ConversionPlan::RegisterPermutation(p) => movement.steps = register_steps(p, dst),
        ConversionPlan::WarpShuffle(p) => {
            movement.steps = shuffle_steps(p, dst);
            movement.description = format!(
                "warp shuffle: {} rounds of {} shuffle(s)",
                p.rounds.len(),
                p.shuffles_per_round
            );
        }
        ConversionPlan::SharedMemory(p) => {
            return shared_movement(p, src, dst, element_bits, vendor)
        }
    }
    Ok(movement)
}

fn register_steps(p: &RegisterPlan, dst: &LinearLayout) -> Vec<Step> {
    (0..dst.in_size(Label::Register))
        .map(|r| {
            let base = xor_bits(&p.from_register, r);
            if p.is_thread_uniform() {
                Step::Copy { dst: r, src: base }
            } else {
                Step::Select {
                    dst: r,
                    base,
                    select: Affine {
                        constant: 0,
                        lane: p.from_lane.clone(),
                        warp: p.from_warp.clone(),
                    },
                }
            }
        })
        .collect()
}

fn shuffle_steps(p: &ShufflePlan, dst: &LinearLayout) -> Vec<Step> {
    let send_offsets = vector_offsets(&p.vector.iter().map(|&(a, _)| a).collect::<Vec<_>>());
    let receive_offsets = vector_offsets(&p.vector.iter().map(|&(_, b)| b).collect::<Vec<_>>());
    let mut steps: Vec<Step> = p
        .rounds
        .iter()
        .map(|round| {
            let active = (0..round.source_lane.len())
                .filter(|&l| round.source_lane[l].is_some() && round.receive_register[l].is_some())
                .fold(0u64, |m, l| m | 1 << l);
            Step::Shuffle(ShuffleStep {
                send_offsets: send_offsets.clone(),
                receive_offsets: receive_offsets.clone(),
                send: LaneFn::fit(&round.send_register),
                source_lane: LaneFn::fit(&round.source_lane),
                receive: LaneFn::fit(&round.receive_register),
                active,
            })
        })
        .collect();
    steps.extend(duplicate_steps(dst));
    steps
}

/// Issue slots × 4 of a shuffle movement: 4 per shuffle, 1 per register select.
pub fn shuffle_cost_quarters(movement: &Movement) -> u32 {
    movement
        .steps
        .iter()
        .map(|step| match step {
            Step::Shuffle(s) => {
                let n = s.send_offsets.len() as u32;
                let words = word_count(n as usize, movement.element_bits) as u32;
                let selects = (s.send.values().len() as u32 - 1) * n
                    + (s.receive.values().len() as u32 - 1) * n;
                4 * words + selects
            }
            Step::Select { select, .. } => select.values().len() as u32 - 1,
            _ => 0,
        })
        .sum()
}
