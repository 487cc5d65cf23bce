//! The CTA runtime: the simulated threads' context, CTA barriers, warp collectives and
//! per-CTA shared memory (`super::grid` runs the launch: its workers and coroutines).
//!
//! Synchronisation model. All barrier and warp-collective state of a CTA slot lives behind one
//! mutex ([`SyncState`]; threads of one block never hold it across a suspension, and blocks run
//! on several workers); only the count of live threads is atomic, so that blocks that never
//! synchronise exit without taking the lock (see [`Cta::thread_exit`]). A thread that must wait increments `blocked`; whoever completes the barrier or
//! collective decrements it for every thread it releases. When `blocked == live` (every thread
//! that has not exited is waiting) nothing can make progress: that is reported as a deadlock
//! instead of hanging. Any error (a failed check, a panic in the kernel body) is recorded once,
//! `aborted` is set and every waiting thread is woken and unwinds, so a failing launch always
//! returns.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::panic::{self, Location};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::collective::{CpAsyncCopy, PendingCollective};
use super::error::{EmulatorError, Site, ThreadRef};
use super::grid::suspend;
use super::machine::SHARED_WINDOW_BASE;
use super::mbarrier::MbarrierTable;
use super::report::{SharedAccessKind, SiteTable};
use super::target::EmulatedTarget;
use super::wgmma::{describe_warpgroup_waits, WarpgroupState, WgmmaThread};

/// Number of named CTA barriers (`bar.sync 0..15`).
pub(crate) const NUM_BARRIERS: usize = 16;

/// Unwind payload of a thread stopped because another thread of the launch failed.
pub(crate) struct Aborted;

/// One logged shared-memory access of one thread (grouped per warp at the end of the block).
pub(crate) struct SharedRecord {
    pub(crate) site: &'static Location<'static>,
    pub(crate) kind: SharedAccessKind,
    /// Per-thread count of earlier executions of the same site: lanes of a warp that execute
    /// the k-th instance of an instruction form one warp-wide access.
    pub(crate) occurrence: u32,
    pub(crate) address: u32,
    pub(crate) bytes: u32,
}

/// State private to one simulated thread.
#[derive(Default)]
pub(crate) struct ThreadLocalState {
    occurrences: HashMap<(usize, SharedAccessKind), u32>,
    pub(crate) log: Vec<SharedRecord>,
    /// `cp.async` copies issued since the last `commit_group`.
    pub(crate) cp_async_open: Vec<CpAsyncCopy>,
    /// Committed, not yet completed `cp.async` groups, oldest first.
    pub(crate) cp_async_groups: VecDeque<Vec<CpAsyncCopy>>,
    /// `wgmma` fences, issues and commit groups.
    pub(crate) wgmma: WgmmaThread,
}

impl ThreadLocalState {
    pub(crate) fn log_shared(
        &mut self,
        site: &'static Location<'static>,
        kind: SharedAccessKind,
        address: u32,
        bytes: u32,
    ) {
        let counter = self
            .occurrences
            .entry((site as *const Location as usize, kind))
            .or_insert(0);
        let occurrence = *counter;
        *counter += 1;
        self.log.push(SharedRecord {
            site,
            kind,
            occurrence,
            address,
            bytes,
        });
    }
}

/// The simulated thread whose coroutine the current OS thread runs.
pub(crate) struct ThreadCtx<'a> {
    pub(crate) cta: &'a Cta,
    pub(crate) block_idx: [u32; 3],
    pub(crate) thread_idx: [u32; 3],
    /// Linear thread index in the block: `x + y * ntid.x + z * ntid.x * ntid.y`.
    pub(crate) linear: u32,
    pub(crate) local: RefCell<ThreadLocalState>,
    /// Global accesses since the thread last suspended ([`ACCESSES_PER_TURN`]).
    accesses: Cell<u32>,
}

impl<'a> ThreadCtx<'a> {
    /// Thread `linear` of the block `cta` hosts, with nothing issued yet.
    pub(super) fn new(cta: &'a Cta, linear: u32) -> Self {
        ThreadCtx {
            cta,
            block_idx: cta.lock().block_idx,
            thread_idx: cta.thread_idx_of(linear),
            linear,
            local: RefCell::new(ThreadLocalState::default()),
            accesses: Cell::new(0),
        }
    }
}

