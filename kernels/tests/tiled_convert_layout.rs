//! The explicit `convert_layout` example on the test device (the GPU when present, else the
//! emulator; see `support`): the copy through the user layout is exact over ragged shapes
//! (masked elements untouched), and on the emulator it really moves data (shared memory traffic
//! in and out of the user layout).

mod support;

use support::{device, launch_tensors, GuardedTensor};
use tessera::tensor::Tensor;

use tessera::tile::Label;
use tessera_kernels::tiled::convert_layout::{tile_copy_via_layout, WARP_ROWS};

#[test]
fn user_layout_places_rows_on_warps() {
    // Warp 3, lane 5, register 0b1011: rows 8·(0b11 → 24) + 1 + 4, column 1 + 2·5.
    let c = WARP_ROWS
        .apply(&[
            (Label::Register, 0b1011),
            (Label::Lane, 5),
            (Label::Warp, 3),
        ])
        .unwrap();
    assert_eq!((c[0], c[1]), (24 + 1 + 4, 1 + 10));
    assert_eq!(WARP_ROWS.in_size(Label::Register), 16);
}

#[test]
fn copy_through_user_layout_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
    let shapes = gpu.cases(
        &[(32, 64), (1, 1), (33, 65), (70, 20), (5, 130)],
        &[(1000, 1003), (4096, 64), (31, 10_000)],
    );
    for (m, n) in shapes {
        let x: Vec<f32> = (0..m * n).map(|i| (i as f32).sin()).collect();
        let tx = Tensor::from_slice(device, &x, &[m, n]).unwrap();
        let mut dout = GuardedTensor::new(gpu, &[m, n], -1.5f32);
        let report = launch_tensors!(
            gpu,
            tile_copy_via_layout,
            grid = (m.div_ceil(32) as u32, n.div_ceil(64) as u32),
            &tx,
            &mut dout.view(),
        )
        .unwrap();
        let out = dout.outputs(&format!("{m}x{n}"));
        assert_eq!(&out[..], &x[..], "{m}x{n}");
        // Into and out of the user layout: each program stores and loads its 2048 elements
        // through shared memory at least once per conversion.
        let what = "copy_via_layout: shared-memory traffic of the conversions";
        if let Some(report) = gpu.emulator_only(&report, what) {
            let programs = (m.div_ceil(32) * n.div_ceil(64)) as u64;
            assert!(
                report.shared_accesses >= programs * 2 * 2048 / 32,
                "{m}x{n}: {report}"
            );
        }
    }
}
