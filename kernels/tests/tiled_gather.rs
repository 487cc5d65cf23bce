//! Gather along axis 1 on the test device (the GPU when present, else the emulator; see
//! `support`): exact against the CPU over ragged shapes, every index value of the row, and (on
//! the emulator's counters) done by warp shuffles only (no shared-memory traffic at all).

mod support;

use support::{device, launch_tile, Guarded};
use tessera_kernels::tiled::gather::tile_gather_cols;

#[test]
fn gather_along_columns_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
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
        let (ds, di) = (device.upload(&src).unwrap(), device.upload(&index).unwrap());
        let dout = Guarded::new(gpu, m * k, -7.0f32);
        let consts = tile_gather_cols::Consts {
            BM: 32,
            BN: 32,
            BK: 32,
        };
        let report = launch_tile!(
            gpu,
            tile_gather_cols,
            consts,
            |c: &tile_gather_cols::Consts| (m.div_ceil(c.BM) as u32, k.div_ceil(c.BK) as u32),
            ds.ptr(),
            di.ptr(),
            dout.ptr(),
            m as i32,
            n as i32,
            k as i32,
        )
        .unwrap();
        let out = dout.outputs(&format!("{m}x{n}x{k}"));
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
