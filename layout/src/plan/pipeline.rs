//! Asynchronous copies for software pipelining: a global load whose value only goes to shared
//! memory (the store half of a conversion's [`Movement`]) becomes `cp.async` copies from global
//! memory straight into that shared layout, so the load of a later loop iteration can be in
//! flight while the current one computes.
//!
//! The shared layout is the conversion planner's (its store steps: byte offset per register,
//! swizzle included); the copies follow it exactly, so the reads of the movement (`ldmatrix`,
//! vector loads) run unchanged on the copied bytes. One copy moves a run of registers that is
//! contiguous both in global memory (a run inside one vector of the load's [`AccessPlan`]) and in
//! shared memory (a run inside one vector store): `min(store vector, access vector)` elements,
//! which must be 4, 8 or 16 bytes (`cp.async` sizes). 16-byte copies use `cp.async.cg` (L2
//! only, as Triton), smaller ones `cp.async.ca`. A masked-off run is zero-filled through the
//! copy's source size, so the load's `other` must be zero (the caller checks) and its mask must
//! be uniform over each run (the access plan's `mask_uniform`).
//!
//! [`plan_wgmma_operand_copy`] targets a `wgmma` operand's NVMMA shared layout instead (the
//! operand's planned [`StoreStep`], swizzle included): the copies write what the dot's stores
//! would, and the `wgmma` descriptors read the slot directly (no read steps). Under the 32-, 64-
//! and 128-byte swizzles a 16-byte chunk stays contiguous (the swizzle permutes 16-byte units),
//! so the store step's vectors are whole chunks.
//!
//! [`plan_tma_operand_copy`] fills such a slot by TMA instead (`cp.async.bulk.tensor`, sm_90a):
//! when the operand's NVMMA layout is what the tensor-map boxes write — rows of the tensor's
//! contiguous dimension, each box row `swizzle` bytes wide with its 16-byte chunks swizzled —
//! one thread copies the whole tile in a few boxes, with no per-thread addresses or masks
//! (the TMA unit zero-fills what lies outside the tensor).

use super::access::AccessPlan;
use super::movement::{Affine, Movement, Step, StoreStep};
use super::wgmma::DescriptorSwizzle;
use super::wgmma_dot::WgmmaOperand;
use crate::Label;
use std::format;
use std::string::String;
use std::vec::Vec;

/// The copies of one load into one slot of shared memory, and the reads that follow them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncCopyPlan {
    /// Bytes per copy: 4, 8 or 16.
    pub bytes: u32,
    /// `cp.async.cg` (16 bytes, L2 only) rather than `cp.async.ca`.
    pub bypass_l1: bool,
    /// Bytes of one slot (the movement's shared memory, or the `wgmma` operand).
    pub slot_bytes: u32,
    /// Alignment of a slot in bytes: 16, or the NVMMA swizzle period of a `wgmma` operand.
    pub slot_alignment: u32,
    /// One group per store step of the movement.
    pub groups: Vec<CopyGroup>,
    /// The movement's steps after its stores and their barrier: the reads of the slot
    /// (`ldmatrix`, vector loads, duplicates), run once the copies are waited for; empty for a
    /// `wgmma` operand (its descriptors read the slot).
    pub reads: Vec<Step>,
    /// Registers of the destination (the reads' result).
    pub dst_registers: u32,
    /// Bits of one element.
    pub element_bits: u32,
    /// Elements per copy.
    pub elements: u32,
}

/// The copies of one store step: only threads with `lane & lane_guard == 0 && warp &
/// warp_guard == 0` copy (the others hold broadcast copies of the same elements).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyGroup {
    /// Lane bits that must be zero for a thread to copy.
    pub lane_guard: u32,
    /// Warp bits that must be zero for a thread to copy.
    pub warp_guard: u32,
    /// The thread's byte offset (⊕ each copy's offset).
    pub thread_offset: Affine,
    /// Per copy: the register whose pointer (and mask) starts the run, and the run's byte
    /// offset in the slot (⊕ the thread offset).
    pub copies: Vec<(u32, u32)>,
}

