//! AMD matrix-core layouts: `mfma` (CDNA, wavefronts of 64 lanes) and `wmma` (RDNA, 32 lanes)
//! accumulators and their dot operands (Triton `AMDMfmaEncodingAttr`, `AMDWmmaEncodingAttr`).
//!
//! mfma `M×N` accumulator (not transposed): each lane holds `height = 4` consecutive rows
//! (`id(4, register, M)`), lanes run along N then M (`id(N, lane, N) × id(64/N, lane, M)`), and
//! the `M·N/256` remaining row groups are registers. Transposed swaps the roles of M and N.
//! Then tiles per warp, warps along N, the rest of N, tiles and warps along M (an N-contiguous
//! order of tiles over the whole tensor, as the dot lowering expects).
//!
//! mfma operand (K contiguous): `k_width` registers along K, lanes along the non-K dimension
//! then K, further K tiles in registers; warps follow the accumulator's.
//!
//! wmma (16×16): version 1 gives each lane every other row (`register ↦ M 2, 4, 8`,
//! `lane 16 ↦ M 1`); versions 2 and 3 eight consecutive rows (`register ↦ M 1, 2, 4`,
//! `lane 16 ↦ M 8`). Operands: `k_width` registers along K, 16 lanes along the non-K dimension,
//! the other half-wave duplicating (v1) or continuing (v2, v3) along K.

use super::params::{
    bad, check_element_bitwidth, check_len, check_one_of, check_pow2_list, dim, prefix,
};
use super::shape::{
    broadcasted_dot_operand_layout, check_shape, combine_cta_with_shape, dot_operand_order,
    identity_standard_nd, matrix_order, standard, times_1d, times_identity, transpose_to,
    with_pow2_bases, Map1d,
};
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

/// The parameters of an AMD mfma accumulator layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmdMfma<'a> {
    /// 1 to 4 (3 = gfx942/CDNA3, 4 = gfx950/CDNA4); it does not change the layout.
    pub version: u32,
    /// `[M, N, K]`; M×N one of 32×32, 16×16, 64×4 (transposed), 4×64.
    pub instr_shape: &'a [u32],
    /// Whether the accumulator is transposed (each lane holds consecutive elements of a row instead of a column).
    pub transposed: bool,
    /// Warps along each tensor dimension.
    pub warps_per_cta: &'a [u32],
    /// Tiles of one warp per dimension (Triton's default: all 1).
    pub tiles_per_warp: &'a [u32],
    /// 32 by default; 64-bit accumulators hold one row per lane instead of four.
    pub element_bitwidth: u32,
}

const MFMA: &str = "amd_mfma";
const WMMA: &str = "amd_wmma";
const MFMA_WARP_SIZE: u32 = 64;
const WMMA_WARP_SIZE: u32 = 32;

/// All ones (the default `tiles_per_warp`).
pub const ONES: [u32; MAX_DIMS] = [1; MAX_DIMS];

impl<'a> AmdMfma<'a> {
    /// An mfma layout with Triton's defaults (one tile per warp, 32-bit elements).
    pub const fn new(
        version: u32,
        instr_shape: &'a [u32],
        transposed: bool,
        warps_per_cta: &'a [u32],
    ) -> Self {
        Self {
            version,
            instr_shape,
            transposed,
            warps_per_cta,
            tiles_per_warp: ONES.split_at(warps_per_cta.len()).0,
            element_bitwidth: 32,
        }
    }

    /// Checks the parameters against a tensor of rank `rank`.
    pub const fn check(&self, rank: usize) -> Result<(), LayoutError> {
        tri!(check_version_and_warps(
            MFMA,
            (self.version, 4),
            rank,
            self.warps_per_cta,
            [
                "but mfma versions are 1 to 4",
                "but an mfma layout needs a tensor of rank 2 or 3",
            ]
        ));
        tri!(check_len(MFMA, "tiles_per_warp", self.tiles_per_warp, rank));
        tri!(check_pow2_list(MFMA, "tiles_per_warp", self.tiles_per_warp));
        tri!(check_instr_shape(
            MFMA,
            self.instr_shape,
            "but mfma takes [M, N, K]"
        ));
        let (m, n) = (self.instr_shape[0], self.instr_shape[1]);
        let supported = (m == 32 && n == 32)
            || (m == 16 && n == 16)
            || (m == 64 && n == 4 && self.transposed)
            || (m == 4 && n == 64);
        if !supported {
            return Err(bad(
                MFMA,
                "instr_shape",
                Some(0),
                m,
                "but mfma M×N is 32×32, 16×16, 4×64 or (transposed) 64×4",
            ));
        }
        check_element_bitwidth(MFMA, self.element_bitwidth)
    }

