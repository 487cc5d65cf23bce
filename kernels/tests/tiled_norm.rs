//! Softmax, LayerNorm and RMSNorm written with `#[tile_kernel]`, against CPU references on the
//! test device (the GPU when present, else the emulator; see `support`), over row lengths with
//! ragged tails (masked columns), strides padded to keep rows 16-byte aligned (the vectorized
//! variant) and unpadded ones (the unaligned variant).

mod support;

use support::{device, launch_tile};
use tessera::f16;
use tessera_kernels::tiled::norm::{tile_layernorm, tile_rmsnorm, tile_softmax, tile_softmax_f16};

fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0) * scale
        })
        .collect()
}

/// The smallest compiled block that holds a row.
fn block_for(n_cols: usize) -> usize {
    [256, 1024, 4096]
        .into_iter()
        .find(|&b| b >= n_cols)
        .expect("row too long for the compiled blocks")
}

/// (rows, n_cols, stride) cases: ragged lengths, padded and unpadded strides.
const CASES: [(usize, usize, usize); 9] = [
    (3, 1, 4),
    (2, 17, 32),
    (4, 200, 200),
    (3, 255, 256),
    (2, 256, 256),
    (2, 1000, 1000),
    (2, 1001, 1001),
    (2, 1040, 1040),
    (1, 3000, 3008),
];

/// The cases of the test device: on the GPU also many rows and the longest rows.
fn cases() -> Vec<(usize, usize, usize)> {
    let mut cases = CASES.to_vec();
    if device().larger_shapes() {
        cases.extend([(4096, 1000, 1000), (2000, 4096, 4096), (517, 3001, 3001)]);
    }
    cases
}

fn softmax_ref(row: &[f32]) -> Vec<f32> {
    let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = row.iter().map(|&v| ((v - m) as f64).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|&v| (v / s) as f32).collect()
}

#[test]
fn softmax_f32_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
    for (rows, n_cols, stride) in cases() {
        let x = values(11, rows * stride, 8.0);
        let dx = device.upload(&x).unwrap();
        let dout = device.upload(&vec![-1.0f32; rows * stride]).unwrap();
        let block = block_for(n_cols);
        launch_tile!(
            gpu,
            tile_softmax,
            tile_softmax::Consts { BLOCK: block },
            rows as u32,
            dout.ptr(),
            dx.ptr(),
            stride as i32,
            stride as i32,
            n_cols as i32,
        )
        .unwrap();
        let out = dout.download().unwrap();
        for r in 0..rows {
            let want = softmax_ref(&x[r * stride..r * stride + n_cols]);
            for c in 0..stride {
                let got = out[r * stride + c];
                if c < n_cols {
                    let w = want[c];
                    assert!(
                        (got - w).abs() <= 1e-6 + 2e-5 * w,
                        "rows {rows} n {n_cols} r {r} c {c}: {got} vs {w}"
                    );
                } else {
                    assert_eq!(got, -1.0, "n {n_cols}: wrote a masked column {c}");
                }
            }
        }
    }
}

#[test]
fn softmax_f16_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
    for (rows, n_cols, stride) in cases() {
        let x: Vec<f16> = values(12, rows * stride, 6.0)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let dx = device.upload(&x).unwrap();
        let dout = device
            .upload(&vec![f16::from_f32(-1.0); rows * stride])
            .unwrap();
        launch_tile!(
            gpu,
            tile_softmax_f16,
            tile_softmax_f16::Consts {
                BLOCK: block_for(n_cols),
            },
            rows as u32,
            dout.ptr(),
            dx.ptr(),
            stride as i32,
            stride as i32,
            n_cols as i32,
        )
        .unwrap();
        let out = dout.download().unwrap();
        for r in 0..rows {
            let row: Vec<f32> = x[r * stride..r * stride + n_cols]
                .iter()
                .map(|v| v.to_f32())
                .collect();
            let want = softmax_ref(&row);
            for c in 0..stride {
                let got = out[r * stride + c].to_f32();
                if c < n_cols {
                    // f16 output: half an ulp of rounding (2^-11 relative) plus f32 math.
                    let w = want[c];
                    assert!(
                        (got - w).abs() <= 1e-7 + 1e-3 * w,
                        "n {n_cols} r {r} c {c}: {got} vs {w}"
                    );
                } else {
                    assert_eq!(got, -1.0);
                }
            }
        }
    }
}

