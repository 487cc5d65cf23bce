//! `cp.async` on the emulator: copies land when their group is waited for, zero-fill for masked
//! lanes, `wait_group N` leaves the N newest groups pending, checks on both addresses; a read of
//! a copy not waited for, or another thread's copy before a barrier, is an error.

mod emulator_support;

use emulator_support::{run_block_with_output, run_warp_with_output, Buffer};
use tessera::device::*;
use tessera::emulator::{run_grid, EmulatorError, EmulatorReport, SharedAccessKind};
use tessera::Ptr;

#[test]
fn copies_complete_at_wait_group_not_before() {
    let src: Vec<u32> = (1..=64).collect();
    let mut input = Buffer::from_u32(&src);
    let in_ptr: Ptr<u32> = input.ptr();
    let out = run_warp_with_output(256, 32 * 4, |out_ptr: Ptr<u32>| unsafe {
        let lane = lane_id();
        let base = dynamic_shared_base();
        // Group 0: words 0..32 (4 bytes per lane), group 1: words 32..64 (8 bytes per even lane).
        cp_async_ca::<4, u32>(base + 4 * lane, in_ptr.offset(lane as isize));
        cp_async_commit_group();
        if lane.is_multiple_of(2) {
            cp_async_ca::<8, u32>(base + 128 + 4 * lane, in_ptr.offset(32 + lane as isize));
        }
        cp_async_commit_group();
        cp_async_wait_group::<1>();
        let first: u32 = ld_shared_v1(base + 4 * lane);
        cp_async_wait_group::<0>();
        sync_threads();
        let second: u32 = ld_shared_v1(base + 128 + 4 * lane);
        st_global_v4(
            out_ptr.offset(4 * lane as isize),
            true,
            [first, second, 0, 0],
        );
    });
    let got = out.to_u32();
    for lane in 0..32usize {
        let w = &got[4 * lane..4 * lane + 4];
        assert_eq!(
            w[0],
            lane as u32 + 1,
            "lane {lane}: own copy after wait_group 1"
        );
        assert_eq!(w[1], 33 + lane as u32, "lane {lane}");
    }
}

/// The message of the `AsyncOperation` error of `err` (a panic otherwise).
fn async_message(err: EmulatorError) -> String {
    match err {
        EmulatorError::AsyncOperation { message, .. } => message,
        other => panic!("expected an AsyncOperation error, got {other}"),
    }
}

/// Runs one warp in which lane `l` copies words `4l..4l + 4` of `0..128` with one 16-byte
/// `cp.async.cg` to shared memory at byte `16l`, then runs `after(shared base, lane)`.
fn copy_then(after: &(dyn Fn(u32, u32) + Sync)) -> Result<EmulatorReport, EmulatorError> {
    let mut input = Buffer::from_u32(&(0..128).collect::<Vec<u32>>());
    let in_ptr: Ptr<u32> = input.ptr();
    run_grid([1, 1, 1], [32, 1, 1], 512, &|| unsafe {
        let lane = lane_id();
        let base = dynamic_shared_base();
        cp_async_cg(base + 16 * lane, in_ptr.offset(4 * lane as isize));
        after(base, lane);
    })
}

#[test]
fn reading_a_copy_before_its_wait_is_an_error() {
    // The copy is issued and committed, but the read comes before any wait_group.
    let err = copy_then(&|base, lane| unsafe {
        cp_async_commit_group();
        let _: [u32; 4] = ld_shared_v4(base + 16 * lane);
    })
    .unwrap_err();
    let message = async_message(err);
    assert!(message.contains("still writing"), "{message}");
    // wait_group 1 leaves the newest group pending: reading it is an error too.
    let err = copy_then(&|base, lane| unsafe {
        cp_async_commit_group();
        cp_async_wait_group::<1>();
        sync_threads();
        let _: [u32; 4] = ld_shared_v4(base + 16 * lane);
    })
    .unwrap_err();
    assert!(async_message(err).contains("still writing"));
}

