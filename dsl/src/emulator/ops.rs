//! Host implementations of the device runtime layer: what every [`crate::device`] function calls
//! when it is not compiled for nvptx64. Warp-collective results are computed here from the
//! fragment layouts of the PTX ISA.

use std::panic::Location;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use super::cta::{raise, with_thread, Cta, PendingCollective, SyncState, ThreadCtx};
use super::error::{EmulatorError, Site};
use super::report::SharedAccessKind;
use super::SHARED_WINDOW_BASE;
use crate::device::canonicalize_nan_f32;
use crate::dtype::{bf16, f16};

/// Words of per-lane input a warp collective carries (mma: 4 A + 2 B + 4 C registers).
pub(crate) const PAYLOAD_WORDS: usize = 10;

/// Addresses below this are treated as null pointers.
const NULL_PAGE: u64 = 4096;

/// `shfl.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `mma.sync.aligned` variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaKind {
    /// `m16n8k16.row.col.f32.f16.f16.f32`
    F16F32,
    /// `m16n8k16.row.col.f32.bf16.bf16.f32`
    Bf16F32,
    /// `m16n8k32.row.col.s32.s8.s8.s32`
    S8S32,
}

/// A warp-collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Collective {
    Shfl(ShflMode),
    WarpSync,
    Ldmatrix { num: u32, trans: bool },
    Stmatrix { num: u32, trans: bool },
    Mma(MmaKind),
}

impl Collective {
    pub(crate) fn ptx(&self) -> &'static str {
        match self {
            Collective::Shfl(ShflMode::Up) => "shfl.sync.up.b32",
            Collective::Shfl(ShflMode::Down) => "shfl.sync.down.b32",
            Collective::Shfl(ShflMode::Bfly) => "shfl.sync.bfly.b32",
            Collective::Shfl(ShflMode::Idx) => "shfl.sync.idx.b32",
            Collective::WarpSync => "bar.warp.sync",
            Collective::Ldmatrix { num, trans } => match (num, trans) {
                (1, false) => "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
                (2, false) => "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
                (4, false) => "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                (1, true) => "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
                (2, true) => "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
                _ => "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
            },
            Collective::Stmatrix { num, trans } => match (num, trans) {
                (1, false) => "stmatrix.sync.aligned.m8n8.x1.shared.b16",
                (2, false) => "stmatrix.sync.aligned.m8n8.x2.shared.b16",
                (4, false) => "stmatrix.sync.aligned.m8n8.x4.shared.b16",
                (1, true) => "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
                (2, true) => "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
                _ => "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
            },
            Collective::Mma(MmaKind::F16F32) => "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            Collective::Mma(MmaKind::Bf16F32) => {
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
            }
            Collective::Mma(MmaKind::S8S32) => "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
        }
    }
}

/// One `cp.async` copy waiting for its group to complete.
pub(crate) struct CpAsyncCopy {
    /// Shared-window destination address.
    dst: u32,
    /// Global source address.
    src: u64,
    cp_size: u32,
    src_size: u32,
}

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

