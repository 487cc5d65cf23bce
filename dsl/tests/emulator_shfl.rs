//! Warp shuffles on the emulator against an independent reference: CUDA's documented
//! `__shfl_*_sync(mask, v, x, width)` semantics (source lane per segment of `width` lanes),
//! which the `c` operand of `shfl_c(width)` / `shfl_c_up(width)` must reproduce.

mod emulator_support;

use emulator_support::{run_block_with_output, run_warp_with_output};
use tessera::device::*;
use tessera::emulator::{run_grid, EmulatorError};
use tessera::Ptr;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Idx,
    Bfly,
    Up,
    Down,
}

/// CUDA semantics: the lane whose value lane `lane` receives.
fn cuda_source(kind: Kind, lane: u32, x: u32, width: u32) -> u32 {
    let base = lane / width * width;
    match kind {
        Kind::Idx => base + x % width,
        Kind::Up => {
            if lane % width >= x {
                lane - x
            } else {
                lane
            }
        }
        Kind::Down => {
            if lane % width + x < width {
                lane + x
            } else {
                lane
            }
        }
        Kind::Bfly => {
            let j = lane ^ x;
            if j < base + width {
                j
            } else {
                lane
            }
        }
    }
}

/// Each lane shuffles `value(lane)`; returns what each lane received.
fn shuffle_32(kind: Kind, x_of_lane: fn(u32) -> u32, width: u32) -> Vec<u32> {
    let out = run_warp_with_output(0, 32, |out_ptr: Ptr<u32>| unsafe {
        let lane = lane_id();
        let v = 1000 + lane * 7;
        let x = x_of_lane(lane);
        let r = match kind {
            Kind::Idx => shfl_idx(FULL_MASK, v, x, shfl_c(width)),
            Kind::Bfly => shfl_bfly(FULL_MASK, v, x, shfl_c(width)),
            Kind::Up => shfl_up(FULL_MASK, v, x, shfl_c_up(width)),
            Kind::Down => shfl_down(FULL_MASK, v, x, shfl_c(width)),
        };
        st_global_v1(out_ptr.offset(lane as isize), true, r);
    });
    out.to_u32()
}

#[test]
fn every_kind_width_and_offset_matches_cuda_semantics() {
    let offsets: [fn(u32) -> u32; 6] = [
        |_| 0,
        |_| 1,
        |_| 3,
        |_| 16,
        |l| (l * 5 + 3) % 32, // per-lane source/offset
        |l| 31 - l,
    ];
    for kind in [Kind::Idx, Kind::Bfly, Kind::Up, Kind::Down] {
        for width in [32, 16, 8, 4, 2, 1] {
            for (oi, x_of_lane) in offsets.iter().enumerate() {
                let got = shuffle_32(kind, *x_of_lane, width);
                for lane in 0..32u32 {
                    let x = x_of_lane(lane);
                    // CUDA takes x mod width for idx; bfly/up/down offsets below width are the
                    // meaningful ones: skip offsets >= width for those (PTX takes b mod 32).
                    if !matches!(kind, Kind::Idx) && x >= width {
                        continue;
                    }
                    let src = cuda_source(kind, lane, x, width);
                    assert_eq!(
                        got[lane as usize],
                        1000 + src * 7,
                        "{kind:?} width {width} offsets #{oi} lane {lane} (x = {x})"
                    );
                }
            }
        }
    }
}

#[test]
fn butterfly_reduction_gives_every_lane_the_sum() {
    let out = run_block_with_output(64, 0, 64, |out_ptr: Ptr<f32>| unsafe {
        let tid = thread_idx_x();
        let mut s = tid as f32;
        for off in [16, 8, 4, 2, 1] {
            s += shfl_bfly(FULL_MASK, s, off, SHFL_C_FULL);
        }
        st_global_v1(out_ptr.offset(tid as isize), true, s);
    });
    let got = out.to_f32();
    for (tid, &sum) in got.iter().enumerate() {
        let warp_base = tid / 32 * 32;
        let expected: f32 = (warp_base..warp_base + 32).map(|t| t as f32).sum();
        assert_eq!(sum, expected, "thread {tid}");
    }
}

