//! NVIDIA tensor-core layouts: the accumulator of `mma.sync` (Ampere, version 2) and `wgmma`
//! (Hopper, version 3) (Triton `NvidiaMmaEncodingAttr`). The register operands of a dot
//! ([`super::dot_operand`]) are built from the same tile.
//!
//! Both are built from one tile (Triton `nvidiaMmaTile`), for a tile of `m × n` elements whose
//! inner (contiguous) dimension is `n`, `k_width` consecutive elements per thread:
//! `id(k_width, register, inner) × id(4, lane, inner) × id(8, lane, outer) ×
//! id(m/8, register, outer) × id(n/(4·k_width), register, inner)` — a quad of 4 lanes covers a
//! row, 8 quads cover 8 rows. The accumulator uses `k_width = 2` on its `[16, 8]` (v2) or
//! `[16, N]` (v3) tile; operand A a `[16, 8·k_width]` tile, operand B (v2 only) `[8·k_width, 8]`
//! with K contiguous. Warps tile the accumulator (row-major for v2, column-major for v3's
//! warpgroups) and are broadcast along K for the operands.

use super::params::{bad, check_len, check_one_of, check_pow2_list, dim, prefix};
use super::shape::{
    check_shape, combine_cta_with_shape, identity_standard_nd, matrix_order, times_identity,
};
use crate::algebra::labels;
use crate::error::incompatible;
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

family_params! {
    /// The parameters of an NVIDIA mma accumulator layout.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct NvidiaMma<'a> {
        /// 2 (Ampere/Turing `mma.sync`) or 3 (Hopper `wgmma`).
        pub version_major: u32,
        /// The minor version (does not change the layout).
        pub version_minor: u32,
        /// Warps along each tensor dimension.
        pub warps_per_cta: &'a [u32],
        /// `[16, 8]` for v2 (`[1, 16, 8]` with a batch dimension); `[16, N, 16]` for v3.
        pub instr_shape: &'a [u32],
    }
}

const FAMILY: &str = "nvidia_mma";

/// Triton `nvidiaMmaTile`: the tile of `tile_shape` whose most minor dimension is `order[0]`,
/// `k_width` elements per thread along it, outputs listed in `rep_order`.
pub const fn nvidia_mma_tile(
    tile_shape: &[u32],
    k_width: u32,
    order: &[u32],
    rep_order: &[u32],
) -> Result<LinearLayout, LayoutError> {
    let rank = rep_order.len();
    let ones = [1u32; MAX_DIMS];
    let mut tile = tri!(identity_standard_nd(
        Label::Register,
        prefix(&ones, rank),
        rep_order
    ));
    let inner = dim(order[0] as usize);
    let outer = dim(order[1] as usize);
    let m = tile_shape[order[1] as usize];
    let n = tile_shape[order[0] as usize];
    if !m.is_multiple_of(8) || !n.is_multiple_of(k_width * 4) {
        return Err(incompatible(
            "nvidia mma tile: the tile must have a multiple of 8 rows and of 4·k_width columns",
        ));
    }
    tile = tri!(times_identity(&tile, k_width, Label::Register, inner));
    tile = tri!(times_identity(&tile, 4, Label::Lane, inner));
    tile = tri!(times_identity(&tile, 8, Label::Lane, outer));
    tile = tri!(times_identity(&tile, m / 8, Label::Register, outer));
    times_identity(&tile, n / (k_width * 4), Label::Register, inner)
}

impl<'a> NvidiaMma<'a> {
    /// Whether this is an mma v2 layout (`mma.sync`, Ampere and later).
    pub const fn is_ampere(&self) -> bool {
        self.version_major == 2
    }

    /// Whether this is an mma v3 layout (`wgmma`, Hopper).
    pub const fn is_hopper(&self) -> bool {
        self.version_major == 3
    }

