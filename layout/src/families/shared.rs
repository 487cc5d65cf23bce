//! Shared-memory (memory) layouts: maps from element `offset` to tensor coordinates.
//!
//! - [`SwizzledShared`] (Triton `SwizzledSharedEncodingAttr`, Definition 4.11 of the paper): on
//!   the two most minor dimensions (`order[0]` = columns, `order[1]` = rows), offset bit `c` of
//!   a row is column `2^c`, and row bit `r` is row `2^r` XOR-ed with column
//!   `vec · ((2^r / per_phase) mod max_phase) mod cols` — the matrix `[[I, C], [0, I]]` of §4.3.
//!   Further dimensions follow in `order`, unswizzled.
//! - [`NvmmaShared`] (Triton `NVMMASharedEncodingAttr`): the layout TMA and `wgmma` use. With a
//!   0-byte swizzle it is row-major over TMA boxes (each dimension at most 256). Otherwise a core
//!   matrix of 8 rows × `swizzle_bytes` (XOR swizzle with `vec = 128 / bits`,
//!   `per_phase = 128 / swizzle`, `max_phase = swizzle / 16`) is repeated over the box (outer
//!   dimensions collapsed into rows), reshaped to the box, transposed if K is the outer
//!   dimension, and repeated over the tensor.

use super::params::{
    bad, check_element_bitwidth, check_one_of, check_order, check_pow2, dim, prefix,
};
use super::shape::{
    check_shape, combine_cta_with_shape, ensure_layout_not_smaller_than, permute_out_coords,
    reshape_row_major, times_identity, with_pow2_bases,
};
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

const SWIZZLED: &str = "swizzled_shared";
const NVMMA: &str = "nvmma_shared";

family_params! {
    /// The parameters of a swizzled shared layout.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct SwizzledShared<'a> {
        /// Consecutive elements of a row that move together (the swizzle's unit).
        pub vec: u32,
        /// Consecutive rows that share one phase (one XOR pattern).
        pub per_phase: u32,
        /// The number of distinct phases.
        pub max_phase: u32,
        /// Dimensions from most minor (`order[0]`, the columns) to most major.
        pub order: &'a [u32],
    }
}

impl<'a> SwizzledShared<'a> {
    /// Checks the parameters against a tensor of rank `rank`.
    pub const fn check(&self, rank: usize) -> Result<(), LayoutError> {
        tri!(check_pow2(SWIZZLED, "vec", None, self.vec));
        tri!(check_pow2(SWIZZLED, "per_phase", None, self.per_phase));
        tri!(check_pow2(SWIZZLED, "max_phase", None, self.max_phase));
        check_order(SWIZZLED, "order", self.order, rank)
    }

    /// The swizzled column of row `row` (a power of two): `vec · ((row / per_phase) mod
    /// max_phase) mod cols`.
    pub const fn row_swizzle(&self, row: u32, cols: u32) -> u32 {
        // Powers of two: the product is a multiple of `cols` (so 0) when it overflows `u32`.
        ((self.vec as u64 * ((row / self.per_phase) % self.max_phase) as u64) % cols as u64) as u32
    }

    /// The layout of a tensor of `shape` (Triton `swizzledSharedToLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        let rank = shape.len();
        tri!(self.check(rank));
        if rank == 1 {
            let layout = tri!(LinearLayout::identity_1d(shape[0], Label::Offset, dim(0)));
            return combine_cta_with_shape(&layout, shape);
        }
        let col = self.order[0] as usize;
        let row = self.order[1] as usize;
        let (num_cols, num_rows) = (shape[col], shape[row]);
        let mut layout = tri!(LinearLayout::empty().with_out_dim(dim(row), num_rows));
        layout = tri!(layout.with_out_dim(dim(col), num_cols));
        layout = tri!(layout.with_in_dim(Label::Offset));
        layout = tri!(with_pow2_bases(layout, Label::Offset, num_cols, [0, 1]));
        let mut r = 1;
        while r < num_rows {
            layout = tri!(layout.with_basis(Label::Offset, &[r, self.row_swizzle(r, num_cols)]));
            r *= 2;
        }
        let mut i = 2;
        while i < rank {
            let d = self.order[i] as usize;
            layout = tri!(times_identity(&layout, shape[d], Label::Offset, dim(d)));
            i += 1;
        }
        combine_cta_with_shape(&layout, shape)
    }
}

/// The parameters of an NVMMA shared layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvmmaShared {
    /// 0, 32, 64 or 128.
    pub swizzle_byte_width: u32,
    /// Bits per element (8, 16 or 32).
    pub element_bitwidth: u32,
    /// The contiguous dimension is the first (K-major operand B) instead of the last.
    pub transposed: bool,
}

impl NvmmaShared {
    /// The parameters, in the order of the fields.
    pub const fn new(swizzle_byte_width: u32, element_bitwidth: u32, transposed: bool) -> Self {
        Self {
            swizzle_byte_width,
            element_bitwidth,
            transposed,
        }
    }

    /// Checks the parameters.
    pub const fn check(&self) -> Result<(), LayoutError> {
        tri!(check_one_of(
            NVMMA,
            "swizzle_byte_width",
            None,
            self.swizzle_byte_width,
            &[0, 32, 64, 128],
            "but it must be 0, 32, 64 or 128"
        ));
        check_element_bitwidth(NVMMA, self.element_bitwidth)
    }

    /// Elements of a swizzle unit (16 bytes): `128 / bits`, or 1 without swizzling.
    pub const fn vec(&self) -> u32 {
        if self.swizzle_byte_width == 0 {
            1
        } else {
            128 / self.element_bitwidth
        }
    }

