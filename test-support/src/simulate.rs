//! A warp-level machine that executes plans on data: registers per thread, shuffles within a
//! warp, a shared memory with vector loads and stores. The tests run every plan on a tile whose
//! elements are their own indices and check that each position ends up with the element its
//! layout assigns it (broadcast copies included).
//!
//! The machine only follows the plan's tables and address maps: it never looks at the layouts
//! except for the number of registers, lanes and warps.

use tessera_layout::plan::bank::BankAccess;
use tessera_layout::plan::broadcast::Broadcast;
use tessera_layout::plan::conversion::{ConversionPlan, RegisterPlan, SharedPlan, ShufflePlan};
use tessera_layout::plan::gather::{GatherPlan, SharedGather, ShuffleGather};
use tessera_layout::plan::{bases, combine, PlanError};
use tessera_layout::{Label, LinearLayout};

/// The registers of one CTA: `values[warp][lane][register]`, `None` where nothing was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterFile {
    pub values: Vec<Vec<Vec<Option<u64>>>>,
}

impl RegisterFile {
    /// An empty file of the given size.
    pub fn empty(warps: u32, lanes: u32, registers: u32) -> Self {
        RegisterFile {
            values: vec![vec![vec![None; registers as usize]; lanes as usize]; warps as usize],
        }
    }

    /// Each position of `layout` holding the (packed) index of its element: the tile as data.
    pub fn holding_elements(layout: &LinearLayout) -> Self {
        let table = |label| bases(layout, label);
        let (regs, lanes, warps) = (
            table(Label::Register),
            table(Label::Lane),
            table(Label::Warp),
        );
        let mut file = Self::empty(1 << warps.len(), 1 << lanes.len(), 1 << regs.len());
        for (w, warp) in file.values.iter_mut().enumerate() {
            for (l, lane) in warp.iter_mut().enumerate() {
                for (r, value) in lane.iter_mut().enumerate() {
                    *value = Some(
                        combine(&regs, r as u64)
                            ^ combine(&lanes, l as u64)
                            ^ combine(&warps, w as u64),
                    );
                }
            }
        }
        file
    }

    /// Size of a layout's hardware: (warps, lanes, registers).
    pub fn shape_of(layout: &LinearLayout) -> (u32, u32, u32) {
        (
            layout.in_size(Label::Warp),
            layout.in_size(Label::Lane),
            layout.in_size(Label::Register),
        )
    }

    fn get(&self, w: usize, l: usize, r: u32) -> Result<u64, PlanError> {
        self.values[w][l]
            .get(r as usize)
            .copied()
            .flatten()
            .ok_or_else(|| {
                plan_error(format!(
                    "warp {w} lane {l} reads register {r}, which holds nothing"
                ))
            })
    }
}

/// Executes a conversion plan on `input` (laid out as the source), producing the destination's
/// registers (`dst_shape` = warps, lanes, registers of the destination layout).
pub fn execute_conversion(
    plan: &ConversionPlan,
    input: &RegisterFile,
    dst_shape: (u32, u32, u32),
) -> Result<RegisterFile, PlanError> {
    let (warps, lanes, registers) = dst_shape;
    let mut out = RegisterFile::empty(warps, lanes, registers);
    match plan {
        ConversionPlan::NoOp => {
            for w in 0..warps as usize {
                for l in 0..lanes as usize {
                    for r in 0..registers {
                        out.values[w][l][r as usize] = Some(input.get(w, l, r)?);
                    }
                }
            }
        }
        ConversionPlan::RegisterPermutation(p) => run_registers(p, input, &mut out)?,
        ConversionPlan::WarpShuffle(p) => run_shuffles(p, input, &mut out)?,
        ConversionPlan::SharedMemory(p) => run_shared(p, input, &mut out)?,
    }
    Ok(out)
}

fn run_registers(
    p: &RegisterPlan,
    input: &RegisterFile,
    out: &mut RegisterFile,
) -> Result<(), PlanError> {
    for (w, warp) in out.values.iter_mut().enumerate() {
        for (l, lane) in warp.iter_mut().enumerate() {
            for (r, value) in lane.iter_mut().enumerate() {
                *value = Some(input.get(w, l, p.source(r as u32, l as u32, w as u32))?);
            }
        }
    }
    Ok(())
}

/// `base ⊕ Σ_{j_i = 1} 2^bits[i]`: register of element `j` of a vector.
fn vector_register(base: u32, bits: &[u32], j: u32) -> u32 {
    bits.iter()
        .enumerate()
        .filter(|(i, _)| j >> i & 1 == 1)
        .fold(base, |acc, (_, &b)| acc ^ (1 << b))
}

