//! Dot operands (Triton `DotOperandEncodingAttr`): the register operands A `[M, K]` and
//! B `[K, N]` of a dot whose accumulator is an NVIDIA mma, an AMD mfma/wmma or (for an FMA dot
//! on CUDA cores) a blocked layout. The NVIDIA operands are built from the accumulator's tile
//! (`nvidia_mma_tile`) with `k_width` elements per thread along K, warps broadcast along K;
//! the other parents build their own operands.

use super::amd::{AmdMfma, AmdWmma};
use super::blocked::Blocked;
use super::nvidia_mma::{nvidia_mma_tile, NvidiaMma};
use super::params::{bad, prefix};
use super::shape::{
    broadcasted_dot_operand_layout, check_shape, combine_cta_with_shape, dot_operand_order,
};
use crate::algebra::labels;
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

/// Largest `k_width` accepted (Triton's instructions use at most 32).
pub const MAX_K_WIDTH: u32 = 256;

/// The parent of a dot operand: the accumulator layout of the instruction (a blocked layout
/// for an FMA dot on CUDA cores).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaParent<'a> {
    /// A blocked layout (an FMA dot on CUDA cores).
    Blocked(Blocked<'a>),
    /// An NVIDIA `mma` accumulator (v2: `mma.sync`, v3: `wgmma`).
    Nvidia(NvidiaMma<'a>),
    /// An AMD MFMA accumulator.
    Mfma(AmdMfma<'a>),
    /// An AMD WMMA accumulator.
    Wmma(AmdWmma<'a>),
}

family_params! {
    /// The parameters of a dot operand layout: operand `op_idx` (0 = A `[M, K]`, 1 = B `[K, N]`) of
    /// the instruction whose accumulator is `parent`, each thread holding `k_width` consecutive
    /// elements along K.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DotOperand<'a> {
        /// 0 for the A operand, 1 for B.
        pub op_idx: u32,
        /// Consecutive elements along K each thread holds.
        pub k_width: u32,
        /// The accumulator layout of the instruction.
        pub parent: MmaParent<'a>,
    }
}

impl<'a> DotOperand<'a> {
    const fn check_common(&self) -> Result<(), LayoutError> {
        if self.op_idx > 1 {
            return Err(bad(
                "dot_operand",
                "operand_index",
                None,
                self.op_idx,
                "but it must be 0 (A) or 1 (B)",
            ));
        }
        if crate::log2_exact(self.k_width).is_none() {
            return Err(bad(
                "dot_operand",
                "k_width",
                None,
                self.k_width,
                "which is not a power of two",
            ));
        }
        if self.k_width > MAX_K_WIDTH {
            return Err(bad(
                "dot_operand",
                "k_width",
                None,
                self.k_width,
                "which is more than 256 elements per thread along K",
            ));
        }
        Ok(())
    }

    /// The layout of a tensor of `shape` (Triton `DotOperandEncodingAttr::toLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        tri!(self.check_common());
        match self.parent {
            MmaParent::Blocked(blocked) => blocked.dot_operand(self.op_idx, shape),
            MmaParent::Nvidia(mma) => self.nvidia(&mma, shape),
            MmaParent::Mfma(mfma) => mfma.dot_operand(self.op_idx, self.k_width, shape),
            MmaParent::Wmma(wmma) => wmma.dot_operand(self.op_idx, self.k_width, shape),
        }
    }

    /// Triton `nvidiaDotToLinearLayout`.
    const fn nvidia(&self, mma: &NvidiaMma, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        let rank = shape.len();
        tri!(mma.check(rank));
        let is_a = self.op_idx == 0;
        if !is_a && mma.is_hopper() {
            return Err(bad(
                "dot_operand",
                "operand_index",
                None,
                self.op_idx,
                "but wgmma (v3) reads operand B from shared memory, not registers",
            ));
        }
        let mut tile_shape = [1u32; MAX_DIMS];
        if is_a {
            tile_shape[rank - 2] = 16;
            tile_shape[rank - 1] = self.k_width * 8;
        } else {
            tile_shape[rank - 2] = self.k_width * 8;
            tile_shape[rank - 1] = 8;
        }
        let order = dot_operand_order(self.op_idx, rank, true);
        // The repetition order of an mma operand is also K-contiguous.
        let rep_order = dot_operand_order(self.op_idx, rank, true);
        let tile = tri!(nvidia_mma_tile(
            prefix(&tile_shape, rank),
            self.k_width,
            prefix(&order, rank),
            prefix(&rep_order, rank)
        ));
        let k_dim = if is_a { rank - 1 } else { rank - 2 };
        let warp_order = mma.warp_order(rank);
        let warps = tri!(broadcasted_dot_operand_layout(
            mma.warps_per_cta,
            prefix(&warp_order, rank),
            k_dim,
            Label::Warp
        ));
        let (tile_dims, _) = labels(&tile, false, &[]);
        let warps = tri!(warps.transpose_outs(tile_dims.split_at(rank).0));
        let cta = tri!(tile.product(&warps));
        combine_cta_with_shape(&cta, shape)
    }
}
