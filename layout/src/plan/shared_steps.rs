//! The shared-memory form of a conversion: which memory layout, which store and load vectors,
//! and whether `B` is read by `ldmatrix[.trans]`, chosen by issue slots (wavefronts plus
//! instructions, on the emulator's bank model).
//!
//! - **Shared-memory layout.** Besides the planner's memory (the optimal swizzle of
//!   [`optimal_swizzle`](super::swizzle::optimal_swizzle)), candidates are memories made for an
//!   `ldmatrix` read ([`ldmatrix_memories`]: the instruction's 16-byte rows first, rows swizzled
//!   by the construction of Lemma 9.5); the one with the fewest issue slots wins, an `ldmatrix`
//!   read winning ties. This is how the operands of `dot` reach `ldmatrix` (`.trans` for `b`):
//!   the optimal swizzle is optimal for bank conflicts but rarely divisible by the `ldmatrix`
//!   tile. A plan for [`Vendor::Amd`] has no `ldmatrix`: the plan's memory read by vector loads.
//! - **Sub-word stores.** A store narrower than a 32-bit word (sub-word elements whose plan fills
//!   the word from the read side) has no race-free 32-bit form, so such a conversion runs on the
//!   optimal swizzle planned for 32-bit elements, each element in its own word. Loads narrower
//!   than a word load the word and extract.
//! - **Barriers.** Every shared-memory movement starts with `bar.sync` (its bytes may still be
//!   read by an earlier op, or by the previous iteration of a loop) and has one between its
//!   stores and its loads.

use super::bank::{bank_wavefronts_on, Side};
use super::broadcast::Broadcast;
use super::conversion::{shared_plan_on, SharedPlan};
use super::ldmatrix::matrix_plan;
use super::movement::{
    bases32, duplicate_steps, issue_cost_on, vector_offsets, xor_bits, Affine, LdmatrixStep,
    Movement, Step, StoreStep, VectorAccess, LANES,
};
use super::wave::Lanes;
use super::{bases, common_vectors, PlanError, Space, Vendor};
use crate::families::ldmatrix::ldmatrix_fragment;
use crate::{Label, LinearLayout};
use std::format;
use std::vec;
use std::vec::Vec;

/// The shared-memory conversion. Candidates: the plan's memory (its optimal swizzle), read by
/// vector loads or by `ldmatrix` where divisible, and the memories built for an `ldmatrix` read
/// ([`ldmatrix_memories`]); the one with the fewest issue slots (wavefronts plus instructions, on
/// the emulator's bank model) wins; on a tie an `ldmatrix` read, then the plan's own memory.
/// On a `vendor` without `ldmatrix`, the plan's memory read by vector loads.
pub fn shared_movement(
    plan: &SharedPlan,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    vendor: Vendor,
) -> Result<Movement, PlanError> {
    // A store narrower than a word cannot be done race-free with 32-bit accesses: plan the
    // memory for 32-bit elements and store each element in its own word.
    if plan.write().vector.bits < 32 {
        let widened = shared_plan_on(vendor, src, dst, 32)?;
        return shared_candidate(
            &widened.swizzle.memory,
            src,
            dst,
            element_bits,
            true,
            vendor,
        )
        .map(|(m, _)| m)
        .ok_or(PlanError::SharedStores { widened: true });
    }
    let mut best: Option<(Movement, (u32, bool))> = None;
    let mut memories = vec![plan.swizzle.memory];
    if vendor.has_ldmatrix() {
        memories.extend(ldmatrix_memories(src, dst, element_bits));
    }
    for memory in &memories {
        if let Some((movement, cost)) =
            shared_candidate(memory, src, dst, element_bits, false, vendor)
        {
            // On equal cost, an ldmatrix read wins (fewer address computations).
            let reads_ldmatrix = movement
                .steps
                .iter()
                .any(|s| matches!(s, Step::Ldmatrix(_)));
            let key = (cost, !reads_ldmatrix);
            if best.as_ref().is_none_or(|(_, k)| key < *k) {
                best = Some((movement, key));
            }
        }
    }
    best.map(|(m, _)| m)
        .ok_or(PlanError::SharedStores { widened: false })
}

