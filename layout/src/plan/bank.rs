//! Shared-memory bank conflicts of one warp access: Lemma 9.4, as Triton's `bankConflictsMemDesc`
//! computes it.
//!
//! Shared memory is 32 banks of 4 bytes; a warp access is served in wavefronts, one distinct
//! 4-byte word per bank each. Write the memory layout `M` (offset → tile) with its offset bits
//! split as `Vec | Bank | Segment`: the vector bits of the access, then the bits inside one
//! 128-byte row of the 32 banks, then the row ("segment"). With `L` the distributed layout and
//! `L_Thr` its lane bases within one phase (64-bit accesses are served half a warp at a time,
//! 128-bit ones a quarter), two lanes that differ by a vector of `span(M_Seg) ∩ span(L_Thr)` hit
//! the same bank in different rows, so one access takes
//!
//! `2^dim(span(M_Seg) ∩ span(L_Thr))` wavefronts per phase            (Lemma 9.4)
//!
//! exactly when a vector covers whole banks (`vector bits ≥ 32`). Narrower accesses can also
//! collide through the bits inside a word (two lanes reading different words of one bank whose
//! offsets differ in a within-word bit as well); [`BankAccess::exact_wavefronts`] counts that:
//! `2^dim(span(M_Seg) ∩ span(L_Thr ∪ M_word))` with `M_word` the offsets inside one 4-byte word.
//!
//! As in Triton, broadcast registers are dropped first and the access is vectorized as widely as
//! the pair allows, up to 128 bits ([`largest_vectorization`]).
//!
//! **Phases by vendor** ([`phase_lanes`]). Which lanes share a phase is the target's: `L_Thr` is
//! the image of a subspace of lane indices, so the lemma holds for any vendor whose phases are
//! the cosets of one. NVIDIA serves a 64-bit access half a warp at a time and a 128-bit one a
//! quarter (consecutive lanes). AMD's LDS (gfx90a, gfx942: 32 banks of 4 bytes; a wave of 64
//! lanes is two of the tile code's 32-lane warps) serves 32-bit accesses half a wave at a time,
//! 64-bit ones 16 consecutive lanes, `ds_write_b128` 8 consecutive lanes (AMD's Composable Kernel
//! documentation, "LDS bank conflicts"), and `ds_read_b128` the lane groups {0–3, 20–23},
//! {4–7, 16–19}, {8–11, 28–31}, {12–15, 24–27} (and the same 32 higher): the cosets of
//! `span{1, 2, 20}`, lanes `e₀`, `e₁` and `e₂ ⊕ e₄`. That read grouping is not in AMD's ISA
//! documents; it is what measurements on MI300 (gfx942) published with AMD's LDS blog and tools
//! built on it report, and it is taken for gfx90a too.

use super::vectorize::{largest_vectorization, Vectorization};
use super::{
    bases, check_distributed, check_element_bits, check_same_tile, memory_offsets, nonzero_bases,
    space, PlanError, Vendor,
};
use crate::{Label, LinearLayout};
use std::vec::Vec;

/// Bits in one row of all banks: 32 banks × 32 bits.
pub const BANK_ROW_BITS: u32 = 32 * 32;

/// Which access of a shared-memory round trip: the store of the source layout or the load of the
/// destination layout (AMD serves 128-bit loads and stores in different lane groups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The store (layout `A`).
    Write,
    /// The load (layout `B`).
    Read,
}

/// The lanes of one phase of a `vector_bits`-wide access on `vendor`'s GPUs by a warp of
/// `2^lane_bits` lanes, as lane-index vectors whose span is the phase of lane 0 (the other
/// phases are its cosets); see the module docs. NVIDIA: the warp's lanes split into
/// `vector_bits / 32` phases of consecutive lanes. AMD: at most 32 lanes (half a wave) a phase,
/// 16 for 64 bits, 8 for 128 bits, `ds_read_b128`'s lanes `e₀, e₁, e₂ ⊕ e₄`.
pub fn phase_lanes(vendor: Vendor, side: Side, vector_bits: u32, lane_bits: u32) -> Vec<u32> {
    let split = (vector_bits / 32).max(1).trailing_zeros().min(2);
    let consecutive = match vendor {
        Vendor::Nvidia => lane_bits.saturating_sub(split),
        Vendor::Amd => lane_bits.min(5 - split),
    };
    let mut lanes: Vec<u32> = (0..consecutive).map(|b| 1 << b).collect();
    if vendor == Vendor::Amd && side == Side::Read && vector_bits >= 128 && lane_bits >= 5 {
        // ds_read_b128: lanes e₀, e₁ and e₂ ⊕ e₄.
        lanes[2] = 0b10100;
    }
    lanes
}

