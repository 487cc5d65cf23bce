//! Optimal swizzling (§5.4, appendix 9.2, Lemmas 9.4–9.6): the shared-memory layout through which
//! a warp writes a tile in layout `A` and reads it in layout `B` with the widest vectors and the
//! fewest wavefronts on both sides.
//!
//! Work in the flattened tile F₂ᵈ. The memory layout `S` lists its offset bits as
//! `Vec | Bank | Seg`:
//! 1. **Vec**: `V`, a basis of `A_Reg ∩ B_Reg` (broadcast registers dropped), at most 128 bits.
//!    Elements narrower than a 4-byte word are packed further with registers of one side (the
//!    other side then reads one element of a word: same word, no conflict), so that a vector
//!    covers a whole bank; `Q` is `V` plus that fill.
//! 2. **Seg** (the rows above one 128-byte line of the 32 banks, `s = d − log2(1024/bits)` bits):
//!    with `U = span(Q ∪ A_Thr)` and `W = span(Q ∪ B_Thr)` (`*_Thr`: the lanes of one phase of
//!    each side's access), a segment direction in `U` makes lanes of the write hit one bank in two
//!    rows (Lemma 9.4), one in `W` the read. Lemma 9.5: the largest subspace meeting `U ∪ W` only
//!    in 0 has dimension `d − max(dim U, dim W)`, built as `C ⊕ G` with `I = U ∩ W`,
//!    `U = I ⊕ E`, `W = I ⊕ F`, `C` a complement of `U + W` and `G = {eᵢ ⊕ fᵢ}`. The segment
//!    takes `C`, then `G`; when that is too small it takes the unpaired vectors of the larger of
//!    `E`, `F` (a conflict on that side only), then vectors of `I` and broken pairs `eᵢ, fᵢ`
//!    (a conflict on both sides). Each side then reaches its lower bound
//!    `2^max(0, s + dim U − d)` (write) and `2^max(0, s + dim W − d)` (read) at the same time —
//!    1 and 1 whenever conflict-free access is achievable (Lemma 9.6).
//! 3. **Bank**: the unit vectors completing `Vec ∪ Seg` to a basis (which bank bits are used does
//!    not change any count; registers of either side are placed last so that no side vectorizes
//!    wider than planned).
//!
//! The wavefronts reported are measured on the result with
//! [`bank_wavefronts`](super::bank::bank_wavefronts), the same count
//! the oracle checks against Triton. [`optimal_swizzle_on`] plans for a vendor's phases
//! ([`phase_lanes`]: on AMD a 128-bit load's phase is lanes `e₀, e₁, e₂ ⊕ e₄`, so `B_Thr` is
//! their images and the segment avoids those directions instead).

pub use super::bank::Side;
use super::bank::{bank_wavefronts_on, phase_images, phase_lanes, BankAccess, BANK_ROW_BITS};
use super::{
    bases, check_distributed_pair, check_element_bits, common_vectors, nonzero_bases, space,
    PlanError, Space, Vendor,
};
use crate::{Label, LinearLayout};
use std::format;
use std::vec::Vec;

/// An optimal swizzled shared-memory layout for a write/read pair, and what it costs.
#[derive(Clone, Debug)]
pub struct Swizzle {
    /// Bits of one element.
    pub element_bits: u32,
    /// The memory layout `offset → tile` (bijective), offsets ordered `Vec | Bank | Seg`.
    pub memory: LinearLayout,
    /// `V`: the common register directions of both sides (memory offsets `0..|V|`).
    pub vector: Vec<u64>,
    /// Directions packed after `V` to fill a 4-byte word with sub-word elements.
    pub word_fill: Vec<u64>,
    /// Whose registers the fill starts with (`None` without fill).
    pub fill_side: Option<Side>,
    /// The bank directions (offsets inside one 128-byte line, after the vector).
    pub bank: Vec<u64>,
    /// The segment (row) directions.
    pub segment: Vec<u64>,
    /// The store of `A` into `memory`.
    pub write: BankAccess,
    /// The load of `B` from `memory`.
    pub read: BankAccess,
    /// The lower bounds (Lemma 9.5) on the write and read wavefronts per phase for this
    /// vectorization: `2^max(0, s + dim U − d)`, `2^max(0, s + dim W − d)`.
    pub optimum: (u32, u32),
}

impl Swizzle {
    /// `2^|V|`: elements both sides move per vector.
    pub fn vector_elements(&self) -> u32 {
        1 << self.vector.len()
    }

    /// Whether the bound of Lemma 9.5 allowed conflict-free access on both sides.
    pub fn conflict_free_achievable(&self) -> bool {
        self.optimum == (1, 1)
    }
}

/// The optimal swizzle for writing `write` and reading `read` on an NVIDIA GPU (see the module
/// docs).
pub fn optimal_swizzle(
    write: &LinearLayout,
    read: &LinearLayout,
    element_bits: u32,
) -> Result<Swizzle, PlanError> {
    optimal_swizzle_on(Vendor::Nvidia, write, read, element_bits)
}