#[test]
fn layernorm_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
    let eps = 1e-5f32;
    for (rows, n_cols, stride) in cases() {
        let h = |v: Vec<f32>| -> Vec<f16> { v.into_iter().map(f16::from_f32).collect() };
        let x = h(values(21, rows * stride, 3.0));
        let w = h(values(22, n_cols, 1.0));
        let b = h(values(23, n_cols, 0.5));
        let (dx, dw, db) = (
            device.upload(&x).unwrap(),
            device.upload(&w).unwrap(),
            device.upload(&b).unwrap(),
        );
        let dy = device
            .upload(&vec![f16::from_f32(9.0); rows * stride])
            .unwrap();
        let (dmean, drstd) = (
            device.zeros::<f32>(rows).unwrap(),
            device.zeros::<f32>(rows).unwrap(),
        );
        launch_tile!(
            gpu,
            tile_layernorm,
            tile_layernorm::Consts {
                BLOCK: block_for(n_cols),
            },
            rows as u32,
            dy.ptr(),
            dx.ptr(),
            dw.ptr(),
            db.ptr(),
            dmean.ptr(),
            drstd.ptr(),
            stride as i32,
            n_cols as i32,
            eps,
        )
        .unwrap();
        let (y, mean, rstd) = (
            dy.download().unwrap(),
            dmean.download().unwrap(),
            drstd.download().unwrap(),
        );
        for r in 0..rows {
            let row: Vec<f64> = x[r * stride..r * stride + n_cols]
                .iter()
                .map(|v| v.to_f32() as f64)
                .collect();
            let m = row.iter().sum::<f64>() / n_cols as f64;
            let var = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n_cols as f64;
            let rs = 1.0 / (var + eps as f64).sqrt();
            assert!(
                (mean[r] as f64 - m).abs() <= 1e-5,
                "mean {} vs {m}",
                mean[r]
            );
            assert!(
                (rstd[r] as f64 - rs).abs() <= 1e-4 * rs,
                "rstd {} vs {rs}",
                rstd[r]
            );
            for c in 0..stride {
                let got = y[r * stride + c].to_f32() as f64;
                if c < n_cols {
                    let want = (row[c] - m) * rs * w[c].to_f32() as f64 + b[c].to_f32() as f64;
                    assert!(
                        (got - want).abs() <= 2e-3 * want.abs().max(1.0),
                        "n {n_cols} r {r} c {c}: {got} vs {want}"
                    );
                } else {
                    assert_eq!(got, 9.0, "wrote a masked column");
                }
            }
        }
    }
}

#[test]
fn rmsnorm_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
    let eps = 1e-6f32;
    for (rows, n_cols, stride) in cases() {
        let h = |v: Vec<f32>| -> Vec<f16> { v.into_iter().map(f16::from_f32).collect() };
        let x = h(values(31, rows * stride, 2.0));
        let w = h(values(32, n_cols, 1.5));
        let (dx, dw) = (device.upload(&x).unwrap(), device.upload(&w).unwrap());
        let dy = device
            .upload(&vec![f16::from_f32(9.0); rows * stride])
            .unwrap();
        launch_tile!(
            gpu,
            tile_rmsnorm,
            tile_rmsnorm::Consts {
                BLOCK: block_for(n_cols),
            },
            rows as u32,
            dy.ptr(),
            dx.ptr(),
            dw.ptr(),
            stride as i32,
            n_cols as i32,
            eps,
        )
        .unwrap();
        let y = dy.download().unwrap();
        for r in 0..rows {
            let row: Vec<f64> = x[r * stride..r * stride + n_cols]
                .iter()
                .map(|v| v.to_f32() as f64)
                .collect();
            let ms = row.iter().map(|v| v * v).sum::<f64>() / n_cols as f64;
            let scale = 1.0 / (ms + eps as f64).sqrt();
            for c in 0..stride {
                let got = y[r * stride + c].to_f32() as f64;
                if c < n_cols {
                    let want = row[c] * scale * w[c].to_f32() as f64;
                    assert!(
                        (got - want).abs() <= 2e-3 * want.abs().max(1.0),
                        "n {n_cols} r {r} c {c}: {got} vs {want}"
                    );
                } else {
                    assert_eq!(got, 9.0);
                }
            }
        }
    }
}
