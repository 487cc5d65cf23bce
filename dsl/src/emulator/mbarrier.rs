//! `mbarrier` objects in shared memory: arrival counts, transaction bytes and phases.
//!
//! A barrier expects `count` arrivals per phase. Its current phase completes when every
//! arrival has happened **and** the transaction count (raised by `expect_tx`, lowered by the
//! bytes of asynchronous copies that complete on it) is back to zero; then the next phase
//! starts with `count` pending arrivals. `try_wait.parity P` succeeds when the phase of
//! parity `P` it names has completed: the current phase if its parity is `P`, else the one
//! before it.
//!
//! The emulator keeps the state beside shared memory, keyed by the barrier's shared address,
//! under the CTA lock. Data of TMA copies that complete on a barrier lands in shared memory
//! when the phase completes, so a thread that reads it without waiting sees stale data.
//! A waiting thread sleeps until the phase completes; a wait that can never end (too few
//! arrivals, missing transaction bytes, the wrong parity) is reported as a deadlock naming the
//! barrier, and a wait that would pass on a phase the thread has already waited for (a parity
//! that was not flipped) is an error.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use super::cta::{raise, with_thread, Cta, SyncState, ThreadCtx};
use super::error::EmulatorError;
use super::SHARED_WINDOW_BASE;

/// Most arrivals one phase may expect (`2^20 - 1`).
pub(crate) const MAX_ARRIVALS: u32 = (1 << 20) - 1;

/// One `mbarrier` object.
#[derive(Default)]
struct Mbarrier {
    /// Arrivals per phase (the `init` count).
    expected: u32,
    /// Arrivals still missing in the current phase.
    pending: u32,
    /// Outstanding transaction bytes of the current phase (may go below zero transiently).
    tx: i64,
    /// Number of completed phases; the current phase has this number.
    completed: u64,
    /// Threads sleeping in `try_wait` on this barrier.
    waiting: u32,
    /// Shared-memory words written by asynchronous copies, applied when the phase completes.
    landing: Vec<(usize, u32)>,
    /// Per thread (linear index): the last phase number it waited for.
    observed: HashMap<u32, i64>,
}

/// Every live `mbarrier` of a CTA, by shared address.
#[derive(Default)]
pub(crate) struct MbarrierTable {
    barriers: HashMap<u32, Mbarrier>,
}

impl MbarrierTable {
    /// One line per barrier that threads wait on, for deadlock reports.
    pub(crate) fn describe_waits(&self) -> Vec<String> {
        let mut lines: Vec<(u32, String)> = self
            .barriers
            .iter()
            .filter(|(_, b)| b.waiting > 0)
            .map(|(&addr, b)| {
                (
                    addr,
                    format!(
                        "{} threads wait on mbarrier {addr:#x} for phase {} (parity {}), which \
                         misses {} of {} arrivals and {} transaction bytes",
                        b.waiting,
                        b.completed,
                        b.completed % 2,
                        b.pending,
                        b.expected,
                        b.tx
                    ),
                )
            })
            .collect();
        lines.sort();
        lines.into_iter().map(|(_, line)| line).collect()
    }
}

/// Raises an [`EmulatorError::AsyncOperation`] of the current thread.
pub(crate) fn async_error(t: &ThreadCtx<'_>, op: &'static str, message: String) -> ! {
    raise(EmulatorError::AsyncOperation {
        thread: t.thread_ref(),
        op,
        message,
    })
}

/// Checks that `addr` can hold an 8-byte `mbarrier` in this CTA's shared memory.
fn check_address(t: &ThreadCtx<'_>, addr: u32, op: &'static str) {
    let end = addr as u64 + 8;
    if !addr.is_multiple_of(8)
        || addr < SHARED_WINDOW_BASE
        || end > SHARED_WINDOW_BASE as u64 + t.cta.shared_bytes as u64
    {
        async_error(
            t,
            op,
            format!(
                "address {addr:#x} is not an 8-byte aligned location inside the {} bytes of \
                 dynamic shared memory",
                t.cta.shared_bytes
            ),
        );
    }
}

impl Cta {
    /// Runs `f` on the barrier at `addr` under the CTA lock, then completes its phase if every
    /// arrival and transaction byte is in. An `Err` of `f` is raised after the lock is released.
    fn with_mbarrier<R>(
        &self,
        t: &ThreadCtx<'_>,
        addr: u32,
        op: &'static str,
        f: impl FnOnce(&mut Mbarrier) -> Result<R, String>,
    ) -> R {
        check_address(t, addr, op);
        let mut st = self.unwind_if_aborted(self.lock());
        let Some(barrier) = st.mbarriers.barriers.get_mut(&addr) else {
            drop(st);
            async_error(
                t,
                op,
                format!("the mbarrier at {addr:#x} is not initialised (mbarrier.init)"),
            );
        };
        match f(barrier) {
            Ok(result) => {
                self.complete_phase_if_done(&mut st, addr);
                result
            }
            Err(message) => {
                drop(st);
                async_error(t, op, message)
            }
        }
    }

