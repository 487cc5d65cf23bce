//! Global-memory access plans: how one thread's registers of a tile group into vector loads and
//! stores, given what is proven about the addresses and the mask.
//!
//! For each tile dimension `d`, the vector is Triton's `largestVectorisation` (see
//! [`super::vectorize`]) against the offsets of `d` first, then the other dimensions, limited
//! by the facts along `d`: the pointers' contiguity, the alignment of each run's first address
//! and 128 bits. The widest dimension wins (the first on ties). Along the winning dimension the
//! plan also records whether the mask is proven equal over each vector (one predicate per
//! vector) and how many consecutive bytes one warp instruction covers (the vector continued by
//! lanes `v, 2v, 4v, …` within the pointers' contiguous runs).

use super::vectorize::largest_vectorization;
use crate::{Label, LinearLayout};
use std::vec::Vec;

/// What is proven about the accessed addresses (and the mask) along one tile dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimFacts {
    /// The addresses come in runs of this many consecutive elements.
    pub contiguity: u64,
    /// The first address of each run is a multiple of this many bytes.
    pub alignment: u64,
    /// The mask comes in runs of this many equal values (`None`: the access has no mask, or
    /// nothing is known of it).
    pub mask_constancy: Option<u64>,
}

/// How a thread's registers form vector accesses, and what limited the width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessPlan {
    /// Elements per access (a power of two; 1 = scalar accesses).
    pub elements: u32,
    /// Bits of one element.
    pub element_bits: u32,
    /// The tile dimension the vector runs along.
    pub dim: usize,
    /// Register bits that form a vector, in memory order: element `j` of the vector starting
    /// at register `g` is register `g ⊕ Σ_{i: bit i of j} 2^registers[i]`.
    pub registers: Vec<u32>,
    /// Whether the access is unmasked or its mask is proven equal over each vector (then one
    /// predicate per vector; otherwise a vector runs where all its elements are enabled).
    pub mask_uniform: bool,
    /// The facts along `dim` that limited the width.
    pub facts: DimFacts,
    /// Registers the layout alone would pack along `dim` (no facts, no 128-bit limit).
    pub layout_elements: u32,
    /// Consecutive bytes one warp instruction covers per run (vector and lanes).
    pub warp_bytes: u64,
}

impl AccessPlan {
    /// One element per access: what a scalar pointer, or a tile with nothing proven, gets.
    pub fn scalar(element_bits: u32, facts: DimFacts) -> AccessPlan {
        AccessPlan {
            elements: 1,
            element_bits,
            dim: 0,
            registers: Vec::new(),
            mask_uniform: true,
            facts,
            layout_elements: 1,
            warp_bytes: u64::from(element_bits / 8).max(1),
        }
    }

    /// The registers of the vector starting at register `start`, in memory order.
    pub fn vector_registers(&self, start: u32) -> Vec<u32> {
        (0..self.elements)
            .map(|j| {
                self.registers
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| j >> i & 1 == 1)
                    .fold(start, |acc, (_, &b)| acc ^ (1 << b))
            })
            .collect()
    }

    /// The first register of every vector: registers with every vector bit zero.
    pub fn vector_starts(&self, registers: u32) -> Vec<u32> {
        let vector_bits: u32 = self.registers.iter().map(|&b| 1u32 << b).sum();
        (0..registers).filter(|r| r & vector_bits == 0).collect()
    }
}

/// The access plan of a tile in `layout` (inputs register/lane/warp, outputs the tile's
/// dimensions) through addresses with `facts` per dimension, elements of `element_bits` bits;
/// `masked` says whether the access has a mask. See the module docs.
pub fn plan_access(
    layout: &LinearLayout,
    element_bits: u32,
    facts: &[DimFacts],
    masked: bool,
) -> AccessPlan {
    let fact = |d: usize| {
        facts.get(d).copied().unwrap_or(DimFacts {
            contiguity: 1,
            alignment: 1,
            mask_constancy: None,
        })
    };
    let mut best: Option<AccessPlan> = None;
    for d in 0..layout.num_out_dims() {
        let plan = plan_along(layout, element_bits, d, fact(d), masked);
        if best
            .as_ref()
            .is_none_or(|b| (plan.elements, plan.warp_bytes) > (b.elements, b.warp_bytes))
        {
            best = Some(plan);
        }
    }
    best.unwrap_or_else(|| AccessPlan::scalar(element_bits, fact(0)))
}

/// The plan of vectors along dimension `d` alone.
fn plan_along(
    layout: &LinearLayout,
    element_bits: u32,
    d: usize,
    facts: DimFacts,
    masked: bool,
) -> AccessPlan {
    let contiguity = facts.contiguity.max(1);
    let align_elements = (facts.alignment.max(1) * 8 / u64::from(element_bits)).max(1);
    let limit = contiguity
        .min(align_elements)
        .min(u64::from((128 / element_bits).max(1)));
    // Largest power of two ≤ limit.
    let limit = 1u32 << (63 - limit.leading_zeros());
    let offsets = offsets_dim_first(layout, d);
    let vector = largest_vectorization(layout, &offsets, element_bits, limit * element_bits);
    let dim_size = 1u32 << layout.out_bits_at(d);
    let layout_elements = largest_vectorization(
        layout,
        &offsets,
        element_bits,
        dim_size.saturating_mul(element_bits),
    )
    .elements;
    let elements = vector.elements;
    AccessPlan {
        elements,
        element_bits,
        dim: d,
        registers: vector.registers,
        mask_uniform: !masked
            || facts
                .mask_constancy
                .is_some_and(|c| c >= u64::from(elements)),
        facts,
        layout_elements,
        warp_bytes: warp_elements(layout, d, elements, contiguity)
            * u64::from(element_bits / 8).max(1),
    }
}

/// The logical images of the tile's index bits with dimension `d` first, then the others in
/// order: `d` is the fastest-varying dimension of the memory order.
fn offsets_dim_first(layout: &LinearLayout, d: usize) -> Vec<u64> {
    let rank = layout.num_out_dims();
    core::iter::once(d)
        .chain((0..rank).filter(|&e| e != d))
        .flat_map(|dim| {
            let base = layout.out_offset(dim);
            (0..layout.out_bits(Label::Dim(dim as u8))).map(move |b| 1u64 << (base + b))
        })
        .collect()
}

/// Consecutive elements along `d` one warp covers per run: the vector of `elements`, doubled
/// by each lane basis `elements · 2^j` along `d` alone, within runs of `contiguity`.
fn warp_elements(layout: &LinearLayout, d: usize, elements: u32, contiguity: u64) -> u64 {
    let (base, size) = (layout.out_offset(d), 1u64 << layout.out_bits_at(d));
    let elements = u64::from(elements);
    let mut covered = elements;
    for &lane in &super::bases(layout, Label::Lane) {
        let along_d = covered < size && lane == covered << base;
        if !along_d || covered * 2 > contiguity {
            break;
        }
        covered *= 2;
    }
    covered
}
