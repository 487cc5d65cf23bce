//! Shared-memory wavefront counting of the emulator: the bank model pinned on the canonical
//! patterns, grouping of lanes into warp-wide accesses, and the per-site report.

mod emulator_support;

use tessera::device::*;
use tessera::emulator::{report::wavefronts, run_grid, EmulatorReport, SharedAccessKind};

/// Runs one warp (or `threads` threads) where every thread calls `body(lane_or_tid)`.
fn run(threads: u32, shared: usize, body: impl Fn(u32) + Sync) -> EmulatorReport {
    run_grid([1, 1, 1], [threads, 1, 1], shared, &|| body(thread_idx_x())).unwrap()
}

/// The report's warp-wide shared accesses, their wavefronts, and the fewest wavefronts they
/// could take.
fn counts(r: &EmulatorReport) -> (u64, u64, u64) {
    (
        r.shared_accesses,
        r.shared_wavefronts,
        r.shared_ideal_wavefronts,
    )
}

fn load_words(stride_bytes: u32) -> EmulatorReport {
    run(32, 32 * 128, move |lane| unsafe {
        let _: u32 = ld_shared_v1(dynamic_shared_base() + lane * stride_bytes);
    })
}

#[test]
fn conflict_free_32_bit_access_is_one_wavefront() {
    let r = load_words(4);
    assert_eq!(counts(&r), (1, 1, 1));
}

#[test]
fn thirty_two_lanes_on_one_bank_are_32_wavefronts() {
    // Stride 128 bytes: every lane hits bank 0, each at a different word.
    let r = load_words(128);
    assert_eq!(counts(&r), (1, 32, 1));
    assert_eq!(r.bank_conflict_factor(), 32.0);
}

#[test]
fn stride_two_words_is_a_two_way_conflict() {
    // Words 0, 2, ..., 62: banks 0, 2, ..., 30, two distinct words each.
    let r = load_words(8);
    assert_eq!(r.shared_wavefronts, 2);
    assert_eq!(r.shared_ideal_wavefronts, 1);
}

#[test]
fn same_word_is_a_broadcast() {
    let r = load_words(0);
    assert_eq!(r.shared_wavefronts, 1);
    assert_eq!(r.shared_ideal_wavefronts, 1);
}

#[test]
fn contiguous_128_bit_access_is_four_wavefronts() {
    let r = run(32, 512, |lane| unsafe {
        let _: [u32; 4] = ld_shared_v4(dynamic_shared_base() + 16 * lane);
    });
    assert_eq!(counts(&r), (1, 4, 4));
}

#[test]
fn contiguous_64_bit_store_is_two_wavefronts() {
    let r = run(32, 256, |lane| unsafe {
        st_shared_v2(dynamic_shared_base() + 8 * lane, [lane, lane]);
    });
    assert_eq!(r.shared_wavefronts, 2);
    assert_eq!(r.shared_sites.len(), 1);
    assert_eq!(r.shared_sites[0].kind, SharedAccessKind::Store);
}

#[test]
fn divergent_lanes_form_one_partial_access() {
    // Lanes 0..16 access bank-conflict free; the others skip the instruction.
    let r = run(32, 4096, |lane| unsafe {
        if lane < 16 {
            let _: u32 = ld_shared_v1(dynamic_shared_base() + 4 * lane);
        }
    });
    assert_eq!(r.shared_accesses, 1);
    assert_eq!(r.shared_wavefronts, 1);
}

#[test]
fn loop_iterations_are_separate_accesses_and_warps_are_separate() {
    // 2 warps x 3 iterations of one call site; iteration k of warp w uses column stride 4
    // bytes (conflict free) except iteration 1, which uses stride 64 bytes (16 lanes per pair
    // of banks ... words 16 * lane: banks 0 and 16, 16 distinct words each).
    let r = run(64, 64 * 64 * 3, |tid| unsafe {
        for k in 0..3u32 {
            let stride = if k == 1 { 64 } else { 4 };
            let _: u32 = ld_shared_v1(dynamic_shared_base() + (tid % 32) * stride + k * 4096);
        }
    });
    assert_eq!(counts(&r), (6, 2 * (1 + 16 + 1), 6));
    assert_eq!(r.shared_sites.len(), 1);
    assert_eq!(r.shared_sites[0].stats.accesses, 6);
}