/// The phase `lane` is served in, in a `vector_bits`-wide `side` access by a 32-lane warp on
/// `vendor`'s GPUs: the smallest lane of its coset of the span of [`phase_lanes`] (the lanes of
/// one phase share it).
pub fn phase_of(vendor: Vendor, side: Side, vector_bits: u32, lane: u32) -> u32 {
    let phase = phase_lanes(vendor, side, vector_bits, 5);
    (0..1u32 << phase.len())
        .map(|pick| {
            phase
                .iter()
                .enumerate()
                .filter(|&(i, _)| pick >> i & 1 == 1)
                .fold(lane, |l, (_, &v)| l ^ v)
        })
        .min()
        .unwrap_or(lane)
}

/// The wavefronts of one phase that touches the distinct 4-byte words `words` (word addresses):
/// the most of them any of the 32 banks (`word % 32`) serves.
pub fn busiest_bank(words: impl IntoIterator<Item = u32>) -> u32 {
    let mut per_bank = [0u32; 32];
    for w in words {
        per_bank[(w % 32) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0)
}

/// Wavefronts of one warp-wide access, `(lane, byte address, bytes)` per participating lane,
/// served in the phases of [`phase_of`] (the vector width is the widest access's): per phase the
/// most distinct 4-byte words any of the 32 banks serves, summed over the phases.
pub fn phased_wavefronts(vendor: Vendor, side: Side, access: &[(u32, u32, u32)]) -> u32 {
    let vector_bits = 8 * access.iter().map(|a| a.2).max().unwrap_or(4);
    let mut words: Vec<(u32, u32)> = access
        .iter()
        .flat_map(|&(lane, at, bytes)| {
            let phase = phase_of(vendor, side, vector_bits, lane);
            (at / 4..(at + bytes).div_ceil(4)).map(move |w| (phase, w))
        })
        .collect();
    words.sort_unstable();
    words.dedup();
    words
        .chunk_by(|a, b| a.0 == b.0)
        .map(|phase| busiest_bank(phase.iter().map(|&(_, w)| w)))
        .sum()
}

/// The logical images of the lane vectors `phase` under `lane_bases` (the layout's lane bases):
/// each vector's image is the sum of the bases of its bits (bits past the layout's lanes add 0).
pub fn phase_images(lane_bases: &[u64], phase: &[u32]) -> Vec<u64> {
    phase
        .iter()
        .map(|&v| {
            lane_bases
                .iter()
                .enumerate()
                .filter(|&(i, _)| v >> i & 1 == 1)
                .fold(0, |sum, (_, &b)| sum ^ b)
        })
        .collect()
}

/// One warp's access of a distributed layout to a memory layout, and its wavefronts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankAccess {
    /// Bits of one element.
    pub element_bits: u32,
    /// The vector each lane moves per instruction.
    pub vector: Vectorization,
    /// Access instructions per thread to cover its (non-broadcast) registers.
    pub instructions: u32,
    /// Phases one warp access is served in: the lanes over those of one phase ([`phase_lanes`];
    /// `max(1, vector bits / 32)` for a 32-lane warp).
    pub phases: u32,
    /// Logical images of the lane vectors of one phase ([`phase_lanes`]; zero = broadcast).
    pub lane_tile: Vec<u64>,
    /// Logical images of the segment (row) bits of the memory layout.
    pub segment: Vec<u64>,
    /// A basis of `span(segment) ∩ span(lane_tile)`: directions in which lanes of one phase hit
    /// one bank in different rows.
    pub conflict_basis: Vec<u64>,
    /// Lemma 9.4: `2^dim(span(segment) ∩ span(lane_tile))` wavefronts per phase. Triton's
    /// `bankConflictsMemDesc` returns this minus one.
    pub wavefronts: u32,
    /// Wavefronts per phase on the hardware (max over banks of distinct words touched): equal to
    /// `wavefronts` when the vector covers whole banks, possibly more for narrower accesses.
    pub exact_wavefronts: u32,
}

