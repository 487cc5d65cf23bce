//! Launch geometry, barriers and error reporting of the emulator.

mod emulator_support;

use emulator_support::{run_block_with_output, run_with_output, Buffer};
use std::time::{Duration, Instant};
use tessera::device::*;
use tessera::emulator::{run_grid, EmulatorError, SHARED_WINDOW_BASE};
use tessera::Ptr;

#[test]
fn every_thread_of_a_3d_grid_runs_once_with_its_indices() {
    let grid = [3, 2, 2];
    let block = [4, 3, 2];
    let total = 12 * 24;
    let out = run_with_output(grid, block, 0, total * 4, |out_ptr: Ptr<u32>| unsafe {
        let b = block_idx_x() + grid_dim_x() * (block_idx_y() + grid_dim_y() * block_idx_z());
        let t = linear_thread_id();
        let threads = block_dim_x() * block_dim_y() * block_dim_z();
        let g = b * threads + t;
        let packed = thread_idx_x() | thread_idx_y() << 8 | thread_idx_z() << 16;
        let blk = block_idx_x() | block_idx_y() << 8 | block_idx_z() << 16;
        st_global_v4(
            out_ptr.offset(4 * g as isize),
            true,
            [packed, blk, lane_id() | warp_id() << 8, 1],
        );
    });
    let got = out.to_u32();
    for g in 0..total as u32 {
        let (b, t) = (g / 24, g % 24);
        let (tx, ty, tz) = (t % 4, t / 4 % 3, t / 12);
        let (bx, by, bz) = (b % 3, b / 3 % 2, b / 6);
        let w = &got[4 * g as usize..4 * g as usize + 4];
        assert_eq!(w[0], tx | ty << 8 | tz << 16, "thread {g}");
        assert_eq!(w[1], bx | by << 8 | bz << 16, "thread {g}");
        assert_eq!(w[2], (t % 32) | ((t / 32) << 8), "thread {g}");
        assert_eq!(w[3], 1, "thread {g} ran a wrong number of times");
    }
}

#[test]
fn barrier_orders_shared_memory_between_warps() {
    // 256 threads write their id to shared memory, sync, read the mirror element; repeated
    // for several rounds so a missing barrier would be visible.
    let out = run_with_output(
        [2, 1, 1],
        [256, 1, 1],
        1024,
        256,
        |out_ptr: Ptr<u32>| unsafe {
            let t = thread_idx_x();
            let base = dynamic_shared_base();
            let mut acc = 0u32;
            for round in 0..4u32 {
                st_shared_v1(base + 4 * t, t * 10 + round);
                sync_threads();
                acc = acc.wrapping_add(ld_shared_v1::<u32>(base + 4 * (255 - t)));
                sync_threads();
            }
            if block_idx_x() == 1 {
                st_global_v1(out_ptr.offset(t as isize), true, acc);
            }
        },
    );
    let got = out.to_u32();
    for t in 0..256u32 {
        let m = 255 - t;
        assert_eq!(got[t as usize], 4 * m * 10 + 6);
    }
}

#[test]
fn shared_memory_is_fresh_for_every_block() {
    let out = run_with_output([4, 1, 1], [32, 1, 1], 128, 4, |out_ptr: Ptr<u32>| unsafe {
        let a = dynamic_shared_base() + 4 * thread_idx_x();
        let before: u32 = ld_shared_v1(a);
        st_shared_v1(a, 7u32);
        if thread_idx_x() == 0 {
            st_global_v1(out_ptr.offset(block_idx_x() as isize), true, before);
        }
    });
    assert_eq!(out.to_u32(), vec![0, 0, 0, 0]);
}

#[test]
fn named_barrier_with_count_syncs_only_its_warps() {
    // Warps 0 and 1 exchange through shared memory with bar.sync 1, 64; warps 2 and 3 with
    // bar.sync 2, 64. No CTA-wide barrier is involved.
    let out = run_block_with_output(128, 512, 128, |out_ptr: Ptr<u32>| unsafe {
        let t = thread_idx_x();
        let base = dynamic_shared_base();
        st_shared_v1(base + 4 * t, t + 1000);
        let group = t / 64;
        barrier_sync_count(1 + group, 64);
        let partner = group * 64 + (t + 32) % 64;
        let v: u32 = ld_shared_v1(base + 4 * partner);
        st_global_v1(out_ptr.offset(t as isize), true, v);
    });
    let got = out.to_u32();
    for t in 0..128u32 {
        assert_eq!(got[t as usize], (t / 64) * 64 + (t + 32) % 64 + 1000);
    }
}