#[test]
fn reading_another_threads_copy_needs_a_barrier_after_the_wait() {
    // ldmatrix reads rows copied by other lanes: waited for, but no barrier.
    let err = copy_then(&|base, lane| unsafe {
        cp_async_wait_all();
        let _ = ldmatrix_x4(base + 16 * ((lane + 1) % 32));
    })
    .unwrap_err();
    let message = async_message(err);
    assert!(message.contains("no bar.sync"), "{message}");
    // With the barrier the same reads are clean.
    copy_then(&|base, lane| unsafe {
        cp_async_wait_all();
        sync_threads();
        let _ = ldmatrix_x4(base + 16 * ((lane + 1) % 32));
    })
    .unwrap();
}

#[test]
fn zfill_writes_zeros_and_reads_nothing_for_masked_lanes() {
    let src: Vec<u32> = (100..164).collect();
    let mut input = Buffer::from_u32(&src);
    let in_ptr: Ptr<u32> = input.ptr();
    let out = run_block_with_output(16, 256, 64, |out_ptr: Ptr<u32>| unsafe {
        let t = thread_idx_x();
        let base = dynamic_shared_base();
        // Pre-fill shared memory with garbage, then copy 16 bytes per lane; odd lanes masked
        // (with a null source, which must not be read).
        st_shared_v4(base + 16 * t, [7u32; 4]);
        sync_threads();
        let pred = t.is_multiple_of(2);
        let src = if pred {
            in_ptr.offset(4 * t as isize)
        } else {
            Ptr::from_addr(0)
        };
        if t < 8 {
            cp_async_cg_zfill(base + 16 * t, src, pred);
        } else {
            cp_async_ca_zfill::<16, u32>(base + 16 * t, src, pred);
        }
        cp_async_wait_all();
        let v: [u32; 4] = ld_shared_v4(base + 16 * t);
        st_global_v4(out_ptr.offset(4 * t as isize), true, v);
    });
    let got = out.to_u32();
    for t in 0..16usize {
        for k in 0..4 {
            let want = if t % 2 == 0 {
                100 + 4 * t as u32 + k as u32
            } else {
                0
            };
            assert_eq!(got[4 * t + k], want, "thread {t} word {k}");
        }
    }
}

#[test]
fn copies_never_waited_for_still_land_at_thread_exit() {
    let mut input = Buffer::from_u32(&[5, 6, 7, 8]);
    let in_ptr: Ptr<u32> = input.ptr();
    // Block 0 leaves its copy pending; the emulator completes it when the thread exits, so the
    // launch is clean (the copy target is checked at issue).
    let report = run_grid([1, 1, 1], [1, 1, 1], 16, &|| unsafe {
        cp_async_cg(dynamic_shared_base(), in_ptr);
    })
    .unwrap();
    assert_eq!(report.shared_sites.len(), 1);
    assert_eq!(report.shared_sites[0].kind, SharedAccessKind::CpAsync);
    assert_eq!(report.shared_wavefronts, 1);
}

#[test]
fn cp_async_checks_destination_and_source() {
    let mut input = Buffer::zeros(8);
    let in_ptr: Ptr<u32> = input.ptr();
    let err = run_grid([1, 1, 1], [1, 1, 1], 16, &|| unsafe {
        cp_async_cg(dynamic_shared_base() + 16, in_ptr);
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmulatorError::SharedOutOfBounds {
                op: "cp.async.cg.shared.global",
                ..
            }
        ),
        "{err}"
    );
    let err = run_grid([1, 1, 1], [1, 1, 1], 16, &|| unsafe {
        cp_async_ca::<16, u32>(dynamic_shared_base(), in_ptr.offset(1));
    })
    .unwrap_err();
    assert!(
        matches!(err, EmulatorError::Misaligned { align: 16, .. }),
        "{err}"
    );
}