impl BankAccess {
    /// Bank conflicts per phase (Triton's number): `wavefronts − 1`.
    pub fn conflicts(&self) -> u32 {
        self.wavefronts - 1
    }

    /// Wavefronts one warp spends on all its instructions of this access (hardware count).
    pub fn total_wavefronts(&self) -> u32 {
        self.instructions * self.phases * self.exact_wavefronts
    }
}

/// Wavefronts of `distributed` (register/lane/warp → tile) accessing shared memory laid out by
/// `memory` (offset → tile, bijective), elements of `element_bits` bits, on an NVIDIA GPU (loads
/// and stores alike). See the module docs.
pub fn bank_wavefronts(
    memory: &LinearLayout,
    distributed: &LinearLayout,
    element_bits: u32,
) -> Result<BankAccess, PlanError> {
    bank_wavefronts_on(
        Vendor::Nvidia,
        Side::Read,
        memory,
        distributed,
        element_bits,
    )
}

/// [`bank_wavefronts`] of the `side` access on `vendor`'s GPUs: the phases of
/// [`phase_lanes`]. On AMD a 128-bit load's lane groups are not within a 64-bit load's, so a
/// wider vector can conflict where a narrower one does not: a load is vectorized to 64 bits when
/// that takes fewer wavefronts (on a tie, when its phases are conflict-free).
pub fn bank_wavefronts_on(
    vendor: Vendor,
    side: Side,
    memory: &LinearLayout,
    distributed: &LinearLayout,
    element_bits: u32,
) -> Result<BankAccess, PlanError> {
    check_element_bits(element_bits)?;
    check_same_tile(memory, distributed)?;
    check_distributed(distributed, "distributed")?;
    let offsets = memory_offsets(memory)?;
    let lane_bits = distributed.in_bits(Label::Lane);
    let access = |max_bits: u32| {
        let vector = largest_vectorization(distributed, &offsets, element_bits, max_bits);
        let phase = phase_lanes(vendor, side, vector.bits, lane_bits);
        access_of(distributed, &offsets, element_bits, vector, &phase)
    };
    let widest = access(128);
    if vendor == Vendor::Amd && side == Side::Read && widest.vector.bits == 128 {
        let narrower = access(64);
        let key = |a: &BankAccess| (a.total_wavefronts(), a.exact_wavefronts);
        if key(&narrower) < key(&widest) {
            return Ok(narrower);
        }
    }
    Ok(widest)
}

/// The wavefront count for a given vectorization (`offsets`: logical images of the memory's
/// offset bits; `vector.registers` packs offsets `0..k`), one phase being the lanes `phase`
/// ([`phase_lanes`]).
pub(crate) fn access_of(
    distributed: &LinearLayout,
    offsets: &[u64],
    element_bits: u32,
    vector: Vectorization,
    phase: &[u32],
) -> BankAccess {
    let n = offsets.len() as u32;
    let k = vector.elements.trailing_zeros();
    // Bank bits: one 128-byte row of vectors (Triton: min(1024 / (vec · bits), memory size)).
    let bank_bits = (BANK_ROW_BITS / vector.bits).trailing_zeros().min(n - k);
    let segment = offsets[(k + bank_bits) as usize..].to_vec();
    let phases = 1
        << distributed
            .in_bits(Label::Lane)
            .saturating_sub(phase.len() as u32);
    let lane_tile = phase_images(&bases(distributed, Label::Lane), phase);
    let conflict_basis = space::intersection(&segment, &lane_tile);
    let wavefronts = 1u32 << conflict_basis.len();
    // Within-word offsets (sub-word accesses only): elements per 4-byte word.
    let word_bits = if vector.bits < 32 {
        (32 / element_bits).trailing_zeros().min(n)
    } else {
        0
    };
    let exact_wavefronts = if word_bits > k {
        let mut widened = lane_tile.clone();
        widened.extend_from_slice(&offsets[..word_bits as usize]);
        space::intersection_size(&segment, &widened)
    } else {
        wavefronts
    };
    let registers = nonzero_bases(distributed, Label::Register).len() as u32;
    BankAccess {
        element_bits,
        instructions: 1 << (registers - k),
        vector,
        phases,
        lane_tile,
        segment,
        conflict_basis,
        wavefronts,
        exact_wavefronts,
    }
}