    /// The layout of a tensor of `shape` (Triton `AMDMfmaEncodingAttr::toLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        let rank = shape.len();
        tri!(self.check(rank));
        let has_batch = rank == 3;
        let m_index = has_batch as usize;
        let n_index = 1 + has_batch as usize;
        let dim_m = dim(rank - 2);
        let dim_n = dim(rank - 1);
        let (m_dim, n_dim) = (self.instr_shape[0], self.instr_shape[1]);
        let height = if self.element_bitwidth == 64 { 1 } else { 4 };
        let tiles = (m_dim * n_dim) / (MFMA_WARP_SIZE * height);

        // The tile of one instruction: `height` rows per lane, lanes along N then M.
        let (along_regs, first_lanes, lanes_first, lanes_second) = if !self.transposed {
            (dim_m, n_dim, dim_n, dim_m)
        } else {
            (dim_n, m_dim, dim_m, dim_n)
        };
        let mut tile = tri!(LinearLayout::identity_1d(
            height,
            Label::Register,
            along_regs
        ));
        tile = tri!(times_wave_lanes(
            &tile,
            first_lanes,
            lanes_first,
            lanes_second
        ));
        tile = tri!(times_identity(&tile, tiles, Label::Register, along_regs));
        tile = tri!(tile.transpose_outs(&[dim_n, dim_m]));

        // N-contiguous tiles: tiles per warp and warps along N, the rest of N, then M.
        let tiles_m = self.tiles_per_warp[m_index];
        let tiles_n = self.tiles_per_warp[n_index];
        let warps_m = self.warps_per_cta[m_index];
        let warps_n = self.warps_per_cta[n_index];
        tile = tri!(times_identity(&tile, tiles_n, Label::Register, dim_n));
        tile = tri!(times_identity(&tile, warps_n, Label::Warp, dim_n));
        tile = tri!(times_identity(
            &tile,
            (shape[n_index] as u64 / (n_dim as u64 * warps_n as u64 * tiles_n as u64)) as u32,
            Label::Register,
            dim_n
        ));
        tile = tri!(times_identity(&tile, tiles_m, Label::Register, dim_m));
        tile = tri!(times_identity(&tile, warps_m, Label::Warp, dim_m));
        tile = tri!(with_batch(tile, rank));
        if has_batch {
            tile = tri!(times_identity(
                &tile,
                self.warps_per_cta[0],
                Label::Warp,
                dim(0)
            ));
        }
        combine_cta_with_shape(&tile, shape)
    }

    /// Triton `mfmaDotToLinearLayout`: operand `op_idx` with `k_width` elements per lane along K.
    pub const fn dot_operand(
        &self,
        op_idx: u32,
        k_width: u32,
        shape: &[u32],
    ) -> Result<LinearLayout, LayoutError> {
        let rank = shape.len();
        tri!(self.check(rank));
        let non_k_index = if op_idx == 0 { rank - 2 } else { rank - 1 };
        let k_index = if op_idx == 0 { rank - 1 } else { rank - 2 };
        let tiles_non_k = self.tiles_per_warp[non_k_index];
        let (m_dim, n_dim) = (self.instr_shape[0], self.instr_shape[1]);
        let non_k_dim = if op_idx == 0 { m_dim } else { n_dim };
        let k_size = shape[k_index];
        let order = dot_operand_order(op_idx, rank, true);
        let (dim_k, dim_non_k) = operand_dims(&order);
        let warp_order = matrix_order(rank, true);

        let mut tile = tri!(LinearLayout::identity_1d(k_width, Label::Register, dim_k));
        tile = tri!(times_wave_lanes(&tile, non_k_dim, dim_non_k, dim_k));
        let mut k_tile_size = MFMA_WARP_SIZE / non_k_dim * k_width;
        // 4×64 and 64×4: the 64-wide operand repeats the tile 16 times along K.
        if (m_dim == 64 && n_dim == 4 && op_idx == 0) || (m_dim == 4 && n_dim == 64 && op_idx == 1)
        {
            tile = tri!(times_identity(&tile, 16, Label::Register, dim_k));
            k_tile_size *= 16;
        }
        if k_size > k_tile_size {
            tile = tri!(times_identity(
                &tile,
                k_size / k_tile_size,
                Label::Register,
                dim_k
            ));
        }
        tile = tri!(times_identity(
            &tile,
            tiles_non_k,
            Label::Register,
            dim_non_k
        ));
        tile = tri!(tile.transpose_outs(&[dim_k, dim_non_k]));
        tile = tri!(with_batch(tile, rank));
        let warps = tri!(identity_standard_nd(
            Label::Warp,
            self.warps_per_cta,
            prefix(&warp_order, rank)
        ));
        let cta = tri!(tile.product(&warps));
        let fitted = tri!(combine_cta_with_shape(&cta, shape));
        standard(&fitted, rank)
    }
}

