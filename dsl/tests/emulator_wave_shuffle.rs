//! `ds_bpermute` over a whole AMD wave (`tessera::device::wave_shfl_idx_b32`) on the emulator
//! (AMD mode): a collective of the wave's 64 threads — warps `2w` and `2w + 1` — in which each
//! lane reads the value of any lane of its wave (`source mod 64`, as the instruction takes bits
//! 2..8 of its byte address), never another wave's.

mod emulator_support;

use emulator_support::{assert_mentions, deadlock_message, run_block, Buffer};
use tessera::device::*;
use tessera::emulator::{run_grid, with_target, EmulatedTarget, EmulatorError};
use tessera::Ptr;

/// Wave lane of this thread: the lane in its warp and warp bit 0.
fn wave_lane() -> u32 {
    lane_id() | (warp_id() & 1) << 5
}

#[test]
fn every_lane_reads_the_lane_it_names_within_its_wave() {
    let threads = 256u32;
    // Sources: a permutation across the two warps of each wave, a broadcast, a reversal, and
    // addresses past 63 (wrapped as the instruction wraps them).
    let sources: [fn(u32) -> u32; 4] = [
        |l| (l * 37 + 11) % 64,
        |_| 45,
        |l| 63 - l,
        |l| l + 64 * (l % 3),
    ];
    for (s, source) in sources.iter().enumerate() {
        let mut out = Buffer::zeros(threads as usize);
        let p: Ptr<u32> = out.ptr();
        with_target(EmulatedTarget::Amdgpu, || {
            run_grid([1, 1, 1], [threads, 1, 1], 0, &|| {
                let t = linear_thread_id();
                let v = wave_shfl_idx_b32(1000 * t + 7, source(wave_lane()));
                // SAFETY: one word per thread of a buffer of `threads` words.
                unsafe { st_global_v1(p.offset(t as isize), true, v) };
            })
        })
        .unwrap();
        for (t, &got) in out.to_u32().iter().enumerate() {
            let t = t as u32;
            let from = (t / 64) * 64 + source(t % 64) % 64;
            assert_eq!(got, 1000 * from + 7, "sources {s}, thread {t}");
        }
    }
    // 64-bit values move as two words.
    let mut out = Buffer::zeros(2 * 128);
    let p: Ptr<u32> = out.ptr();
    with_target(EmulatedTarget::Amdgpu, || {
        run_grid([1, 1, 1], [128, 1, 1], 0, &|| {
            let t = linear_thread_id();
            let v = wave_shfl_idx((u64::from(t) << 40) | u64::from(t), wave_lane() ^ 33);
            // SAFETY: two words per thread of a buffer of 256 words.
            unsafe {
                st_global_v1(p.offset(2 * t as isize), true, v as u32);
                st_global_v1(p.offset(2 * t as isize + 1), true, (v >> 32) as u32);
            }
        })
    })
    .unwrap();
    let words = out.to_u32();
    for t in 0..128u32 {
        let from = u64::from((t & !63) | ((t % 64) ^ 33));
        let got = u64::from(words[2 * t as usize]) | u64::from(words[2 * t as usize + 1]) << 32;
        assert_eq!(got, (from << 40) | from, "thread {t}");
    }
}

#[test]
fn wave_shuffles_are_refused_emulating_nvidia_and_outside_whole_waves() {
    // Emulating sm_80: an AMD-only instruction.
    let e = run_grid([1, 1, 1], [64, 1, 1], 0, &|| {
        wave_shfl_idx_b32(1, 0);
    })
    .unwrap_err();
    assert!(matches!(e, EmulatorError::AmdInstruction { .. }), "{e}");
    assert_mentions(
        &e.to_string(),
        &["ds_bpermute_b32 (wave)", "an AMD-only instruction"],
    );
    // A block of one warp: half a wave.
    let e = with_target(EmulatedTarget::Amdgpu, || {
        run_block(32, 0, |t| {
            wave_shfl_idx_b32(t, 0);
        })
    })
    .unwrap_err();
    assert_mentions(
        &e.to_string(),
        &[
            "wave 0 has 32 of its 64 threads",
            "a wave shuffle needs a whole wave",
        ],
    );
    // A thread that never arrives: the wave waits forever.
    let message = deadlock_message(with_target(EmulatedTarget::Amdgpu, || {
        run_block(64, 0, |t| {
            if t != 40 {
                wave_shfl_idx_b32(t, 0);
            }
        })
    }));
    assert_mentions(
        &message,
        &[
            "wave 0 (threads 0..64): 63 threads wait in ds_bpermute_b32 (wave)",
            "threads 40 never arrived (wave shuffle is a wave collective)",
        ],
    );
}
