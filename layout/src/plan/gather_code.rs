//! A gather as generated code runs it: the plan of [`plan_gather`] resolved to per-thread
//! steps, `out[x] = src[x with coordinate axis replaced by index[x]]`, `out` in the index's
//! layout `I`.
//!
//! Both plans compute, per index register `r`, where the needed element is: the column (the
//! other coordinates) is `I(r, lane, warp)` with the axis cleared, the axis coordinate is the
//! index value `v` (taken modulo the axis size), and everything is XOR-linear, so a position is
//! `P(r) ⊕ P_thread(lane, warp) ⊕ P_axis(v)` with `P(r)` resolved at planning time,
//! `P_thread` once per thread and `P_axis` a few XOR terms of the bits of `v`:
//!
//! - **warp shuffles** (the axis stays inside the warp): the source is `S⁻¹(column, v)` =
//!   (register, lane). For each candidate register `c` of the plan's round list for `r` (the
//!   registers `S` may keep that column's axis values in), every lane sends its register `c`
//!   with `shfl.sync.idx` from the source lane and keeps the value if `c` is the source register.
//!   No shared memory.
//! - **shared memory**: barrier; the owners of `S` store it row-major with the widest vectors
//!   the layout allows (elements narrower than a word that would be stored alone are widened to
//!   a word each); barrier; each position loads its element at `offset(column, v)`.
//!
//! **Cost** ([`gather_cost`]): shuffles, or (through shared memory) the store's wavefronts, the
//! barrier and one data-dependent load per index register and 32-bit word (a lower bound:
//! those loads may conflict).
//!
//! **Waves (AMD)** ([`plan_gather_on`]): a gather the warp view sends through shared memory
//! because its elements cross warp bit 0 is planned again on the wave views (`plan::wave`: warp
//! bit 0 as lane bit 5), and is the wave's shuffles (`ds_bpermute` over 64 lanes) when those
//! exist and cost less; its code then names wave lanes ([`GatherCode::lanes`]).

use super::bank::bank_wavefronts;
use super::broadcast::Broadcast;
use super::conversion::BARRIER_COST;
use super::gather::{plan_gather, source_axis, GatherPlan};
use super::movement::{xor_bits, Affine, StoreStep};
use super::shared_steps::store_step;
use super::wave::{warps_as_wave, Lanes};
use super::{PlanError, Vendor};
use crate::{Label, LinearLayout};
use core::fmt;
use std::vec;
use std::vec::Vec;

/// How a gather moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatherKind {
    /// Within each warp by shuffles.
    WarpShuffle,
    /// Through shared memory.
    SharedMemory,
}

impl fmt::Display for GatherKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GatherKind::WarpShuffle => "warp shuffle",
            GatherKind::SharedMemory => "shared memory",
        })
    }
}

/// Plans `gather(src, index, axis)` on elements of `element_bits` and resolves its steps (for
/// NVIDIA's GPUs).
pub fn plan_gather_code(
    src: &LinearLayout,
    index: &LinearLayout,
    axis: usize,
    element_bits: u32,
) -> Result<GatherCode, PlanError> {
    let plan = plan_gather(src, index, axis as u32, element_bits)?;
    gather_code(&plan, src, index, axis, element_bits)
}

/// A gather's plan on a vendor's GPUs ([`plan_gather_on`]).
#[derive(Clone, Debug)]
pub struct GatherChoice {
    /// The plan: of the layouts, or of their wave views on [`Lanes::Wave`].
    pub plan: GatherPlan,
    /// What the plan's lanes name.
    pub lanes: Lanes,
    /// [`gather_cost`] of the plan.
    pub cost: u64,
}

/// The plan of `gather(src, index, axis)` on `vendor`'s GPUs: the warp view's, or on AMD the
/// wave view's shuffles where the warp view needs shared memory and the wave's shuffles cost
/// less (see the module docs).
pub fn plan_gather_on(
    vendor: Vendor,
    src: &LinearLayout,
    index: &LinearLayout,
    axis: u32,
    element_bits: u32,
) -> Result<GatherChoice, PlanError> {
    let plan = plan_gather(src, index, axis, element_bits)?;
    let warp = GatherChoice {
        cost: gather_cost(&plan, index, element_bits),
        plan,
        lanes: Lanes::Warp,
    };
    if vendor != Vendor::Amd || !matches!(warp.plan, GatherPlan::SharedMemory(_)) {
        return Ok(warp);
    }
    let (Some(wave_src), Some(wave_index)) = (warps_as_wave(src), warps_as_wave(index)) else {
        return Ok(warp);
    };
    match plan_gather(&wave_src, &wave_index, axis, element_bits) {
        Ok(plan @ GatherPlan::WarpShuffle(_)) => {
            let cost = gather_cost(&plan, &wave_index, element_bits);
            Ok(if cost < warp.cost {
                GatherChoice {
                    plan,
                    lanes: Lanes::Wave,
                    cost,
                }
            } else {
                warp
            })
        }
        _ => Ok(warp),
    }
}

