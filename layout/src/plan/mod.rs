//! Code-generation planning (§5 of the paper): what the compiler asks of a pair of layouts.
//!
//! - [`vectorize`]: the widest contiguous accesses a thread can issue (§5.1, Table 2).
//! - [`broadcast`]: which hardware bits hold duplicates, so stores are issued once (§5.1, Table 3).
//! - [`bank`]: wavefronts of a warp's shared-memory access (Lemma 9.4), Triton's
//!   `bankConflictsMemDesc`.
//! - [`swizzle`]: the optimal swizzled memory layout for a write/read pair (§5.4, appendix 9.2).
//! - [`conversion`]: distributed → distributed conversions: no-op, register permutation, warp
//!   shuffles or shared memory, chosen by a cost model (§5.4).
//! - [`ldmatrix`]: when `ldmatrix`/`stmatrix` apply, by left division (Theorem 5.1).
//! - [`gather`]: warp-local gathers by shuffles, else through shared memory (§5.5).
//!
//! Everything works on *packed* logical vectors: a basis of a layout is a `u64` holding its
//! output coordinates side by side, `dim0` lowest — which is exactly the flattened tile index
//! with `dim0` most minor (Triton's `flattenOuts`). Two layouts planned together must have the
//! same output dimensions (names, sizes, order), so their packed vectors are comparable.

pub mod bank;
pub mod broadcast;
pub mod conversion;
pub mod gather;
pub mod ldmatrix;
pub mod space;
pub mod swizzle;
pub mod vectorize;

pub use space::Space;

use crate::{Label, LayoutError, LinearLayout};
use core::fmt;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// Why a plan could not be made: the layouts do not fit together, or an argument is out of range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanError(pub String);

impl PlanError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        PlanError(message.into())
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanError {}

impl From<LayoutError> for PlanError {
    fn from(e: LayoutError) -> Self {
        PlanError(e.to_string())
    }
}

/// The packed bases of input dimension `label` (empty if the layout lacks it).
pub fn bases(layout: &LinearLayout, label: Label) -> Vec<u64> {
    match layout.in_index(label) {
        Some(i) => (0..layout.in_bits_at(i) as usize)
            .map(|k| layout.packed_basis(i, k))
            .collect(),
        None => Vec::new(),
    }
}

/// Indices and values of the non-zero bases of `label` (zero bases are broadcast bits).
pub fn nonzero_bases(layout: &LinearLayout, label: Label) -> Vec<(u32, u64)> {
    bases(layout, label)
        .into_iter()
        .enumerate()
        .filter(|&(_, v)| v != 0)
        .map(|(k, v)| (k as u32, v))
        .collect()
}

/// Ok if both layouts have the same output dimensions (names, sizes, order).
pub fn check_same_tile(a: &LinearLayout, b: &LinearLayout) -> Result<(), PlanError> {
    let same = a.num_out_dims() == b.num_out_dims()
        && (0..a.num_out_dims())
            .all(|o| a.out_label(o) == b.out_label(o) && a.out_bits_at(o) == b.out_bits_at(o));
    if same {
        Ok(())
    } else {
        Err(PlanError::new(format!(
            "the layouts cover different tiles: {} vs {}",
            tile_name(a),
            tile_name(b)
        )))
    }
}

/// `[dim0 16, dim1 32]`: the output dimensions and sizes, for messages.
pub fn tile_name(layout: &LinearLayout) -> String {
    let dims: Vec<String> = (0..layout.num_out_dims())
        .map(|o| format!("{} {}", layout.out_label(o), 1u64 << layout.out_bits_at(o)))
        .collect();
    format!("[{}]", dims.join(", "))
}

/// Ok if `layout` is a distributed layout: inputs among register/lane/warp/block, onto its tile.
pub fn check_distributed(layout: &LinearLayout, role: &str) -> Result<(), PlanError> {
    for i in 0..layout.num_in_dims() {
        let label = layout.in_label(i);
        if !matches!(
            label,
            Label::Register | Label::Lane | Label::Warp | Label::Block
        ) {
            return Err(PlanError::new(format!(
                "the {role} layout has input dimension `{label}`; a distributed layout has register, lane, warp and block"
            )));
        }
    }
    layout
        .check_surjective()
        .map_err(|e| PlanError::new(format!("the {role} layout: {e}")))
}

/// Ok if `bits` is a supported element width: a power of two from 8 to 128.
pub fn check_element_bits(bits: u32) -> Result<(), PlanError> {
    if bits.is_power_of_two() && (8..=128).contains(&bits) {
        Ok(())
    } else {
        Err(PlanError::new(format!(
            "element width {bits} bits: expected a power of two from 8 to 128"
        )))
    }
}

/// The logical images of a memory layout's offset bits: `offset` bases, then `block` bases
/// (Triton's `reshapeIns` order). The layout must map its inputs bijectively onto the tile.
pub fn memory_offsets(memory: &LinearLayout) -> Result<Vec<u64>, PlanError> {
    for i in 0..memory.num_in_dims() {
        let label = memory.in_label(i);
        if !matches!(label, Label::Offset | Label::Block) {
            return Err(PlanError::new(format!(
                "the memory layout has input dimension `{label}`; a memory layout has offset (and block)"
            )));
        }
    }
    if memory.in_index(Label::Offset).is_none() {
        return Err(PlanError::new(
            "the memory layout has no `offset` dimension",
        ));
    }
    memory
        .check_injective()
        .map_err(|e| PlanError::new(format!("the memory layout: {e}")))?;
    if !memory.is_invertible() {
        return Err(PlanError::new(format!(
            "the memory layout holds {} elements but the tile {} has {}",
            1u64 << memory.total_in_bits(),
            tile_name(memory),
            1u64 << memory.total_out_bits()
        )));
    }
    let mut offsets = bases(memory, Label::Offset);
    offsets.extend(bases(memory, Label::Block));
    Ok(offsets)
}

/// The XOR of `vectors[j]` over the set bits `j` of `mask`.
pub fn combine(vectors: &[u64], mask: u64) -> u64 {
    vectors
        .iter()
        .enumerate()
        .filter(|(j, _)| mask >> j & 1 == 1)
        .fold(0, |acc, (_, &v)| acc ^ v)
}
