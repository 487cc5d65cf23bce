//! `row_sum`: `out[r] = sum_c x[r * n + c]` over an M×N row-major f32 matrix, one warp per row.

use tessera::device::*;
use tessera::Ptr;

tessera::device_kernel! {
    /// `out[r] = x[r][0] + ... + x[r][n - 1]` for `r < m` (row-major, row stride `n`).
    ///
    /// Warp `w` of block `b` owns row `b * (block_dim.x / 32) + w`. Lane `l` adds columns
    /// `l, l + 32, l + 64, ...` (coalesced 32-bit loads), then the warp reduces the 32 partial
    /// sums with a butterfly tree `s += shfl.sync.bfly(s, 16, 8, 4, 2, 1)`; lane 0 stores the
    /// row sum. The adds are [`add_f32`] (`add.rn.f32`: canonical NaN results on the emulator
    /// too). `block_dim.x` must be a multiple of 32 (1-D blocks); warps past the last row
    /// return at once (the whole warp together, so no shuffle is left waiting).
    pub fn row_sum(x: Ptr<f32>, out: Ptr<f32>, m: u32, n: u32) => ROW_SUM {
        let rows_per_block = block_dim_x() / 32;
        let row = block_idx_x() as u64 * rows_per_block as u64 + (thread_idx_x() / 32) as u64;
        if row >= m as u64 {
            return;
        }
        let lane = lane_id();
        let row_start = x.offset((row * n as u64) as isize);
        let mut sum = 0.0f32;
        let mut col = lane;
        while col < n {
            sum = add_f32(sum, ld_global_v1(row_start.offset(col as isize), true, 0.0f32));
            col += 32;
        }
        let mut offset = 16;
        while offset > 0 {
            sum = add_f32(sum, shfl_bfly(FULL_MASK, sum, offset, SHFL_C_FULL));
            offset /= 2;
        }
        st_global_v1(out.offset(row as isize), lane == 0, sum);
    }
}