impl ThreadCtx<'_> {
    pub(crate) fn lane(&self) -> u32 {
        self.linear % 32
    }

    pub(crate) fn warp(&self) -> u32 {
        self.linear / 32
    }

    pub(crate) fn thread_ref(&self) -> ThreadRef {
        ThreadRef {
            block: self.block_idx,
            thread: self.thread_idx,
        }
    }
}

thread_local! {
    pub(super) static CURRENT: Cell<*const ThreadCtx<'static>> = const { Cell::new(std::ptr::null()) };
}

/// Global accesses a thread makes before it suspends to let the others of its worker run (a
/// thread that polls memory another thread writes, with no wait in its loop, would otherwise
/// keep its worker forever).
const ACCESSES_PER_TURN: u32 = 4096;

/// Counts a global access of the thread `t`; every [`ACCESSES_PER_TURN`] accesses it suspends.
pub(crate) fn count_access(t: &ThreadCtx<'_>) {
    let n = t.accesses.get() + 1;
    if n >= ACCESSES_PER_TURN {
        t.accesses.set(0);
        suspend();
    } else {
        t.accesses.set(n);
    }
}

/// Runs `f` with the simulated thread of this OS thread.
///
/// # Panics
/// When called outside a kernel running under [`run_grid`] (there is no GPU thread to be).
pub(crate) fn with_thread<R>(f: impl FnOnce(&ThreadCtx<'_>) -> R) -> R {
    let ptr = CURRENT.with(|c| c.get());
    assert!(
        !ptr.is_null(),
        "a tessera::device function was called outside a kernel: on the host these functions \
         only work inside tessera::emulator::run_grid (or a launch on the emulator)"
    );
    // SAFETY: CURRENT points to the ThreadCtx on the worker's stack while the kernel body runs
    // and is reset to null before that ThreadCtx goes away.
    f(unsafe { &*ptr })
}

/// Records `error` (unless an earlier one is recorded), stops the launch and unwinds this thread.
pub(crate) fn raise(error: EmulatorError) -> ! {
    let cta = with_thread(|t| t.cta as *const Cta);
    // SAFETY: the CTA outlives every running kernel body.
    let cta = unsafe { &*cta };
    let st = cta.lock();
    cta.fail(st, error)
}

#[derive(Clone, Copy, Default)]
struct BarrierState {
    arrived: u32,
    waiting: u32,
    /// Thread count of the current barrier instance: `None` = idle, `Some(None)` = all threads
    /// of the CTA (`bar.sync a`), `Some(Some(n))` = `bar.sync a, n`.
    count: Option<Option<u32>>,
    generation: u64,
}

pub(super) struct WarpState {
    pub(super) pending: Vec<PendingCollective>,
    pub(super) mailbox: [Option<[u32; 4]>; 32],
}

impl WarpState {
    fn new() -> Self {
        WarpState {
            pending: Vec::new(),
            mailbox: [None; 32],
        }
    }
}

pub(crate) struct SyncState {
    /// Linear index of the block this CTA slot currently runs.
    hosted_block: u64,
    pub(crate) block_idx: [u32; 3],
    pub(super) blocked: u32,
    aborted: bool,
    error: Option<EmulatorError>,
    barriers: [BarrierState; NUM_BARRIERS],
    pub(super) warps: Vec<WarpState>,
    /// The `wgmma` rendezvous of each warpgroup.
    pub(super) warpgroups: Vec<WarpgroupState>,
    /// The `mfma` rendezvous of each wave (two warps; amdgpu).
    pub(super) waves: Vec<super::wave::WaveState>,
    pub(crate) sites: SiteTable,
    pub(crate) mbarriers: MbarrierTable,
}

/// One CTA: its shared memory and synchronisation state (reused for every block of a launch).
pub(crate) struct Cta {
    /// Allowed global byte ranges `[start, end)`, sorted and merged; `None`: unchecked.
    global_memory: Option<Arc<[(u64, u64)]>>,
    pub(crate) grid_dim: [u32; 3],
    pub(crate) block_dim: [u32; 3],
    pub(crate) threads: u32,
    pub(crate) shared: Box<[AtomicU32]>,
    pub(crate) shared_bytes: u32,
    /// Per shared word: the `cp.async` copy writing it, if any (`cp_async_state.rs`).
    pub(crate) async_words: Box<[AtomicU32]>,
    /// Whether some word is landed but not yet made visible by a barrier.
    pub(crate) async_landed: AtomicBool,
    /// Per shared word: the `wgmma` in flight reading it, if any (`wgmma_reads.rs`).
    pub(crate) wgmma_words: Box<[AtomicU64]>,
    /// Per warpgroup: the last `wgmma` some thread of it has retired.
    pub(crate) wgmma_retired: Box<[AtomicU64]>,
    /// Whether some word of `wgmma_words` may be set.
    pub(crate) wgmma_reads_live: AtomicBool,
    /// The PTX target the launch emulates (`super::target`).
    pub(crate) target: EmulatedTarget,
    sync: Mutex<SyncState>,
    /// Threads of the hosted block that have not exited. Changed only with SeqCst; read under
    /// the lock by the synchronisation code (see `thread_exit` for the lock-free exit).
    live: AtomicU32,
    /// Set (SeqCst, under the lock) before any barrier or warp collective of the hosted block
    /// reads `live`, and on any error: from then on exiting threads take the locked path.
    sync_used: AtomicBool,
    /// Each exited thread's shared-memory accesses, with its warp and lane.
    logs: Mutex<Vec<(u32, u32, Vec<SharedRecord>)>>,
}

impl Cta {
    /// A CTA slot for blocks of `block` threads with `shared_bytes` of dynamic shared memory,
    /// hosting no block yet ([`Cta::begin_block`] before each).
    pub(super) fn new(
        global_memory: Option<Arc<[(u64, u64)]>>,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        target: EmulatedTarget,
    ) -> Self {
        let threads = block[0] * block[1] * block[2];
        let warps = threads.div_ceil(32);
        let shared_words = shared_bytes.div_ceil(4);
        Cta {
            global_memory,
            grid_dim: grid,
            block_dim: block,
            threads,
            shared: (0..shared_words).map(|_| AtomicU32::new(0)).collect(),
            shared_bytes,
            async_words: (0..shared_words).map(|_| AtomicU32::new(0)).collect(),
            async_landed: AtomicBool::new(false),
            wgmma_words: (0..shared_words).map(|_| AtomicU64::new(0)).collect(),
            wgmma_retired: (0..warps / 4).map(|_| AtomicU64::new(0)).collect(),
            wgmma_reads_live: AtomicBool::new(false),
            target,
            sync: Mutex::new(SyncState {
                hosted_block: 0,
                block_idx: [0; 3],
                blocked: 0,
                aborted: false,
                error: None,
                barriers: [BarrierState::default(); NUM_BARRIERS],
                warps: (0..warps).map(|_| WarpState::new()).collect(),
                warpgroups: (0..warps / 4).map(|_| WarpgroupState::default()).collect(),
                waves: (0..warps / 2).map(|_| Default::default()).collect(),
                sites: SiteTable::default(),
                mbarriers: MbarrierTable::default(),
            }),
            live: AtomicU32::new(threads),
            sync_used: AtomicBool::new(false),
            logs: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, SyncState> {
        self.sync.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn warps(&self) -> u32 {
        self.threads.div_ceil(32)
    }

    /// Whether `[addr, addr + bytes)` lies inside one allowed global range (always true when the
    /// launch has no memory map).
    pub(crate) fn global_access_allowed(&self, addr: u64, bytes: u32) -> bool {
        let Some(ranges) = &self.global_memory else {
            return true;
        };
        let i = ranges.partition_point(|&(start, _)| start <= addr);
        i > 0 && addr.saturating_add(bytes as u64) <= ranges[i - 1].1
    }

    /// Bit mask of the lanes that exist in warp `warp` (the last warp may be partial).
    pub(crate) fn warp_lanes(&self, warp: u32) -> u32 {
        let n = self.threads - warp * 32;
        if n >= 32 {
            u32::MAX
        } else {
            (1u32 << n) - 1
        }
    }

    pub(crate) fn thread_idx_of(&self, linear: u32) -> [u32; 3] {
        let [bx, by, _] = self.block_dim;
        [linear % bx, linear / bx % by, linear / (bx * by)]
    }

    pub(crate) fn thread_ref(&self, st: &SyncState, linear: u32) -> ThreadRef {
        ThreadRef {
            block: st.block_idx,
            thread: self.thread_idx_of(linear),
        }
    }

    /// Stops the threads of this slot (another block failed): each unwinds when resumed.
    pub(super) fn abort(&self) {
        self.lock().aborted = true;
    }

    /// [`Cta::abort`] if the block this slot hosts comes after block `failed`.
    pub(super) fn abort_after(&self, failed: u64) {
        let mut st = self.lock();
        if st.hosted_block > failed {
            st.aborted = true;
        }
    }

    /// The recorded error, with the linear index of the block it happened in.
    pub(super) fn take_error(&self) -> Option<(u64, EmulatorError)> {
        let mut st = self.lock();
        let block = st.hosted_block;
        st.error.take().map(|e| (block, e))
    }

    /// Records `error` (first one wins), aborts the launch and unwinds the calling thread.
    pub(crate) fn fail(&self, mut st: MutexGuard<'_, SyncState>, error: EmulatorError) -> ! {
        self.mark_sync_used();
        if st.error.is_none() {
            st.error = Some(error);
        }
        st.aborted = true;
        drop(st);
        panic::resume_unwind(Box::new(Aborted))
    }

    pub(super) fn unwind_if_aborted<'g>(
        &self,
        st: MutexGuard<'g, SyncState>,
    ) -> MutexGuard<'g, SyncState> {
        if st.aborted {
            drop(st);
            panic::resume_unwind(Box::new(Aborted));
        }
        st
    }

    /// Blocks this thread until `released` gives a value: counts the thread as blocked, fails
    /// the block if every live thread now waits (a deadlock), then suspends (the lock released)
    /// and, each time it is resumed, unwinds if the block has aborted meanwhile, else asks
    /// `released` again. Returns the lock and the value.
    pub(super) fn block_until<'g, R>(
        &'g self,
        mut st: MutexGuard<'g, SyncState>,
        mut released: impl FnMut(&mut SyncState) -> Option<R>,
    ) -> (MutexGuard<'g, SyncState>, R) {
        st.blocked += 1;
        let mut st = self.check_deadlock(st);
        loop {
            drop(st);
            suspend();
            st = self.unwind_if_aborted(self.lock());
            if let Some(value) = released(&mut st) {
                return (st, value);
            }
        }
    }

    /// Number of threads of the hosted block that have not exited.
    fn live(&self) -> u32 {
        self.live.load(Ordering::SeqCst)
    }

    /// Called with the lock held before a synchronisation reads `live`.
    pub(super) fn mark_sync_used(&self) {
        self.sync_used.store(true, Ordering::SeqCst);
    }

    /// Called with the lock held right after a thread started waiting.
    pub(super) fn check_deadlock<'g>(
        &self,
        st: MutexGuard<'g, SyncState>,
    ) -> MutexGuard<'g, SyncState> {
        let live = self.live();
        if live > 0 && st.blocked == live {
            let message = self.describe_waits(&st);
            let block = st.block_idx;
            self.fail(st, EmulatorError::Deadlock { block, message });
        }
        st
    }

    fn describe_waits(&self, st: &SyncState) -> String {
        let live = self.live();
        let mut parts = vec![format!(
            "all {live} threads that have not exited are waiting"
        )];
        for (id, b) in st.barriers.iter().enumerate() {
            if b.waiting > 0 {
                let expected = match b.count {
                    Some(Some(n)) => format!("{n} threads"),
                    _ => format!("all {live} live threads"),
                };
                parts.push(format!(
                    "{} threads wait at barrier {id} (expects {expected})",
                    b.waiting
                ));
            }
        }
        for (w, warp) in st.warps.iter().enumerate() {
            for p in &warp.pending {
                parts.push(format!(
                    "warp {w}: lanes {:#010x} wait in {} with membermask {:#010x} at {}:{}:{}; \
                     lanes {:#010x} never arrived",
                    p.arrived,
                    p.kind.ptx(),
                    p.mask,
                    p.site.file(),
                    p.site.line(),
                    p.site.column(),
                    p.mask & !p.arrived
                ));
            }
        }
        parts.extend(describe_warpgroup_waits(&st.warpgroups));
        parts.extend(super::wave::describe_wave_waits(&st.waves));
        parts.extend(st.mbarriers.describe_waits());
        parts.join("; ")
    }

    /// `bar.sync id` (`count = None`: all threads of the CTA) or `bar.sync id, count`.
    pub(crate) fn barrier(&self, ctx: &ThreadCtx<'_>, id: u32, count: Option<u32>) {
        if id as usize >= NUM_BARRIERS {
            raise(EmulatorError::Barrier {
                thread: ctx.thread_ref(),
                message: format!("barrier id {id} is not in 0..16"),
            });
        }
        if let Some(n) = count {
            if n == 0 || n % 32 != 0 || n > self.warps() * 32 {
                raise(EmulatorError::Barrier {
                    thread: ctx.thread_ref(),
                    message: format!(
                        "thread count {n} must be a non-zero multiple of 32 and at most {} \
                         (the block's threads rounded up to whole warps)",
                        self.warps() * 32
                    ),
                });
            }
        }
        let mut st = self.unwind_if_aborted(self.lock());
        self.mark_sync_used();
        let state = &mut st.barriers[id as usize];
        match state.count {
            None => state.count = Some(count),
            Some(c) if c != count => {
                let message = format!(
                    "barrier {id} is used with different thread counts ({} and {}) at the same time",
                    describe_count(c),
                    describe_count(count)
                );
                let thread = ctx.thread_ref();
                self.fail(st, EmulatorError::Barrier { thread, message });
            }
            Some(_) => {}
        }
        state.arrived += 1;
        let target = count.unwrap_or_else(|| self.live());
        if st.barriers[id as usize].arrived >= target {
            self.complete_barrier(&mut st, id as usize);
            return;
        }
        let state = &mut st.barriers[id as usize];
        state.waiting += 1;
        let generation = state.generation;
        let (st, ()) = self.block_until(st, |st| {
            (st.barriers[id as usize].generation != generation).then_some(())
        });
        drop(st);
    }

    fn complete_barrier(&self, st: &mut SyncState, id: usize) {
        let state = &mut st.barriers[id];
        let released = state.waiting;
        state.arrived = 0;
        state.waiting = 0;
        state.count = None;
        state.generation += 1;
        st.blocked -= released;
        self.publish_landed_copies();
        self.publish_retired_wgmma_reads();
    }

    /// Bookkeeping when a thread's kernel body returns (or unwinds). Returns whether it was the
    /// last thread of the block and whether the block has failed.
    ///
    /// Lock-free while the block has used no barrier or collective: `live` is decremented and
    /// `sync_used` re-read, both SeqCst. A synchronising thread sets `sync_used` before it reads
    /// `live` (both SeqCst, under the lock), so either it sees the decrement or this thread sees
    /// `sync_used` and redoes the completion checks under the lock.
    pub(super) fn thread_exit(&self) -> (bool, bool) {
        if !self.sync_used.load(Ordering::SeqCst) {
            let before = self.live.fetch_sub(1, Ordering::SeqCst);
            if !self.sync_used.load(Ordering::SeqCst) {
                return (before == 1, false);
            }
            let st = self.lock();
            return self.after_exit(st, before == 1);
        }
        let st = self.lock();
        let before = self.live.fetch_sub(1, Ordering::SeqCst);
        self.after_exit(st, before == 1)
    }

    /// Completes barriers that the exit satisfied and detects a deadlock it caused.
    fn after_exit(&self, mut st: MutexGuard<'_, SyncState>, last: bool) -> (bool, bool) {
        let live = self.live();
        for id in 0..NUM_BARRIERS {
            let b = st.barriers[id];
            if b.count == Some(None) && b.arrived > 0 && b.arrived >= live {
                self.complete_barrier(&mut st, id);
            }
        }
        if !st.aborted && live > 0 && st.blocked == live {
            let message = self.describe_waits(&st);
            let block = st.block_idx;
            if st.error.is_none() {
                st.error = Some(EmulatorError::Deadlock { block, message });
            }
            st.aborted = true;
            return (false, true);
        }
        (last, st.error.is_some())
    }

    /// Records a panic that escaped a kernel body.
    pub(super) fn record_panic(&self, thread: ThreadRef, payload: Box<dyn std::any::Any + Send>) {
        if payload.is::<Aborted>() {
            return;
        }
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "panic with a non-string payload".to_string()
        };
        let mut st = self.lock();
        self.mark_sync_used();
        if st.error.is_none() {
            st.error = Some(EmulatorError::ThreadPanicked { thread, message });
        }
        st.aborted = true;
    }

    /// End of a block, when every thread of it has exited: folds the shared-memory logs into
    /// wavefront statistics (emulating amdgpu, loads and stores on AMD's bank phases:
    /// [`amd_wavefronts`]), then returns the block's error.
    pub(super) fn finish_block(&self) -> Option<EmulatorError> {
        let logs = std::mem::take(&mut *self.logs.lock().unwrap_or_else(PoisonError::into_inner));
        let mut st = self.lock();
        // Group the accesses of each warp by (site, kind, occurrence).
        let mut records: Vec<(u32, usize, SharedAccessKind, u32, u32, &SharedRecord)> = logs
            .iter()
            .flat_map(|(warp, lane, log)| {
                log.iter().map(move |r| {
                    (
                        *warp,
                        r.site as *const Location as usize,
                        r.kind,
                        r.occurrence,
                        *lane,
                        r,
                    )
                })
            })
            .collect();
        records.sort_unstable_by_key(|&(w, s, k, o, _, r)| (w, s, k, o, r.address));
        let mut words = Vec::with_capacity(128);
        let mut lanes = Vec::with_capacity(32);
        let mut i = 0;
        while i < records.len() {
            let key = (records[i].0, records[i].1, records[i].2, records[i].3);
            words.clear();
            lanes.clear();
            let mut j = i;
            while j < records.len()
                && (records[j].0, records[j].1, records[j].2, records[j].3) == key
            {
                let r = records[j].5;
                let first = r.address / 4;
                let last = (r.address + r.bytes - 1) / 4;
                words.extend(first..=last);
                lanes.push((records[j].4, r.address, r.bytes));
                j += 1;
            }
            let site = records[i].5.site;
            match amd_wavefronts(self.target, key.2, &lanes) {
                Some(wavefronts) => st.sites.record_counted(site, key.2, wavefronts, &mut words),
                None => st.sites.record(site, key.2, &mut words),
            }
            i = j;
        }
        st.error.take()
    }

    /// Makes this slot host block `block` (index `block_idx`): every synchronisation reset,
    /// shared memory zeroed.
    pub(super) fn begin_block(&self, block: u64, block_idx: [u32; 3]) {
        let mut st = self.lock();
        st.hosted_block = block;
        st.block_idx = block_idx;
        self.live.store(self.threads, Ordering::SeqCst);
        self.sync_used.store(false, Ordering::SeqCst);
        st.blocked = 0;
        st.aborted = false;
        st.barriers = [BarrierState::default(); NUM_BARRIERS];
        st.mbarriers = MbarrierTable::default();
        for w in st.warps.iter_mut() {
            w.pending.clear();
            w.mailbox = [None; 32];
        }
        for g in st.warpgroups.iter_mut() {
            *g = WarpgroupState::default();
        }
        for w in st.waves.iter_mut() {
            *w = super::wave::WaveState::default();
        }
        // Nobody runs in this slot now: its old block is done, the new one not yet started.
        for word in self.shared.iter() {
            word.store(0, Ordering::Relaxed);
        }
        self.reset_async_copies();
        self.reset_wgmma_reads();
    }

    pub(crate) fn push_log(&self, warp: u32, lane: u32, log: Vec<SharedRecord>) {
        if !log.is_empty() {
            self.logs
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((warp, lane, log));
        }
    }
}

