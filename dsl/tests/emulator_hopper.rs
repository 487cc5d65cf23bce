//! The Hopper models of the emulator: `mbarrier` phases, parity and transaction bytes, TMA box
//! copies (strides, out-of-bounds zeros, swizzle) and `wgmma` (fragments, descriptors, the
//! commit/wait discipline), including the misuses that would hang or be wrong on the GPU.

mod emulator_support;

use emulator_support::{
    assert_mentions, async_message, deadlock_message, run_block as run, Buffer,
};
use tessera::device::*;
use tessera::emulator::EmulatorError;
use tessera::{bf16, f16, Ptr};
use tessera_layout::families::NvmmaShared;
use tessera_layout::plan::wgmma::plan_operand;
use tessera_layout::Label;

// ---------------------------------------------------------------------------------------------
// mbarrier
// ---------------------------------------------------------------------------------------------

/// Thread 0 initialises the `mbarrier` at `bar` for `count` arrivals, then the block
/// synchronises.
///
/// # Safety
/// `bar` is an 8-byte aligned shared address.
unsafe fn init_barrier(tid: u32, bar: u32, count: u32) {
    if tid == 0 {
        mbarrier_init(bar, count);
    }
    sync_threads();
}

/// Thread 0 initialises the `mbarrier` at `bar` for one arrival and arrives on it expecting
/// `tx_bytes` transaction bytes, then the block synchronises.
///
/// # Safety
/// `bar` is an 8-byte aligned shared address.
unsafe fn init_barrier_expecting(tid: u32, bar: u32, tx_bytes: u32) {
    if tid == 0 {
        mbarrier_init(bar, 1);
        mbarrier_arrive_expect_tx(bar, tx_bytes);
    }
    sync_threads();
}

#[test]
fn mbarrier_phases_alternate_parity() {
    let bar = dynamic_shared_base();
    run(64, 64, |tid| unsafe {
        init_barrier(tid, bar, 64);
        for phase in 0..5u32 {
            // Thread 0 also writes a word each phase: visible to all after the wait.
            if tid == 0 {
                st_shared_v1(bar + 8, phase + 100);
            }
            mbarrier_arrive(bar);
            mbarrier_wait_parity(bar, phase % 2);
            assert_eq!(ld_shared_v1::<u32>(bar + 8), phase + 100);
            sync_threads();
        }
        if tid == 0 {
            mbarrier_inval(bar);
        }
    })
    .unwrap();
}

