//! Vectorization (§5.1): how many contiguous elements one instruction of a thread can move.
//!
//! A thread holding a distributed layout `L` accesses a memory whose offsets map to the tile by a
//! bijection `M`. Registers `r_0 … r_{k-1}` can be packed into one access of `2^k` elements exactly
//! when `M⁻¹ ∘ L` is left-divisible by the identity tile `register → offset` of size `2^k`
//! (Theorem 5.1): after permuting registers, `M⁻¹ L(r_i) = 2^i`, and no other basis touches the
//! low `k` offset bits (so the vector starts aligned and `base ⊕ j = base + j`). This is Triton's
//! `largestVectorisation`. For global memory `M` is the row-major order of the tensor, and the
//! elements may span several logical dimensions (Table 2: `[512, 2] × f8` packs 16 elements,
//! 8 rows × 2 columns, into one 128-bit access where legacy Triton saw only the 2 columns).

use super::{bases, check_element_bits, memory_offsets, nonzero_bases, PlanError, Space};
use crate::{Label, LinearLayout};
use std::vec::Vec;

/// A vectorized access of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vectorization {
    /// Elements per access (a power of two).
    pub elements: u32,
    /// Bits per access (`elements × element bits`).
    pub bits: u32,
    /// `registers[i]` is the register bit (index into the layout's `register` bases) whose
    /// basis is memory offset `2^i`: the registers packed into one access, in memory order.
    pub registers: Vec<u32>,
}

impl Vectorization {
    /// Whether the packed registers are the first ones in order (no register permutation needed).
    pub fn is_in_register_order(&self) -> bool {
        self.registers
            .iter()
            .enumerate()
            .all(|(i, &r)| r == i as u32)
    }
}

/// Triton's `largestVectorisation` for the map `offsets⁻¹ ∘ distributed` (see the module docs):
/// the largest `2^k ≤ max(1, max_bits / element_bits)` for which the vector registers exist and
/// every other basis (registers, lanes, warps, blocks) lies in `span(offsets[k..])`.
/// `offsets[i]` is the logical image of memory offset bit `i`. Broadcast (zero) registers never
/// take part: they hold copies, not further elements.
pub fn largest_vectorization(
    distributed: &LinearLayout,
    offsets: &[u64],
    element_bits: u32,
    max_bits: u32,
) -> Vectorization {
    let registers = nonzero_bases(distributed, Label::Register);
    let others: Vec<u64> = [Label::Lane, Label::Warp, Label::Block]
        .iter()
        .flat_map(|&l| bases(distributed, l))
        .collect();
    let max_elements = (max_bits / element_bits).max(1);
    let mut k = max_elements.trailing_zeros() as usize;
    while k > 0 {
        if let Some(chosen) = vector_registers(&registers, offsets, k) {
            let high = Space::spanned_by(&offsets[k..]);
            let aligned = registers
                .iter()
                .filter(|(r, _)| !chosen.contains(r))
                .map(|&(_, v)| v)
                .chain(others.iter().copied())
                .all(|v| high.contains(v));
            if aligned {
                return Vectorization {
                    elements: 1 << k,
                    bits: (1 << k) * element_bits,
                    registers: chosen,
                };
            }
        }
        k -= 1;
    }
    Vectorization {
        elements: 1,
        bits: element_bits,
        registers: Vec::new(),
    }
}

/// For each of the first `k` offsets, an unused register whose basis equals it (Triton's
/// `regPermForDivide`), or `None`.
fn vector_registers(registers: &[(u32, u64)], offsets: &[u64], k: usize) -> Option<Vec<u32>> {
    if k > offsets.len() {
        return None;
    }
    let mut chosen: Vec<u32> = Vec::with_capacity(k);
    for &target in &offsets[..k] {
        let &(r, _) = registers
            .iter()
            .find(|(r, v)| *v == target && !chosen.contains(r))?;
        chosen.push(r);
    }
    Some(chosen)
}

/// The widest access of `distributed` to a memory laid out by `memory` (offset → tile).
pub fn memory_vectorization(
    distributed: &LinearLayout,
    memory: &LinearLayout,
    element_bits: u32,
    max_bits: u32,
) -> Result<Vectorization, PlanError> {
    check_element_bits(element_bits)?;
    super::check_same_tile(memory, distributed)?;
    let offsets = memory_offsets(memory)?;
    Ok(largest_vectorization(
        distributed,
        &offsets,
        element_bits,
        max_bits,
    ))
}

/// The widest global-memory access (at most 128 bits) of a contiguous tensor whose dimensions,
/// fastest first, are `order` (Triton's order; `None` = row-major, the last dimension fastest).
/// Assumes the base pointer is aligned to the access.
pub fn global_vectorization(
    distributed: &LinearLayout,
    order: Option<&[u32]>,
    element_bits: u32,
) -> Result<Vectorization, PlanError> {
    check_element_bits(element_bits)?;
    let rank = distributed.num_out_dims();
    let order: Vec<usize> = match order {
        Some(order) => {
            let mut seen = std::vec![false; rank];
            for &d in order {
                let d = d as usize;
                if d >= rank || seen[d] {
                    return Err(PlanError::new(std::format!(
                        "order {order:?} is not a permutation of the {rank} dimensions"
                    )));
                }
                seen[d] = true;
            }
            if order.len() != rank {
                return Err(PlanError::new(std::format!(
                    "order {order:?} is not a permutation of the {rank} dimensions"
                )));
            }
            order.iter().map(|&d| d as usize).collect()
        }
        None => (0..rank).rev().collect(),
    };
    let offsets: Vec<u64> = order
        .iter()
        .flat_map(|&d| {
            let base = distributed.out_offset(d);
            (0..distributed.out_bits_at(d)).map(move |b| 1u64 << (base + b))
        })
        .collect();
    Ok(largest_vectorization(
        distributed,
        &offsets,
        element_bits,
        128,
    ))
}
