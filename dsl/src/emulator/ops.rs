//! Host implementations of the device runtime layer: what every [`crate::device`] function calls
//! when it is not compiled for nvptx64. Warp collectives meet in [`super::warp`].

use std::panic::Location;
use std::sync::atomic::{AtomicU32, Ordering};

use super::collective::{Collective, CpAsyncCopy, PAYLOAD_WORDS};
pub(crate) use super::collective::{MmaKind, ShflMode};
use super::cta::{count_access, perform_copy, raise, shared_word_index, with_thread, ThreadCtx};
use super::error::{EmulatorError, Site};
use super::machine::SHARED_WINDOW_BASE;
use super::report::SharedAccessKind;

/// Addresses below this are treated as null pointers.
const NULL_PAGE: u64 = 4096;
// ---------------------------------------------------------------------------------------------
// Special registers and barriers
// ---------------------------------------------------------------------------------------------

pub(crate) fn thread_idx() -> [u32; 3] {
    with_thread(|t| t.thread_idx)
}

pub(crate) fn block_idx() -> [u32; 3] {
    with_thread(|t| t.block_idx)
}

pub(crate) fn block_dim() -> [u32; 3] {
    with_thread(|t| t.cta.block_dim)
}

pub(crate) fn grid_dim() -> [u32; 3] {
    with_thread(|t| t.cta.grid_dim)
}

pub(crate) fn lane_id() -> u32 {
    with_thread(|t| t.lane())
}

pub(crate) fn warp_id() -> u32 {
    with_thread(|t| t.warp())
}

pub(crate) fn bar_sync(id: u32, count: Option<u32>) {
    with_thread(|t| t.cta.barrier(t, id, count))
}

#[track_caller]
pub(crate) fn warp_sync(mask: u32) {
    let site = Location::caller();
    with_thread(|t| {
        t.cta
            .warp_collective(t, Collective::WarpSync, mask, [0; PAYLOAD_WORDS], site);
    })
}

/// `shfl.sync.{mode}.b32 d|p, a, b, c, membermask`: returns `(d, p)`.
#[track_caller]
pub(crate) fn shfl(mode: ShflMode, mask: u32, a: u32, b: u32, c: u32) -> (u32, bool) {
    let site = Location::caller();
    let mut payload = [0; PAYLOAD_WORDS];
    payload[0] = a;
    payload[1] = b;
    payload[2] = c;
    let r = with_thread(|t| {
        t.cta
            .warp_collective(t, Collective::Shfl(mode), mask, payload, site)
    });
    (r[0], r[1] != 0)
}

// ---------------------------------------------------------------------------------------------
// Global memory
// ---------------------------------------------------------------------------------------------

/// Checks a global access of `bytes` bytes at `addr` that must be `align`-aligned.
fn check_global(
    t: &ThreadCtx<'_>,
    addr: u64,
    bytes: u32,
    align: u32,
    op: &'static str,
    site: Site,
) {
    if addr < NULL_PAGE {
        raise(EmulatorError::NullGlobalPointer {
            thread: t.thread_ref(),
            op,
            address: addr,
            site,
        });
    }
    if !addr.is_multiple_of(align as u64) {
        raise(EmulatorError::Misaligned {
            thread: t.thread_ref(),
            op,
            address: addr,
            align,
            site,
        });
    }
    if !t.cta.global_access_allowed(addr, bytes) {
        raise(EmulatorError::GlobalOutOfBounds {
            thread: t.thread_ref(),
            op,
            address: addr,
            bytes,
            site,
        });
    }
    count_access(t);
}