/// [`optimal_swizzle`] for the phases of `vendor`'s shared memory ([`phase_lanes`]).
pub fn optimal_swizzle_on(
    vendor: Vendor,
    write: &LinearLayout,
    read: &LinearLayout,
    element_bits: u32,
) -> Result<Swizzle, PlanError> {
    check_distributed_pair((write, "write"), (read, "read"), element_bits)?;
    for (layout, role) in [(write, "write"), (read, "read")] {
        if bases(layout, Label::Block).iter().any(|&v| v != 0) {
            return Err(PlanError::new(format!(
                "the {role} layout spreads the tile over several CTAs (non-zero block bases); shared memory belongs to one CTA"
            )));
        }
    }
    let a_regs: Vec<u64> = nonzero_bases(write, Label::Register)
        .iter()
        .map(|&(_, v)| v)
        .collect();
    let b_regs: Vec<u64> = nonzero_bases(read, Label::Register)
        .iter()
        .map(|&(_, v)| v)
        .collect();
    let max_vector = (128 / element_bits).trailing_zeros() as usize;
    let mut vector = common_vectors(&a_regs, &b_regs);
    vector.truncate(max_vector);
    // Elements per 4-byte word (log2); none for elements of a word or more.
    let word_bits = (32 / element_bits).max(1).trailing_zeros() as usize;
    if vector.len() >= word_bits {
        return build(vendor, write, read, element_bits, vector, Vec::new(), None);
    }
    // Sub-word elements: try filling the word from either side, keep the cheaper.
    let mut best: Option<Swizzle> = None;
    for side in [Side::Write, Side::Read] {
        let (first, second) = match side {
            Side::Write => (&a_regs, &b_regs),
            Side::Read => (&b_regs, &a_regs),
        };
        let a_lanes = nonzero_bases(write, Label::Lane);
        let b_lanes = nonzero_bases(read, Label::Lane);
        let common_lanes: Vec<u64> = a_lanes
            .iter()
            .map(|&(_, v)| v)
            .filter(|v| b_lanes.iter().any(|&(_, w)| w == *v))
            .collect();
        let mut candidates: Vec<u64> = first.clone();
        candidates.extend(second.iter().copied());
        candidates.extend(common_lanes);
        candidates.extend(a_lanes.iter().map(|&(_, v)| v));
        candidates.extend(b_lanes.iter().map(|&(_, v)| v));
        candidates.extend((0..write.total_out_bits()).map(|b| 1u64 << b));
        let mut fill = space::extend(&vector, &candidates);
        fill.truncate(word_bits - vector.len());
        let candidate = build(
            vendor,
            write,
            read,
            element_bits,
            vector.clone(),
            fill,
            Some(side),
        )?;
        let cost = |s: &Swizzle| s.write.total_wavefronts() + s.read.total_wavefronts();
        if best.as_ref().is_none_or(|b| cost(&candidate) < cost(b)) {
            best = Some(candidate);
        }
    }
    Ok(best.expect("two candidates were built"))
}

/// Builds the swizzle for vector `vector` followed by `fill` (see the module docs).
fn build(
    vendor: Vendor,
    write: &LinearLayout,
    read: &LinearLayout,
    element_bits: u32,
    vector: Vec<u64>,
    fill: Vec<u64>,
    fill_side: Option<Side>,
) -> Result<Swizzle, PlanError> {
    let d = write.total_out_bits() as usize;
    let mut q = vector.clone();
    q.extend(fill.iter().copied());
    let a_regs = register_set(write);
    let b_regs = register_set(read);
    let tile_a = lane_tile(vendor, Side::Write, write, &q, &a_regs, element_bits);
    let tile_b = lane_tile(vendor, Side::Read, read, &q, &b_regs, element_bits);
    let u = Space::spanned_by(&[q.as_slice(), &tile_a].concat());
    let w = Space::spanned_by(&[q.as_slice(), &tile_b].concat());
    let seg_start = ((BANK_ROW_BITS / element_bits).trailing_zeros() as usize).min(d);
    let s = d - seg_start;

    // Lemma 9.5: I = U ∩ W, U = I ⊕ E, W = I ⊕ F, C completes U + W.
    let i = space::intersection(u.basis(), w.basis());
    let i_extra = space::extend(&q, &i);
    let e = space::extend(&i, u.basis());
    let f = space::extend(&i, w.basis());
    let c = space::complement_units(&[u.basis(), w.basis()].concat(), d as u32);
    let pairs = e.len().min(f.len());
    let leftover: Vec<u64> = if e.len() > f.len() {
        e[pairs..].to_vec()
    } else {
        f[pairs..].to_vec()
    };
    let mut segment: Vec<u64> = c.clone();
    segment.extend((0..pairs).map(|k| e[k] ^ f[k]));
    if segment.len() >= s {
        segment.truncate(s);
    } else {
        segment.extend(leftover.iter().copied());
        segment.extend(i_extra.iter().copied());
        // Break pairs eₖ ⊕ fₖ into eₖ, fₖ while more directions are needed.
        let mut k = 0;
        while segment.len() < s && k < pairs {
            let g = e[k] ^ f[k];
            let at = segment.iter().position(|&v| v == g).expect("pair present");
            segment[at] = e[k];
            segment.push(f[k]);
            k += 1;
        }
        segment.truncate(s);
    }
    debug_assert_eq!(segment.len(), s, "the segment is always filled");

    // Bank: unit vectors completing Vec ∪ Seg; registers of either side last.
    let taken = [q.as_slice(), &segment].concat();
    let mut bank = space::complement_units(&taken, d as u32);
    bank.sort_by_key(|v| a_regs.contains(v) || b_regs.contains(v));

    let mut offsets = q.clone();
    offsets.extend(bank.iter().copied());
    offsets.extend(segment.iter().copied());
    let memory = memory_layout(write, &offsets)?;
    let write_access = bank_wavefronts_on(vendor, Side::Write, &memory, write, element_bits)?;
    let read_access = bank_wavefronts_on(vendor, Side::Read, &memory, read, element_bits)?;
    let bound = |dim: u32| 1u32 << (s as u32 + dim).saturating_sub(d as u32);
    Ok(Swizzle {
        element_bits,
        memory,
        vector,
        word_fill: fill,
        fill_side,
        bank,
        segment,
        write: write_access,
        read: read_access,
        optimum: (bound(u.dim()), bound(w.dim())),
    })
}