impl AsyncCopyPlan {
    /// The PTX instruction, for explain text.
    pub fn instruction(&self) -> String {
        if self.bypass_l1 {
            format!("cp.async.cg {} B", self.bytes)
        } else {
            format!("cp.async.ca {} B", self.bytes)
        }
    }

    /// Copies one thread issues per slot (all groups).
    pub fn copies_per_thread(&self) -> usize {
        self.groups.iter().map(|g| g.copies.len()).sum()
    }
}

/// The async copies that write what `movement`'s stores would, from a load planned as `access`
/// (`masked`: the load has a mask). `Err` says why the load cannot be copied asynchronously.
pub fn plan_async_copy(
    access: &AccessPlan,
    movement: &Movement,
    masked: bool,
) -> Result<AsyncCopyPlan, String> {
    let bits = movement.element_bits;
    if !bits.is_multiple_of(8) || bits > 128 {
        return Err(format!("{bits}-bit elements are not whole bytes"));
    }
    if masked && !access.mask_uniform {
        return Err(format!(
            "the mask is not proven constant over each vector of {} elements",
            access.elements
        ));
    }
    // The shape [Barrier]* Store+ Barrier reads*.
    let mut k = 0;
    while matches!(movement.steps.get(k), Some(Step::Barrier)) {
        k += 1;
    }
    let mut stores = Vec::new();
    while let Some(Step::Store(s)) = movement.steps.get(k) {
        stores.push(s);
        k += 1;
    }
    if stores.is_empty() || !matches!(movement.steps.get(k), Some(Step::Barrier)) {
        return Err(format!(
            "the conversion is not a store to shared memory then reads ({})",
            movement.description
        ));
    }
    let reads: Vec<Step> = movement.steps[k + 1..].to_vec();
    if let Some(other) = reads.iter().find(|s| {
        !matches!(
            s,
            Step::Load(_) | Step::Ldmatrix(_) | Step::Duplicate { .. }
        )
    }) {
        return Err(format!(
            "the conversion does more than read shared memory after its stores ({other:?})"
        ));
    }
    let (elements, groups) = copies_for_stores(access, &stores, bits)?;
    let bytes = elements * bits / 8;
    Ok(AsyncCopyPlan {
        bytes,
        bypass_l1: bytes == 16,
        slot_bytes: movement.shared_bytes.div_ceil(16) * 16,
        slot_alignment: 16,
        groups,
        reads,
        dst_registers: movement.dst_registers,
        element_bits: bits,
        elements,
    })
}

/// The async copies that write `operand`'s NVMMA shared layout (what the `wgmma` dot's store
/// step writes) from a load planned as `access`, into slots of `alignment`
/// bytes (the dot plan's alignment). `Err` says why the load cannot be copied asynchronously.
pub fn plan_wgmma_operand_copy(
    access: &AccessPlan,
    operand: &WgmmaOperand,
    alignment: u32,
    masked: bool,
) -> Result<AsyncCopyPlan, String> {
    if masked && !access.mask_uniform {
        return Err(format!(
            "the mask is not proven constant over each vector of {} elements",
            access.elements
        ));
    }
    let bits = operand.shared.element_bitwidth;
    let (elements, groups) = copies_for_stores(access, &[&operand.store], bits)?;
    let bytes = elements * bits / 8;
    Ok(AsyncCopyPlan {
        bytes,
        bypass_l1: bytes == 16,
        slot_bytes: operand.bytes.div_ceil(alignment) * alignment,
        slot_alignment: alignment,
        groups,
        reads: Vec::new(),
        dst_registers: 0,
        element_bits: bits,
        elements,
    })
}

