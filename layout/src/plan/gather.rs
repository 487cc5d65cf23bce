//! Gather (§5.5): `out[x] = src[x with coordinate axis replaced by index[x]]`, with `src` in
//! layout `S` and `index` (and `out`) in layout `I`.
//!
//! **Warp-local**: when moving along `axis` never changes the warp (`S_Wrp` and `I_Wrp` have no
//! `axis` component) and the other coordinates sit on the same warps and lanes in both layouts
//! (`S_Wrp` and `I_Wrp`, `S_Thr` and `I_Thr` agree off `axis`), every element a thread needs is in
//! its warp, in a thread that differs from it only along `axis`. For each index register the
//! column (the other coordinates) is fixed, so the candidate source registers are known at
//! compile time: `S⁻¹_Reg(column) ⊕ S⁻¹_Reg(a)` for the `axis` values `a` that `S` keeps in
//! registers. Each candidate costs one shuffle round: every lane sends that register, each lane
//! reads from lane `S⁻¹_Thr(column, index)` (computed from the index value at run time) and keeps
//! the value when the candidate is `S⁻¹_Reg(column, index)`. This is Triton's
//! `emitWarpLocalGather`; its conditions need `S` and `I` to be unit-or-zero bases
//! (Definition 4.10).
//!
//! **Otherwise** `src` goes through shared memory: each element is stored once (row-major,
//! vectorized stores), and each position loads `src[x′]` at its data-dependent offset.

use super::bank::{bank_wavefronts, BankAccess};
use super::broadcast::Broadcast;
use super::swizzle::memory_layout;
use super::{bases, check_distributed, check_element_bits, PlanError};
use crate::{Label, LinearLayout};
use std::boxed::Box;
use std::vec::Vec;

/// How a gather is done.
#[derive(Clone, Debug)]
pub enum GatherPlan {
    /// Within each warp by shuffles.
    WarpShuffle(Box<ShuffleGather>),
    /// Through shared memory.
    SharedMemory(Box<SharedGather>),
}

impl GatherPlan {
    /// A short name.
    pub fn kind(&self) -> &'static str {
        match self {
            GatherPlan::WarpShuffle(_) => "warp shuffle",
            GatherPlan::SharedMemory(_) => "shared memory",
        }
    }
}

/// A warp-local gather (see the module docs).
#[derive(Clone, Debug)]
pub struct ShuffleGather {
    /// The gathered dimension.
    pub axis: u32,
    /// Bits of one element.
    pub element_bits: u32,
    /// `rounds[r]`: the source registers shuffled for index register `r`, one round each.
    pub rounds: Vec<Vec<u32>>,
    /// 32-bit shuffles per round (`⌈bits / 32⌉`).
    pub shuffles_per_round: u32,
    /// `I` with the `axis` coordinate dropped to 0: the column of each index position.
    pub index_column: LinearLayout,
    /// `S⁻¹` (tile → register, lane, warp; Triton's pseudo-inverse): where an element of `src` is.
    pub source: LinearLayout,
}

impl ShuffleGather {
    /// Shuffle instructions per warp.
    pub fn shuffles(&self) -> u32 {
        self.rounds.iter().map(|r| r.len() as u32).sum::<u32>() * self.shuffles_per_round
    }
}

/// A gather through shared memory.
#[derive(Clone, Debug)]
pub struct SharedGather {
    /// The gathered dimension.
    pub axis: u32,
    /// Bits of one element.
    pub element_bits: u32,
    /// Row-major memory of the source tile (offset → tile).
    pub memory: LinearLayout,
    /// `S`'s `(register, lane, warp) → offset`.
    pub store_address: LinearLayout,
    /// The store of `src` (vectorization and wavefronts).
    pub store: BankAccess,
    /// Which positions of `S` store.
    pub store_owners: Broadcast,
    /// `I` with the `axis` coordinate dropped to 0.
    pub index_column: LinearLayout,
    /// Tile → offset (the inverse of `memory`).
    pub load_address: LinearLayout,
}

/// Plans `gather(src, index, axis)`: `src` in layout `S`, `index` in `I` (their tiles may differ
/// only along `axis`).
pub fn plan_gather(
    src: &LinearLayout,
    index: &LinearLayout,
    axis: u32,
    element_bits: u32,
) -> Result<GatherPlan, PlanError> {
    check_element_bits(element_bits)?;
    check_distributed(src, "source")?;
    check_distributed(index, "index")?;
    let axis_s = source_axis(src, axis as usize)?;
    let same_dims = src.num_out_dims() == index.num_out_dims()
        && (0..src.num_out_dims()).all(|o| {
            src.out_label(o) == index.out_label(o)
                && (o == axis_s || src.out_bits_at(o) == index.out_bits_at(o))
        });
    if !same_dims {
        return Err(PlanError::GatherTiles {
            src: Box::new(*src),
            index: Box::new(*index),
            axis: src.out_label(axis_s),
        });
    }
    if bases(src, Label::Block)
        .iter()
        .chain(&bases(index, Label::Block))
        .any(|&v| v != 0)
    {
        return Err(PlanError::GatherAcrossCtas);
    }
    let axis_mask_s = mask(src, axis_s);
    let axis_mask_i = mask(index, axis_s);
    let index_column = drop_axis(index, axis_mask_i)?;
    if let Some(plan) = shuffle_gather(
        src,
        index,
        axis,
        axis_mask_s,
        axis_mask_i,
        element_bits,
        &index_column,
    )? {
        return Ok(GatherPlan::WarpShuffle(Box::new(plan)));
    }
    let rank = src.num_out_dims();
    let offsets: Vec<u64> = (0..rank)
        .rev()
        .flat_map(|d| (0..src.out_bits_at(d)).map(move |b| 1u64 << (src.out_offset(d) + b)))
        .collect();
    let memory = memory_layout(src, &offsets)?;
    Ok(GatherPlan::SharedMemory(Box::new(SharedGather {
        axis,
        element_bits,
        store: bank_wavefronts(&memory, src, element_bits)?,
        store_address: src.invert_and_compose(&memory)?,
        store_owners: Broadcast::of(src)?,
        index_column,
        load_address: memory.invert()?,
        memory,
    })))
}

