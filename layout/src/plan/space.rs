//! Subspaces of F₂ⁿ given by lists of packed vectors: the few set operations the planners share
//! (span membership, intersection, extension to a basis, complements of unit vectors).
//!
//! Vectors are packed logical coordinates (a [`LinearLayout`]'s output
//! packing: `dim0` in the low bits), i.e. the flattened tile index with `dim0` most minor.

use super::nonzero_bases;
use crate::f2::EchelonBasis;
use crate::{Label, LinearLayout};
use std::vec::Vec;

/// A subspace, kept both as an echelon form (for membership) and as the list of independent
/// vectors inserted so far (its basis, in insertion order).
#[derive(Clone, Debug, Default)]
pub struct Space {
    echelon: EchelonBasis,
    basis: Vec<u64>,
}

impl Space {
    /// The zero subspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// The span of `vectors`.
    pub fn spanned_by(vectors: &[u64]) -> Self {
        let mut space = Self::new();
        for &v in vectors {
            space.insert(v);
        }
        space
    }

    /// Adds `v`; returns whether it was outside the span (and so joined the basis).
    pub fn insert(&mut self, v: u64) -> bool {
        if v == 0 || self.echelon.contains(v) {
            return false;
        }
        self.echelon.insert(v);
        self.basis.push(v);
        true
    }

    /// Whether `v` lies in the span.
    pub fn contains(&self, v: u64) -> bool {
        self.echelon.contains(v)
    }

    /// The dimension.
    pub fn dim(&self) -> u32 {
        self.basis.len() as u32
    }

    /// The basis (independent vectors in insertion order).
    pub fn basis(&self) -> &[u64] {
        &self.basis
    }

    /// If `v` lies in the span, which basis vectors sum to it (bit `j` = `basis()[j]`).
    pub fn express(&self, v: u64) -> Option<u64> {
        // The echelon form was fed exactly the basis vectors, in order.
        self.echelon.express(v)
    }
}

/// A basis of `span(a) ∩ span(b)`.
///
/// Reduce each vector of `a` modulo `span(b)` (a linear map onto canonical representatives);
/// every linear dependency among the remainders is a combination of `a` lying in `span(b)`.
pub fn intersection(a: &[u64], b: &[u64]) -> Vec<u64> {
    let a = Space::spanned_by(a);
    let b = Space::spanned_by(b);
    let mut remainders = EchelonBasis::new();
    let mut result = Vec::new();
    for (i, &v) in a.basis().iter().enumerate() {
        let (rem, _) = b.echelon.reduce(v);
        // Insertion index `j` of `remainders` is basis vector `j` of `a`.
        if let Some(combo) = remainders.express(rem) {
            let w = a
                .basis()
                .iter()
                .take(i)
                .enumerate()
                .filter(|(j, _)| combo >> j & 1 == 1)
                .fold(v, |acc, (_, &u)| acc ^ u);
            result.push(w);
        }
        remainders.insert(rem);
    }
    result
}

/// `candidates` (in order) that extend `span(base)`: each chosen vector is independent of
/// `base` and of the vectors chosen before it.
pub fn extend(base: &[u64], candidates: &[u64]) -> Vec<u64> {
    let mut space = Space::spanned_by(base);
    candidates
        .iter()
        .copied()
        .filter(|&v| space.insert(v))
        .collect()
}

/// The unit vectors `e_k` (`k < bits`) completing `span(basis)` to all of F₂^bits, ascending:
/// the non-pivot columns of the reduced echelon form whose pivots are the lowest set bits
/// (Triton's `complementBasis`). Greedily from the top bit down, `e_k` is taken exactly when no
/// vector of the span has lowest bit `k`.
pub fn complement_units(basis: &[u64], bits: u32) -> Vec<u64> {
    let mut space = Space::spanned_by(basis);
    let mut units: Vec<u64> = (0..bits)
        .rev()
        .map(|k| 1u64 << k)
        .filter(|&e| space.insert(e))
        .collect();
    units.reverse();
    units
}

/// `2^dim(span(a) ∩ span(b))`.
pub fn intersection_size(a: &[u64], b: &[u64]) -> u32 {
    1 << intersection(a, b).len()
}

/// Expresses `v` in the non-zero register bases of a layout, as a register index.
pub(crate) struct RegisterSolver {
    echelon: EchelonBasis,
    bits: Vec<u32>,
}

impl RegisterSolver {
    pub(crate) fn new(layout: &LinearLayout) -> Self {
        let mut echelon = EchelonBasis::new();
        let mut bits = Vec::new();
        for (k, v) in nonzero_bases(layout, Label::Register) {
            if echelon.insert(v) {
                bits.push(k);
            } else {
                // Keep the insertion indices aligned with `bits`.
                bits.push(u32::MAX);
            }
        }
        RegisterSolver { echelon, bits }
    }

    /// The register index holding `v` relative to register 0, if `v ∈ span(registers)`.
    pub(crate) fn register_of(&self, v: u64) -> Option<u32> {
        let combo = self.echelon.express(v)?;
        Some(
            self.bits
                .iter()
                .enumerate()
                .filter(|&(j, &k)| combo >> j & 1 == 1 && k != u32::MAX)
                .fold(0, |acc, (_, &k)| acc | 1 << k),
        )
    }
}