/// `@p atom.global` of `bytes` (2, 4 or 8) bytes at `addr`: replaces the value `old` there by
/// `update(old)` as one indivisible step and returns `old` (`0` when `pred` is false, with no
/// memory access). The emulator runs blocks on several OS threads at once (up to 32 blocks in
/// flight), so the step is a compare-and-swap loop on the host word: every atomic of every simulated thread
/// and program is sequentially consistent, at least as strong as any `.sem`/`.scope` asked for.
///
/// # Safety
/// When `pred` is true, `addr .. addr + bytes` must be valid, `bytes`-aligned, writable host
/// memory that is only accessed atomically or by this launch's loads and stores.
#[track_caller]
pub(crate) unsafe fn atom_global(
    addr: u64,
    bytes: u32,
    pred: bool,
    update: impl Fn(u64) -> u64,
    op: &'static str,
) -> u64 {
    use std::sync::atomic::{AtomicU16, AtomicU64};
    if !pred {
        return 0;
    }
    let site = Site(Location::caller());
    with_thread(|t| check_global(t, addr, bytes, bytes, op, site));
    let order = Ordering::SeqCst;
    // SAFETY (each arm): the caller guarantees validity; alignment was checked.
    match bytes {
        2 => {
            let a = unsafe { AtomicU16::from_ptr(addr as usize as *mut u16) };
            let f = |old: u16| Some(update(u64::from(old)) as u16);
            u64::from(a.fetch_update(order, order, f).unwrap_or_else(|old| old))
        }
        4 => {
            let a = unsafe { AtomicU32::from_ptr(addr as usize as *mut u32) };
            let f = |old: u32| Some(update(u64::from(old)) as u32);
            u64::from(a.fetch_update(order, order, f).unwrap_or_else(|old| old))
        }
        8 => {
            let a = unsafe { AtomicU64::from_ptr(addr as usize as *mut u64) };
            let f = |old: u64| Some(update(old));
            a.fetch_update(order, order, f).unwrap_or_else(|old| old)
        }
        _ => unreachable!("atomics are 2, 4 or 8 bytes"),
    }
}

/// `@p ld.global.v{N}.b32`: `other` when `pred` is false (no memory access then).
///
/// # Safety
/// When `pred` is true, `addr .. addr + 4N` must be valid, `4N`-aligned host memory.
#[track_caller]
pub(crate) unsafe fn ld_global<const N: usize>(
    addr: u64,
    pred: bool,
    other: [u32; N],
    op: &'static str,
) -> [u32; N] {
    if !pred {
        return other;
    }
    let site = Site(Location::caller());
    with_thread(|t| check_global(t, addr, 4 * N as u32, 4 * N as u32, op, site));
    let mut out = [0u32; N];
    for (k, o) in out.iter_mut().enumerate() {
        // SAFETY: the caller guarantees validity; alignment was checked.
        *o = unsafe { AtomicU32::from_ptr((addr as usize as *mut u32).add(k)) }
            .load(Ordering::Relaxed);
    }
    out
}