/// The wavefronts of one warp-wide load or store, `(lane, byte address, bytes)` per lane, when
/// the launch emulates amdgpu: AMD's LDS phases (`tessera_layout::plan::bank::phase_lanes`: a
/// wave's half per 32-bit access, 16 lanes per 64-bit one, 8 lanes per 128-bit store, the lane
/// groups of `ds_read_b128` per 128-bit load), summed over the phases. `None` on NVIDIA
/// targets, whose accesses the whole-warp model counts ([`super::report::wavefronts`]).
fn amd_wavefronts(
    target: EmulatedTarget,
    kind: SharedAccessKind,
    lanes: &[(u32, u32, u32)],
) -> Option<u64> {
    use tessera_layout::plan::bank::{phased_wavefronts, Side};
    use tessera_layout::plan::Vendor;
    let side = match kind {
        SharedAccessKind::Load => Side::Read,
        SharedAccessKind::Store => Side::Write,
        _ => return None,
    };
    (target == EmulatedTarget::Amdgpu)
        .then(|| u64::from(phased_wavefronts(Vendor::Amd, side, lanes)))
}

fn describe_count(c: Option<u32>) -> String {
    match c {
        None => "all threads".to_string(),
        Some(n) => format!("{n} threads"),
    }
}

/// Word index into the CTA's shared memory of a checked access, or the error.
pub(crate) fn shared_word_index(
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

pub(crate) fn perform_copy(t: &ThreadCtx<'_>, copy: &CpAsyncCopy) {
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
    t.cta
        .cp_async_landed(t.linear, base, (copy.cp_size / 4) as usize);
}
