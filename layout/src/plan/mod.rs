//! Code-generation planning (§5 of the paper): what the compiler asks of a pair of layouts.
//!
//! - [`vectorize`]: the widest contiguous accesses a thread can issue (§5.1, Table 2).
//! - [`access`]: the vector plan of a global load or store under proven address facts.
//! - [`broadcast`]: which hardware bits hold duplicates, so stores are issued once (§5.1, Table 3).
//! - [`bank`]: wavefronts of a warp's shared-memory access (Lemma 9.4), Triton's
//!   `bankConflictsMemDesc`.
//! - [`swizzle`]: the optimal swizzled memory layout for a write/read pair (§5.4, appendix 9.2).
//! - [`conversion`]: distributed → distributed conversions: no-op, register permutation, warp
//!   shuffles or shared memory, chosen by a cost model (§5.4).
//! - [`conversion_code`]: a conversion as generated code runs it: the cost model's plan, refined by
//!   the cost of register selects, resolved to a [`movement`].
//! - [`movement`]: a conversion resolved to per-thread steps (what a code generator renders).
//! - [`shared_steps`]: the shared-memory form of a conversion (memory, vectors, `ldmatrix` reads).
//! - [`mma`]: `dot` as `mma.sync` instructions on register fragments of the operand layouts.
//! - [`mfma`]: `dot` as AMD `v_mfma` instructions on the fragments of a wave (two warps).
//! - [`ldmatrix`]: when `ldmatrix`/`stmatrix` apply, by left division (Theorem 5.1).
//! - [`gather`]: warp-local gathers by shuffles, else through shared memory (§5.5).
//! - [`gather_code`]: a gather plan resolved to per-thread steps, and its cost.
//! - [`wgmma`]: the `wgmma` matrix descriptor of an NVMMA shared operand tile.
//! - [`pipeline`]: a load into a conversion's shared layout as `cp.async` copies (software
//!   pipelining of loops).
//! - [`scan`]: `cumsum`/`cumprod` along an axis: per axis bit, where the partner element is
//!   (registers, a lane shuffle, or shared memory across warps).
//! - [`wave`]: warps of 32 lanes as AMD's waves of 64 and back ([`wave::Lanes`]).
//! - [`wgmma_dot`]: `dot` as `wgmma.mma_async` (shape, warpgroups, operand stores, descriptors).
//!
//! Everything works on *packed* logical vectors: a basis of a layout is a `u64` holding its
//! output coordinates side by side, `dim0` lowest — which is exactly the flattened tile index
//! with `dim0` most minor (Triton's `flattenOuts`). Two layouts planned together must have the
//! same output dimensions (names, sizes, order), so their packed vectors are comparable.

pub mod access;
pub mod bank;
pub mod broadcast;
pub mod conversion;
pub mod conversion_code;
pub mod gather;
pub mod gather_code;
pub mod ldmatrix;
pub mod mfma;
pub mod mma;
pub mod movement;
pub mod pipeline;
pub mod scan;
pub mod shared_steps;
pub mod space;
pub mod swizzle;
pub mod vectorize;
pub mod wave;
pub mod wgmma;
pub mod wgmma_dot;

pub use space::Space;

/// Whose instructions a plan may use. The layouts and the cost model are the same for both; the
/// instructions differ: `ldmatrix` (shared-memory reads of 8 × 16-byte rows) exists on NVIDIA
/// GPUs only, so a plan for AMD reads shared memory by vector loads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// NVIDIA GPUs (PTX): every instruction the planners know.
    #[default]
    Nvidia,
    /// AMD GPUs (`amdgcn`): no `ldmatrix`.
    Amd,
}

impl Vendor {
    /// Whether the GPUs have `ldmatrix`.
    pub const fn has_ldmatrix(self) -> bool {
        matches!(self, Vendor::Nvidia)
    }
}

use crate::{Label, LayoutError, LinearLayout};
use core::fmt;
use std::boxed::Box;
use std::format;
use std::string::String;
use std::vec::Vec;