/// `@p st.global.v{N}.b32`: no memory access when `pred` is false.
///
/// # Safety
/// When `pred` is true, `addr .. addr + 4N` must be valid, `4N`-aligned, writable host memory.
#[track_caller]
pub(crate) unsafe fn st_global<const N: usize>(
    addr: u64,
    pred: bool,
    value: [u32; N],
    op: &'static str,
) {
    if !pred {
        return;
    }
    let site = Site(Location::caller());
    with_thread(|t| check_global(t, addr, 4 * N as u32, 4 * N as u32, op, site));
    for (k, v) in value.iter().enumerate() {
        // SAFETY: the caller guarantees validity; alignment was checked.
        unsafe { AtomicU32::from_ptr((addr as usize as *mut u32).add(k)) }
            .store(*v, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------------
// Shared memory
// ---------------------------------------------------------------------------------------------

pub(crate) fn dynamic_shared_base() -> u32 {
    SHARED_WINDOW_BASE
}

fn shared_index_or_raise(
    t: &ThreadCtx<'_>,
    addr: u32,
    bytes: u32,
    op: &'static str,
    site: Site,
) -> usize {
    match shared_word_index(t.cta, t.thread_ref(), addr, bytes, bytes, op, site) {
        Ok(i) => i,
        Err(e) => raise(e),
    }
}

/// Checks this thread's shared access of `bytes` at `addr` (raising its error), records it in the
/// thread's access log and returns the index of its first word.
fn logged_shared_access(
    t: &ThreadCtx<'_>,
    addr: u32,
    bytes: u32,
    op: &'static str,
    location: &'static Location<'static>,
    kind: SharedAccessKind,
) -> usize {
    let i = shared_index_or_raise(t, addr, bytes, op, Site(location));
    t.local.borrow_mut().log_shared(location, kind, addr, bytes);
    i
}

/// Raises this thread's write of `words` shared words from `word` when a `wgmma` in flight may
/// still read one of them (`super::wgmma_reads`).
fn check_wgmma_write(t: &ThreadCtx<'_>, word: usize, words: usize, op: &'static str) {
    let retired = t.local.borrow().wgmma.retired();
    let group = t.linear / super::wgmma::WARPGROUP_THREADS;
    if let Err(message) = t.cta.check_wgmma_write(group, retired, word, words) {
        raise(EmulatorError::AsyncOperation {
            thread: t.thread_ref(),
            op,
            message,
        });
    }
}

/// `ld.shared.v{N}.b32 [addr]`.
#[track_caller]
pub(crate) fn ld_shared<const N: usize>(addr: u32, op: &'static str) -> [u32; N] {
    let location = Location::caller();
    with_thread(|t| {
        let i = logged_shared_access(t, addr, 4 * N as u32, op, location, SharedAccessKind::Load);
        if let Err(message) = t.cta.check_async_read(t.linear, i, N) {
            raise(EmulatorError::AsyncOperation {
                thread: t.thread_ref(),
                op,
                message,
            });
        }
        let mut out = [0u32; N];
        for (k, o) in out.iter_mut().enumerate() {
            *o = t.cta.shared[i + k].load(Ordering::Relaxed);
        }
        out
    })
}

/// `st.shared.v{N}.b32 [addr], value`.
#[track_caller]
pub(crate) fn st_shared<const N: usize>(addr: u32, value: [u32; N], op: &'static str) {
    let location = Location::caller();
    with_thread(|t| {
        let i = logged_shared_access(t, addr, 4 * N as u32, op, location, SharedAccessKind::Store);
        check_wgmma_write(t, i, N, op);
        for (k, v) in value.iter().enumerate() {
            t.cta.shared[i + k].store(*v, Ordering::Relaxed);
        }
    })
}

/// `st.shared.b8` / `st.shared.b16` (`BYTES` = 1 or 2) `[addr], value`: that part of the word
/// at `addr`, the rest untouched (atomically, so threads writing parts of one word do not race).
#[track_caller]
pub(crate) fn st_shared_part<const BYTES: u32>(addr: u32, value: u32) {
    let location = Location::caller();
    with_thread(|t| {
        let op = if BYTES == 1 {
            "st.shared.b8"
        } else {
            "st.shared.b16"
        };
        let i = logged_shared_access(t, addr, BYTES, op, location, SharedAccessKind::Store);
        check_wgmma_write(t, i, 1, op);
        let shift = (addr % 4) * 8;
        let mask = (u32::MAX >> (32 - 8 * BYTES)) << shift;
        let word = &t.cta.shared[i];
        word.fetch_and(!mask, Ordering::Relaxed);
        word.fetch_or((value << shift) & mask, Ordering::Relaxed);
    })
}

/// `ldmatrix.sync.aligned.m8n8.x{N}{.trans}.shared.b16`: this lane's N fragment registers.
#[track_caller]
pub(crate) fn ldmatrix<const N: usize>(addr: u32, trans: bool) -> [u32; N] {
    super::target::nvidia_instruction("ldmatrix");
    let site = Location::caller();
    let mut payload = [0; PAYLOAD_WORDS];
    payload[0] = addr;
    let kind = Collective::Ldmatrix {
        num: N as u32,
        trans,
    };
    let r = with_thread(|t| t.cta.warp_collective(t, kind, u32::MAX, payload, site));
    let mut out = [0u32; N];
    out.copy_from_slice(&r[..N]);
    out
}

/// `stmatrix.sync.aligned.m8n8.x{N}{.trans}.shared.b16 [addr], regs`.
#[track_caller]
pub(crate) fn stmatrix<const N: usize>(addr: u32, regs: [u32; N], trans: bool) {
    super::target::nvidia_instruction("stmatrix");
    let site = Location::caller();
    let mut payload = [0; PAYLOAD_WORDS];
    payload[0] = addr;
    payload[1..=N].copy_from_slice(&regs);
    let kind = Collective::Stmatrix {
        num: N as u32,
        trans,
    };
    with_thread(|t| t.cta.warp_collective(t, kind, u32::MAX, payload, site));
}

// ---------------------------------------------------------------------------------------------
// cp.async
// ---------------------------------------------------------------------------------------------

/// `cp.async.{ca,cg}.shared.global [dst], [src], cp_size, src_size`: issues the copy; it lands
/// in shared memory when its group is waited for (`cp.async.wait_group`), as on the GPU, so a
/// kernel that reads the destination before waiting sees stale data on the emulator too.
///
/// # Safety
/// When `src_size > 0`, `src .. src + src_size` must be valid host memory until the copy
/// completes.
#[track_caller]
pub(crate) unsafe fn cp_async(dst: u32, src: u64, cp_size: u32, src_size: u32, op: &'static str) {
    super::target::nvidia_instruction("cp.async");
    let location = Location::caller();
    let site = Site(location);
    with_thread(|t| {
        let word = shared_index_or_raise(t, dst, cp_size, op, site);
        check_wgmma_write(t, word, (cp_size / 4) as usize, op);
        t.cta
            .cp_async_issued(t.linear, word, (cp_size / 4) as usize);
        if src_size > 0 {
            check_global(t, src, src_size.min(cp_size), cp_size, op, site);
        }
        let mut local = t.local.borrow_mut();
        local.log_shared(location, SharedAccessKind::CpAsync, dst, cp_size);
        local.cp_async_open.push(CpAsyncCopy {
            dst,
            src,
            cp_size,
            src_size,
        });
    })
}

/// `cp.async.commit_group`: closes the group of copies issued since the last commit.
pub(crate) fn cp_async_commit_group() {
    with_thread(|t| {
        let mut local = t.local.borrow_mut();
        let group = std::mem::take(&mut local.cp_async_open);
        local.cp_async_groups.push_back(group);
    })
}

/// `cp.async.wait_group n`: completes all but the `n` most recent committed groups.
pub(crate) fn cp_async_wait_group(n: u32) {
    with_thread(|t| loop {
        let group = {
            let mut local = t.local.borrow_mut();
            if local.cp_async_groups.len() <= n as usize {
                break;
            }
            local.cp_async_groups.pop_front()
        };
        if let Some(group) = group {
            for copy in &group {
                perform_copy(t, copy);
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// mma
// ---------------------------------------------------------------------------------------------

/// `mma.sync.aligned` of the warp; `a`, `b`, `c` are this lane's fragment registers.
#[track_caller]
pub(crate) fn mma(kind: MmaKind, a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    super::target::nvidia_instruction("mma.sync");
    let site = Location::caller();
    let mut payload = [0; PAYLOAD_WORDS];
    payload[0..4].copy_from_slice(&a);
    payload[4..6].copy_from_slice(&b);
    payload[6..10].copy_from_slice(&c);
    with_thread(|t| {
        t.cta
            .warp_collective(t, Collective::Mma(kind), u32::MAX, payload, site)
    })
}
