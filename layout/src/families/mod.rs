//! Hardware layout families as linear layouts, with Triton 3.6's `toLinearLayout` semantics.
//!
//! Each family is a small `Copy` parameter struct (Triton's Gluon parameters, lists as slices)
//! with a `const fn to_linear_layout(&self, shape)` that builds the layout of a tensor of `shape`,
//! replication and broadcasting included (see [`shape`]): registers repeat the CTA tile when the
//! tensor is larger, and lanes/warps (or registers) broadcast when it is smaller. Distributed
//! layouts map `register, lane, warp, block` to `dim0, dim1, …`; memory layouts map
//! `offset, block`. Only one CTA per CGA is modelled, so `block` always has size 1.
//!
//! | family | Triton |
//! |---|---|
//! | [`Blocked`] | `BlockedEncodingAttr` |
//! | [`Slice`] | `SliceEncodingAttr` (of any [`Distributed`] parent) |
//! | [`NvidiaMma`] | `NvidiaMmaEncodingAttr` v2 (`mma.sync`) and v3 (`wgmma`) |
//! | [`DotOperand`] | `DotOperandEncodingAttr` with an mma, mfma, wmma or (FMA) blocked parent |
//! | [`AmdMfma`], [`AmdWmma`] | `AMDMfmaEncodingAttr`, `AMDWmmaEncodingAttr` |
//! | [`SwizzledShared`], [`NvmmaShared`] | `SwizzledSharedEncodingAttr`, `NVMMASharedEncodingAttr` |
//! | [`ldmatrix`] | the per-lane fragments of `ldmatrix`/`stmatrix` and Triton's division tile |

/// A family's parameter struct and its `const fn new`, which takes every field in order.
macro_rules! family_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<$lt:lifetime> {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        pub struct $name<$lt> {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl<$lt> $name<$lt> {
            /// The parameters, in the order of the fields.
            pub const fn new($($field: $ty),*) -> Self {
                Self { $($field),* }
            }
        }
    };
}

pub mod amd;
pub mod blocked;
pub mod dot_operand;
pub mod ldmatrix;
pub mod nvidia_mma;
mod params;
pub mod shape;
pub mod shared;
pub mod slice;

pub use amd::{AmdMfma, AmdWmma};
pub use blocked::Blocked;
pub use dot_operand::{DotOperand, MmaParent};
pub use nvidia_mma::NvidiaMma;
pub use shared::{NvmmaShared, SwizzledShared};
pub use slice::Slice;

use crate::error::incompatible;
use crate::{LayoutError, LinearLayout};

/// A distributed (register) layout of any family: what a [`Slice`] can take as its parent.
#[derive(Clone, Copy, Debug)]
pub enum Distributed<'a> {
    /// A blocked layout.
    Blocked(Blocked<'a>),
    /// A slice of another distributed layout (one dimension removed).
    Slice(Slice<'a>),
    /// An NVIDIA `mma` accumulator.
    NvidiaMma(NvidiaMma<'a>),
    /// An operand of a dot, derived from its accumulator layout.
    DotOperand(DotOperand<'a>),
    /// An AMD MFMA accumulator.
    AmdMfma(AmdMfma<'a>),
    /// An AMD WMMA accumulator.
    AmdWmma(AmdWmma<'a>),
    /// An explicit layout (Triton's `LinearEncodingAttr`); its output sizes must equal the shape.
    Linear(&'a LinearLayout),
}

impl Distributed<'_> {
    /// The layout of a tensor of `shape` (see the family's own `to_linear_layout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        match self {
            Distributed::Blocked(l) => l.to_linear_layout(shape),
            Distributed::Slice(l) => l.to_linear_layout(shape),
            Distributed::NvidiaMma(l) => l.to_linear_layout(shape),
            Distributed::DotOperand(l) => l.to_linear_layout(shape),
            Distributed::AmdMfma(l) => l.to_linear_layout(shape),
            Distributed::AmdWmma(l) => l.to_linear_layout(shape),
            Distributed::Linear(l) => linear_with_shape(l, shape),
        }
    }
}

/// An explicit distributed layout used for a tensor of `shape`: its output dimensions must be
/// `dim0, dim1, …` with exactly the sizes of `shape`. (Triton also re-fits a linear encoding to
/// another shape, ordering dimensions by its register bases; that is not modelled.)
pub const fn linear_with_shape(
    layout: &LinearLayout,
    shape: &[u32],
) -> Result<LinearLayout, LayoutError> {
    tri!(shape::check_shape(shape));
    if layout.num_out_dims() != shape.len() {
        return Err(incompatible(
            "linear layout: its output dimensions are not those of the tensor shape",
        ));
    }
    if !shape::has_standard_outputs(layout, shape) {
        return Err(incompatible("linear layout: its output dimensions are not dim0, dim1, … with the sizes of the tensor shape"));
    }
    Ok(*layout)
}

/// A memory (shared) layout of any family.
#[derive(Clone, Copy, Debug)]
pub enum Shared<'a> {
    /// A swizzled shared layout (`vec`, `per_phase`, `max_phase`, order).
    Swizzled(SwizzledShared<'a>),
    /// An NVMMA shared layout (the swizzles `wgmma` and TMA use).
    Nvmma(NvmmaShared),
    /// An explicit memory layout (`offset` → `dim*`); its output sizes must equal the shape.
    Linear(&'a LinearLayout),
}

impl Shared<'_> {
    /// The layout of a tensor of `shape` in shared memory.
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        match self {
            Shared::Swizzled(l) => l.to_linear_layout(shape),
            Shared::Nvmma(l) => l.to_linear_layout(shape),
            Shared::Linear(l) => linear_with_shape(l, shape),
        }
    }
}
