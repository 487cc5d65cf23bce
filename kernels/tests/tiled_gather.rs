//! Gather along axis 1 on the test device (the GPU when present, else the emulator; see
//! `support`): exact against the CPU over ragged shapes, every index value of the row, and (on
//! the emulator's counters) done by warp shuffles only (no shared-memory traffic at all). The
//! kernel takes tensors: the output is an `[m, k]` view of a longer allocation whose guard
//! elements must stay untouched.

mod support;

use support::{device, device_and_module, launch_tensors, leading_view};
use tessera::tensor::Tensor;
use tessera_kernels::tiled::gather::tile_gather_cols;

#[test]
fn gather_along_columns_matches_cpu() {
    let gpu = device();
    let (device, _) = device_and_module();
    let mut seed = 0x6a7e_u64;
    let shapes = gpu.cases(
        &[
            (32, 32, 32),
            (1, 1, 1),
            (45, 17, 70),
            (64, 32, 5),
            (7, 29, 33),
        ],
        &[(4099, 31, 1000), (10_000, 32, 64)],
    );
    for (m, n, k) in shapes {
        let src: Vec<f32> = (0..m * n).map(|i| i as f32 + 0.25).collect();
        let index: Vec<i32> = (0..m * k)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((seed >> 33) % n as u64) as i32
            })
            .collect();
        let ts = Tensor::from_slice(device, &src, &[m, n]).unwrap();
        let ti = Tensor::from_slice(device, &index, &[m, k]).unwrap();
        let mut stored =
            Tensor::from_slice(device, &vec![-7.0f32; m * k + 8], &[m * k + 8]).unwrap();
        let consts = tile_gather_cols::Consts {
            BM: 32,
            BN: 32,
            BK: 32,
        };
        let report = {
            let mut tout = leading_view(&mut stored, &[m, k]);
            launch_tensors!(
                gpu,
                tile_gather_cols,
                consts,
                |c: &tile_gather_cols::Consts| (m.div_ceil(c.BM) as u32, k.div_ceil(c.BK) as u32),
                &ts,
                &ti,
                &mut tout,
            )
            .unwrap()
        };
        let out = stored.to_vec().unwrap();
        assert!(
            out[m * k..].iter().all(|&v| v == -7.0),
            "{m}x{n}x{k}: wrote past the end"
        );
        for i in 0..m {
            for j in 0..k {
                let want = src[i * n + index[i * k + j] as usize];
                assert_eq!(out[i * k + j], want, "{m}x{n}x{k}: ({i}, {j})");
            }
        }
        if let Some(report) = gpu.emulator_only(&report, "gather_cols: no shared-memory traffic") {
            assert_eq!(report.shared_accesses, 0, "{m}x{n}x{k}: {report}");
        }
    }
}

/// A source row longer than the block cannot be gathered from one tile: refused, as an index
/// or output of another shape.
#[test]
fn gather_refuses_shapes_it_cannot_serve() {
    let gpu = device();
    let (device, _) = device_and_module();
    let consts = tile_gather_cols::Consts {
        BM: 32,
        BN: 32,
        BK: 32,
    };
    let refused = |src: [usize; 2], index: [usize; 2], out: [usize; 2]| {
        let src = Tensor::<f32>::zeros(device, &src).unwrap();
        let index = Tensor::<i32>::zeros(device, &index).unwrap();
        let mut out = Tensor::<f32>::zeros(device, &out).unwrap();
        launch_tensors!(
            gpu,
            tile_gather_cols,
            consts,
            (1, 1),
            &src,
            &index,
            &mut out
        )
        .unwrap_err()
        .to_string()
    };
    let err = refused([4, 33], [4, 2], [4, 2]);
    assert!(
        err.contains("`src.size(1) <= BN` (src.size(1) = 33, BN = 32)"),
        "{err}"
    );
    let err = refused([4, 8], [5, 2], [5, 2]);
    assert!(err.contains("`index.size(0) == src.size(0)`"), "{err}");
    let err = refused([4, 8], [4, 2], [4, 3]);
    assert!(err.contains("out.size(1) == index.size(1)"), "{err}");
}