#[test]
fn exited_threads_count_as_arrived() {
    // Warp 1 returns early; warp 0 still passes the CTA barrier.
    let out = run_block_with_output(64, 0, 32, |out_ptr: Ptr<u32>| unsafe {
        if thread_idx_x() >= 32 {
            return;
        }
        sync_threads();
        st_global_v1(out_ptr.offset(thread_idx_x() as isize), true, 5u32);
    });
    assert_eq!(out.to_u32(), vec![5; 32]);
}

#[test]
fn a_barrier_that_cannot_complete_is_a_deadlock_error_not_a_hang() {
    let start = Instant::now();
    let err = run_grid([2, 1, 1], [64, 1, 1], 0, &|| {
        if thread_idx_x() < 32 {
            barrier_sync_count(3, 64); // the other warp never comes
        }
    })
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10));
    match &err {
        EmulatorError::Deadlock { block, message } => {
            assert_eq!(*block, [0, 0, 0]);
            assert!(message.contains("barrier 3"), "{message}");
        }
        other => panic!("expected a deadlock, got {other}"),
    }
}

#[test]
fn a_shuffle_with_a_missing_lane_is_a_deadlock_error() {
    let err = run_grid([1, 1, 1], [32, 1, 1], 0, &|| {
        if lane_id() != 7 {
            shfl_idx(FULL_MASK, 1u32, 0, SHFL_C_FULL);
        }
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EmulatorError::Deadlock { .. }), "{text}");
    assert!(
        text.contains("shfl.sync.idx.b32") && text.contains("0x00000080"),
        "{text}"
    );
}

#[test]
fn a_panic_in_one_thread_stops_the_launch_and_names_the_thread() {
    let start = Instant::now();
    let err = run_grid([3, 1, 1], [128, 1, 1], 0, &|| {
        // Everybody waits at a barrier that thread (5, 0, 0) of block 1 never reaches.
        if block_idx_x() == 1 && thread_idx_x() == 5 {
            panic!("boom in the kernel");
        }
        sync_threads();
        sync_threads();
    })
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(
        err,
        EmulatorError::ThreadPanicked {
            thread: tessera::emulator::ThreadRef {
                block: [1, 0, 0],
                thread: [5, 0, 0]
            },
            message: "boom in the kernel".to_string()
        }
    );
    assert_eq!(
        err.to_string(),
        "block (1, 0, 0) thread (5, 0, 0) panicked: boom in the kernel"
    );
}