/// [`gather_code`] of a plan of [`plan_gather_on`]: on [`Lanes::Wave`] the plan is of the wave
/// views of `src` and `index`, and the code names wave lanes.
pub fn gather_code_on(
    plan: &GatherPlan,
    lanes: Lanes,
    src: &LinearLayout,
    index: &LinearLayout,
    axis: usize,
    element_bits: u32,
) -> Result<GatherCode, PlanError> {
    match lanes {
        Lanes::Warp => gather_code(plan, src, index, axis, element_bits),
        Lanes::Wave => {
            let wave = |l: &LinearLayout| {
                warps_as_wave(l)
                    .ok_or_else(|| PlanError::new("a wave gather of layouts without a wave view"))
            };
            let mut code = gather_code(plan, &wave(src)?, &wave(index)?, axis, element_bits)?;
            code.lanes = Lanes::Wave;
            Ok(code)
        }
    }
}

/// The cost of a gather plan (see the module docs).
pub fn gather_cost(plan: &GatherPlan, index: &LinearLayout, bits: u32) -> u64 {
    match plan {
        GatherPlan::WarpShuffle(s) => u64::from(s.shuffles()),
        GatherPlan::SharedMemory(s) => {
            let registers = u64::from(index.in_size(Label::Register));
            u64::from(s.store.total_wavefronts())
                + u64::from(BARRIER_COST)
                + registers * u64::from(bits.div_ceil(32))
        }
    }
}

/// A per-thread, per-index-value quantity: `thread(lane, warp) ⊕ ⨁_b bit_b(v)·axis[b]`, plus a
/// register-dependent constant kept by the user of this struct.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexAffine {
    /// The part that depends on the thread (lane and warp).
    pub thread: Affine,
    /// Per bit of the index value.
    pub axis: Vec<u32>,
}

impl IndexAffine {
    /// The quantity for thread (`lane`, `warp`) and index value `value`.
    pub fn eval(&self, lane: u32, warp: u32, value: u32) -> u32 {
        self.thread.eval(lane, warp) ^ xor_bits(&self.axis, value)
    }
}

/// The steps of a gather (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GatherSteps {
    /// The source is in the same warp: shuffle rounds, one per candidate source register.
    Shuffle {
        /// Per index register: (source register constant, source lane constant, candidate
        /// registers, one shuffle round each).
        rounds: Vec<(u32, u32, Vec<u32>)>,
        /// The source register, as a function of the thread and the index value.
        register: IndexAffine,
        /// The source lane, as a function of the thread and the index value.
        lane: IndexAffine,
    },
    /// Through shared memory: the source is stored, then each index reads its element.
    Shared {
        /// How the source is stored.
        store: StoreStep,
        /// The shared memory the store uses, in bytes.
        shared_bytes: u32,
        /// Per index register: the byte-offset constant.
        offsets: Vec<u32>,
        /// Byte offsets.
        thread: IndexAffine,
        /// Bytes per memory cell (the element size, or 4 when widened).
        stride: u32,
    },
}

/// A gather as generated code runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatherCode {
    /// How: warp shuffles or shared memory (the kind of the [`GatherPlan`] it executes).
    pub kind: GatherKind,
    /// The cost the plan was chosen on ([`gather_cost`]).
    pub cost: u64,
    /// The steps.
    pub steps: GatherSteps,
    /// Bits per element of the source.
    pub element_bits: u32,
    /// Registers of the index layout (= of the result).
    pub registers: u32,
    /// Size of the source along the axis (index values are taken modulo it).
    pub axis_size: u32,
    /// What the steps' lanes and warps name: a warp's 32 lanes, or (AMD) a wave's 64.
    pub lanes: Lanes,
}