/// Why a plan could not be made: the layouts do not fit together, or an argument is out of range.
/// Each variant carries what went wrong (which layout, which dimension, which sizes); the
/// messages are rendered in one place, its `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// An operation of the layout algebra failed.
    Layout(LayoutError),
    /// `role` (e.g. "source") fails a layout check.
    LayoutOf {
        /// Which layout.
        role: &'static str,
        /// The check that failed.
        error: LayoutError,
    },
    /// Two layouts planned together cover different tiles.
    DifferentTiles {
        /// The first layout.
        a: Box<LinearLayout>,
        /// The second layout.
        b: Box<LinearLayout>,
    },
    /// A distributed layout with another input dimension.
    NotDistributed {
        /// Which layout.
        role: &'static str,
        /// The unexpected input dimension.
        label: Label,
    },
    /// An element width other than a power of two from 8 to 128 bits.
    ElementBits {
        /// The width given.
        bits: u32,
    },
    /// A memory layout with an input other than offset and block.
    NotMemory {
        /// The unexpected input dimension.
        label: Label,
    },
    /// A memory layout without an `offset` dimension.
    NoOffset,
    /// A memory layout that does not hold exactly the tile's elements.
    MemorySize {
        /// The memory layout.
        memory: Box<LinearLayout>,
    },
    /// A layout lacks the dimension the plan needs (`role`: which layout).
    MissingDimension {
        /// Which layout.
        role: &'static str,
        /// The missing dimension.
        label: Label,
    },
    /// A conversion between layouts with different numbers of `label` (lanes or warps).
    DifferentHardware {
        /// `lane` or `warp`.
        label: Label,
        /// Their number in the source.
        src: u32,
        /// Their number in the destination.
        dst: u32,
    },
    /// A conversion whose layouts place the tile differently on the CTAs (`block` bases differ).
    CrossCtaBlocks,
    /// A conversion where a CTA of the destination needs elements another CTA holds.
    CrossCtaElements,
    /// A no-op plan that cannot fill the destination's registers from the source's.
    NoOpRegisters {
        /// Registers of the source.
        src: u32,
        /// Registers of the destination.
        dst: u32,
    },
    /// No store narrower than a word fits a race-free shared-memory movement (`widened`: even
    /// with one element per word).
    SharedStores {
        /// Whether one element per 32-bit word was tried too.
        widened: bool,
    },
    /// A gather whose source and index disagree on a dimension other than the axis.
    GatherTiles {
        /// The source's layout.
        src: Box<LinearLayout>,
        /// The index's layout.
        index: Box<LinearLayout>,
        /// The gather's axis.
        axis: Label,
    },
    /// A gather across CTAs (non-zero block bases).
    GatherAcrossCtas,
    /// `dot` operands that do not form `mma` fragments.
    Dot(mma::DotError),
    /// Another planner's reason, in words.
    Message(String),
}