#[test]
fn shared_out_of_bounds_names_thread_and_address() {
    let err = run_grid([1, 1, 1], [32, 1, 1], 64, &|| unsafe {
        let t = thread_idx_x();
        if t == 17 {
            let _: u32 = ld_shared_v1(dynamic_shared_base() + 64);
        }
    })
    .unwrap_err();
    match &err {
        EmulatorError::SharedOutOfBounds {
            thread,
            op,
            address,
            bytes,
            shared_bytes,
            ..
        } => {
            assert_eq!(thread.thread, [17, 0, 0]);
            assert_eq!(*op, "ld.shared.b32");
            assert_eq!(*address, SHARED_WINDOW_BASE + 64);
            assert_eq!((*bytes, *shared_bytes), (4, 64));
        }
        other => panic!("expected out of bounds, got {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("thread (17, 0, 0)") && text.contains("0x440"),
        "{text}"
    );
    assert!(text.contains("emulator_launch.rs"), "{text}");
    // Below the base is out of bounds too (a kernel that forgot the base address).
    let err = run_grid([1, 1, 1], [1, 1, 1], 64, &|| unsafe {
        st_shared_v1(0, 1u32);
    })
    .unwrap_err();
    assert!(
        matches!(err, EmulatorError::SharedOutOfBounds { address: 0, .. }),
        "{err}"
    );
}

#[test]
fn misaligned_and_null_accesses_are_errors() {
    let err = run_grid([1, 1, 1], [1, 1, 1], 64, &|| unsafe {
        let _: [u32; 4] = ld_shared_v4(dynamic_shared_base() + 8);
    })
    .unwrap_err();
    assert!(
        matches!(err, EmulatorError::Misaligned { align: 16, .. }),
        "{err}"
    );

    let mut buf = Buffer::zeros(8);
    let p: Ptr<u32> = buf.ptr();
    let err = run_grid([1, 1, 1], [1, 1, 1], 0, &|| unsafe {
        ld_global_v4(p.offset(1), true, [0u32; 4]);
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmulatorError::Misaligned {
                op: "ld.global.v4.b32",
                ..
            }
        ),
        "{err}"
    );

    let err = run_grid([1, 1, 1], [1, 1, 1], 0, &|| unsafe {
        st_global_v1(Ptr::<u32>::from_addr(0), true, 1u32);
    })
    .unwrap_err();
    assert!(
        matches!(err, EmulatorError::NullGlobalPointer { .. }),
        "{err}"
    );
}

#[test]
fn masked_lanes_do_not_touch_memory_and_get_other() {
    let mut buf = Buffer::from_u32(&[1, 2, 3, 4]);
    let p: Ptr<u32> = buf.ptr();
    let out = run_block_with_output(2, 0, 8, |out_ptr: Ptr<u32>| unsafe {
        let t = thread_idx_x();
        // Thread 1 uses a null pointer with a false predicate: no access, no error.
        let src = if t == 0 { p } else { Ptr::from_addr(0) };
        let v = ld_global_v4(src, t == 0, [9, 8, 7, 6]);
        st_global_v4(out_ptr.offset(4 * t as isize), true, v);
        st_global_v4(Ptr::<u32>::from_addr(0), false, v);
    });
    assert_eq!(out.to_u32(), vec![1, 2, 3, 4, 9, 8, 7, 6]);
}

#[test]
fn invalid_launch_configurations_are_rejected() {
    let body = || {};
    for (grid, block, shared) in [
        ([0, 1, 1], [32, 1, 1], 0),
        ([1, 1, 1], [0, 1, 1], 0),
        ([1, 1, 1], [1025, 1, 1], 0),
        ([1, 1, 1], [32, 32, 2], 0),
        ([1, 1, 1], [1, 1, 65], 0),
        ([1, 70000, 1], [32, 1, 1], 0),
        ([1, 1, 1], [32, 1, 1], 300 * 1024),
    ] {
        let err = run_grid(grid, block, shared, &body).unwrap_err();
        assert!(
            matches!(err, EmulatorError::InvalidLaunch { .. }),
            "{grid:?} {block:?} {shared}: {err}"
        );
    }
    // The largest block is fine.
    let r = run_grid([1, 1, 1], [1024, 1, 1], 0, &body).unwrap();
    assert_eq!(r.threads_per_block, 1024);
}

#[test]
fn nested_launch_is_rejected() {
    let out = run_block_with_output(1, 0, 1, |out_ptr: Ptr<u32>| unsafe {
        let nested = run_grid([1, 1, 1], [1, 1, 1], 0, &|| {});
        let ok = matches!(nested, Err(EmulatorError::InvalidLaunch { .. }));
        st_global_v1(out_ptr, true, ok as u32);
    });
    assert_eq!(out.to_u32(), vec![1]);
}

#[test]
#[should_panic(expected = "outside a kernel")]
fn device_functions_outside_a_kernel_panic_with_a_clear_message() {
    thread_idx_x();
}

#[test]
fn run_grid_in_checks_global_accesses_against_the_allocations() {
    use tessera::emulator::run_grid_in;
    let mut a = Buffer::zeros(8);
    let mut b = Buffer::zeros(8);
    let (pa, pb): (Ptr<u32>, Ptr<u32>) = (a.ptr(), b.ptr());
    let map = [pa.addr()..pa.addr() + 32, pb.addr()..pb.addr() + 32];
    // Inside both allocations: fine (including the last word and a 16-byte cp.async source).
    run_grid_in([1, 1, 1], [1, 1, 1], 16, &map, &|| unsafe {
        st_global_v1(pa.offset(7), true, 1u32);
        let v = ld_global_v4(pb.offset(4), true, [0u32; 4]);
        st_global_v4(pb, true, v);
        cp_async_cg(dynamic_shared_base(), pa.offset(4));
        // Masked accesses outside are no accesses.
        st_global_v1(pa.offset(100), false, 1u32);
    })
    .unwrap();
    assert_eq!(a.to_u32()[7], 1);
    // One word past the end, a vector just past the end, a cp.async source past the end.
    let bodies: [(&str, &(dyn Fn() + Sync)); 3] = [
        ("st.global.b32", &|| unsafe {
            st_global_v1(pa.offset(8), true, 1u32)
        }),
        ("ld.global.v2.b32", &|| unsafe {
            ld_global_v2(pb.offset(8), true, [0u32; 2]);
        }),
        ("cp.async.cg.shared.global", &|| unsafe {
            cp_async_cg(dynamic_shared_base(), pa.offset(8));
        }),
    ];
    for (op, body) in bodies {
        let err = run_grid_in([1, 1, 1], [1, 1, 1], 16, &map, body).unwrap_err();
        match &err {
            EmulatorError::GlobalOutOfBounds { op: got, .. } => assert_eq!(*got, op),
            other => panic!("{op}: expected out of bounds, got {other}"),
        }
    }
    // The plain run_grid does not know the allocations: the same in-bounds kernel still works.
    run_grid([1, 1, 1], [1, 1, 1], 0, &|| unsafe {
        st_global_v1(pa, true, 2u32)
    })
    .unwrap();
    assert_eq!(a.to_u32()[0], 2);
}