fn run_shuffles(
    p: &ShufflePlan,
    input: &RegisterFile,
    out: &mut RegisterFile,
) -> Result<(), PlanError> {
    let a_bits: Vec<u32> = p.vector.iter().map(|&(a, _)| a).collect();
    let b_bits: Vec<u32> = p.vector.iter().map(|&(_, b)| b).collect();
    let elements = 1u32 << p.vector.len();
    if !p.vector.is_empty() && elements * p.element_bits > 32 {
        return Err(plan_error("a shuffle packs more than 32 bits"));
    }
    for w in 0..out.values.len() {
        let lanes = out.values[w].len();
        for round in &p.rounds {
            // Every lane puts its vector on the wire...
            let mut wire: Vec<Option<Vec<u64>>> = Vec::with_capacity(lanes);
            for l in 0..lanes {
                wire.push(match round.send_register[l] {
                    Some(base) => Some(
                        (0..elements)
                            .map(|j| input.get(w, l, vector_register(base, &a_bits, j)))
                            .collect::<Result<Vec<u64>, PlanError>>()?,
                    ),
                    None => None,
                });
            }
            // ...and reads the one of its source lane.
            for l in 0..lanes {
                if let (Some(src), Some(base)) = (round.source_lane[l], round.receive_register[l]) {
                    let message = wire[src as usize].as_ref().ok_or_else(|| {
                        plan_error(format!("lane {l} reads lane {src}, which sends nothing"))
                    })?;
                    for (j, &value) in message.iter().enumerate() {
                        let r = vector_register(base, &b_bits, j as u32) as usize;
                        out.values[w][l][r] = Some(value);
                    }
                }
            }
        }
        // Duplicate registers copy their canonical one.
        for l in 0..lanes {
            for r in 0..out.values[w][l].len() {
                let canonical = r & !(p.duplicate_registers as usize);
                out.values[w][l][r] = out.values[w][l][canonical];
            }
        }
    }
    Ok(())
}

/// The offset a hardware position maps to under an address map.
fn address(map: &LinearLayout, register: u32, lane: u32, warp: u32) -> u64 {
    combine(&bases(map, Label::Register), register as u64)
        ^ combine(&bases(map, Label::Lane), lane as u64)
        ^ combine(&bases(map, Label::Warp), warp as u64)
}

/// Register chunks of an access: the bases of every instruction (vector bits clear).
fn chunks(registers: u32, vector_bits: &[u32], skip: u32) -> Vec<u32> {
    let vector_mask: u32 = vector_bits.iter().map(|&b| 1 << b).sum();
    (0..registers)
        .filter(|r| r & (vector_mask | skip) == 0)
        .collect()
}

/// Stores a tile held in `input` into `memory`: owners only, one vector instruction per register
/// chunk, at the base offset the address map gives.
fn store_tile(
    memory: &mut [Option<u64>],
    input: &RegisterFile,
    store_address: &LinearLayout,
    access: &BankAccess,
    owners: &Broadcast,
) -> Result<(), PlanError> {
    let in_regs = input.values[0][0].len() as u32;
    for (w, warp) in input.values.iter().enumerate() {
        for l in 0..warp.len() {
            for base in chunks(in_regs, &access.vector.registers, owners.register) {
                if !owners.is_owner(base, l as u32, w as u32, 0) {
                    continue;
                }
                let at = address(store_address, base, l as u32, w as u32) as usize;
                for j in 0..access.vector.elements {
                    let r = vector_register(base, &access.vector.registers, j);
                    memory[at + j as usize] = Some(input.get(w, l, r)?);
                }
            }
        }
    }
    Ok(())
}

fn run_shared(
    p: &SharedPlan,
    input: &RegisterFile,
    out: &mut RegisterFile,
) -> Result<(), PlanError> {
    let mut memory: Vec<Option<u64>> = vec![None; 1 << p.swizzle.memory.total_in_bits()];
    store_tile(
        &mut memory,
        input,
        &p.store_address,
        p.write(),
        &p.store_owners,
    )?;
    // Barrier; load: every position of the destination.
    let read = p.read();
    for w in 0..out.values.len() {
        for l in 0..out.values[w].len() {
            let out_regs = out.values[w][l].len() as u32;
            for base in chunks(out_regs, &read.vector.registers, 0) {
                let at = address(&p.load_address, base, l as u32, w as u32) as usize;
                for j in 0..read.vector.elements {
                    let r = vector_register(base, &read.vector.registers, j) as usize;
                    out.values[w][l][r] = Some(memory[at + j as usize].ok_or_else(|| {
                        plan_error(format!(
                            "warp {w} lane {l} loads offset {}, never stored",
                            at + j as usize
                        ))
                    })?);
                }
            }
        }
    }
    Ok(())
}