/// The packed mask of output dimension `o`.
fn mask(layout: &LinearLayout, o: usize) -> u64 {
    ((1u64 << layout.out_bits_at(o)) - 1) << layout.out_offset(o)
}

/// `layout` with the coordinate under `axis_mask` cleared in every basis.
fn drop_axis(layout: &LinearLayout, axis_mask: u64) -> Result<LinearLayout, PlanError> {
    let mut out = *layout;
    for i in 0..layout.num_in_dims() {
        for k in 0..layout.in_bits_at(i) as usize {
            out.set_packed_basis(i, k, layout.packed_basis(i, k) & !axis_mask);
        }
    }
    Ok(out)
}

/// Whether every basis is a unit vector or zero, and the unit vectors are distinct.
fn unit_or_zero(layout: &LinearLayout) -> bool {
    let mut seen = 0u64;
    (0..layout.num_in_dims()).all(|i| {
        (0..layout.in_bits_at(i) as usize).all(|k| {
            let v = layout.packed_basis(i, k);
            let ok = v == 0 || (v.is_power_of_two() && seen & v == 0);
            seen |= v;
            ok
        })
    })
}

fn shuffle_gather(
    src: &LinearLayout,
    index: &LinearLayout,
    axis: u32,
    axis_mask_s: u64,
    axis_mask_i: u64,
    element_bits: u32,
    index_column: &LinearLayout,
) -> Result<Option<ShuffleGather>, PlanError> {
    if !unit_or_zero(src) || !unit_or_zero(index) {
        return Ok(None);
    }
    // Off-axis parts as comparable vectors: the index tile may be larger or smaller along the
    // axis, so compare with the axis cleared (the other dimensions are packed alike).
    let off = |v: u64, m: u64| v & !m;
    let (s_warp, i_warp) = (bases(src, Label::Warp), bases(index, Label::Warp));
    let (s_lane, i_lane) = (bases(src, Label::Lane), bases(index, Label::Lane));
    let src_other = |v: u64| repack_off_axis(src, index, off(v, axis_mask_s));
    let warp_local = s_warp.len() == i_warp.len()
        && s_lane.len() == i_lane.len()
        && s_warp.iter().all(|&v| v & axis_mask_s == 0)
        && i_warp.iter().all(|&v| v & axis_mask_i == 0)
        && s_warp
            .iter()
            .zip(&i_warp)
            .all(|(&a, &b)| src_other(a) == off(b, axis_mask_i))
        && s_lane
            .iter()
            .zip(&i_lane)
            .all(|(&a, &b)| src_other(a) == off(b, axis_mask_i));
    if !warp_local {
        return Ok(None);
    }
    let source = src.pseudo_invert()?;
    let reg_out = source
        .out_index(Label::Register)
        .ok_or(PlanError::MissingDimension {
            role: "source inverse",
            label: Label::Register,
        })?;
    // The register part of S⁻¹ on a packed element of the source tile.
    let register_of = |element: u64| -> u32 {
        let coords = src.unpack(element);
        let packed = source.apply_packed(&coords[..src.num_out_dims()]);
        source.coord(packed, reg_out)
    };
    // Axis values S keeps in registers: the axis bits whose inverse lands in a register.
    let axis_o = src.out_index(Label::Dim(axis as u8)).expect("checked");
    let axis_register_bits: Vec<u32> = (0..src.out_bits_at(axis_o))
        .map(|b| register_of(1u64 << (src.out_offset(axis_o) + b)))
        .filter(|&r| r != 0)
        .collect();
    let index_regs = bases(index_column, Label::Register);
    let rounds: Vec<Vec<u32>> = (0..1u32 << index_regs.len())
        .map(|r| {
            let column = super::combine(&index_regs, r as u64);
            let base = register_of(repack_to(index, src, column));
            (0..1u32 << axis_register_bits.len())
                .map(|j| {
                    axis_register_bits
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| j >> i & 1 == 1)
                        .fold(base, |acc, (_, &b)| acc ^ b)
                })
                .collect()
        })
        .collect();
    Ok(Some(ShuffleGather {
        axis,
        element_bits,
        rounds,
        shuffles_per_round: element_bits.div_ceil(32),
        index_column: *index_column,
        source,
    }))
}

/// A packed vector of `from` re-packed into `to`'s output dimensions (same labels).
fn repack_to(from: &LinearLayout, to: &LinearLayout, v: u64) -> u64 {
    let coords = from.unpack(v);
    to.pack(&coords[..from.num_out_dims()])
}

/// An off-axis vector of `src` in `index`'s packing.
fn repack_off_axis(src: &LinearLayout, index: &LinearLayout, v: u64) -> u64 {
    repack_to(src, index, v)
}

/// The output dimension of `src` that is tensor dimension `axis`.
pub(crate) fn source_axis(src: &LinearLayout, axis: usize) -> Result<usize, PlanError> {
    let label = Label::Dim(axis as u8);
    src.out_index(label).ok_or(PlanError::MissingDimension {
        role: "source",
        label,
    })
}