/// The copies that write what `stores` would (elements of `bits`): the elements per copy and
/// one group per store step.
fn copies_for_stores(
    access: &AccessPlan,
    stores: &[&StoreStep],
    bits: u32,
) -> Result<(u32, Vec<CopyGroup>), String> {
    let vector_bits: u32 = access.registers.iter().map(|&b| 1u32 << b).sum();
    let access_vectors = |r: u32| -> (u32, Option<usize>) {
        let start = r & !vector_bits;
        let pos = access.vector_registers(start).iter().position(|&x| x == r);
        (start, pos)
    };
    let mut elements = None;
    let mut groups = Vec::new();
    for s in stores {
        let (lane_guard, warp_guard, s) = (s.lane_guard, s.warp_guard, &s.access);
        if s.stride * 8 != bits {
            return Err("the shared layout widens elements to 32-bit words".into());
        }
        let n = s.elements.len() as u32;
        let w = n.min(access.elements);
        if *elements.get_or_insert(w) != w {
            return Err("the stores have vectors of different widths".into());
        }
        let bytes = w * bits / 8;
        if ![4, 8, 16].contains(&bytes) {
            return Err(format!(
                "a copy would move {bytes} bytes ({w} × {bits}-bit elements contiguous in both \
                 global and shared memory); cp.async moves 4, 8 or 16"
            ));
        }
        let mut copies = Vec::new();
        for &(first, off) in &s.chunks {
            for run in 0..n / w {
                let regs: Vec<u32> = (0..w)
                    .map(|j| first ^ s.elements[(run * w + j) as usize])
                    .collect();
                let (start, pos) = access_vectors(regs[0]);
                let contiguous = pos.is_some_and(|p0| {
                    p0 % w as usize == 0
                        && regs
                            .iter()
                            .enumerate()
                            .all(|(j, &r)| access_vectors(r) == (start, Some(p0 + j)))
                });
                if !contiguous {
                    return Err(format!(
                        "the registers stored together in shared memory ({regs:?}) are not \
                         contiguous in global memory"
                    ));
                }
                copies.push((regs[0], off ^ (run * bytes)));
            }
        }
        groups.push(CopyGroup {
            lane_guard,
            warp_guard,
            thread_offset: s.thread_offset.clone(),
            copies,
        });
    }
    Ok((elements.unwrap_or(1), groups))
}

/// The boxes TMA copies into one ring slot of a `wgmma` operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaCopyPlan {
    /// One box: `[rows, cols]` of the loaded tile (`cols` along the tensor's contiguous
    /// dimension), as the tensor map is encoded.
    pub box_shape: [u32; 2],
    /// The swizzle width of the box rows in bytes (32, 64 or 128).
    pub swizzle_bytes: u32,
    /// Per box: its byte offset in the slot and the `(row, col)` of its first element in the
    /// loaded tile.
    pub boxes: Vec<(u32, [u32; 2])>,
    /// Bytes of all boxes: the transactions the slot's `mbarrier` expects.
    pub bytes: u32,
}

impl TmaCopyPlan {
    /// The PTX instruction and the boxes, for explain text.
    pub fn instruction(&self) -> String {
        format!(
            "TMA cp.async.bulk.tensor.2d, {} box{} of {} × {} ({} B swizzle)",
            self.boxes.len(),
            if self.boxes.len() == 1 { "" } else { "es" },
            self.box_shape[0],
            self.box_shape[1],
            self.swizzle_bytes
        )
    }
}

