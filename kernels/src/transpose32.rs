//! `transpose32`: the classic bank-conflict example, hand-written on the runtime layer (shared
//! memory, `bar.sync`); built for every target, AMD included.

use tessera::device::*;
use tessera::Ptr;

tessera::device_kernel! {
    /// Transposes an `n`×`n` f32 matrix (`n` a multiple of 32) through a 32×32 shared tile:
    /// block (32, 8, 1), grid (n/32, n/32, 1). The tile row stride is 32 floats when `padded`
    /// is 0 (column reads hit one bank: 32-way conflicts) and 33 floats otherwise
    /// (conflict free): the classic bank-conflict example, measured by the emulator report.
    /// Dynamic shared memory: 32 · 33 · 4 = 4224 bytes.
    pub fn transpose32(x: Ptr<f32>, out: Ptr<f32>, n: u32, padded: u32) => TRANSPOSE32 {
        let stride = if padded != 0 { 33 } else { 32 };
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let (bx, by) = (block_idx_x(), block_idx_y());
        let base = dynamic_shared_base();
        let mut j = 0;
        while j < 32 {
            let v = ld_global_v1(x.offset(((by * 32 + ty + j) * n + bx * 32 + tx) as isize), true, 0.0f32);
            st_shared_v1(base + 4 * ((ty + j) * stride + tx), v);
            j += 8;
        }
        sync_threads();
        let mut j = 0;
        while j < 32 {
            let v: f32 = ld_shared_v1(base + 4 * (tx * stride + ty + j));
            st_global_v1(out.offset(((bx * 32 + ty + j) * n + by * 32 + tx) as isize), true, v);
            j += 8;
        }
    }
}
