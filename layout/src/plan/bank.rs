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

use super::vectorize::{largest_vectorization, Vectorization};
use super::{
    bases, check_distributed, check_element_bits, check_same_tile, memory_offsets, nonzero_bases,
    space, PlanError,
};
use crate::{Label, LinearLayout};
use std::vec::Vec;

/// Bits in one row of all banks: 32 banks × 32 bits.
pub const BANK_ROW_BITS: u32 = 32 * 32;

/// One warp's access of a distributed layout to a memory layout, and its wavefronts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankAccess {
    /// Bits of one element.
    pub element_bits: u32,
    /// The vector each lane moves per instruction.
    pub vector: Vectorization,
    /// Access instructions per thread to cover its (non-broadcast) registers.
    pub instructions: u32,
    /// Phases one warp access is served in: `max(1, vector bits / 32)`.
    pub phases: u32,
    /// Logical images of the lane bits within one phase (the low lane bits; zero = broadcast).
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
/// `memory` (offset → tile, bijective), elements of `element_bits` bits. See the module docs.
pub fn bank_wavefronts(
    memory: &LinearLayout,
    distributed: &LinearLayout,
    element_bits: u32,
) -> Result<BankAccess, PlanError> {
    check_element_bits(element_bits)?;
    check_same_tile(memory, distributed)?;
    check_distributed(distributed, "distributed")?;
    let offsets = memory_offsets(memory)?;
    let vector = largest_vectorization(distributed, &offsets, element_bits, 128);
    Ok(access_of(distributed, &offsets, element_bits, vector))
}

/// The wavefront count for a given vectorization (`offsets`: logical images of the memory's
/// offset bits; `vector.registers` packs offsets `0..k`).
pub(crate) fn access_of(
    distributed: &LinearLayout,
    offsets: &[u64],
    element_bits: u32,
    vector: Vectorization,
) -> BankAccess {
    let n = offsets.len() as u32;
    let k = vector.elements.trailing_zeros();
    // Bank bits: one 128-byte row of vectors (Triton: min(1024 / (vec · bits), memory size)).
    let bank_bits = (BANK_ROW_BITS / vector.bits).trailing_zeros().min(n - k);
    let segment = offsets[(k + bank_bits) as usize..].to_vec();
    let phases = (vector.bits / 32).max(1);
    let lanes = bases(distributed, Label::Lane);
    let keep = lanes.len().saturating_sub(phases.trailing_zeros() as usize);
    let lane_tile = lanes[..keep].to_vec();
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