/// A `#[test]` per misuse of the `mbarrier` at the base of shared memory: `body(tid, bar)` run
/// by `threads` threads (64 bytes of shared memory) ends in the error that `$error` takes the
/// message of (`async_message` or `deadlock_message`), a message that mentions each of `$parts`.
macro_rules! mbarrier_misuse_tests {
    ($($(#[doc = $doc:literal])* $test:ident: $error:ident($threads:literal, $body:expr) mentions [$($part:literal),+];)*) => {$(
        $(#[doc = $doc])*
        #[test]
        fn $test() {
            let bar = dynamic_shared_base();
            let body: fn(u32, u32) = $body;
            let message = $error(run($threads, 64, |tid| body(tid, bar)));
            assert_mentions(&message, &[$($part),+]);
        }
    )*};
}

mbarrier_misuse_tests! {
    waiting_again_with_the_same_parity_is_an_error: async_message(32, |tid, bar| unsafe {
        init_barrier(tid, bar, 32);
        for _ in 0..2 {
            mbarrier_arrive(bar);
            mbarrier_wait_parity(bar, 0); // should flip to 1 the second time
        }
    }) mentions ["parity was not flipped"];

    too_few_arrivals_is_a_deadlock_naming_the_barrier: deadlock_message(32, |tid, bar| unsafe {
        init_barrier(tid, bar, 33);
        mbarrier_arrive(bar);
        mbarrier_wait_parity(bar, 0);
    }) mentions ["mbarrier 0x400", "misses 1 of 33 arrivals"];

    /// Phase 0 completes; waiting for parity 1 then waits for phase 1, which nobody completes.
    waiting_on_the_current_parity_of_a_finished_barrier_is_a_deadlock: deadlock_message(32, |tid, bar| unsafe {
        init_barrier(tid, bar, 32);
        mbarrier_arrive(bar);
        mbarrier_wait_parity(bar, 0);
        mbarrier_wait_parity(bar, 1);
    }) mentions ["for phase 1 (parity 1)"];

    missing_transaction_bytes_are_a_deadlock: deadlock_message(32, |tid, bar| unsafe {
        init_barrier_expecting(tid, bar, 256);
        mbarrier_wait_parity(bar, 0);
    }) mentions ["256 transaction bytes"];

    arrivals_beyond_the_count_are_an_error: async_message(32, |tid, bar| unsafe {
        init_barrier_expecting(tid, bar, 128);
        if tid == 1 {
            mbarrier_arrive(bar);
        }
    }) mentions ["more threads arrive"];
}

#[test]
fn uninitialised_and_misplaced_barriers_are_errors() {
    let base = dynamic_shared_base();
    let message = async_message(run(32, 64, |_| unsafe {
        mbarrier_arrive(base);
    }));
    assert!(message.contains("not initialised"), "{message}");
    let message = async_message(run(1, 64, |_| unsafe { mbarrier_init(base + 4, 1) }));
    assert!(message.contains("8-byte aligned"), "{message}");
    let message = async_message(run(1, 64, |_| unsafe {
        mbarrier_init(base, 1);
        mbarrier_init(base, 1);
    }));
    assert!(message.contains("already initialised"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// TMA
// ---------------------------------------------------------------------------------------------

/// A row-major `rows × cols` f16 matrix with distinct values, as 16-byte aligned memory.
fn f16_matrix(rows: usize, cols: usize, value: impl Fn(usize, usize) -> f32) -> (Buffer, Vec<u16>) {
    let halves: Vec<u16> = (0..rows * cols)
        .map(|i| f16::from_f32(value(i / cols, i % cols)).to_bits())
        .collect();
    let words: Vec<u32> = halves
        .chunks(2)
        .map(|p| p[0] as u32 | (*p.get(1).unwrap_or(&0) as u32) << 16)
        .collect();
    (Buffer::from_u32(&words), halves)
}

/// Copies the box at (`x`, `y`) with `swizzle` and returns the shared bytes seen before the
/// barrier's phase completed and after.
fn tma_box(map: TensorMap, x: i32, y: i32) -> (Vec<u16>, Vec<u16>) {
    let boxed = Box::new(map);
    let map_ptr = Ptr::from_raw(&*boxed as *const TensorMap as *mut TensorMap);
    let box_bytes = map.box_bytes();
    let shared = 1024 + box_bytes as usize + 1024;
    let before = std::sync::Mutex::new(Vec::new());
    let after = std::sync::Mutex::new(Vec::new());
    run(32, shared, |tid| unsafe {
        let base = dynamic_shared_base();
        let bar = base; // the box at the next 1024-byte boundary (0x400 is one)
        let dst = base + 1024;
        let read_box = || {
            (0..box_bytes / 4)
                .flat_map(|w| {
                    let v: u32 = ld_shared_v1(dst + 4 * w);
                    [v as u16, (v >> 16) as u16]
                })
                .collect::<Vec<u16>>()
        };
        if tid == 0 {
            mbarrier_init(bar, 1);
            tma_load_2d(dst, map_ptr, x, y, bar);
            *before.lock().unwrap() = read_box();
            mbarrier_arrive_expect_tx(bar, box_bytes);
            mbarrier_wait_parity(bar, 0);
            *after.lock().unwrap() = read_box();
        }
    })
    .unwrap();
    drop(boxed);
    (before.into_inner().unwrap(), after.into_inner().unwrap())
}

#[test]
fn tma_copies_the_box_swizzled_with_zeros_outside_the_tensor() {
    let (rows, cols) = (100, 72);
    let (mut buffer, halves) = f16_matrix(rows, cols, |r, c| (r * 1000 + c) as f32 % 2048.0);
    for (swizzle, width) in [
        (TmaSwizzle::B128, 128u32),
        (TmaSwizzle::B64, 64),
        (TmaSwizzle::B32, 32),
        (TmaSwizzle::None, 0),
    ] {
        let box_cols = if width == 0 { 64 } else { width / 2 };
        let map = TensorMap::tiled_2d(
            TmaElement::F16,
            buffer.ptr::<u16>(),
            [rows as u64, cols as u64],
            2 * cols as u64,
            [64, box_cols],
            swizzle,
        )
        .unwrap();
        for (x, y) in [(0, 0), (48, 64), (-8, -3)] {
            let (before, after) = tma_box(map, x, y);
            assert!(
                before.iter().all(|&h| h == 0),
                "data visible before the phase completed"
            );
            let row_bytes = 2 * box_cols;
            for r in 0..64u32 {
                for c in 0..box_cols {
                    let linear = r * row_bytes + 2 * c;
                    // 16-byte chunk c16 of row r moves to chunk c16 ^ (line mod 8 / phase).
                    let chunks = width.max(16) / 16;
                    let line = linear / 128;
                    let chunk = (linear / 16) % 8;
                    let offset = if width == 0 {
                        linear
                    } else {
                        (linear & !0x70) | ((chunk ^ (line % chunks)) << 4)
                    };
                    let (gy, gx) = (y + r as i32, x + c as i32);
                    let expected = if gy < 0 || gx < 0 || gy >= rows as i32 || gx >= cols as i32 {
                        0
                    } else {
                        halves[gy as usize * cols + gx as usize]
                    };
                    assert_eq!(
                        after[(offset / 2) as usize],
                        expected,
                        "swizzle {width} box at ({x}, {y}) element ({r}, {c})"
                    );
                }
            }
        }
    }
}

#[test]
fn tensor_maps_the_driver_would_reject_are_errors() {
    let mut buffer = Buffer::from_u32(&[0; 64]);
    let ptr = buffer.ptr::<u16>();
    let map = |stride, box_dim, swizzle| {
        TensorMap::tiled_2d(TmaElement::F16, ptr, [8, 8], stride, box_dim, swizzle)
    };
    assert!(map(16, [8, 8], TmaSwizzle::None).is_ok());
    for (stride, box_dim, swizzle, error) in [
        (18, [8, 8], TmaSwizzle::None, "multiple of 16"),
        (16, [8, 4], TmaSwizzle::None, "not a multiple of 16"),
        (256, [8, 128], TmaSwizzle::B128, "wider than"),
        (16, [300, 8], TmaSwizzle::None, "1..=256"),
    ] {
        let err = map(stride, box_dim, swizzle).unwrap_err();
        assert!(err.contains(error), "{err}");
    }
}

// ---------------------------------------------------------------------------------------------
// wgmma
// ---------------------------------------------------------------------------------------------

/// Row and column of accumulator register `i` of `thread` (PTX ISA, "wgmma .m64nNk16
/// register fragment layout for accumulator matrix D").
fn d_fragment(thread: u32, i: u32) -> (u32, u32) {
    let (warp, lane) = (thread / 32, thread % 32);
    (
        16 * warp + lane / 4 + 8 * (i / 2 % 2),
        8 * (i / 4) + 2 * (lane % 4) + i % 2,
    )
}

/// Row and k of A element `e` (half `e % 2` of register `e / 2`) of `thread` (PTX ISA,
/// "wgmma .m64nNk16 register fragment layout for matrix A").
fn a_fragment(thread: u32, e: u32) -> (u32, u32) {
    let (warp, lane) = (thread / 32, thread % 32);
    (
        16 * warp + lane / 4 + 8 * (e / 2 % 2),
        2 * (lane % 4) + e % 2 + 8 * (e / 4),
    )
}

fn value(seed: u32, r: u32, c: u32) -> f32 {
    ((r * 7 + c * 13 + seed) % 17) as f32 / 4.0 - 2.0
}

/// A 16-bit input type of `wgmma`: its bits of an f32.
type Encode = fn(f32) -> u32;

fn f16_bits(x: f32) -> u32 {
    f16::from_f32(x).to_bits() as u32
}

fn bf16_bits(x: f32) -> u32 {
    bf16::from_f32(x).to_bits() as u32
}

/// Writes the `rows × cols` tile `value(seed, ·, ·)` in the NVMMA layout at shared `tile`
/// (each of `threads` threads writes its share of the words).
unsafe fn fill_nvmma(
    tile: u32,
    shape: [u32; 2],
    seed: u32,
    tid: u32,
    threads: u32,
    encode: Encode,
) {
    let layout = NvmmaShared::new(128, 16, false)
        .to_linear_layout(&shape)
        .unwrap();
    let mut w = tid;
    while w < shape[0] * shape[1] / 2 {
        let half = |o: u32| {
            let [r, c, ..] = layout.apply(&[(Label::Offset, o)]).unwrap();
            encode(value(seed, r, c))
        };
        st_shared_v1(tile + 4 * w, half(2 * w) | half(2 * w + 1) << 16);
        w += threads;
    }
}

/// `A (64 × 64, seed 1) · B (64 × N, seed 2)`, the tiles stored as the 128-byte-swizzled NVMMA
/// layout, through 4 `wgmma`s of K 16 from shared memory; checks every register of every
/// thread.
fn check_wgmma_ss<const R: usize>(
    mma: unsafe fn(&mut WgmmaAccumulator<R>, u64, u64, bool),
    encode: Encode,
) where
    WgmmaAccumulator<R>: WaitGroupFence,
{
    let n = 2 * R as u32;
    let a_plan = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 1, 64).unwrap();
    let b_plan = plan_operand(NvmmaShared::new(128, 16, false), [64, n], 0, n).unwrap();
    let reference = |r: u32, c: u32| -> f64 {
        (0..64)
            .map(|k| value(1, r, k) as f64 * value(2, k, c) as f64)
            .sum()
    };
    run(128, 1024 + 64 * 64 * 2 + 64 * 256 * 2, |tid| unsafe {
        let a_tile = dynamic_shared_base();
        let b_tile = a_tile + 64 * 64 * 2;
        fill_nvmma(a_tile, [64, 64], 1, tid, 128, encode);
        fill_nvmma(b_tile, [64, n], 2, tid, 128, encode);
        fence_proxy_async_shared_cta();
        sync_threads();
        let mut acc = WgmmaAccumulator::<R>::zeroed();
        wgmma_fence();
        for k in 0..4 {
            mma(
                &mut acc,
                a_plan.descriptor_at(a_tile, 0, k),
                b_plan.descriptor_at(b_tile, 0, k),
                k > 0,
            );
        }
        wgmma_commit_group();
        wgmma_wait_group::<0, _>(&mut acc);
        for (i, d) in acc.registers().iter().enumerate() {
            let (r, c) = d_fragment(tid, i as u32);
            assert_eq!(*d as f64, reference(r, c), "thread {tid} register {i}");
        }
    })
    .unwrap();
}

/// [`check_wgmma_ss`] of each `R: wgmma instruction, input encoding` (`imm-trans` 0 for A,
/// K-major, and 1 for B, N-major).
macro_rules! check_each_wgmma_ss {
    ($($n:literal: $wgmma:ident, $encode:expr;)*) => {$(
        check_wgmma_ss::<$n>(|acc, a, b, s| unsafe { $wgmma::<0, 1>(acc, a, b, s) }, $encode);
    )*};
}

#[test]
fn wgmma_from_shared_memory_matches_the_reference() {
    check_each_wgmma_ss! {
        32: wgmma_m64n64k16_f16, f16_bits;
        64: wgmma_m64n128k16_f16, f16_bits;
        128: wgmma_m64n256k16_f16, f16_bits;
        // The test values (multiples of 1/4 in [-2, 2]) are exact in bf16 too.
        64: wgmma_m64n128k16_bf16, bf16_bits;
    }
}

#[test]
fn a_block_that_does_not_fill_the_warpgroup_is_an_error() {
    let plan = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 1, 64).unwrap();
    let message = async_message(run(96, 1024 + 64 * 64 * 2, |_| unsafe {
        let mut acc = WgmmaAccumulator::<32>::zeroed();
        wgmma_fence();
        let desc = plan.descriptor_at(dynamic_shared_base(), 0, 0);
        wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
    }));
    assert!(message.contains("do not fill warpgroup 0"), "{message}");
}

#[test]
fn wgmma_with_a_from_registers_matches_the_reference() {
    let b_plan = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 0, 64).unwrap();
    run(128, 1024 + 64 * 64 * 2, |tid| unsafe {
        let b_tile = dynamic_shared_base();
        fill_nvmma(b_tile, [64, 64], 2, tid, 128, f16_bits);
        fence_proxy_async_shared_cta();
        sync_threads();
        let a = |e: u32| {
            let (r, k) = a_fragment(tid, e);
            f16::from_f32(value(1, r, k)).to_bits() as u32
        };
        let regs = [0, 1, 2, 3].map(|q| a(2 * q) | a(2 * q + 1) << 16);
        let mut acc = WgmmaAccumulator::<32>::zeroed();
        wgmma_fence();
        wgmma_m64n64k16_f16_rs::<1>(&mut acc, regs, b_plan.descriptor_at(b_tile, 0, 0), false);
        wgmma_commit_group();
        wgmma_wait_group::<0, _>(&mut acc);
        for (i, d) in acc.registers().iter().enumerate() {
            let (r, c) = d_fragment(tid, i as u32);
            let expected: f64 = (0..16)
                .map(|k| value(1, r, k) as f64 * value(2, k, c) as f64)
                .sum();
            assert_eq!(*d as f64, expected, "thread {tid} register {i}");
        }
    })
    .unwrap();
}

/// One `wgmma` on zeroed shared memory, then `after(acc)`.
fn one_wgmma(
    fence: bool,
    after: impl Fn(&mut WgmmaAccumulator<32>) + Sync,
) -> Result<(), EmulatorError> {
    let plan = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 1, 64).unwrap();
    run(128, 1024 + 64 * 64 * 2, |_| unsafe {
        let tile = dynamic_shared_base();
        let mut acc = WgmmaAccumulator::<32>::zeroed();
        if fence {
            wgmma_fence();
        }
        let desc = plan.descriptor_at(tile, 0, 0);
        wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, true);
        after(&mut acc);
    })
}

