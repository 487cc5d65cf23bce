//! `copy`: `out[i] = x[i]` for `i < n`, f32 (the bandwidth baseline of the benchmarks).

use crate::thread_quad::{for_thread_quad, QUAD};
use tessera::device::*;
use tessera::Ptr;

/// Elements per thread: one 128-bit vector.
pub const COPY_ELEMENTS_PER_THREAD: u32 = QUAD;

tessera::device_kernel! {
    /// `out[i] = x[i]` for `i < n`: thread `g` copies elements `4g .. 4g + 4` with one
    /// `ld.global.v4.b32` / `st.global.v4.b32` pair, the last partial vector with predicated
    /// 32-bit accesses. Launch with `grid.x * block.x * 4 >= n`; `x`, `out` 16-byte aligned.
    pub fn copy(x: Ptr<f32>, out: Ptr<f32>, n: u32) => COPY {
        for_thread_quad(
            n,
            |i| st_global_v4(out.offset(i), true, ld_global_v4(x.offset(i), true, [0.0f32; 4])),
            |i, in_range| {
                let v = ld_global_v1(x.offset(i), in_range, 0.0f32);
                st_global_v1(out.offset(i), in_range, v);
            },
        );
    }
}