/// The TMA boxes that write `operand`'s NVMMA layout for a load of `load_shape` (`[rows,
/// cols]`, `cols` contiguous in the tensor); `transposed`: the operand is the load's transpose
/// (`k.trans()`), so its layout is read with the two dimensions swapped. Each element's place
/// is checked one by one against the boxes as the TMA unit writes them (row-major, each 16-byte
/// chunk moved by the swizzle, [`DescriptorSwizzle::apply`]); `Err` says why they differ.
pub fn plan_tma_operand_copy(
    operand: &WgmmaOperand,
    load_shape: [u32; 2],
    transposed: bool,
) -> Result<TmaCopyPlan, String> {
    let shared = operand.shared;
    let bits = shared.element_bitwidth;
    let width = shared.swizzle_byte_width;
    let swizzle = match DescriptorSwizzle::from_width(width) {
        Some(s) if width >= 32 => s,
        _ => {
            return Err(format!(
                "the operand's layout has no 32-, 64- or 128-byte swizzle ({width})"
            ))
        }
    };
    let [rows, cols] = load_shape;
    let bytes = bits / 8;
    // One box: the contiguous dimension exactly one swizzle row, at most 256 rows.
    let box_cols = 8 * width / bits;
    let box_rows = rows.min(256);
    if cols % box_cols != 0 || rows % box_rows != 0 || box_rows % 8 != 0 {
        return Err(format!(
            "a tile of {rows} × {cols} is not whole boxes of {box_rows} × {box_cols}"
        ));
    }
    let operand_shape = if transposed {
        [cols, rows]
    } else {
        [rows, cols]
    };
    let memory = shared
        .to_linear_layout(&operand_shape)
        .map_err(|e| format!("{e:?}"))?;
    let at = |o: u32| -> Result<[u32; 2], String> {
        let c = memory
            .apply(&[(Label::Offset, o)])
            .map_err(|e| format!("{e:?}"))?;
        Ok(if transposed {
            [c[1], c[0]]
        } else {
            [c[0], c[1]]
        })
    };
    let box_elements = box_rows * box_cols;
    let box_bytes = box_elements * bytes;
    let mut boxes = Vec::new();
    for b in 0..rows * cols / box_elements {
        let origin = at(b * box_elements)?;
        if origin[0] % box_rows != 0 || origin[1] % box_cols != 0 {
            return Err(format!(
                "the layout's {b}th block of {box_elements} elements starts at {origin:?}, not \
                 at a box's corner"
            ));
        }
        // Byte `p` of the box holds the element whose row-major byte is `swizzle(p)` (the
        // swizzle is its own inverse; box starts are multiples of its 8-row period).
        for p in (0..box_bytes).step_by(bytes as usize) {
            let u = swizzle.apply(p);
            let want = [
                origin[0] + u / (box_cols * bytes),
                origin[1] + u % (box_cols * bytes) / bytes,
            ];
            let got = at(b * box_elements + p / bytes)?;
            if got != want {
                return Err(format!(
                    "element {got:?} sits at byte {p} of box {b}, where the TMA box puts \
                     {want:?}"
                ));
            }
        }
        boxes.push((b * box_bytes, origin));
    }
    Ok(TmaCopyPlan {
        box_shape: [box_rows, box_cols],
        swizzle_bytes: width,
        boxes,
        bytes: rows * cols * bytes,
    })
}

/// Bytes of dynamic shared memory one block may use on sm_80 (its opt-in maximum, 163 KiB),
/// and so on every PTX target but sm_90a.
pub const SHARED_BYTES_LIMIT_SM80: u32 = 163 * 1024;

/// Bytes of dynamic shared memory one block may use on sm_90 (its opt-in maximum, 227 KiB).
pub const SHARED_BYTES_LIMIT_SM90: u32 = 227 * 1024;

/// Bytes of a ring of `slots` slots for each `(slot bytes, slot alignment)` of `rings`: the
/// slots rounded to their alignment, and room to align a ring whose alignment exceeds the 16
/// bytes of an allocation.
pub fn ring_bytes(slots: u32, rings: &[(u32, u32)]) -> u64 {
    rings
        .iter()
        .map(|&(b, align)| {
            let align = align.max(16);
            u64::from(b.div_ceil(align) * align) * u64::from(slots) + u64::from(align - 16)
        })
        .sum()
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