#[test]
fn separate_call_sites_are_reported_separately() {
    let r = run(32, 4096, |lane| unsafe {
        st_shared_v1(dynamic_shared_base() + 4 * lane, lane);
        sync_threads();
        let _: u32 = ld_shared_v1(dynamic_shared_base() + 128 * (lane % 4));
    });
    assert_eq!(r.shared_accesses, 2);
    // Store: 1 wavefront. Load: 4 distinct words, all in bank 0: 4 wavefronts.
    assert_eq!(r.shared_wavefronts, 5);
    assert_eq!(r.shared_sites.len(), 2);
    let kinds: Vec<_> = r.shared_sites.iter().map(|s| s.kind).collect();
    assert!(kinds.contains(&SharedAccessKind::Load) && kinds.contains(&SharedAccessKind::Store));
    assert!(r
        .shared_sites
        .iter()
        .all(|s| s.file.ends_with("emulator_banks.rs")));
}

#[test]
fn blocks_accumulate_and_reports_merge() {
    let r = run_grid([3, 1, 1], [32, 1, 1], 128, &|| unsafe {
        st_shared_v1(dynamic_shared_base() + 4 * thread_idx_x(), 1u32);
    })
    .unwrap();
    assert_eq!(r.blocks, 3);
    assert_eq!(r.shared_accesses, 3);
    assert_eq!(r.shared_wavefronts, 3);
    let mut total = r.clone();
    total.merge(&r);
    assert_eq!(total.shared_accesses, 6);
    assert_eq!(total.shared_sites.len(), 1);
    assert_eq!(total.shared_sites[0].stats.wavefronts, 6);
}

#[test]
fn bank_model_on_word_lists() {
    let mut w: Vec<u32> = (0..32).collect();
    assert_eq!(wavefronts(&mut w), (1, 1));
    let mut w: Vec<u32> = (0..32).map(|l| l * 32).collect();
    assert_eq!(wavefronts(&mut w), (32, 1));
    let mut w: Vec<u32> = (0..128).collect();
    assert_eq!(wavefronts(&mut w), (4, 4));
    // Duplicates are broadcasts; 33 distinct words need 2 wavefronts even without conflicts.
    let mut w: Vec<u32> = (0..33).chain(0..33).collect();
    assert_eq!(wavefronts(&mut w), (2, 2));
    let mut w: Vec<u32> = vec![];
    assert_eq!(wavefronts(&mut w), (0, 0));
}

#[test]
fn ldmatrix_rows_are_counted_with_the_bank_model() {
    // x4: 32 rows of 16 bytes. Rows contiguous (stride 16 B): 512 bytes, 4 wavefronts.
    let r = run(32, 4096, |lane| unsafe {
        let _ = ldmatrix_x4(dynamic_shared_base() + 16 * lane);
    });
    assert_eq!(r.shared_accesses, 1);
    assert_eq!(r.shared_wavefronts, 4);
    assert_eq!(r.shared_sites[0].kind, SharedAccessKind::Ldmatrix);
    // Rows 128 bytes apart (an unswizzled 64-halfword-wide tile): every row on banks 0..4.
    let r = run(32, 32 * 128, |lane| unsafe {
        let _ = ldmatrix_x4(dynamic_shared_base() + 128 * lane);
    });
    assert_eq!(r.shared_wavefronts, 32);
    assert_eq!(r.shared_ideal_wavefronts, 4);
}

/// Emulating amdgpu, loads and stores are counted per phase of AMD's LDS. The addresses put
/// lanes 0–7 (and every quarter warp) on distinct banks, and lane `l ⊕ 20` on lane `l`'s banks
/// one row down: NVIDIA's quarter warps and `ds_write_b128`'s 8-lane phases see no conflict (4
/// wavefronts), `ds_read_b128`'s lane groups ({0–3, 20–23}, …) a 2-way one in each (8).
#[test]
fn amd_lds_phases_count_ds_read_b128_lane_groups() {
    use tessera::emulator::{with_target, EmulatedTarget};
    let address = |l: u32| {
        let bit = |b: u32| l >> b & 1;
        16 * (l & 3) + 64 * (bit(2) ^ bit(4)) + 128 * bit(4) + 256 * bit(3)
    };
    let load = move |lane: u32| unsafe {
        let _: [u32; 4] = ld_shared_v4(dynamic_shared_base() + address(lane));
    };
    let store = move |lane: u32| unsafe {
        st_shared_v4(dynamic_shared_base() + address(lane), [lane; 4]);
    };
    assert_eq!(run(32, 512, load).shared_wavefronts, 4);
    let amd =
        |body: &(dyn Fn(u32) + Sync)| with_target(EmulatedTarget::Amdgpu, || run(32, 512, body));
    let (loads, stores) = (amd(&load), amd(&store));
    assert_eq!(counts(&loads), (1, 8, 4));
    assert_eq!(counts(&stores), (1, 4, 4));
    // 32-bit accesses: half a wave (one warp) a phase, as on NVIDIA.
    let words = amd(&|lane| unsafe {
        let _: u32 = ld_shared_v1(dynamic_shared_base() + 128 * (lane % 2));
    });
    assert_eq!(counts(&words), (1, 2, 1));
}
