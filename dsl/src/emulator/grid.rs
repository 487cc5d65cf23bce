//! The launch loop over the grid: the workers and the coroutines the simulated threads run on.
//!
//! A launch runs on a few OS threads (workers, one per core); each hosts a few blocks at a time
//! in CTA slots of its own ([`Cta`]) and runs every thread of them as a stackful coroutine
//! (`corosensei`), in turn: a thread runs until it must wait (a barrier, a warp collective, an
//! `mbarrier`, a `wgmma` or `mfma` rendezvous: `Cta::block_until`), then suspends ([`suspend`]),
//! and the worker resumes the next. A wait is a switch of stacks in user space, where one OS
//! thread per GPU thread made it two switches of the kernel's scheduler per waiting thread
//! (millions per launch of a kernel with shuffles). A thread also suspends every
//! `ACCESSES_PER_TURN` global accesses (`cta::count_access`), so that one polling memory that
//! another thread or block writes lets it run.

use std::cell::Cell;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::cta::{complete_all_cp_async, Cta, ThreadCtx, CURRENT};
use super::error::EmulatorError;
use super::machine::{MAX_DYNAMIC_SHARED_BYTES, MAX_THREADS_PER_BLOCK};
use super::report::EmulatorReport;

/// The coroutine of a simulated thread: resumed with nothing, suspends with nothing.
type ThreadYielder = Yielder<(), ()>;
type ThreadCoroutine<'s> = Coroutine<(), (), (), &'s mut DefaultStack>;

thread_local! {
    /// The yielder of the coroutine the current OS thread runs.
    static YIELDER: Cell<*const ThreadYielder> = const { Cell::new(std::ptr::null()) };
}

/// Suspends the simulated thread the current OS thread runs; its worker resumes it after the
/// others had their turn. The thread-locals naming the simulated thread are its own again on
/// return.
pub(crate) fn suspend() {
    let current = CURRENT.with(Cell::get);
    let yielder = YIELDER.with(Cell::get);
    assert!(
        !yielder.is_null(),
        "a simulated thread waited outside the emulator's coroutines"
    );
    // SAFETY: YIELDER points to the yielder of the running coroutine, set when it started and
    // restored here after each of its suspensions; the worker resumes it on this OS thread.
    unsafe { &*yielder }.suspend(());
    CURRENT.with(|c| c.set(current));
    YIELDER.with(|c| c.set(yielder));
}

fn validate(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: usize,
) -> Result<(), EmulatorError> {
    let invalid = |reason: String| Err(EmulatorError::InvalidLaunch { reason });
    if grid.contains(&0) || block.contains(&0) {
        return invalid(format!(
            "grid {grid:?} and block {block:?} must have every dimension >= 1"
        ));
    }
    if grid[0] > i32::MAX as u32 || grid[1] > 65535 || grid[2] > 65535 {
        return invalid(format!(
            "grid {grid:?} exceeds the limits (2^31 - 1, 65535, 65535)"
        ));
    }
    if block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
        return invalid(format!(
            "block {block:?} exceeds the per-dimension limits (1024, 1024, 64)"
        ));
    }
    let threads = block[0] as u64 * block[1] as u64 * block[2] as u64;
    if threads > MAX_THREADS_PER_BLOCK as u64 {
        return invalid(format!(
            "block {block:?} has {threads} threads, more than {MAX_THREADS_PER_BLOCK}"
        ));
    }
    if dynamic_shared_bytes > MAX_DYNAMIC_SHARED_BYTES {
        return invalid(format!(
            "{dynamic_shared_bytes} bytes of dynamic shared memory requested, more than the \
             {MAX_DYNAMIC_SHARED_BYTES} a block can have"
        ));
    }
    if CURRENT.with(|c| !c.get().is_null()) {
        return invalid("run_grid was called from inside a running kernel".to_string());
    }
    Ok(())
}

/// Most blocks in flight at once over all workers (each with its own CTA state and shared
/// memory).
const BLOCKS_IN_FLIGHT: u64 = 32;

/// Most coroutines one worker keeps (its blocks in flight times their threads).
const COROUTINES_PER_WORKER: u64 = 2048;

/// Most coroutines of a launch (a stack is two memory mappings, and Linux allows a process
/// 65,530 by default): fewer workers for large blocks on many cores.
const COROUTINES_PER_LAUNCH: u64 = 16384;

/// Stack of each simulated thread's coroutine (address space, committed as it is touched; an
/// OS thread's default is 2 MiB).
const THREAD_STACK_BYTES: usize = 4 << 20;