/// The movement through `memory` (offset → tile) and its issue cost; `widened`: one element per
/// 32-bit word; read by `ldmatrix` where `vendor` has it and it costs no more than vector loads.
/// `None` if the store would be narrower than a word.
pub fn shared_candidate(
    memory: &LinearLayout,
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
    widened: bool,
    vendor: Vendor,
) -> Option<(Movement, u32)> {
    let bits = if widened { 32 } else { element_bits };
    let shift = (bits / 8).trailing_zeros();
    let store_address = src.invert_and_compose(memory).ok()?;
    let load_address = dst.invert_and_compose(memory).ok()?;
    let write = bank_wavefronts_on(vendor, Side::Write, memory, src, bits).ok()?;
    let read = bank_wavefronts_on(vendor, Side::Read, memory, dst, bits).ok()?;
    if write.vector.bits < 32 {
        return None;
    }
    let owners = Broadcast::of(src).ok()?;
    let store = Step::Store(store_step(
        &store_address,
        src,
        &write.vector.registers,
        &owners,
        shift,
    ));
    let warps = dst.in_size(Label::Warp);
    let cells = 1u32 << memory.total_in_bits();
    let mut read_step = Step::Load(load_step(&load_address, dst, &read.vector.registers, shift));
    let mut how = format!("{}-element loads", read.vector.elements);
    if !widened && vendor.has_ldmatrix() {
        if let Some(ldm) = ldmatrix_read(memory, &load_address, dst, element_bits) {
            let (matrices, transposed) = (ldm.matrices, ldm.transposed);
            let ldm = Step::Ldmatrix(ldm);
            if issue_cost_on(vendor, &ldm, warps) <= issue_cost_on(vendor, &read_step, warps) {
                how = format!(
                    "ldmatrix.x{matrices}{} loads",
                    if transposed { ".trans" } else { "" }
                );
                read_step = ldm;
            }
        }
    }
    let cost = issue_cost_on(vendor, &store, src.in_size(Label::Warp))
        + issue_cost_on(vendor, &read_step, warps);
    let description = format!(
        "shared memory: {} B, {}-element stores, {how}{}",
        cells * (1 << shift),
        write.vector.elements,
        if widened {
            ", one element per word"
        } else {
            ""
        }
    );
    let mut steps = vec![Step::Barrier, store, Step::Barrier, read_step];
    steps.extend(duplicate_steps(dst));
    Some((
        Movement {
            steps,
            src_registers: src.in_size(Label::Register),
            dst_registers: dst.in_size(Label::Register),
            element_bits,
            shared_bytes: cells * (1 << shift),
            description,
            lanes: Lanes::Warp,
        },
        cost,
    ))
}

/// Stores of `src` by its owners at `store_address` (registers/lanes/warps → offsets), `vector`
/// register bits per instruction (`shift`: log2 bytes per memory cell).
pub fn store_step(
    store_address: &LinearLayout,
    src: &LinearLayout,
    vector: &[u32],
    owners: &Broadcast,
    shift: u32,
) -> StoreStep {
    StoreStep {
        lane_guard: owners.lane,
        warp_guard: owners.warp,
        access: vector_access(store_address, src, vector, owners.register, shift),
    }
}