/// Word index into the CTA's shared memory of a checked access, or the error.
fn shared_word_index(
    cta: &Cta,
    st_thread: super::error::ThreadRef,
    addr: u32,
    bytes: u32,
    align: u32,
    op: &'static str,
    site: Site,
) -> Result<usize, EmulatorError> {
    if !addr.is_multiple_of(align) {
        return Err(EmulatorError::Misaligned {
            thread: st_thread,
            op,
            address: addr as u64,
            align,
            site,
        });
    }
    let end = addr as u64 + bytes as u64;
    if addr < SHARED_WINDOW_BASE || end > SHARED_WINDOW_BASE as u64 + cta.shared_bytes as u64 {
        return Err(EmulatorError::SharedOutOfBounds {
            thread: st_thread,
            op,
            address: addr,
            bytes,
            base: SHARED_WINDOW_BASE,
            shared_bytes: cta.shared_bytes,
            site,
        });
    }
    Ok(((addr - SHARED_WINDOW_BASE) / 4) as usize)
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

/// `ld.shared.v{N}.b32 [addr]`.
#[track_caller]
pub(crate) fn ld_shared<const N: usize>(addr: u32, op: &'static str) -> [u32; N] {
    let location = Location::caller();
    with_thread(|t| {
        let i = shared_index_or_raise(t, addr, 4 * N as u32, op, Site(location));
        t.local
            .borrow_mut()
            .log_shared(location, SharedAccessKind::Load, addr, 4 * N as u32);
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
        let i = shared_index_or_raise(t, addr, 4 * N as u32, op, Site(location));
        t.local
            .borrow_mut()
            .log_shared(location, SharedAccessKind::Store, addr, 4 * N as u32);
        for (k, v) in value.iter().enumerate() {
            t.cta.shared[i + k].store(*v, Ordering::Relaxed);
        }
    })
}

/// `ldmatrix.sync.aligned.m8n8.x{N}{.trans}.shared.b16`: this lane's N fragment registers.
#[track_caller]
pub(crate) fn ldmatrix<const N: usize>(addr: u32, trans: bool) -> [u32; N] {
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
    let location = Location::caller();
    let site = Site(location);
    with_thread(|t| {
        shared_index_or_raise(t, dst, cp_size, op, site);
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

/// At thread exit: completes every issued copy (committed or not), as the GPU would.
pub(crate) fn complete_all_cp_async(t: &ThreadCtx<'_>) {
    let (groups, open) = {
        let mut local = t.local.borrow_mut();
        (
            std::mem::take(&mut local.cp_async_groups),
            std::mem::take(&mut local.cp_async_open),
        )
    };
    for copy in groups.iter().flatten().chain(open.iter()) {
        perform_copy(t, copy);
    }
}

fn perform_copy(t: &ThreadCtx<'_>, copy: &CpAsyncCopy) {
    let mut bytes = [0u8; 16];
    for (k, b) in bytes
        .iter_mut()
        .enumerate()
        .take(copy.src_size.min(copy.cp_size) as usize)
    {
        // SAFETY: the issuer of cp.async guaranteed the source stays valid until completion.
        *b = unsafe { AtomicU8::from_ptr((copy.src as usize as *mut u8).add(k)) }
            .load(Ordering::Relaxed);
    }
    let base = ((copy.dst - SHARED_WINDOW_BASE) / 4) as usize;
    for w in 0..(copy.cp_size / 4) as usize {
        let word = u32::from_le_bytes([
            bytes[4 * w],
            bytes[4 * w + 1],
            bytes[4 * w + 2],
            bytes[4 * w + 3],
        ]);
        t.cta.shared[base + w].store(word, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------------
// mma
// ---------------------------------------------------------------------------------------------

/// `mma.sync.aligned` of the warp; `a`, `b`, `c` are this lane's fragment registers.
#[track_caller]
pub(crate) fn mma(kind: MmaKind, a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
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

/// Row and column of element `i` (0..8) of the m16n8k16 f16/bf16 A fragment of lane
/// (`g` = groupID, `t` = threadID_in_group); element `i` is half `i % 2` of register `i / 2`.
pub(crate) fn mma16816_a(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if i < 2 || (4..6).contains(&i) {
        g
    } else {
        g + 8
    };
    let col = t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 };
    (row, col)
}

/// Row (k) and column (n) of element `i` (0..4) of the m16n8k16 f16/bf16 B fragment.
pub(crate) fn mma16816_b(g: usize, t: usize, i: usize) -> (usize, usize) {
    (t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 }, g)
}

/// Row and column of element `i` (0..4) of the m16n8 C/D fragment (f32 and s32).
pub(crate) fn mma_c(g: usize, t: usize, i: usize) -> (usize, usize) {
    (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1))
}

/// Row and column of element `i` (0..16) of the m16n8k32 s8 A fragment; element `i` is byte
/// `i % 4` of register `i / 4`.
pub(crate) fn mma16832_a(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if i < 4 || (8..12).contains(&i) {
        g
    } else {
        g + 8
    };
    (row, t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 })
}

/// Row (k) and column (n) of element `i` (0..8) of the m16n8k32 s8 B fragment.
pub(crate) fn mma16832_b(g: usize, t: usize, i: usize) -> (usize, usize) {
    (t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 }, g)
}

fn half(reg: u32, i: usize) -> u16 {
    (reg >> (16 * (i % 2))) as u16
}

fn byte(reg: u32, i: usize) -> i8 {
    (reg >> (8 * (i % 4))) as u8 as i8
}

fn compute_mma(kind: MmaKind, payloads: &[[u32; PAYLOAD_WORDS]; 32]) -> [[u32; 4]; 32] {
    let mut out = [[0u32; 4]; 32];
    match kind {
        MmaKind::F16F32 | MmaKind::Bf16F32 => {
            let to_f32 = |bits: u16| -> f32 {
                match kind {
                    MmaKind::F16F32 => f16(bits).to_f32(),
                    _ => bf16(bits).to_f32(),
                }
            };
            let mut a = [[0f32; 16]; 16];
            let mut b = [[0f32; 8]; 16];
            let mut c = [[0f32; 8]; 16];
            for (lane, p) in payloads.iter().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for i in 0..8 {
                    let (r, k) = mma16816_a(g, t, i);
                    a[r][k] = to_f32(half(p[i / 2], i));
                }
                for i in 0..4 {
                    let (k, n) = mma16816_b(g, t, i);
                    b[k][n] = to_f32(half(p[4 + i / 2], i));
                }
                for i in 0..4 {
                    let (r, n) = mma_c(g, t, i);
                    c[r][n] = f32::from_bits(p[6 + i]);
                }
            }
            for (lane, o) in out.iter_mut().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for (i, o) in o.iter_mut().enumerate() {
                    let (r, n) = mma_c(g, t, i);
                    // Products of f16/bf16 are exact in f64; one rounding at the end. A NaN
                    // result is the canonical 0x7fffffff, whatever the NaN inputs were (as
                    // measured on sm_90; f64 arithmetic on the host would keep a payload).
                    let mut acc = c[r][n] as f64;
                    for k in 0..16 {
                        acc += a[r][k] as f64 * b[k][n] as f64;
                    }
                    *o = canonicalize_nan_f32(acc as f32).to_bits();
                }
            }
        }
        MmaKind::S8S32 => {
            let mut a = [[0i32; 32]; 16];
            let mut b = [[0i32; 8]; 32];
            let mut c = [[0i32; 8]; 16];
            for (lane, p) in payloads.iter().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for i in 0..16 {
                    let (r, k) = mma16832_a(g, t, i);
                    a[r][k] = byte(p[i / 4], i) as i32;
                }
                for i in 0..8 {
                    let (k, n) = mma16832_b(g, t, i);
                    b[k][n] = byte(p[4 + i / 4], i) as i32;
                }
                for i in 0..4 {
                    let (r, n) = mma_c(g, t, i);
                    c[r][n] = p[6 + i] as i32;
                }
            }
            for (lane, o) in out.iter_mut().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for (i, o) in o.iter_mut().enumerate() {
                    let (r, n) = mma_c(g, t, i);
                    let mut acc = c[r][n];
                    for k in 0..32 {
                        acc = acc.wrapping_add(a[r][k] * b[k][n]);
                    }
                    *o = acc as u32;
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Completion of warp collectives (called by the last arriving lane, CTA lock held)
// ---------------------------------------------------------------------------------------------

fn collective_error(
    cta: &Cta,
    st: &SyncState,
    warp: u32,
    lane: u32,
    op: &'static str,
    message: String,
) -> EmulatorError {
    EmulatorError::WarpCollective {
        thread: cta.thread_ref(st, warp * 32 + lane),
        op,
        message,
    }
}

/// Computes every lane's result of a completed warp collective.
// Lane, matrix and element indices index several arrays at once; plain ranges read best.
#[allow(clippy::needless_range_loop)]
pub(crate) fn complete_collective(
    cta: &Cta,
    st: &mut SyncState,
    warp: u32,
    p: &PendingCollective,
) -> Result<[[u32; 4]; 32], EmulatorError> {
    let mut out = [[0u32; 4]; 32];
    match p.kind {
        Collective::WarpSync => {}
        Collective::Shfl(mode) => {
            for lane in 0..32u32 {
                if p.mask & (1 << lane) == 0 {
                    continue;
                }
                let [_, b, c, ..] = p.payloads[lane as usize];
                let bval = b & 0x1f;
                let cval = c & 0x1f;
                let segmask = (c >> 8) & 0x1f;
                let max_lane = (lane & segmask) | (cval & !segmask);
                let min_lane = lane & segmask;
                let (j, pval) = match mode {
                    ShflMode::Up => {
                        let j = lane as i32 - bval as i32;
                        (j, j >= max_lane as i32)
                    }
                    ShflMode::Down => {
                        let j = (lane + bval) as i32;
                        (j, j <= max_lane as i32)
                    }
                    ShflMode::Bfly => {
                        let j = (lane ^ bval) as i32;
                        (j, j <= max_lane as i32)
                    }
                    ShflMode::Idx => {
                        let j = (min_lane | (bval & !segmask)) as i32;
                        (j, j <= max_lane as i32)
                    }
                };
                let src = if pval { j as u32 } else { lane };
                if p.mask & (1 << src) == 0 {
                    return Err(collective_error(
                        cta,
                        st,
                        warp,
                        lane,
                        p.kind.ptx(),
                        format!(
                            "lane {lane} reads lane {src}, which is not in membermask {:#010x} \
                             (the value would be undefined on the GPU)",
                            p.mask
                        ),
                    ));
                }
                out[lane as usize] = [p.payloads[src as usize][0], pval as u32, 0, 0];
            }
        }
        Collective::Ldmatrix { num, trans } | Collective::Stmatrix { num, trans } => {
            let store = matches!(p.kind, Collective::Stmatrix { .. });
            let op = p.kind.ptx();
            let site = Site(p.site);
            // Row r of matrix m starts at the address given by lane 8m + r (16 bytes = 8 b16).
            let mut rows = [[0usize; 8]; 4];
            let mut words = Vec::with_capacity(128);
            for m in 0..num as usize {
                for (r, row) in rows[m].iter_mut().enumerate() {
                    let lane = (8 * m + r) as u32;
                    let addr = p.payloads[lane as usize][0];
                    *row = shared_word_index(
                        cta,
                        cta.thread_ref(st, warp * 32 + lane),
                        addr,
                        16,
                        16,
                        op,
                        site,
                    )?;
                    let w = addr / 4;
                    words.extend(w..w + 4);
                }
            }
            let kind = if store {
                SharedAccessKind::Stmatrix
            } else {
                SharedAccessKind::Ldmatrix
            };
            st.sites.record(p.site, kind, &mut words);
            // Element (r, c) of matrix m: halfword c of row r.
            let element_word = |m: usize, r: usize, c: usize| -> (usize, u32) {
                (rows[m][r] + c / 2, 16 * (c as u32 % 2))
            };
            for lane in 0..32usize {
                let (g, t) = (lane / 4, lane % 4);
                for m in 0..num as usize {
                    for j in 0..2usize {
                        // Fragment element j of register m: row g, column 2t + j of the matrix,
                        // or of its transpose with .trans.
                        let (r, c) = if trans {
                            (2 * t + j, g)
                        } else {
                            (g, 2 * t + j)
                        };
                        let (word, shift) = element_word(m, r, c);
                        if store {
                            let value = (p.payloads[lane][1 + m] >> (16 * j)) & 0xffff;
                            let cell = &cta.shared[word];
                            let old = cell.load(Ordering::Relaxed);
                            let new = (old & !(0xffff << shift)) | (value << shift);
                            cell.store(new, Ordering::Relaxed);
                        } else {
                            let value =
                                (cta.shared[word].load(Ordering::Relaxed) >> shift) & 0xffff;
                            out[lane][m] |= value << (16 * j);
                        }
                    }
                }
            }
        }
        Collective::Mma(kind) => out = compute_mma(kind, &p.payloads),
    }
    Ok(out)
}