#[test]
fn sixty_four_bit_values_move_whole() {
    let out = run_warp_with_output(0, 64, |out_ptr: Ptr<u32>| unsafe {
        let lane = lane_id();
        let v: u64 = 0x1234_5678_0000_0000u64.wrapping_mul(lane as u64 + 1) + lane as u64;
        let f: f64 = -(lane as f64) * 1.5e100;
        let r = shfl_down(FULL_MASK, v, 3, SHFL_C_FULL);
        let g = shfl_idx(FULL_MASK, f, 7, SHFL_C_FULL);
        st_global_v2(
            out_ptr.offset(2 * lane as isize),
            true,
            [
                (r as u32) ^ (g.to_bits() as u32),
                ((r >> 32) as u32) ^ ((g.to_bits() >> 32) as u32),
            ],
        );
    });
    let got = out.to_u32();
    for lane in 0..32u64 {
        let src = if lane + 3 < 32 { lane + 3 } else { lane };
        let r = 0x1234_5678_0000_0000u64.wrapping_mul(src + 1) + src;
        let g = (-(7.0f64) * 1.5e100).to_bits();
        let x = r ^ g;
        assert_eq!(got[2 * lane as usize], x as u32, "lane {lane}");
        assert_eq!(got[2 * lane as usize + 1], (x >> 32) as u32, "lane {lane}");
    }
}

#[test]
fn half_warp_masks_shuffle_independently() {
    let out = run_warp_with_output(0, 32, |out_ptr: Ptr<u32>| unsafe {
        let lane = lane_id();
        // Divergent halves, each with its own membermask and its own operation.
        let r = if lane < 16 {
            shfl_idx(0x0000_ffff, lane * 10, 5, SHFL_C_FULL)
        } else {
            shfl_down(0xffff_0000, lane * 10, 1, SHFL_C_FULL)
        };
        st_global_v1(out_ptr.offset(lane as isize), true, r);
    });
    let got = out.to_u32();
    for (lane, &v) in got.iter().enumerate() {
        let want = match lane {
            0..16 => 50,
            16..31 => (lane as u32 + 1) * 10,
            _ => 310,
        };
        assert_eq!(v, want, "lane {lane}");
    }
}

#[test]
fn reading_a_lane_outside_the_mask_is_an_error() {
    let err = run_grid([1, 1, 1], [32, 1, 1], 0, &|| {
        let lane = lane_id();
        if lane < 16 {
            // Lane 0..16 read lane + 16, which is not in the mask.
            shfl_bfly(0x0000_ffff, lane, 16, SHFL_C_FULL);
        }
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmulatorError::WarpCollective {
                op: "shfl.sync.bfly.b32",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("not in membermask"), "{err}");
}

#[test]
fn mask_without_the_executing_lane_is_an_error() {
    let err = run_grid([1, 1, 1], [32, 1, 1], 0, &|| {
        shfl_idx(0x1, lane_id(), 0, SHFL_C_FULL);
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("does not contain the executing lane"),
        "{text}"
    );
    assert!(text.contains("block (0, 0, 0) thread ("), "{text}");
}

#[test]
fn full_mask_in_a_partial_warp_is_an_error() {
    let err = run_grid([1, 1, 1], [48, 1, 1], 0, &|| {
        shfl_bfly(FULL_MASK, 1u32, 1, SHFL_C_FULL);
    })
    .unwrap_err();
    assert!(err.to_string().contains("lanes that do not exist"), "{err}");
}

#[test]
fn partial_warp_with_matching_mask_works() {
    let out = run_block_with_output(48, 0, 48, |out_ptr: Ptr<u32>| unsafe {
        let tid = thread_idx_x();
        let mask = if tid < 32 { FULL_MASK } else { 0xffff };
        let r = shfl_idx(mask, tid, 0, SHFL_C_FULL);
        st_global_v1(out_ptr.offset(tid as isize), true, r);
    });
    let got = out.to_u32();
    for (tid, &v) in got.iter().enumerate() {
        assert_eq!(v, if tid < 32 { 0 } else { 32 }, "thread {tid}");
    }
}

#[test]
fn divergent_operations_under_one_mask_are_an_error() {
    let err = run_grid([1, 1, 1], [32, 1, 1], 0, &|| {
        if lane_id() == 3 {
            shfl_up(FULL_MASK, 1u32, 1, SHFL_C_UP);
        } else {
            shfl_down(FULL_MASK, 1u32, 1, SHFL_C_FULL);
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("divergent"), "{err}");
}