/// The steps of `plan` (a plan of `gather(src, index, axis)` on elements of `element_bits`).
pub fn gather_code(
    plan: &GatherPlan,
    src: &LinearLayout,
    index: &LinearLayout,
    axis: usize,
    element_bits: u32,
) -> Result<GatherCode, PlanError> {
    let axis_o = source_axis(src, axis)?;
    let axis_bits = src.out_bits_at(axis_o);
    let registers = index.in_size(Label::Register);
    // The column of each index input bit, as coordinates of the source tile (axis cleared).
    let column = |label: Label, k: usize| -> Vec<u32> {
        let mut coords = index
            .basis(label, k)
            .map(|c| c[..index.num_out_dims()].to_vec())
            .unwrap_or_default();
        if let Some(o) = index.out_index(src.out_label(axis_o)) {
            coords[o] = 0;
        }
        coords
    };
    let axis_coords = |b: u32| -> Vec<u32> {
        let mut coords = vec![0u32; src.num_out_dims()];
        coords[axis_o] = 1 << b;
        coords
    };
    let steps = match plan {
        GatherPlan::WarpShuffle(p) => {
            let source = &p.source;
            let (reg_o, lane_o) = (
                source
                    .out_index(Label::Register)
                    .ok_or(PlanError::MissingDimension {
                        role: "source inverse",
                        label: Label::Register,
                    })?,
                source.out_index(Label::Lane),
            );
            // (register, lane) of S⁻¹ at the given source coordinates.
            let locate = |coords: &[u32]| -> (u32, u32) {
                let packed = source.apply_packed(coords);
                (
                    source.coord(packed, reg_o),
                    lane_o.map_or(0, |o| source.coord(packed, o)),
                )
            };
            let thread_part = |select: usize| -> IndexAffine {
                let pick = |label: Label| -> Vec<u32> {
                    (0..index.in_bits(label) as usize)
                        .map(|k| {
                            let at = locate(&column(label, k));
                            if select == 0 {
                                at.0
                            } else {
                                at.1
                            }
                        })
                        .collect()
                };
                IndexAffine {
                    thread: Affine {
                        constant: 0,
                        lane: pick(Label::Lane),
                        warp: pick(Label::Warp),
                    },
                    axis: (0..axis_bits)
                        .map(|b| {
                            let at = locate(&axis_coords(b));
                            if select == 0 {
                                at.0
                            } else {
                                at.1
                            }
                        })
                        .collect(),
                }
            };
            let register_columns: Vec<(u32, u32)> = (0..index.in_bits(Label::Register) as usize)
                .map(|k| locate(&column(Label::Register, k)))
                .collect();
            let rounds = (0..registers)
                .map(|r| {
                    let (reg, lane) = register_columns
                        .iter()
                        .enumerate()
                        .filter(|&(k, _)| r >> k & 1 == 1)
                        .fold((0, 0), |(a, b), (_, &(x, y))| (a ^ x, b ^ y));
                    (reg, lane, p.rounds[r as usize].clone())
                })
                .collect();
            GatherSteps::Shuffle {
                rounds,
                register: thread_part(0),
                lane: thread_part(1),
            }
        }
        GatherPlan::SharedMemory(p) => {
            // Row-major memory; elements that would be stored alone in a word are widened.
            let widened = p.store.vector.bits < 32;
            let bits = if widened { 32 } else { element_bits };
            let shift = (bits / 8).trailing_zeros();
            let write = bank_wavefronts(&p.memory, src, bits)?;
            let owners = Broadcast::of(src)?;
            let store = store_step(
                &p.store_address,
                src,
                &write.vector.registers,
                &owners,
                shift,
            );
            let offset_of = |coords: &[u32]| p.load_address.apply_packed(coords) as u32;
            let pick = |label: Label| -> Vec<u32> {
                (0..index.in_bits(label) as usize)
                    .map(|k| offset_of(&column(label, k)) << shift)
                    .collect()
            };
            let reg_offsets = pick(Label::Register);
            GatherSteps::Shared {
                store,
                shared_bytes: (1u32 << p.memory.total_in_bits()) << shift,
                offsets: (0..registers).map(|r| xor_bits(&reg_offsets, r)).collect(),
                thread: IndexAffine {
                    thread: Affine {
                        constant: 0,
                        lane: pick(Label::Lane),
                        warp: pick(Label::Warp),
                    },
                    axis: (0..axis_bits)
                        .map(|b| offset_of(&axis_coords(b)) << shift)
                        .collect(),
                },
                stride: 1 << shift,
            }
        }
    };
    Ok(GatherCode {
        kind: match plan {
            GatherPlan::WarpShuffle(_) => GatherKind::WarpShuffle,
            GatherPlan::SharedMemory(_) => GatherKind::SharedMemory,
        },
        cost: gather_cost(plan, index, element_bits),
        steps,
        element_bits,
        registers,
        axis_size: 1 << axis_bits,
        lanes: Lanes::Warp,
    })
}