family_params! {
    /// The parameters of an AMD wmma accumulator layout (16×16 tiles, 32 lanes).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct AmdWmma<'a> {
        /// 1 (RDNA3), 2 (RDNA4) or 3.
        pub version: u32,
        /// Whether the accumulator is transposed (lanes along rows instead of columns).
        pub transposed: bool,
        /// Warps along each tensor dimension.
        pub warps_per_cta: &'a [u32],
        /// `[M, N, K]`, M = N = 16.
        pub instr_shape: &'a [u32],
    }
}

impl<'a> AmdWmma<'a> {
    /// Checks the parameters against a tensor of rank `rank`.
    pub const fn check(&self, rank: usize) -> Result<(), LayoutError> {
        tri!(check_version_and_warps(
            WMMA,
            (self.version, 3),
            rank,
            self.warps_per_cta,
            [
                "but wmma versions are 1 to 3",
                "but a wmma layout needs a tensor of rank 2 or 3",
            ]
        ));
        tri!(check_instr_shape(
            WMMA,
            self.instr_shape,
            "but wmma takes [M, N, K]"
        ));
        let mut d = 0;
        while d < 2 {
            tri!(check_one_of(
                WMMA,
                "instr_shape",
                Some(d as u8),
                self.instr_shape[d],
                &[16],
                "but wmma tiles are 16×16"
            ));
            d += 1;
        }
        Ok(())
    }

    /// The tile rows `M` must be 1 or at least 16, and likewise N (Triton asserts).
    const fn check_shape_fits(shape: &[u32]) -> Result<(), LayoutError> {
        let rank = shape.len();
        let mut d = rank - 2;
        while d < rank {
            if shape[d] != 1 && shape[d] < 16 {
                return Err(bad(
                    WMMA,
                    "shape",
                    Some(d as u8),
                    shape[d],
                    "but a wmma tensor dimension must be 1 or at least 16",
                ));
            }
            d += 1;
        }
        Ok(())
    }

    /// The layout of a tensor of `shape` (Triton `AMDWmmaEncodingAttr::toLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        let rank = shape.len();
        tri!(self.check(rank));
        tri!(Self::check_shape_fits(shape));
        // Bases are written (minor, major) with minor = N unless transposed.
        let thread_order = matrix_order(rank, !self.transposed);
        let minor = dim(thread_order[0] as usize);
        let major = dim(thread_order[1] as usize);
        let mut tile = tri!(LinearLayout::empty().with_out_dim(minor, 16));
        tile = tri!(tile.with_out_dim(major, 16));
        tile = tri!(tile.with_in_dim(Label::Register));
        tile = tri!(tile.with_in_dim(Label::Lane));
        let (registers, lane16): ([u32; 3], u32) = if self.version == 1 {
            ([2, 4, 8], 1)
        } else {
            ([1, 2, 4], 8)
        };
        let mut r = 0;
        while r < 3 {
            tile = tri!(tile.with_basis(Label::Register, &[0, registers[r]]));
            r += 1;
        }
        tile = tri!(with_pow2_bases(tile, Label::Lane, 16, [1, 0]));
        tile = tri!(tile.with_basis(Label::Lane, &[0, lane16]));
        tile = tri!(with_batch(tile, rank));
        let warp_order = matrix_order(rank, true);
        let warps = tri!(identity_standard_nd(
            Label::Warp,
            self.warps_per_cta,
            prefix(&warp_order, rank)
        ));
        let rep_order = matrix_order(rank, true);
        let rep = prefix(&rep_order, rank);
        let tile = tri!(transpose_to(&tile, rep));
        let warps = tri!(transpose_to(&warps, rep));
        let cta = tri!(tile.product(&warps));
        combine_cta_with_shape(&cta, shape)
    }

    /// Triton `wmmaDotOperandToLinearLayout`: operand `op_idx` with `k_width` elements per lane.
    pub const fn dot_operand(
        &self,
        op_idx: u32,
        k_width: u32,
        shape: &[u32],
    ) -> Result<LinearLayout, LayoutError> {
        let rank = shape.len();
        tri!(self.check(rank));
        let order = dot_operand_order(op_idx, rank, true);
        let (dim_k, dim_non_k) = operand_dims(&order);
        let k_dim = self.instr_shape[2];
        let non_k_dim = if op_idx == 0 {
            self.instr_shape[0]
        } else {
            self.instr_shape[1]
        };
        let depth = WMMA_WARP_SIZE / non_k_dim;
        let mut tile = tri!(LinearLayout::identity_1d(k_width, Label::Register, dim_k));
        tile = tri!(times_identity(&tile, non_k_dim, Label::Lane, dim_non_k));
        // The other half-wave: duplicates (v1) or continues along K (v2, v3).
        let half_wave = if self.version == 1 {
            Map1d::Zeros
        } else {
            Map1d::Identity
        };
        tile = tri!(times_1d(&tile, half_wave, depth, Label::Lane, dim_k));
        tile = tri!(times_identity(
            &tile,
            k_dim / (depth * k_width),
            Label::Register,
            dim_k
        ));
        tile = tri!(with_batch(tile, rank));
        let warp_order = matrix_order(rank, true);
        let k_index = if op_idx == 0 { rank - 1 } else { rank - 2 };
        let warps = tri!(broadcasted_dot_operand_layout(
            self.warps_per_cta,
            prefix(&warp_order, rank),
            k_index,
            Label::Warp
        ));
        let rep = prefix(&order, rank);
        let tile = tri!(transpose_to(&tile, rep));
        let warps = tri!(transpose_to(&warps, rep));
        let cta = tri!(tile.product(&warps));
        combine_cta_with_shape(&cta, shape)
    }
}