    fn complete_phase_if_done(&self, st: &mut MutexGuard<'_, SyncState>, addr: u32) {
        let Some(barrier) = st.mbarriers.barriers.get_mut(&addr) else {
            return;
        };
        if barrier.pending > 0 || barrier.tx != 0 {
            return;
        }
        for (word, value) in barrier.landing.drain(..) {
            self.shared[word].store(value, Ordering::Relaxed);
        }
        barrier.completed += 1;
        barrier.pending = barrier.expected;
        let released = std::mem::take(&mut barrier.waiting);
        st.blocked -= released;
    }
}

/// `mbarrier.init.shared::cta.b64 [addr], count`.
#[track_caller]
pub(crate) fn init(addr: u32, count: u32) {
    super::target::nvidia_instruction("mbarrier.init");
    let op = "mbarrier.init.shared::cta.b64";
    with_thread(|t| {
        check_address(t, addr, op);
        if count == 0 || count > MAX_ARRIVALS {
            async_error(
                t,
                op,
                format!("arrival count {count} is not in 1..={MAX_ARRIVALS}"),
            );
        }
        let mut st = t.cta.unwind_if_aborted(t.cta.lock());
        if st.mbarriers.barriers.contains_key(&addr) {
            drop(st);
            async_error(
                t,
                op,
                format!(
                    "the mbarrier at {addr:#x} is already initialised (mbarrier.inval it first)"
                ),
            );
        }
        st.mbarriers.barriers.insert(
            addr,
            Mbarrier {
                expected: count,
                pending: count,
                ..Mbarrier::default()
            },
        );
    })
}

/// `mbarrier.inval.shared::cta.b64 [addr]`.
pub(crate) fn inval(addr: u32) {
    let op = "mbarrier.inval.shared::cta.b64";
    with_thread(|t| {
        check_address(t, addr, op);
        let mut st = t.cta.unwind_if_aborted(t.cta.lock());
        match st.mbarriers.barriers.get(&addr).map(|b| b.waiting) {
            None => {
                drop(st);
                async_error(
                    t,
                    op,
                    format!("the mbarrier at {addr:#x} is not initialised"),
                )
            }
            Some(0) => {
                st.mbarriers.barriers.remove(&addr);
            }
            Some(waiting) => {
                drop(st);
                async_error(
                    t,
                    op,
                    format!("{waiting} threads still wait on the mbarrier at {addr:#x}"),
                )
            }
        }
    })
}

/// `mbarrier.arrive{.expect_tx}.shared::cta.b64 state, [addr]{, tx}`: raises the transaction
/// count by `tx` bytes, then arrives once. Returns the phase number arrived on (the state).
pub(crate) fn arrive(addr: u32, tx: u32, op: &'static str) -> u64 {
    with_thread(|t| {
        t.cta.with_mbarrier(t, addr, op, |b| {
            if b.pending == 0 {
                return Err(format!(
                    "phase {} of the mbarrier at {addr:#x} already has its {} arrivals and waits \
                     for {} transaction bytes: more threads arrive than its init count",
                    b.completed, b.expected, b.tx
                ));
            }
            b.tx += tx as i64;
            b.pending -= 1;
            Ok(b.completed)
        })
    })
}

/// The `complete_tx` of an asynchronous copy of `bytes` bytes whose data is `words`
/// (shared word index, value): the data lands when the phase completes.
pub(crate) fn complete_tx(
    t: &ThreadCtx<'_>,
    addr: u32,
    bytes: u32,
    words: Vec<(usize, u32)>,
    op: &'static str,
) {
    t.cta.with_mbarrier(t, addr, op, |b| {
        b.tx -= bytes as i64;
        b.landing.extend(words);
        Ok(())
    })
}

/// `mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity`: sleeps until the phase of
/// parity `parity` has completed (the GPU may return false after a time limit and the kernel
/// retries; the emulator waits instead), then returns true.
pub(crate) fn try_wait_parity(addr: u32, parity: u32) -> bool {
    let op = "mbarrier.try_wait.parity.shared::cta.b64";
    with_thread(|t| {
        let cta = t.cta;
        // The phase waited for: the current one if its parity is `parity`, else the one before.
        let (target, seen) = cta.with_mbarrier(t, addr, op, |b| {
            let current = b.completed as i64;
            let target = if current % 2 == (parity % 2) as i64 {
                current
            } else {
                current - 1
            };
            Ok((target, b.observed.insert(t.linear, target)))
        });
        if let Some(seen) = seen.filter(|&seen| target <= seen) {
            async_error(
                t,
                op,
                format!(
                    "parity {parity} names phase {target} of the mbarrier at {addr:#x}, but this \
                     thread already waited for phase {seen}: the parity was not flipped, so on \
                     the GPU this wait passes at once"
                ),
            );
        }
        let invalidated = || -> ! {
            async_error(
                t,
                op,
                format!("the mbarrier at {addr:#x} was invalidated while waited on"),
            )
        };
        let mut st = cta.unwind_if_aborted(cta.lock());
        match st.mbarriers.barriers.get_mut(&addr) {
            Some(b) if b.completed as i64 > target => return true,
            Some(b) => b.waiting += 1,
            None => {
                drop(st);
                invalidated()
            }
        }
        // Released when the phase completes (true) or the barrier is invalidated (false).
        let (st, completed) = cta.block_until(st, |st| match st.mbarriers.barriers.get(&addr) {
            Some(b) if b.completed as i64 > target => Some(true),
            Some(_) => None,
            None => Some(false),
        });
        if !completed {
            drop(st);
            invalidated()
        }
        true
    })
}
