//! `mbarrier` (sm_90): shared-memory barriers with arrival counts, transaction bytes and
//! phases, the completion mechanism of TMA copies.
//!
//! ```text
//! mbarrier.init.shared::cta.b64 [bar], count;                 // count arrivals per phase
//! mbarrier.arrive.shared::cta.b64 state, [bar];               // one arrival
//! mbarrier.arrive.expect_tx.shared::cta.b64 state, [bar], tx; // tx more bytes, one arrival
//! mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity;  // has that phase completed?
//! mbarrier.inval.shared::cta.b64 [bar];
//! ```
//!
//! A phase completes when all `count` arrivals happened and the transaction count is zero
//! (copies lower it by their bytes as they land). Phases alternate parity 0, 1, 0, …: a thread
//! waits for phase `i` with parity `i % 2`. The barrier is an 8-byte aligned 8-byte object at
//! a shared-window address. On the emulator the model of `emulator::mbarrier` (module docs of
//! [`crate::emulator`]) reports waits that could never end and waits with a stale parity.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::mbarrier;

/// `mbarrier.init.shared::cta.b64 [bar], count`: a barrier expecting `count` arrivals per
/// phase, in phase 0.
///
/// # Safety
/// `bar` must be an 8-byte aligned shared address of 8 bytes no other operation uses.
#[inline(always)]
pub unsafe fn mbarrier_init(bar: u32, count: u32) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "mbarrier.init.shared::cta.b64 [{bar}], {count};",
        bar = in(reg32) bar,
        count = in(reg32) count,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    mbarrier::init(bar, count);
}

/// `mbarrier.inval.shared::cta.b64 [bar]`: the barrier's memory may be reused.
///
/// # Safety
/// `bar` must be an initialised barrier no thread waits on.
#[inline(always)]
pub unsafe fn mbarrier_inval(bar: u32) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "mbarrier.inval.shared::cta.b64 [{bar}];",
        bar = in(reg32) bar,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    mbarrier::inval(bar);
}

/// `mbarrier.arrive.shared::cta.b64 state, [bar]`: one arrival; returns the state token.
///
/// # Safety
/// `bar` must be an initialised barrier.
#[inline(always)]
pub unsafe fn mbarrier_arrive(bar: u32) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let state: u64;
        asm!(
            "mbarrier.arrive.shared::cta.b64 {state}, [{bar}];",
            state = out(reg64) state,
            bar = in(reg32) bar,
            options(nostack)
        );
        state
    }
    #[cfg(not(tessera_device))]
    mbarrier::arrive(bar, 0, "mbarrier.arrive.shared::cta.b64")
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 state, [bar], tx`: raises the phase's
/// transaction count by `tx` bytes, then one arrival; returns the state token.
///
/// # Safety
/// `bar` must be an initialised barrier.
#[inline(always)]
pub unsafe fn mbarrier_arrive_expect_tx(bar: u32, tx: u32) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let state: u64;
        asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 {state}, [{bar}], {tx};",
            state = out(reg64) state,
            bar = in(reg32) bar,
            tx = in(reg32) tx,
            options(nostack)
        );
        state
    }
    #[cfg(not(tessera_device))]
    mbarrier::arrive(bar, tx, "mbarrier.arrive.expect_tx.shared::cta.b64")
}

/// `mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity`: whether the phase of parity
/// `parity` (the current phase if it has that parity, else the one before) has completed. The
/// GPU may suspend the thread for a while before answering false; the emulator answers once
/// the phase has completed.
///
/// # Safety
/// `bar` must be an initialised barrier.
#[inline(always)]
pub unsafe fn mbarrier_try_wait_parity(bar: u32, parity: u32) -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let done: u32;
        asm!(
            "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{bar}], {parity}; \
             selp.u32 {done}, 1, 0, p; }}",
            done = out(reg32) done,
            bar = in(reg32) bar,
            parity = in(reg32) parity,
            options(nostack)
        );
        done != 0
    }
    #[cfg(not(tessera_device))]
    mbarrier::try_wait_parity(bar, parity)
}

/// Waits until the phase of parity `parity` of `bar` has completed (a `try_wait` loop).
///
/// # Safety
/// `bar` must be an initialised barrier.
#[inline(always)]
pub unsafe fn mbarrier_wait_parity(bar: u32, parity: u32) {
    while !mbarrier_try_wait_parity(bar, parity) {}
}

operandless_op!(
    /// `fence.mbarrier_init.release.cluster`: makes `mbarrier.init` visible to the asynchronous
    /// proxy (TMA) before a CTA barrier (nothing on the emulator).
    fence_mbarrier_init, "fence.mbarrier_init.release.cluster;", host {}
);

operandless_op!(
    /// `fence.proxy.async.shared::cta`: orders this thread's generic-proxy shared-memory accesses
    /// with later asynchronous-proxy ones (`wgmma` operand reads, TMA) and vice versa (nothing on
    /// the emulator).
    fence_proxy_async_shared_cta, "fence.proxy.async.shared::cta;", host {}
);