/// Runs `thread_body` once for every thread of every block of the grid. Inside the body, the
/// [`crate::device`] functions behave as on the GPU: special registers, barriers, warp
/// collectives, `dynamic_shared_bytes` of zero-initialised shared memory per block (bounds
/// checked), global memory = host memory addressed by [`crate::Ptr`].
///
/// Scheduling (the module's docs): one worker (OS thread) per core, each hosting up to
/// `min(32 / workers, 2048 / threads)` blocks at once in CTA slots of its own (at least one),
/// like CTAs resident on an SM, and running their threads as coroutines in turn. Blocks start
/// in linear order (x fastest) as slots free up; a block only ever waits for its own threads.
///
/// Returns the shared-memory wavefront report, or the first error: a bad launch configuration,
/// an out-of-range shared access, a misaligned address, a misused warp collective, a deadlock or
/// a panic in a thread (all name the block and thread): of the lowest block that fails. When a
/// thread fails, the blocks after its own stop (their waiting threads released) and the blocks
/// before it run to their end; nothing hangs on a barrier.
pub fn run_grid(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: usize,
    thread_body: &(dyn Fn() + Sync),
) -> Result<EmulatorReport, EmulatorError> {
    launch(grid, block, dynamic_shared_bytes, None, thread_body)
}

/// [`run_grid`] with a map of global memory: every global access (loads, stores, `cp.async`
/// sources) must lie inside one of the byte ranges `global_memory` (the launch's allocations,
/// as host addresses); anything else is an [`EmulatorError::GlobalOutOfBounds`] naming the
/// thread and address, instead of touching host memory outside the buffers.
pub fn run_grid_in(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: usize,
    global_memory: &[Range<u64>],
    thread_body: &(dyn Fn() + Sync),
) -> Result<EmulatorReport, EmulatorError> {
    let mut ranges: Vec<(u64, u64)> = global_memory
        .iter()
        .filter(|r| r.start < r.end)
        .map(|r| (r.start, r.end))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    launch(
        grid,
        block,
        dynamic_shared_bytes,
        Some(merged.into()),
        thread_body,
    )
}