    /// Checks the parameters against a tensor of rank `rank`.
    pub const fn check(&self, rank: usize) -> Result<(), LayoutError> {
        if !self.is_ampere() && !self.is_hopper() {
            return Err(bad(
                FAMILY,
                "version",
                Some(0),
                self.version_major,
                "but only versions 2 (mma.sync) and 3 (wgmma) are supported",
            ));
        }
        if rank < 2 {
            return Err(bad(
                FAMILY,
                "shape.len()",
                None,
                rank as u32,
                "but an mma layout needs a tensor of rank 2 or more",
            ));
        }
        tri!(check_len(FAMILY, "warps_per_cta", self.warps_per_cta, rank));
        tri!(check_pow2_list(FAMILY, "warps_per_cta", self.warps_per_cta));
        tri!(check_pow2_list(FAMILY, "instr_shape", self.instr_shape));
        if self.is_ampere() {
            tri!(check_len(FAMILY, "instr_shape", self.instr_shape, rank));
            let tile = [
                (rank - 2, 16, "but mma.sync (v2) tiles have 16 rows"),
                (rank - 1, 8, "but mma.sync (v2) tiles have 8 columns"),
            ];
            let mut t = 0;
            while t < tile.len() {
                let (d, size, reason) = tile[t];
                let value = self.instr_shape[d];
                tri!(check_one_of(
                    FAMILY,
                    "instr_shape",
                    Some(d as u8),
                    value,
                    &[size],
                    reason
                ));
                t += 1;
            }
        } else {
            if rank != 2 {
                return Err(bad(
                    FAMILY,
                    "shape.len()",
                    None,
                    rank as u32,
                    "but a wgmma (v3) layout needs a tensor of rank 2",
                ));
            }
            if self.instr_shape.len() != 3 {
                return Err(bad(
                    FAMILY,
                    "instr_shape.len()",
                    None,
                    self.instr_shape.len() as u32,
                    "but wgmma (v3) takes [M, N, K]",
                ));
            }
            tri!(check_one_of(
                FAMILY,
                "instr_shape",
                Some(0),
                self.instr_shape[0],
                &[16],
                "but wgmma (v3) tiles have M = 16 per warp"
            ));
            if self.instr_shape[1] < 8 || self.instr_shape[1] > 256 {
                return Err(bad(
                    FAMILY,
                    "instr_shape",
                    Some(1),
                    self.instr_shape[1],
                    "but wgmma (v3) has N from 8 to 256",
                ));
            }
        }
        Ok(())
    }

    /// The `m × n` accumulator tile of one warp (the instruction shape's M and N).
    const fn tile_shape(&self, rank: usize) -> [u32; MAX_DIMS] {
        let mut tile = [1u32; MAX_DIMS];
        if self.is_ampere() {
            let mut d = 0;
            while d < rank {
                tile[d] = self.instr_shape[d];
                d += 1;
            }
        } else {
            tile[0] = self.instr_shape[0];
            tile[1] = self.instr_shape[1];
        }
        tile
    }

    /// The warp order: row-major for v2, column-major (warpgroups of 4 along M) for v3.
    pub(crate) const fn warp_order(&self, rank: usize) -> [u32; MAX_DIMS] {
        matrix_order(rank, !self.is_hopper())
    }

    /// The layout of a tensor of `shape` (Triton `NvidiaMmaEncodingAttr::toLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        let rank = shape.len();
        tri!(self.check(rank));
        let tile_shape = self.tile_shape(rank);
        let order = matrix_order(rank, true);
        let rep_order = matrix_order(rank, true);
        let tile = tri!(nvidia_mma_tile(
            prefix(&tile_shape, rank),
            2,
            prefix(&order, rank),
            prefix(&rep_order, rank)
        ));
        let warp_order = self.warp_order(rank);
        let warps = tri!(identity_standard_nd(
            Label::Warp,
            self.warps_per_cta,
            prefix(&warp_order, rank)
        ));
        let (tile_dims, _) = labels(&tile, false, &[]);
        let warps = tri!(warps.transpose_outs(tile_dims.split_at(rank).0));
        let cta = tri!(tile.product(&warps));
        combine_cta_with_shape(&cta, shape)
    }
}