#[test]
fn reading_the_accumulator_before_wait_group_is_an_error() {
    let message = async_message(one_wgmma(true, |acc| {
        acc.registers();
    }));
    assert!(message.contains("not committed yet"), "{message}");
    let message = async_message(one_wgmma(true, |acc| {
        wgmma_commit_group();
        wgmma_wait_group::<1, _>(acc);
        acc.registers();
    }));
    assert!(message.contains("wgmma.wait_group 0 or lower"), "{message}");
    one_wgmma(true, |acc| {
        wgmma_commit_group();
        wgmma_wait_group::<0, _>(acc);
        assert_eq!(acc.registers(), [0.0; 32]);
    })
    .unwrap();
}

#[test]
fn a_wgmma_without_a_fence_after_register_accesses_is_an_error() {
    let message = async_message(one_wgmma(false, |_| {}));
    assert!(message.contains("wgmma.fence"), "{message}");
}

#[test]
fn chained_wgmmas_need_no_wait_in_between() {
    // Two commit groups in flight on one accumulator, retired by one wait.
    one_wgmma(true, |acc| unsafe {
        let plan = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 1, 64).unwrap();
        let desc = plan.descriptor_at(dynamic_shared_base(), 0, 1);
        wgmma_commit_group();
        wgmma_m64n64k16_f16::<0, 0>(acc, desc, desc, true);
        wgmma_commit_group();
        wgmma_wait_group::<0, _>(acc);
        acc.registers();
    })
    .unwrap();
}