    /// Rows per phase: `128 / swizzle`, or 1 without swizzling.
    pub const fn per_phase(&self) -> u32 {
        match 128u32.checked_div(self.swizzle_byte_width) {
            Some(rows) => rows,
            None => 1,
        }
    }

    /// Phases: `swizzle / 16`, or 1 without swizzling.
    pub const fn max_phase(&self) -> u32 {
        if self.swizzle_byte_width == 0 {
            1
        } else {
            self.swizzle_byte_width / 16
        }
    }

    /// The TMA box (Triton `getTMABlockShape`): every dimension at most 256, the contiguous one
    /// exactly `swizzle_bytes` wide when swizzling.
    pub const fn tma_block_shape(&self, shape: &[u32]) -> Result<[u32; MAX_DIMS], LayoutError> {
        let rank = shape.len();
        let mut block = [1u32; MAX_DIMS];
        let mut d = 0;
        while d < rank {
            block[d] = if shape[d] < 256 { shape[d] } else { 256 };
            d += 1;
        }
        if self.swizzle_byte_width != 0 {
            let contig = if self.transposed { 0 } else { rank - 1 };
            let width = 8 * self.swizzle_byte_width / self.element_bitwidth;
            if block[contig] < width {
                return Err(bad(
                    NVMMA,
                    "shape",
                    Some(contig as u8),
                    shape[contig],
                    "which is narrower than the swizzle width (Triton: block shape too small)",
                ));
            }
            block[contig] = width;
        }
        Ok(block)
    }

    /// The core matrix: 8 rows of `max(16, swizzle)` bytes, row `r` XOR-swizzled by
    /// `vec · ((r / per_phase) mod max_phase)` (Triton `getCoreMatrixLinearLayout`).
    pub const fn core_matrix(&self) -> Result<LinearLayout, LayoutError> {
        let width = if self.swizzle_byte_width > 16 {
            self.swizzle_byte_width
        } else {
            16
        };
        let tile_cols = 8 * width / self.element_bitwidth;
        let mut layout = tri!(LinearLayout::empty().with_out_dim(dim(0), 8));
        layout = tri!(layout.with_out_dim(dim(1), tile_cols));
        layout = tri!(layout.with_in_dim(Label::Offset));
        let mut c = 1;
        while c < tile_cols {
            layout = tri!(layout.with_basis(Label::Offset, &[0, c]));
            c *= 2;
        }
        let mut r = 1;
        while r < 8 {
            let swizzle = self.vec() * ((r / self.per_phase()) % self.max_phase());
            layout = tri!(layout.with_basis(Label::Offset, &[r, swizzle]));
            r *= 2;
        }
        Ok(layout)
    }

    /// The layout of a tensor of `shape` (Triton `nvmmaSharedToLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        tri!(self.check());
        let rank = shape.len();
        let tma = tri!(self.tma_block_shape(shape));
        if self.swizzle_byte_width == 0 {
            // Row-major over the box, then repeated over the tensor.
            let mut layout = tri!(LinearLayout::identity_1d(
                tma[rank - 1],
                Label::Offset,
                dim(rank - 1)
            ));
            let mut d = rank - 1;
            while d > 0 {
                d -= 1;
                layout = tri!(times_identity(&layout, tma[d], Label::Offset, dim(d)));
            }
            let layout = tri!(ensure_layout_not_smaller_than(&layout, shape));
            return combine_cta_with_shape(&layout, shape);
        }
        if rank < 2 {
            return Err(bad(
                NVMMA,
                "shape.len()",
                None,
                rank as u32,
                "but a swizzled NVMMA layout needs a tensor of rank 2 or more",
            ));
        }
        // Collapse the outer dimensions of the box into rows.
        let mut collapsed = [1u32, tma[rank - 1], 1, 1, 1, 1];
        let mut d = 0;
        while d + 1 < rank {
            collapsed[0] = match collapsed[0].checked_mul(tma[d]) {
                Some(rows) => rows,
                None => {
                    return Err(bad(
                        NVMMA,
                        "shape",
                        Some(d as u8),
                        shape[d],
                        "which makes the TMA box more than 2^32 rows",
                    ))
                }
            };
            d += 1;
        }
        if self.transposed {
            collapsed.swap(0, 1);
        }
        let tile = tri!(self.core_matrix());
        let tile_rows = tile.out_size(dim(0));
        let tile_cols = tile.out_size(dim(1));
        if collapsed[1] < tile_cols || collapsed[0] < tile_rows {
            return Err(bad(
                NVMMA,
                "shape",
                None,
                collapsed[0].saturating_mul(collapsed[1]),
                "elements per TMA box, which do not cover one 8-row core matrix (Triton: illegal shared layout)",
            ));
        }
        let layout = tri!(ensure_layout_not_smaller_than(&tile, prefix(&collapsed, 2)));
        // Reshape to the (pre-transposition) box, then move the contiguous dimension first.
        let mut box_shape = tma;
        if self.transposed {
            let first = box_shape[0];
            let mut d = 0;
            while d + 1 < rank {
                box_shape[d] = box_shape[d + 1];
                d += 1;
            }
            box_shape[rank - 1] = first;
        }
        let mut layout = tri!(reshape_row_major(&layout, prefix(&box_shape, rank)));
        if self.transposed {
            let mut order = [0u32; MAX_DIMS];
            order[0] = (rank - 1) as u32;
            let mut d = 1;
            while d < rank {
                order[d] = (d - 1) as u32;
                d += 1;
            }
            layout = tri!(permute_out_coords(&layout, prefix(&order, rank)));
        }
        let layout = tri!(ensure_layout_not_smaller_than(&layout, shape));
        combine_cta_with_shape(&layout, shape)
    }
}