/// Memory layouts made for an `ldmatrix` read of `dst` (non-transposed and, for 16-bit
/// elements, transposed): offsets `0..q` are the 16-byte row the instruction fixes (the word's
/// registers and lanes 0–1; for `.trans` lanes 2–4), and the rows are swizzled as in Lemma 9.5
/// so that the 8 rows of one matrix (lanes 2–4; for `.trans` the word register and lanes 0–1)
/// and the lanes of one phase of `src`'s stores fall into distinct bank groups where possible.
pub fn ldmatrix_memories(
    src: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Vec<LinearLayout> {
    if element_bits > 32 || dst.in_size(Label::Lane) != LANES || src.in_size(Label::Lane) != LANES {
        return Vec::new();
    }
    let d = src.total_out_bits();
    let src_regs: Vec<u64> = bases(src, Label::Register)
        .into_iter()
        .filter(|&v| v != 0)
        .collect();
    let dst_regs: Vec<u64> = bases(dst, Label::Register)
        .into_iter()
        .filter(|&v| v != 0)
        .collect();
    let dst_lanes = bases(dst, Label::Lane);
    let mut out = Vec::new();
    for transposed in [false, true] {
        if transposed && element_bits != 16 {
            continue;
        }
        let (q, rows): (Vec<u64>, Vec<u64>) = if transposed {
            let Some(&word) = dst_regs.first() else {
                continue;
            };
            (
                dst_lanes[2..5].to_vec(),
                vec![word, dst_lanes[0], dst_lanes[1]],
            )
        } else {
            let w = (32 / element_bits).trailing_zeros() as usize;
            // The word's registers: those the source also holds first (wider stores).
            let mut regs = common_vectors(&dst_regs, &src_regs);
            regs.extend(dst_regs.iter().copied().filter(|v| !src_regs.contains(v)));
            if regs.len() < w {
                continue;
            }
            let mut q = regs[..w].to_vec();
            q.extend([dst_lanes[0], dst_lanes[1]]);
            (q, dst_lanes[2..5].to_vec())
        };
        if Space::spanned_by(&q).dim() as usize != q.len() || q.len() as u32 > d {
            continue;
        }
        let line = (1024 / element_bits).trailing_zeros().min(d);
        let s = (d - line) as usize;
        // The lanes of one phase of the source's stores: its vector is the prefix of q it holds.
        let k = q.iter().take_while(|v| src_regs.contains(v)).count() as u32;
        let phases = (((1u32 << k) * element_bits) / 32).max(1);
        let src_lanes = bases(src, Label::Lane);
        let keep = src_lanes.len() - phases.trailing_zeros() as usize;
        let a_thr: Vec<u64> = src_lanes[..keep]
            .iter()
            .copied()
            .filter(|&v| v != 0)
            .collect();
        let u = Space::spanned_by(&[q.as_slice(), &a_thr].concat());
        let w = Space::spanned_by(&[q.as_slice(), &rows].concat());
        let segment = avoiding_segment(u.basis(), w.basis(), &q, d, s);
        let taken = [q.as_slice(), &segment].concat();
        let bank = super::space::complement_units(&taken, d);
        let offsets = [q.as_slice(), &bank, &segment].concat();
        if let Some(memory) = memory_from_offsets(src, &offsets) {
            out.push(memory);
        }
    }
    out
}

/// `s` segment (row) directions meeting `span(u)` and `span(w)` as little as possible, by the
/// construction of Lemma 9.5 (the one `plan/swizzle.rs` uses): a complement `C` of `U + W`,
/// then `eᵢ ⊕ fᵢ` for `U = I ⊕ E`, `W = I ⊕ F`; if that is too small, the unpaired vectors of the
/// larger side, vectors of `I` outside `q`, and broken pairs.
fn avoiding_segment(u: &[u64], w: &[u64], q: &[u64], d: u32, s: usize) -> Vec<u64> {
    use super::space::{complement_units, extend, intersection};
    let i = intersection(u, w);
    let i_extra = extend(q, &i);
    let e = extend(&i, u);
    let f = extend(&i, w);
    let c = complement_units(&[u, w].concat(), d);
    let pairs = e.len().min(f.len());
    let leftover: Vec<u64> = if e.len() > f.len() {
        e[pairs..].to_vec()
    } else {
        f[pairs..].to_vec()
    };
    let mut segment: Vec<u64> = c;
    segment.extend((0..pairs).map(|k| e[k] ^ f[k]));
    if segment.len() < s {
        segment.extend(leftover);
        segment.extend(i_extra);
        let mut k = 0;
        while segment.len() < s && k < pairs {
            let g = e[k] ^ f[k];
            if let Some(at) = segment.iter().position(|&v| v == g) {
                segment[at] = e[k];
                segment.push(f[k]);
            }
            k += 1;
        }
    }
    // Keep it independent of q and of itself.
    let mut space = Space::spanned_by(q);
    segment.retain(|&v| space.insert(v));
    segment.truncate(s);
    segment
}

/// `offset → tile` with the given images of the offset bits, on `like`'s tile (bijective).
pub fn memory_from_offsets(like: &LinearLayout, offsets: &[u64]) -> Option<LinearLayout> {
    let mut memory = LinearLayout::empty();
    for o in 0..like.num_out_dims() {
        memory = memory
            .with_out_dim(like.out_label(o), 1 << like.out_bits_at(o))
            .ok()?;
    }
    memory = memory.with_in_dim(Label::Offset).ok()?;
    for &v in offsets {
        memory.push_packed_basis(0, v).ok()?;
    }
    memory.is_invertible().then_some(memory)
}

/// Loads of every non-broadcast register of `dst` from `load_address` (registers → offsets),
/// `vector` register bits per instruction.
pub fn load_step(
    load_address: &LinearLayout,
    dst: &LinearLayout,
    vector: &[u32],
    shift: u32,
) -> VectorAccess {
    let zeros = dst.zero_bases_mask(Label::Register);
    vector_access(load_address, dst, vector, zeros, shift)
}

/// One access per register of `layout` outside `vector` and `skipped` (register bits), at
/// `address` (registers/lanes/warps → cells of `2^shift` bytes).
fn vector_access(
    address: &LinearLayout,
    layout: &LinearLayout,
    vector: &[u32],
    skipped: u32,
    shift: u32,
) -> VectorAccess {
    let vector_mask = vector.iter().fold(0u32, |m, &b| m | 1 << b);
    let registers = bases32(address, Label::Register);
    VectorAccess {
        thread_offset: Affine {
            constant: 0,
            lane: bases32(address, Label::Lane),
            warp: bases32(address, Label::Warp),
        }
        .shifted(shift),
        chunks: (0..layout.in_size(Label::Register))
            .filter(|r| r & (vector_mask | skipped) == 0)
            .map(|r| (r, xor_bits(&registers, r) << shift))
            .collect(),
        elements: vector_offsets(vector),
        stride: 1 << shift,
    }
}

/// The `ldmatrix` read of `dst` from `memory` (`load_address` = `dst`'s registers, lanes, warps →
/// offsets), if the access left-divides the `ldmatrix` tile (plan/ldmatrix.rs), non-transposed
/// first.
pub fn ldmatrix_read(
    memory: &LinearLayout,
    load_address: &LinearLayout,
    dst: &LinearLayout,
    element_bits: u32,
) -> Option<LdmatrixStep> {
    if element_bits > 32 || dst.in_size(Label::Lane) != LANES {
        return None;
    }
    for transposed in [false, true] {
        if transposed && element_bits != 16 {
            continue;
        }
        let Ok(Some(plan)) = matrix_plan(memory, dst, element_bits, transposed) else {
            continue;
        };
        let word_bits = if transposed {
            1
        } else {
            (32 / element_bits).trailing_zeros() as usize
        };
        if let Some(step) = ldmatrix_step(
            load_address,
            &plan.register_order[..word_bits],
            transposed,
            element_bits,
        ) {
            return Some(step);
        }
    }
    None
}

/// Builds the `ldmatrix` loads given the registers that form one 32-bit word (`word[i]` = the
/// register bit of element-index bit `i`). Returns `None` if the addresses do not come out
/// 16-byte aligned (then the access was not divisible after all).
fn ldmatrix_step(
    load_address: &LinearLayout,
    word: &[u32],
    transposed: bool,
    element_bits: u32,
) -> Option<LdmatrixStep> {
    let registers = bases32(load_address, Label::Register);
    let lanes = bases32(load_address, Label::Lane);
    let warps = bases32(load_address, Label::Warp);
    // Register order: the word, then the non-broadcast registers (matrices, then chunks).
    let mut order: Vec<u32> = word.to_vec();
    order.extend(
        (0..registers.len() as u32).filter(|k| !word.contains(k) && registers[*k as usize] != 0),
    );
    let nonzero_rest = order.len() - word.len();
    let matrix_bits = nonzero_rest.min(2);
    let matrices = 1u32 << matrix_bits;
    let fragment = ldmatrix_fragment(matrices, transposed, element_bits).ok()?;
    let instruction_bits = word.len() + matrix_bits;
    // The fragment's (register, lane) of each (row, element), by enumeration (≤ 512 entries).
    let f_regs = bases32(&fragment, Label::Register);
    let f_lanes = bases32(&fragment, Label::Lane);
    let (row_o, elem_o) = (
        fragment.out_index(Label::Dim(0))?,
        fragment.out_index(Label::Dim(1))?,
    );
    // `cvt'(register', lane)`: the offset of fragment register `register'` (permuted order).
    let cvt = |reg_prime: u32, lane: u32| -> u32 {
        let reg = (0..instruction_bits)
            .filter(|&k| reg_prime >> k & 1 == 1)
            .fold(0u32, |r, k| r | 1 << order[k]);
        xor_bits(&registers, reg) ^ xor_bits(&lanes, lane)
    };
    let rows = 8 * matrices;
    let mut row_start = vec![None; rows as usize];
    for reg_prime in 0..1u32 << instruction_bits {
        for lane in 0..LANES {
            let packed = xor_bits(&f_regs, reg_prime) ^ xor_bits(&f_lanes, lane);
            let row = fragment.coord(packed as u64, row_o);
            if fragment.coord(packed as u64, elem_o) == 0 {
                row_start[row as usize] = Some(cvt(reg_prime, lane));
            }
        }
    }
    let bytes = element_bits / 8;
    let row_offsets: Vec<u32> = row_start.into_iter().collect::<Option<Vec<_>>>()?;
    // Addressing lane l supplies row l mod rows: XOR-linear in the low bits of l.
    let lane_terms: Vec<u32> = (0..5)
        .map(|k| {
            if 1 << k < rows {
                row_offsets[1 << k] ^ row_offsets[0]
            } else {
                0
            }
        })
        .collect();
    if row_offsets[0] != 0 {
        return None;
    }
    for l in 0..rows {
        if xor_bits(&lane_terms, l) != row_offsets[l as usize] {
            return None;
        }
    }
    let row_offset = Affine {
        constant: 0,
        lane: lane_terms,
        warp: warps,
    }
    .shifted(bytes.trailing_zeros());
    // Chunks: the non-broadcast registers above the instruction's.
    let chunk_bits: Vec<u32> = order[instruction_bits..].to_vec();
    let per_word = if transposed { 2 } else { 32 / element_bits };
    let chunks = (0..1u32 << chunk_bits.len())
        .map(|c| {
            let first = chunk_bits
                .iter()
                .enumerate()
                .filter(|&(i, _)| c >> i & 1 == 1)
                .fold(0u32, |r, (_, &k)| r | 1 << k);
            let offset = xor_bits(&registers, first) << bytes.trailing_zeros();
            let targets = (0..matrices)
                .map(|m| {
                    (0..per_word)
                        .map(|j| {
                            let reg_prime = j | m << word.len();
                            (0..instruction_bits)
                                .filter(|&k| reg_prime >> k & 1 == 1)
                                .fold(first, |r, k| r | 1 << order[k])
                        })
                        .collect()
                })
                .collect();
            (offset, targets)
        })
        .collect();
    // Every address must be 16-byte aligned.
    let aligned = |v: u32| v.is_multiple_of(16);
    if !row_offset
        .lane
        .iter()
        .chain(&row_offset.warp)
        .all(|&t| aligned(t))
        || !chunk_bits
            .iter()
            .all(|&k| aligned(registers[k as usize] << bytes.trailing_zeros()))
    {
        return None;
    }
    Some(LdmatrixStep {
        matrices,
        transposed,
        row_offset,
        chunks,
    })
}
