//! CTA barriers (`bar.sync`) and the warp barrier (`bar.warp.sync`).
//!
//! `bar.sync` waits until the expected threads of the CTA have arrived and orders their memory
//! accesses (shared and global) across the barrier. On sm_70+ `bar.sync` is
//! `barrier.sync.aligned`: every thread of a warp must execute the same `bar.sync`.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::ops;

operandless_op!(
    /// `bar.sync 0;`: waits for all threads of the CTA (`__syncthreads()`).
    sync_threads, "bar.sync 0;", host { ops::bar_sync(0, None) },
    amdgpu { super::amdgpu::block_barrier() }
);

/// `bar.sync id;`: waits for all threads of the CTA at named barrier `id` (0..16).
#[cfg(not(target_arch = "amdgpu"))]
#[inline(always)]
pub fn barrier_sync(id: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier has no memory-safety preconditions.
    unsafe {
        asm!("bar.sync {0};", in(reg32) id, options(nostack));
    }
    #[cfg(not(tessera_device))]
    ops::bar_sync(id, None);
}

/// `bar.sync id, threads;`: waits until `threads` threads (a multiple of 32) have arrived at
/// named barrier `id` (0..16).
#[cfg(not(target_arch = "amdgpu"))]
#[inline(always)]
pub fn barrier_sync_count(id: u32, threads: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier has no memory-safety preconditions.
    unsafe {
        asm!("bar.sync {0}, {1};", in(reg32) id, in(reg32) threads, options(nostack));
    }
    #[cfg(not(tessera_device))]
    ops::bar_sync(id, Some(threads));
}

/// `bar.warp.sync mask;`: waits until every lane of `mask` (which must contain this lane) has
/// arrived (`__syncwarp(mask)`), and orders their memory accesses.
#[cfg(not(target_arch = "amdgpu"))]
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier has no memory-safety preconditions.
    unsafe {
        asm!("bar.warp.sync {0};", in(reg32) mask, options(nostack));
    }
    #[cfg(not(tessera_device))]
    ops::warp_sync(mask);
}