/// The non-zero register directions of a layout.
fn register_set(layout: &LinearLayout) -> Vec<u64> {
    nonzero_bases(layout, Label::Register)
        .iter()
        .map(|&(_, v)| v)
        .collect()
}

/// The images of the lanes of one phase of a side's access: its vector is the longest prefix of
/// `q` made of its registers, and the vector's width gives the phase ([`phase_lanes`]).
fn lane_tile(
    vendor: Vendor,
    side: Side,
    layout: &LinearLayout,
    q: &[u64],
    regs: &[u64],
    element_bits: u32,
) -> Vec<u64> {
    let k = q.iter().take_while(|v| regs.contains(v)).count() as u32;
    let phase = phase_lanes(
        vendor,
        side,
        (1u32 << k) * element_bits,
        layout.in_bits(Label::Lane),
    );
    phase_images(&bases(layout, Label::Lane), &phase)
        .into_iter()
        .filter(|&v| v != 0)
        .collect()
}

/// `offset → tile` with the given offset images, on `like`'s output dimensions.
pub(crate) fn memory_layout(
    like: &LinearLayout,
    offsets: &[u64],
) -> Result<LinearLayout, PlanError> {
    let mut memory = LinearLayout::empty();
    for o in 0..like.num_out_dims() {
        memory = memory.with_out_dim(like.out_label(o), 1 << like.out_bits_at(o))?;
    }
    memory = memory.with_in_dim(Label::Offset)?;
    for &v in offsets {
        memory.push_packed_basis(0, v)?;
    }
    memory.check_injective()?;
    Ok(memory)
}

/// The textbook XOR swizzle `n ⊕ m` of a row-major tile (rows `m` = the second-to-last
/// dimension, columns `n` = the last): row bit `j` also flips column bit `j`, for as many bits as
/// both have and one 128-byte line holds (Triton's `swizzled_shared` with `vec = 1`,
/// `per_phase = 1`, `max_phase = min(rows, columns, 1024 / bits)`); further dimensions follow
/// unswizzled. `None` for a one-dimensional tile.
pub fn classic_xor_swizzle(
    tile: &LinearLayout,
    element_bits: u32,
) -> Result<Option<LinearLayout>, PlanError> {
    check_element_bits(element_bits)?;
    let rank = tile.num_out_dims();
    if rank < 2 {
        return Ok(None);
    }
    let unit = |d: usize, b: u32| 1u64 << (tile.out_offset(d) + b);
    let (rows, cols) = (rank - 2, rank - 1);
    let line = (BANK_ROW_BITS / element_bits).trailing_zeros();
    let swizzled = tile.out_bits_at(rows).min(tile.out_bits_at(cols)).min(line);
    let mut offsets: Vec<u64> = (0..tile.out_bits_at(cols)).map(|b| unit(cols, b)).collect();
    offsets.extend((0..tile.out_bits_at(rows)).map(|b| {
        if b < swizzled {
            unit(rows, b) ^ unit(cols, b)
        } else {
            unit(rows, b)
        }
    }));
    for d in (0..rows).rev() {
        offsets.extend((0..tile.out_bits_at(d)).map(|b| unit(d, b)));
    }
    memory_layout(tile, &offsets).map(Some)
}
