//! The element walk of the hand-written elementwise kernels ([`crate::copy`], [`crate::vec_add`]):
//! thread `g = block_idx.x * block_dim.x + thread_idx.x` of a 1-D grid handles the four
//! elements `4g .. 4g + 4` of `n`.

use tessera::device::*;

/// Elements per thread: one 128-bit vector of 32-bit values.
pub const QUAD: u32 = 4;

/// Calls `whole(i)` when the four elements from `i = 4g` are all below `n` (one 128-bit access
/// per operand), else, for the thread that holds the last partial vector, `lane(i, in_range)`
/// for each of its four elements `i` (predicated 32-bit accesses, so nothing past `n` is
/// touched); threads past `n` do nothing.
#[inline(always)]
pub fn for_thread_quad(n: u32, whole: impl FnOnce(isize), lane: impl Fn(isize, bool)) {
    let first = (block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64) * QUAD as u64;
    let n = n as u64;
    if first + QUAD as u64 <= n {
        whole(first as isize);
    } else if first < n {
        for k in 0..QUAD as u64 {
            lane((first + k) as isize, first + k < n);
        }
    }
}
