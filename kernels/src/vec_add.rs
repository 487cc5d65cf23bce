//! `vec_add`: `out[i] = a[i] + b[i]` for `i < n`, f32.

use crate::thread_quad::{for_thread_quad, QUAD};
use tessera::device::*;
use tessera::Ptr;

/// Elements per thread: one 128-bit vector.
pub const VEC_ADD_ELEMENTS_PER_THREAD: u32 = QUAD;

tessera::device_kernel! {
    /// `out[i] = a[i] + b[i]` for `i < n`.
    ///
    /// The add is [`add_f32`] (`add.rn.f32`, SASS `FADD`), so the emulator returns the GPU's
    /// canonical NaN `0x7fffffff` where host `+` would keep an operand's NaN payload.
    ///
    /// Thread `g = block_idx.x * block_dim.x + thread_idx.x` handles elements `4g .. 4g + 4`:
    /// with all four in range it uses one `ld.global.v4.b32` per input and one
    /// `st.global.v4.b32` (SASS `LDG.E.128` / `STG.E.128`); the last, partial vector uses
    /// predicated 32-bit accesses so nothing past `n` is touched. Launch with
    /// `grid.x * block.x * 4 >= n`. `a`, `b` and `out` must be 16-byte aligned.
    pub fn vec_add(a: Ptr<f32>, b: Ptr<f32>, out: Ptr<f32>, n: u32) => VEC_ADD {
        for_thread_quad(
            n,
            |i| {
                let x = ld_global_v4(a.offset(i), true, [0.0; 4]);
                let y = ld_global_v4(b.offset(i), true, [0.0; 4]);
                let sum = [
                    add_f32(x[0], y[0]),
                    add_f32(x[1], y[1]),
                    add_f32(x[2], y[2]),
                    add_f32(x[3], y[3]),
                ];
                st_global_v4(out.offset(i), true, sum);
            },
            |i, in_range| {
                let x = ld_global_v1(a.offset(i), in_range, 0.0);
                let y = ld_global_v1(b.offset(i), in_range, 0.0);
                st_global_v1(out.offset(i), in_range, add_f32(x, y));
            },
        );
    }
}