/// `tile` times the `MFMA_WARP_SIZE` lanes of a wave: the first `first` lanes along `first_dim`,
/// the rest along `rest_dim`.
const fn times_wave_lanes(
    tile: &LinearLayout,
    first: u32,
    first_dim: Label,
    rest_dim: Label,
) -> Result<LinearLayout, LayoutError> {
    let tile = tri!(times_identity(tile, first, Label::Lane, first_dim));
    times_identity(&tile, MFMA_WARP_SIZE / first, Label::Lane, rest_dim)
}

/// The output dimensions K and non-K of a dot operand whose dimensions, most minor first, are
/// `order` ([`dot_operand_order`]).
const fn operand_dims(order: &[u32; MAX_DIMS]) -> (Label, Label) {
    (dim(order[0] as usize), dim(order[1] as usize))
}

/// `tile` with the batch dimension `dim0` of a rank-3 tensor (a register and a lane input of
/// size 1 there: one instruction covers one batch element); unchanged for rank 2.
const fn with_batch(tile: LinearLayout, rank: usize) -> Result<LinearLayout, LayoutError> {
    if rank != 3 {
        return Ok(tile);
    }
    let tile = tri!(times_identity(&tile, 1, Label::Register, dim(0)));
    times_identity(&tile, 1, Label::Lane, dim(0))
}

/// The first checks of both AMD families: `version.0` in `1..=version.1`, a tensor of rank 2 or
/// 3, one power-of-two warp count per dimension; `reasons` words the version and rank errors.
const fn check_version_and_warps(
    family: &'static str,
    version: (u32, u32),
    rank: usize,
    warps_per_cta: &[u32],
    reasons: [&'static str; 2],
) -> Result<(), LayoutError> {
    if version.0 < 1 || version.0 > version.1 {
        return Err(bad(family, "version", None, version.0, reasons[0]));
    }
    if rank != 2 && rank != 3 {
        return Err(bad(family, "shape.len()", None, rank as u32, reasons[1]));
    }
    tri!(check_len(family, "warps_per_cta", warps_per_cta, rank));
    check_pow2_list(family, "warps_per_cta", warps_per_cta)
}

/// `instr_shape` is a power-of-two `[M, N, K]` (`reason` words a wrong length).
const fn check_instr_shape(
    family: &'static str,
    instr_shape: &[u32],
    reason: &'static str,
) -> Result<(), LayoutError> {
    if instr_shape.len() != 3 {
        return Err(bad(
            family,
            "instr_shape.len()",
            None,
            instr_shape.len() as u32,
            reason,
        ));
    }
    check_pow2_list(family, "instr_shape", instr_shape)
}