impl PlanError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        PlanError::Message(message.into())
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Layout(e) => write!(f, "{e}"),
            PlanError::LayoutOf { role, error } => write!(f, "the {role} layout: {error}"),
            PlanError::DifferentTiles { a, b } => write!(
                f,
                "the layouts cover different tiles: {} vs {}",
                tile_name(a),
                tile_name(b)
            ),
            PlanError::NotDistributed { role, label } => write!(
                f,
                "the {role} layout has input dimension `{label}`; a distributed layout has register, lane, warp and block"
            ),
            PlanError::ElementBits { bits } => write!(
                f,
                "element width {bits} bits: expected a power of two from 8 to 128"
            ),
            PlanError::NotMemory { label } => write!(
                f,
                "the memory layout has input dimension `{label}`; a memory layout has offset (and block)"
            ),
            PlanError::NoOffset => f.write_str("the memory layout has no `offset` dimension"),
            PlanError::MemorySize { memory } => write!(
                f,
                "the memory layout holds {} elements but the tile {} has {}",
                1u64 << memory.total_in_bits(),
                tile_name(memory),
                1u64 << memory.total_out_bits()
            ),
            PlanError::MissingDimension { role, label } => {
                write!(f, "the {role} has no dimension {label}")
            }
            PlanError::DifferentHardware { label, src, dst } => write!(
                f,
                "the layouts use different numbers of {label}s: {src} vs {dst}"
            ),
            PlanError::CrossCtaBlocks => f.write_str(
                "cross-CTA conversion: the block bases differ, so elements would move between CTAs (needs distributed shared memory, not supported)",
            ),
            PlanError::CrossCtaElements => f.write_str(
                "cross-CTA conversion: a CTA of the destination needs elements that another CTA of the source holds",
            ),
            PlanError::NoOpRegisters { src, dst } => write!(
                f,
                "a no-op conversion cannot fill {dst} registers from {src}"
            ),
            PlanError::SharedStores { widened: true } => {
                f.write_str("the widened shared-memory plan cannot be lowered")
            }
            PlanError::SharedStores { widened: false } => {
                f.write_str("the shared-memory plan cannot be lowered")
            }
            PlanError::GatherTiles { src, index, axis } => write!(
                f,
                "source {} and index {} must agree on every dimension but {axis}",
                tile_name(src),
                tile_name(index)
            ),
            PlanError::GatherAcrossCtas => {
                f.write_str("a gather across CTAs (non-zero block bases) is not supported")
            }
            PlanError::Dot(e) => write!(f, "{e}"),
            PlanError::Message(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PlanError {}

impl From<mma::DotError> for PlanError {
    fn from(e: mma::DotError) -> Self {
        PlanError::Dot(e)
    }
}

impl From<LayoutError> for PlanError {
    fn from(e: LayoutError) -> Self {
        PlanError::Layout(e)
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
        Err(PlanError::DifferentTiles {
            a: Box::new(*a),
            b: Box::new(*b),
        })
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
pub fn check_distributed(layout: &LinearLayout, role: &'static str) -> Result<(), PlanError> {
    for i in 0..layout.num_in_dims() {
        let label = layout.in_label(i);
        if !matches!(
            label,
            Label::Register | Label::Lane | Label::Warp | Label::Block
        ) {
            return Err(PlanError::NotDistributed { role, label });
        }
    }
    layout
        .check_surjective()
        .map_err(|error| PlanError::LayoutOf { role, error })
}

/// Ok if `a` and `b` (in the roles `a_role`, `b_role`) are distributed layouts of one tile, moving
/// elements of a supported width `element_bits`: the inputs of a plan between two layouts.
pub fn check_distributed_pair(
    (a, a_role): (&LinearLayout, &'static str),
    (b, b_role): (&LinearLayout, &'static str),
    element_bits: u32,
) -> Result<(), PlanError> {
    check_element_bits(element_bits)?;
    check_same_tile(a, b)?;
    check_distributed(a, a_role)?;
    check_distributed(b, b_role)
}

/// Ok if `bits` is a supported element width: a power of two from 8 to 128.
pub fn check_element_bits(bits: u32) -> Result<(), PlanError> {
    if bits.is_power_of_two() && (8..=128).contains(&bits) {
        Ok(())
    } else {
        Err(PlanError::ElementBits { bits })
    }
}

/// The logical images of a memory layout's offset bits: `offset` bases, then `block` bases
/// (Triton's `reshapeIns` order). The layout must map its inputs bijectively onto the tile.
pub fn memory_offsets(memory: &LinearLayout) -> Result<Vec<u64>, PlanError> {
    for i in 0..memory.num_in_dims() {
        let label = memory.in_label(i);
        if !matches!(label, Label::Offset | Label::Block) {
            return Err(PlanError::NotMemory { label });
        }
    }
    if memory.in_index(Label::Offset).is_none() {
        return Err(PlanError::NoOffset);
    }
    memory
        .check_injective()
        .map_err(|error| PlanError::LayoutOf {
            role: "memory",
            error,
        })?;
    if !memory.is_invertible() {
        return Err(PlanError::MemorySize {
            memory: Box::new(*memory),
        });
    }
    let mut offsets = bases(memory, Label::Offset);
    offsets.extend(bases(memory, Label::Block));
    Ok(offsets)
}

/// The vectors of `a` that `b` also has, in `a`'s order.
pub fn common_vectors(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().copied().filter(|v| b.contains(v)).collect()
}

/// The XOR of `vectors[j]` over the set bits `j` of `mask`.
pub fn combine(vectors: &[u64], mask: u64) -> u64 {
    vectors
        .iter()
        .enumerate()
        .filter(|(j, _)| mask >> j & 1 == 1)
        .fold(0, |acc, (_, &v)| acc ^ v)
}