/// The coordinates (in output order) of `map` applied to hardware position `(r, l, w)`.
fn coords_at(
    map: &LinearLayout,
    register: u32,
    lane: u32,
    warp: u32,
) -> [u32; tessera_layout::MAX_DIMS] {
    map.unpack(address(map, register, lane, warp))
}

/// Executes a gather plan: `src` holds the source tile (laid out as the source layout),
/// `index` the index values (laid out as the index layout, one axis coordinate per position);
/// returns the output, laid out as the index layout.
pub fn execute_gather(
    plan: &GatherPlan,
    src: &RegisterFile,
    index: &RegisterFile,
) -> Result<RegisterFile, PlanError> {
    let mut out = index.clone();
    match plan {
        GatherPlan::WarpShuffle(p) => run_shuffle_gather(p, src, index, &mut out)?,
        GatherPlan::SharedMemory(p) => run_shared_gather(p, src, index, &mut out)?,
    }
    Ok(out)
}

/// The element a gather position needs: its column with the axis coordinate set to its index
/// value, as coordinates of the source tile.
fn needed(
    column_map: &LinearLayout,
    axis: u32,
    r: u32,
    l: u32,
    w: u32,
    value: u64,
) -> [u32; tessera_layout::MAX_DIMS] {
    let mut coords = coords_at(column_map, r, l, w);
    if let Some(o) = column_map.out_index(Label::Dim(axis as u8)) {
        coords[o] = value as u32;
    }
    coords
}

fn run_shuffle_gather(
    p: &ShuffleGather,
    src: &RegisterFile,
    index: &RegisterFile,
    out: &mut RegisterFile,
) -> Result<(), PlanError> {
    let dims = p.source.num_in_dims();
    let out_index = |label| p.source.out_index(label);
    let (reg_o, lane_o) = (out_index(Label::Register), out_index(Label::Lane));
    let part = |packed: u64, o: Option<usize>| o.map_or(0, |o| p.source.coord(packed, o));
    for w in 0..index.values.len() {
        let lanes = index.values[w].len();
        for (ir, candidates) in p.rounds.iter().enumerate() {
            // Each lane works out where its element is, from its index value.
            let mut want = Vec::with_capacity(lanes);
            for l in 0..lanes {
                let value = index.get(w, l, ir as u32)?;
                let coords = needed(
                    &p.index_column,
                    p.axis,
                    ir as u32,
                    l as u32,
                    w as u32,
                    value,
                );
                let at = p.source.apply_packed(&coords[..dims]);
                // The warp part is not used: the element is in this warp (the plan's
                // precondition; the data check of the tests confirms it).
                want.push((part(at, lane_o), part(at, reg_o)));
            }
            let mut got = vec![None; lanes];
            for &c in candidates {
                // Round: every lane sends register c; each reads its source lane.
                for (l, &(src_lane, src_reg)) in want.iter().enumerate() {
                    let value = src.get(w, src_lane as usize, c)?;
                    if src_reg == c {
                        got[l] = Some(value);
                    }
                }
            }
            for (l, value) in got.into_iter().enumerate() {
                out.values[w][l][ir] = Some(value.ok_or_else(|| {
                    plan_error(format!(
                        "warp {w} lane {l} register {ir}: no round carried its element"
                    ))
                })?);
            }
        }
    }
    Ok(())
}

fn run_shared_gather(
    p: &SharedGather,
    src: &RegisterFile,
    index: &RegisterFile,
    out: &mut RegisterFile,
) -> Result<(), PlanError> {
    let mut memory: Vec<Option<u64>> = vec![None; 1 << p.memory.total_in_bits()];
    store_tile(
        &mut memory,
        src,
        &p.store_address,
        &p.store,
        &p.store_owners,
    )?;
    let dims = p.load_address.num_in_dims();
    for w in 0..index.values.len() {
        for l in 0..index.values[w].len() {
            for r in 0..index.values[w][l].len() {
                let value = index.get(w, l, r as u32)?;
                let coords = needed(&p.index_column, p.axis, r as u32, l as u32, w as u32, value);
                let offset = p.load_address.apply_packed(&coords[..dims]) as usize;
                out.values[w][l][r] = Some(memory[offset].ok_or_else(|| {
                    plan_error(format!(
                        "warp {w} lane {l} loads offset {offset}, never stored"
                    ))
                })?);
            }
        }
    }
    Ok(())
}

fn plan_error(message: impl Into<String>) -> PlanError {
    PlanError::Message(message.into())
}
