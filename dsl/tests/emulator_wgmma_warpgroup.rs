//! `wgmma.mma_async` as a warpgroup collective in the emulator: the 128 threads rendezvous and
//! the operands are read once; divergent `wgmma`s are errors and a thread of the warpgroup that
//! never arrives is reported, naming the warpgroup and the site.

mod emulator_support;

use emulator_support::{assert_mentions, async_message, deadlock_message, run_block};
use tessera::device::*;
use tessera::emulator::EmulatorError;
use tessera::f16;
use tessera_layout::families::NvmmaShared;
use tessera_layout::plan::wgmma::{plan_operand, OperandPlan};

/// Shared memory: a 64 × 64 f16 tile and an 8-byte `mbarrier` behind it.
const TILE_BYTES: u32 = 64 * 64 * 2;
const SHARED_BYTES: usize = TILE_BYTES as usize + 8;

fn run(threads: u32, body: impl Fn(u32) + Sync) -> Result<(), EmulatorError> {
    run_block(threads, SHARED_BYTES, body)
}

fn plan() -> OperandPlan {
    plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 1, 64).unwrap()
}

/// The descriptor of the tile's K step `k_step` (M/N block 0) and a zeroed accumulator, fenced
/// for the `wgmma` that follows.
///
/// # Safety
/// Shared memory holds the tile at its base.
unsafe fn fenced_operands(plan: &OperandPlan, k_step: usize) -> (u64, WgmmaAccumulator<32>) {
    let desc = plan.descriptor_at(dynamic_shared_base(), 0, k_step);
    let acc = WgmmaAccumulator::<32>::zeroed();
    wgmma_fence();
    (desc, acc)
}

/// Every thread writes f16 1.0 to its share of the tile, then the block synchronises.
///
/// # Safety
/// Shared memory holds the tile at its base.
unsafe fn fill_ones(tid: u32, threads: u32) {
    let tile = dynamic_shared_base();
    let one = f16::from_f32(1.0).to_bits() as u32;
    let mut w = tid;
    while w < TILE_BYTES / 4 {
        st_shared_v1(tile + 4 * w, one | one << 16);
        w += threads;
    }
    fence_proxy_async_shared_cta();
    sync_threads();
}

#[test]
fn the_operands_are_read_once_at_the_rendezvous() {
    // Thread 0 zeroes the tile as soon as it has retired its wgmma (before then the write is an
    // error: `emulator_hopper.rs`), while other threads of the warpgroup may not have reached
    // their wait yet: every thread still sees A = B = 1 (the products of K = 16 ones), because
    // the warpgroup read them when its last thread arrived.
    let plan = plan();
    for _ in 0..4 {
        run(128, |tid| unsafe {
            fill_ones(tid, 128);
            let (desc, mut acc) = fenced_operands(&plan, 0);
            wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
            wgmma_commit_group();
            wgmma_wait_group::<0, _>(&mut acc);
            if tid == 0 {
                for w in 0..TILE_BYTES / 4 {
                    st_shared_v1(dynamic_shared_base() + 4 * w, 0);
                }
            }
            assert_eq!(acc.registers(), [16.0; 32]);
        })
        .unwrap();
    }
}

#[test]
fn divergent_descriptors_are_an_error() {
    let plan = plan();
    let message = async_message(run(128, |tid| unsafe {
        fill_ones(tid, 128);
        let (desc, mut acc) = fenced_operands(&plan, (tid / 64) as usize);
        wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
    }));
    assert_mentions(&message, &["warpgroup 0", "convergently"]);
}

#[test]
fn a_wgmma_on_two_branches_is_an_error_naming_both_sites() {
    // The same instruction but two sites: scale-d is per thread, the sites diverge.
    let plan = plan();
    let message = async_message(run(128, |tid| unsafe {
        fill_ones(tid, 128);
        let (desc, mut acc) = fenced_operands(&plan, 0);
        if tid % 2 == 0 {
            wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
        } else {
            wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, true);
        }
    }));
    assert!(message.contains("warpgroup 0"), "{message}");
    assert_eq!(
        message.matches("emulator_wgmma_warpgroup.rs").count(),
        2,
        "{message}"
    );
}

#[test]
fn a_thread_that_exits_before_the_wgmma_is_reported() {
    let plan = plan();
    let message = deadlock_message(run(256, |tid| unsafe {
        fill_ones(tid, 256);
        if tid == 133 {
            return;
        }
        let (desc, mut acc) = fenced_operands(&plan, 0);
        wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
    }));
    assert_mentions(
        &message,
        &[
            "warpgroup 1 (threads 128..256)",
            "threads 133 never arrived",
            "emulator_wgmma_warpgroup.rs",
        ],
    );
}

#[test]
fn a_consumer_thread_waiting_elsewhere_is_reported() {
    // The old shape of the Hopper matmul: thread 0 of the warpgroup waits on an `mbarrier` the
    // rest of the warpgroup would release only after the wgmma it is waiting in.
    let plan = plan();
    let message = deadlock_message(run(128, |tid| unsafe {
        let bar = dynamic_shared_base() + TILE_BYTES;
        if tid == 0 {
            mbarrier_init(bar, 1);
            fence_mbarrier_init();
        }
        fill_ones(tid, 128);
        let (desc, mut acc) = fenced_operands(&plan, 0);
        if tid == 0 {
            mbarrier_wait_parity(bar, 0);
        }
        wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
        wgmma_commit_group();
        wgmma_wait_group::<0, _>(&mut acc);
        if tid == 1 {
            mbarrier_arrive(bar);
        }
    }));
    assert_mentions(
        &message,
        &[
            "warpgroup 0 (threads 0..128): 127 threads",
            "threads 0 never arrived",
            "mbarrier",
        ],
    );
}
