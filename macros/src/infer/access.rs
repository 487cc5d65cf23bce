//! How one thread's and one warp's global-memory accesses look in a given layout.
//!
//! - **Vector width**: the longest run of registers `0 … k-1` holding elements 1, 2, 4, … apart
//!   along one dimension, every other basis moving by a multiple of `2^k` along it (so the run
//!   starts aligned), limited by the pointer tile's contiguity and alignment along that
//!   dimension, the mask's constancy (the whole vector is in or out) and 128 bits.
//! - **Coalescing**: the lanes that continue the vector along the same dimension (lane bases
//!   `v, 2v, 4v, …`): one warp instruction reads `vector bytes × 2^j` consecutive bytes per run.

use super::axis::AxisInfo;
use super::layouts::Bases;
use tessera_layout::{Label, LinearLayout};

/// One thread's vector and one warp's consecutive bytes for an access in some layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Elements per vector access.
    pub elements: u32,
    /// The dimension it runs along.
    pub dim: usize,
    /// Consecutive registers along `dim` in the layout.
    pub registers: u32,
    /// The pointer's contiguity and alignment (bytes) along `dim`.
    pub contiguity: u64,
    pub alignment: u64,
    /// The mask's constancy along `dim`.
    pub mask_constancy: Option<u64>,
    /// Consecutive bytes one warp instruction covers per run (vector and lanes).
    pub warp_bytes: u64,
}

/// The access of a tile in `layout` through pointers with facts `ptr` (and mask facts `mask`),
/// elements of `element_bits` bits.
pub fn shape_of(
    layout: &LinearLayout,
    ptr: &AxisInfo,
    mask: Option<&AxisInfo>,
    element_bits: u32,
) -> Shape {
    let elem_bytes = u64::from(element_bits / 8).max(1);
    let scalar = Shape {
        elements: 1,
        dim: 0,
        registers: 1,
        contiguity: ptr.contiguity.first().copied().unwrap_or(1),
        alignment: ptr.divisibility.first().copied().unwrap_or(1),
        mask_constancy: mask.map(|m| m.constancy.first().copied().unwrap_or(1)),
        warp_bytes: elem_bytes,
    };
    let Ok(bases) = Bases::of(layout) else {
        return scalar;
    };
    let max_elements = u64::from((128 / element_bits).max(1));
    let mut best: Option<Shape> = None;
    for dim in 0..bases.shape.len() {
        let unit = |b: &Vec<u64>, step: u64| {
            b[dim] == step && b.iter().enumerate().all(|(d, &x)| d == dim || x == 0)
        };
        let mut k = 0usize;
        while k < bases.register.len() && unit(&bases.register[k], 1 << k) {
            k += 1;
        }
        while k > 0 {
            let step = 1u64 << k;
            let mut rest = bases.register[k..]
                .iter()
                .chain(&bases.lane)
                .chain(&bases.warp);
            if rest.all(|b| b[dim] % step == 0) {
                break;
            }
            k -= 1;
        }
        let registers = 1u64 << k;
        let contiguity = ptr.contiguity.get(dim).copied().unwrap_or(1);
        let alignment = ptr.divisibility.get(dim).copied().unwrap_or(1);
        let mask_constancy = mask.map(|m| m.constancy.get(dim).copied().unwrap_or(1));
        let elements = registers
            .min(contiguity)
            .min((alignment / elem_bytes).max(1))
            .min(max_elements)
            .min(mask_constancy.unwrap_or(u64::MAX));
        // Lanes continuing the vector along `dim`, within the pointer's contiguous runs.
        let mut j = 0u32;
        while (j as usize) < bases.lane.len()
            && unit(&bases.lane[j as usize], elements << j)
            && (elements << (j + 1)) <= contiguity
        {
            j += 1;
        }
        let shape = Shape {
            elements: elements as u32,
            dim,
            registers: registers as u32,
            contiguity,
            alignment,
            mask_constancy,
            warp_bytes: (elements << j) * elem_bytes,
        };
        let better = match &best {
            None => true,
            Some(b) => (shape.elements, shape.warp_bytes) > (b.elements, b.warp_bytes),
        };
        if better {
            best = Some(shape);
        }
    }
    best.unwrap_or(scalar)
}

/// Whether an access in `candidate` is as good as in `anchor`: the same vector width, at least
/// as many consecutive bytes per warp instruction (up to a 128-byte line), and no more
/// registers (no more instructions).
pub fn as_good_as(
    candidate: &LinearLayout,
    anchor: &LinearLayout,
    ptr: &AxisInfo,
    mask: Option<&AxisInfo>,
    element_bits: u32,
) -> bool {
    if candidate == anchor {
        return true;
    }
    let (c, a) = (
        shape_of(candidate, ptr, mask, element_bits),
        shape_of(anchor, ptr, mask, element_bits),
    );
    c.elements == a.elements
        && c.warp_bytes.min(128) >= a.warp_bytes.min(128)
        && candidate.in_size(Label::Register) <= anchor.in_size(Label::Register)
}
