//! Blocked layouts (Triton `BlockedEncodingAttr`): each thread holds a `size_per_thread` block,
//! threads of a warp tile `threads_per_warp` blocks, warps tile `warps_per_cta` of those, each
//! level walking the dimensions in `order` (most minor first).
//!
//! As a linear layout (§4.2 of the paper, Figure 1):
//! `L = idND(register, size_per_thread) × idND(lane, threads_per_warp) × idND(warp,
//! warps_per_cta)`, every factor the identity onto its tile with bits assigned in `order`, then
//! fitted to the tensor shape ([`combine_cta_with_shape`]).

use super::params::{check_len, check_order, check_pow2_list};
use super::shape::{
    broadcasted_dot_operand_layout, check_shape, combine_cta_with_shape, identity_standard_nd,
    transpose_to,
};
use crate::{Label, LayoutError, LinearLayout, MAX_DIMS};

family_params! {
    /// The parameters of a blocked layout (one entry per tensor dimension; `order[0]` fastest).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Blocked<'a> {
        /// Consecutive elements each thread holds, per dimension.
        pub size_per_thread: &'a [u32],
        /// Threads of a warp along each dimension (their product is the warp size).
        pub threads_per_warp: &'a [u32],
        /// Warps along each dimension.
        pub warps_per_cta: &'a [u32],
        /// The dimensions from fastest to slowest varying.
        pub order: &'a [u32],
    }
}

const FAMILY: &str = "blocked";

impl<'a> Blocked<'a> {
    /// Checks the parameters against a tensor of rank `rank`.
    pub const fn check(&self, rank: usize) -> Result<(), LayoutError> {
        tri!(check_len(
            FAMILY,
            "size_per_thread",
            self.size_per_thread,
            rank
        ));
        tri!(check_len(
            FAMILY,
            "threads_per_warp",
            self.threads_per_warp,
            rank
        ));
        tri!(check_len(FAMILY, "warps_per_cta", self.warps_per_cta, rank));
        tri!(check_pow2_list(
            FAMILY,
            "size_per_thread",
            self.size_per_thread
        ));
        tri!(check_pow2_list(
            FAMILY,
            "threads_per_warp",
            self.threads_per_warp
        ));
        tri!(check_pow2_list(FAMILY, "warps_per_cta", self.warps_per_cta));
        check_order(FAMILY, "order", self.order, rank)
    }

    /// The CTA tile before fitting to a shape: `register × lane × warp`, outputs in `order`.
    pub const fn cta_layout(&self) -> Result<LinearLayout, LayoutError> {
        tri!(self.check(self.order.len()));
        let regs = tri!(identity_standard_nd(
            Label::Register,
            self.size_per_thread,
            self.order
        ));
        let lanes = tri!(identity_standard_nd(
            Label::Lane,
            self.threads_per_warp,
            self.order
        ));
        let warps = tri!(identity_standard_nd(
            Label::Warp,
            self.warps_per_cta,
            self.order
        ));
        let regs_lanes = tri!(regs.product(&lanes));
        regs_lanes.product(&warps)
    }

    /// The layout of a tensor of `shape` (Triton `BlockedEncodingAttr::toLinearLayout`).
    pub const fn to_linear_layout(&self, shape: &[u32]) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        tri!(self.check(shape.len()));
        let cta = tri!(self.cta_layout());
        combine_cta_with_shape(&cta, shape)
    }
}

impl Blocked<'_> {
    /// Operand `op_idx` of an FMA dot whose accumulator is this blocked layout (Triton
    /// `fmaDotToLinearLayout`): each thread holds its `size_per_thread` block with the whole of
    /// K (`shape[k]` registers along K), lanes and warps as in the accumulator but broadcast
    /// along K; repetitions in `order`.
    pub const fn dot_operand(
        &self,
        op_idx: u32,
        shape: &[u32],
    ) -> Result<LinearLayout, LayoutError> {
        tri!(check_shape(shape));
        let rank = shape.len();
        tri!(self.check(rank));
        if rank < 2 {
            return Err(super::params::bad(
                FAMILY,
                "shape.len()",
                None,
                rank as u32,
                "but a dot operand needs a tensor of rank 2 or more",
            ));
        }
        let k_dim = if op_idx == 0 { rank - 1 } else { rank - 2 };
        let mut thread_size = [1u32; MAX_DIMS];
        let mut d = 0;
        while d < rank {
            thread_size[d] = self.size_per_thread[d];
            d += 1;
        }
        thread_size[k_dim] = shape[k_dim];
        let regs = tri!(identity_standard_nd(
            Label::Register,
            thread_size.split_at(rank).0,
            self.order
        ));
        let lanes = tri!(broadcasted_dot_operand_layout(
            self.threads_per_warp,
            self.order,
            k_dim,
            Label::Lane
        ));
        let warps = tri!(broadcasted_dot_operand_layout(
            self.warps_per_cta,
            self.order,
            k_dim,
            Label::Warp
        ));
        let regs = tri!(transpose_to(&regs, self.order));
        let lanes = tri!(transpose_to(&lanes, self.order));
        let warps = tri!(transpose_to(&warps, self.order));
        let regs_lanes = tri!(regs.product(&lanes));
        let cta = tri!(regs_lanes.product(&warps));
        combine_cta_with_shape(&cta, shape)
    }
}

/// `Blocked::new(..).to_linear_layout(shape)`.
pub const fn blocked(
    size_per_thread: &[u32],
    threads_per_warp: &[u32],
    warps_per_cta: &[u32],
    order: &[u32],
    shape: &[u32],
) -> Result<LinearLayout, LayoutError> {
    Blocked::new(size_per_thread, threads_per_warp, warps_per_cta, order).to_linear_layout(shape)
}