/// `threads` threads (one warpgroup or two) issue one `wgmma` reading the tile at shared offset
/// 0 (A and B), commit, then run `after(tid, acc)`.
fn shared_wgmma(
    threads: u32,
    after: impl Fn(u32, &mut WgmmaAccumulator<32>) + Sync,
) -> Result<(), EmulatorError> {
    let plan = plan_operand(NvmmaShared::new(128, 16, false), [64, 64], 1, 64).unwrap();
    run(threads, 1024 + 64 * 64 * 2, |tid| unsafe {
        let mut acc = WgmmaAccumulator::<32>::zeroed();
        wgmma_fence();
        let desc = plan.descriptor_at(dynamic_shared_base(), 0, 0);
        wgmma_m64n64k16_f16::<0, 0>(&mut acc, desc, desc, false);
        wgmma_commit_group();
        after(tid, &mut acc);
    })
}

#[test]
fn overwriting_an_operand_of_a_wgmma_in_flight_is_an_error() {
    // Before its warpgroup retired it: st.shared and cp.async alike.
    let message = async_message(shared_wgmma(128, |tid, _| unsafe {
        if tid == 5 {
            st_shared_v1(dynamic_shared_base(), 1);
        }
    }));
    assert!(message.contains("wgmma #1 of warpgroup 0"), "{message}");
    assert!(message.contains("retire it first"), "{message}");
    let source = [0u32; 4];
    let message = async_message(shared_wgmma(128, |tid, _| unsafe {
        if tid == 0 {
            cp_async_cg(
                dynamic_shared_base(),
                Ptr::from_raw(source.as_ptr().cast_mut()),
            );
        }
    }));
    assert!(message.contains("may still be reading"), "{message}");
    // Retired by the writer's own wait: allowed.
    shared_wgmma(128, |tid, acc| unsafe {
        wgmma_wait_group::<0, _>(acc);
        if tid == 5 {
            st_shared_v1(dynamic_shared_base(), 1);
        }
    })
    .unwrap();
}

#[test]
fn another_warpgroups_operand_needs_its_wait_and_a_barrier_before_a_write() {
    // Both warpgroups read the tile (the barrier after the issues makes sure both have, whatever
    // the order the emulator runs them in); each retires its wgmma, but without a barrier after
    // the waits the write of warpgroup 0 is not ordered after warpgroup 1's wait.
    let message = async_message(shared_wgmma(256, |tid, acc| unsafe {
        sync_threads();
        wgmma_wait_group::<0, _>(acc);
        if tid == 0 {
            st_shared_v1(dynamic_shared_base(), 1);
        }
    }));
    assert!(message.contains("warpgroup 0 and 1"), "{message}");
    assert!(message.contains("bar.sync before the write"), "{message}");
    shared_wgmma(256, |tid, acc| unsafe {
        wgmma_wait_group::<0, _>(acc);
        sync_threads();
        if tid == 0 {
            st_shared_v1(dynamic_shared_base(), 1);
        }
    })
    .unwrap();
}
