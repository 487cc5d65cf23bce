//! Asynchronous global → shared copies (sm_80+): `cp.async` with commit and wait groups.
//!
//! ```text
//! cp.async.ca.shared.global [dst], [src], BYTES, src_size;   // BYTES = 4, 8 or 16, via L1
//! cp.async.cg.shared.global [dst], [src], 16, src_size;      // 16 bytes, bypassing L1
//! cp.async.commit_group;                                      // close the current group
//! cp.async.wait_group N;                                      // wait for all but N newest groups
//! cp.async.wait_all;                                          // commit + wait for everything
//! ```
//!
//! `src_size` bytes are read and the rest of the `BYTES` destination is zero-filled; the `_zfill`
//! wrappers pass `src_size = pred ? BYTES : 0`, so a masked-off lane writes zeros and reads no
//! global memory (Triton's masked `cp.async`). The copy is only guaranteed visible to this thread
//! after a `wait_group` that covers it, and to other threads after a following barrier. The
//! emulator enforces both: a shared-memory read of bytes a copy is still writing, or of another
//! thread's landed copy before a barrier, is an `EmulatorError::AsyncOperation`.

use crate::Ptr;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::ops;

/// Compile-time check of a `cp.async.ca` size.
struct CaSize<const BYTES: u32>;
impl<const BYTES: u32> CaSize<BYTES> {
    const OK: () = assert!(
        BYTES == 4 || BYTES == 8 || BYTES == 16,
        "cp.async.ca copies 4, 8 or 16 bytes"
    );
}

/// `cp.async.ca.shared.global [dst], [src], BYTES, src_size` with
/// `src_size = if pred { BYTES } else { 0 }`: copies `BYTES` (4, 8 or 16) bytes, or writes
/// `BYTES` zeros without reading global memory when `pred` is false.
///
/// # Safety
/// `dst` must be a `BYTES`-aligned shared address with `BYTES` bytes inside shared memory; when
/// `pred` is true, `src` must point to `BYTES` readable, `BYTES`-aligned bytes that stay valid
/// until the copy completes.
#[inline(always)]
#[track_caller]
pub unsafe fn cp_async_ca_zfill<const BYTES: u32, T>(dst: u32, src: Ptr<T>, pred: bool) {
    #[allow(clippy::let_unit_value)]
    let () = CaSize::<BYTES>::OK;
    let src_size = if pred { BYTES } else { 0 };
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "cp.async.ca.shared.global [{dst}], [{src}], {bytes}, {src_size};",
        dst = in(reg32) dst,
        src = in(reg64) src.addr(),
        bytes = const BYTES,
        src_size = in(reg32) src_size,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    ops::cp_async(
        dst,
        src.addr(),
        BYTES,
        src_size,
        "cp.async.ca.shared.global",
    );
}

/// `cp.async.ca.shared.global [dst], [src], BYTES`: copies `BYTES` (4, 8 or 16) bytes.
///
/// # Safety
/// As [`cp_async_ca_zfill`] with `pred = true`.
#[inline(always)]
#[track_caller]
pub unsafe fn cp_async_ca<const BYTES: u32, T>(dst: u32, src: Ptr<T>) {
    cp_async_ca_zfill::<BYTES, T>(dst, src, true)
}

/// `cp.async.cg.shared.global [dst], [src], 16, src_size` with
/// `src_size = if pred { 16 } else { 0 }` (L2 only, 16 bytes).
///
/// # Safety
/// As [`cp_async_ca_zfill`] with `BYTES = 16`.
#[inline(always)]
#[track_caller]
pub unsafe fn cp_async_cg_zfill<T>(dst: u32, src: Ptr<T>, pred: bool) {
    let src_size: u32 = if pred { 16 } else { 0 };
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "cp.async.cg.shared.global [{dst}], [{src}], 16, {src_size};",
        dst = in(reg32) dst,
        src = in(reg64) src.addr(),
        src_size = in(reg32) src_size,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    ops::cp_async(dst, src.addr(), 16, src_size, "cp.async.cg.shared.global");
}

/// `cp.async.cg.shared.global [dst], [src], 16`.
///
/// # Safety
/// As [`cp_async_cg_zfill`] with `pred = true`.
#[inline(always)]
#[track_caller]
pub unsafe fn cp_async_cg<T>(dst: u32, src: Ptr<T>) {
    cp_async_cg_zfill(dst, src, true)
}

operandless_op!(
    /// `cp.async.commit_group;`: closes the group of copies issued since the last commit.
    cp_async_commit_group, "cp.async.commit_group;", host { ops::cp_async_commit_group() }
);

/// `cp.async.wait_group N;`: waits until at most the `N` most recent committed groups are
/// still pending.
#[inline(always)]
pub fn cp_async_wait_group<const N: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: waits for this thread's copies.
    unsafe {
        asm!("cp.async.wait_group {n};", n = const N, options(nostack));
    }
    #[cfg(not(tessera_device))]
    ops::cp_async_wait_group(N);
}

operandless_op!(
    /// `cp.async.wait_all;`: commits the open group and waits for every copy of this thread.
    cp_async_wait_all, "cp.async.wait_all;", host {
        ops::cp_async_commit_group();
        ops::cp_async_wait_group(0);
    }
);
