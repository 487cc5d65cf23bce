//! `copy`: `out[i] = x[i]` for `i < n`, f32 (the bandwidth baseline of the benchmarks).

use tessera::device::*;
use tessera::Ptr;

/// Elements per thread: one 128-bit vector.
pub const COPY_ELEMENTS_PER_THREAD: u32 = 4;

tessera::device_kernel! {
    /// `out[i] = x[i]` for `i < n`: thread `g` copies elements `4g .. 4g + 4` with one
    /// `ld.global.v4.b32` / `st.global.v4.b32` pair, the last partial vector with predicated
    /// 32-bit accesses. Launch with `grid.x * block.x * 4 >= n`; `x`, `out` 16-byte aligned.
    pub fn copy(x: Ptr<f32>, out: Ptr<f32>, n: u32) => COPY {
        let first = (block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64)
            * COPY_ELEMENTS_PER_THREAD as u64;
        let n = n as u64;
        if first + 4 <= n {
            let i = first as isize;
            let v = ld_global_v4(x.offset(i), true, [0.0f32; 4]);
            st_global_v4(out.offset(i), true, v);
        } else if first < n {
            for k in 0..4u64 {
                let in_range = first + k < n;
                let i = (first + k) as isize;
                let v = ld_global_v1(x.offset(i), in_range, 0.0f32);
                st_global_v1(out.offset(i), in_range, v);
            }
        }
    }
}