fn launch(
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: usize,
    global_memory: Option<Arc<[(u64, u64)]>>,
    thread_body: &(dyn Fn() + Sync),
) -> Result<EmulatorReport, EmulatorError> {
    validate(grid, block, dynamic_shared_bytes)?;
    let target = super::target::launch_target()?;
    let threads = block[0] * block[1] * block[2];
    let blocks = grid[0] as u64 * grid[1] as u64 * grid[2] as u64;
    let block_idx_of = |b: u64| -> [u32; 3] {
        let gx = grid[0] as u64;
        let gy = grid[1] as u64;
        [
            (b % gx) as u32,
            (b / gx % gy) as u32,
            (b / (gx * gy)) as u32,
        ]
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get() as u64)
        .clamp(
            1,
            blocks
                .min(BLOCKS_IN_FLIGHT)
                .min((COROUTINES_PER_LAUNCH / threads as u64).max(1)),
        );
    let per_worker = (BLOCKS_IN_FLIGHT / workers)
        .min(COROUTINES_PER_WORKER / threads as u64)
        .clamp(1, blocks.div_ceil(workers));
    let slots: Vec<Cta> = (0..workers * per_worker)
        .map(|_| {
            let shared_bytes = dynamic_shared_bytes as u32;
            Cta::new(global_memory.clone(), grid, block, shared_bytes, target)
        })
        .collect();
    // The next block to start.
    let next_block = AtomicU64::new(0);
    // The lowest block that failed (`u64::MAX`: none). The blocks after it stop and none
    // starts; those before it (all started: blocks start in order) run to their end, so that
    // the error reported is the lowest failing block's whatever the workers' timing.
    let failed_at = AtomicU64::new(u64::MAX);
    // Errors of finished blocks, with their linear block index.
    let outcome: Mutex<Vec<(u64, EmulatorError)>> = Mutex::new(Vec::new());
    let stop_after = |failed: u64| {
        failed_at.fetch_min(failed, Ordering::SeqCst);
        for slot in &slots {
            slot.abort_after(failed);
        }
    };
    // Every block stops (a worker could not start).
    let stop_all = || {
        failed_at.store(0, Ordering::SeqCst);
        for slot in &slots {
            slot.abort();
        }
    };
    // The life of simulated thread `linear` of block `block`, which `cta` hosts, on a coroutine.
    let run_thread = |cta: &Cta, block: u64, linear: u32, yielder: &ThreadYielder| {
        let ctx = ThreadCtx::new(cta, linear);
        CURRENT.with(|c| c.set((&ctx as *const ThreadCtx<'_>).cast::<ThreadCtx<'static>>()));
        YIELDER.with(|c| c.set(yielder as *const ThreadYielder));
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            thread_body();
            // Copies never waited for still land in shared memory on the GPU.
            complete_all_cp_async(&ctx);
        }));
        CURRENT.with(|c| c.set(std::ptr::null()));
        YIELDER.with(|c| c.set(std::ptr::null()));
        if let Err(payload) = result {
            cta.record_panic(ctx.thread_ref(), payload);
        }
        let log = std::mem::take(&mut ctx.local.borrow_mut().log);
        cta.push_log(ctx.warp(), ctx.lane(), log);
        let (_, failed) = cta.thread_exit();
        if failed {
            stop_after(block);
        }
    };
    // A worker: its slots' blocks, their threads resumed in turn until each has returned.
    let worker = |w: u64| -> Result<(), EmulatorError> {
        // Worker `w`'s slots are `w * per_worker ..`.
        let own = &slots[(w * per_worker) as usize..((w + 1) * per_worker) as usize];
        let mut stacks: Vec<DefaultStack> = (0..own.len() * threads as usize)
            .map(|_| DefaultStack::new(THREAD_STACK_BYTES))
            .collect::<Result<_, _>>()
            .map_err(|e| EmulatorError::ThreadSpawn {
                threads,
                message: format!("a coroutine stack of {THREAD_STACK_BYTES} bytes: {e}"),
            })?;
        let mut free: Vec<&mut DefaultStack> = stacks.iter_mut().collect();
        // Per slot: the block it runs and its threads' coroutines (an idle slot has none).
        let mut running: Vec<(u64, Vec<ThreadCoroutine<'_>>)> = Vec::new();
        running.resize_with(own.len(), || (0, Vec::new()));
        loop {
            let mut busy = false;
            for (slot, (block, threads_of)) in own.iter().zip(running.iter_mut()) {
                if threads_of.is_empty() {
                    let b = next_block.fetch_add(1, Ordering::Relaxed);
                    if b < blocks && b < failed_at.load(Ordering::SeqCst) {
                        slot.begin_block(b, block_idx_of(b));
                        *block = b;
                        let run_thread = &run_thread;
                        for linear in 0..threads {
                            let Some(stack) = free.pop() else {
                                unreachable!("a stack per thread of each slot")
                            };
                            // SAFETY: the coroutine borrows the slot, the launch's closures and
                            // the stack, all of which outlive it: it is dropped once it has
                            // returned (below), or at the end of this worker.
                            threads_of.push(unsafe {
                                Coroutine::with_stack_unchecked(stack, move |yielder, ()| {
                                    run_thread(slot, b, linear, yielder)
                                })
                            });
                        }
                    }
                }
                if threads_of.is_empty() {
                    continue;
                }
                busy = true;
                let mut done = true;
                for thread in threads_of.iter_mut() {
                    if !thread.done() {
                        if let CoroutineResult::Yield(()) = thread.resume(()) {
                            done = false;
                        }
                    }
                }
                CURRENT.with(|c| c.set(std::ptr::null()));
                YIELDER.with(|c| c.set(std::ptr::null()));
                if done {
                    free.extend(threads_of.drain(..).map(Coroutine::into_stack));
                    if let Some(error) = slot.finish_block() {
                        outcome
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push((*block, error));
                        stop_after(*block);
                    }
                }
            }
            if !busy {
                return Ok(());
            }
        }
    };
    let spawn_result = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for w in 0..workers {
            let worker = &worker;
            let spawned = std::thread::Builder::new()
                .name(format!("tessera-emu-w{w}"))
                .spawn_scoped(scope, move || worker(w));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    stop_all();
                    return Err(EmulatorError::ThreadSpawn {
                        threads,
                        message: e.to_string(),
                    });
                }
            }
        }
        let mut result = Ok(());
        for handle in handles {
            let outcome = handle
                .join()
                .unwrap_or_else(|payload| panic::resume_unwind(payload));
            if let (Ok(()), Err(e)) = (&result, outcome) {
                stop_all();
                result = Err(e);
            }
        }
        result
    });
    spawn_result?;
    // The error of a block that stopped before all its threads exited is still in its slot.
    // Several blocks in flight can fail at once: report the lowest block's error.
    let mut errors = outcome.into_inner().unwrap_or_else(PoisonError::into_inner);
    errors.extend(slots.iter().filter_map(Cta::take_error));
    if let Some((_, error)) = errors.into_iter().min_by_key(|(b, _)| *b) {
        return Err(error);
    }
    let mut report = EmulatorReport {
        blocks,
        threads_per_block: threads,
        ..EmulatorReport::default()
    };
    for slot in &slots {
        slot.lock().sites.drain_into(&mut report);
    }
    Ok(report)
}
