//! Softmax, LayerNorm and RMSNorm written with `#[tile_kernel]`, against CPU references on the
//! test device (the GPU when present, else the emulator; see `support`), over row lengths with
//! ragged tails (masked columns), strides padded to keep rows 16-byte aligned (the vectorized
//! variant) and unpadded ones (the unaligned variant).

mod support;

use support::{device, download, draws, launch_tile};
use tessera::f16;
use tessera::launch::DeviceBuffer;
use tessera_kernels::tiled::norm::{tile_layernorm, tile_rmsnorm, tile_softmax};

/// Uniform in [-scale, scale) from the seeded test RNG.
fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    draws(seed, n, |rng| rng.next_f32() * scale)
}

/// `values` rounded to f16.
fn halves(values: Vec<f32>) -> Vec<f16> {
    values.into_iter().map(f16::from_f32).collect()
}

/// f16 values widened to f64.
fn wide(values: &[f16]) -> Vec<f64> {
    values.iter().map(|v| v.to_f32() as f64).collect()
}

/// The smallest compiled block that holds a row.
fn block_for(n_cols: usize) -> usize {
    [256, 1024, 4096]
        .into_iter()
        .find(|&b| b >= n_cols)
        .expect("row too long for the compiled blocks")
}

/// (rows, n_cols, stride) cases: ragged lengths, padded and unpadded strides.
#[rustfmt::skip]
const CASES: [(usize, usize, usize); 9] = [
    (3, 1, 4), (2, 17, 32), (4, 200, 200), (3, 255, 256), (2, 256, 256), (2, 1000, 1000),
    (2, 1001, 1001), (2, 1040, 1040), (1, 3000, 3008),
];

/// The cases of the test device: on the GPU also many rows and the longest rows.
fn cases() -> Vec<(usize, usize, usize)> {
    device().cases(
        &CASES,
        &[(4096, 1000, 1000), (2000, 4096, 4096), (517, 3001, 3001)],
    )
}

fn softmax_ref(row: &[f32]) -> Vec<f32> {
    let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = row.iter().map(|&v| ((v - m) as f64).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|&v| (v / s) as f32).collect()
}

/// Checks every row of a `rows × stride` output: column `c < n_cols` of row `r` is
/// `close(got, want(r)[c])`, and every column past `n_cols` still holds `fill`.
fn check_rows<T: Copy + PartialEq + std::fmt::Debug>(
    got: &[T],
    (rows, n_cols, stride): (usize, usize, usize),
    fill: T,
    want: impl Fn(usize) -> Vec<T>,
    close: impl Fn(T, T) -> bool,
) {
    for r in 0..rows {
        let want = want(r);
        for c in 0..stride {
            let got = got[r * stride + c];
            if c < n_cols {
                let w = want[c];
                assert!(
                    close(got, w),
                    "rows {rows} n {n_cols} r {r} c {c}: {got:?} vs {w:?}"
                );
            } else {
                assert_eq!(got, fill, "n {n_cols}: wrote a masked column {c}");
            }
        }
    }
}

/// Runs the row softmax `$kernel` on `$x` (`rows × stride`, rows of `n_cols`) into a buffer
/// filled with `$fill`; gives the output.
macro_rules! softmax_rows {
    ($kernel:ident, $x:expr, $fill:expr, ($rows:expr, $n_cols:expr, $stride:expr)) => {{
        let gpu = device();
        let dx = gpu.device().upload($x).unwrap();
        let dout = gpu.device().upload(&vec![$fill; $rows * $stride]).unwrap();
        let consts = $kernel::Consts {
            BLOCK: block_for($n_cols),
        };
        let (stride, n_cols) = ($stride as i32, $n_cols as i32);
        launch_tile!(
            gpu,
            $kernel,
            consts,
            $rows as u32,
            dout.ptr(),
            dx.ptr(),
            stride,
            stride,
            n_cols
        )
        .unwrap();
        dout.download().unwrap()
    }};
}

#[test]
fn softmax_f32_matches_cpu() {
    for (rows, n_cols, stride) in cases() {
        let x = values(11, rows * stride, 8.0);
        let out = softmax_rows!(tile_softmax, &x, -1.0f32, (rows, n_cols, stride));
        let want = |r: usize| softmax_ref(&x[r * stride..r * stride + n_cols]);
        let close = |got: f32, w: f32| (got - w).abs() <= 1e-6 + 2e-5 * w;
        check_rows(&out, (rows, n_cols, stride), -1.0, want, close);
    }
}

#[test]
fn softmax_f16_matches_cpu() {
    for (rows, n_cols, stride) in cases() {
        let x = halves(values(12, rows * stride, 6.0));
        let fill = f16::from_f32(-1.0);
        let out = softmax_rows!(tile_softmax, &x, fill, (rows, n_cols, stride));
        let out: Vec<f32> = out.iter().map(|v| v.to_f32()).collect();
        let want = |r: usize| {
            let row: Vec<f32> = x[r * stride..r * stride + n_cols]
                .iter()
                .map(|v| v.to_f32())
                .collect();
            softmax_ref(&row)
        };
        // f16 output: half an ulp of rounding (2^-11 relative) plus f32 math.
        let close = |got: f32, w: f32| (got - w).abs() <= 1e-7 + 1e-3 * w;
        check_rows(&out, (rows, n_cols, stride), -1.0, want, close);
    }
}

/// The f16 input, weight and output of a normalisation over `rows × stride` (rows of `n_cols`).
struct NormCase {
    x: Vec<f16>,
    w: Vec<f16>,
    dx: DeviceBuffer<f16>,
    dw: DeviceBuffer<f16>,
    /// Filled with 9.0, which the masked columns keep.
    dy: DeviceBuffer<f16>,
}

/// A [`NormCase`] on the test device: `x` drawn from `seed` in `[-x_scale, x_scale)`, the
/// weight of `n_cols` from `seed + 1` in `[-w_scale, w_scale)`.
fn norm_case(
    seed: u64,
    (x_scale, w_scale): (f32, f32),
    (rows, n_cols, stride): (usize, usize, usize),
) -> NormCase {
    let device = device().device();
    let x = halves(values(seed, rows * stride, x_scale));
    let w = halves(values(seed + 1, n_cols, w_scale));
    NormCase {
        dx: device.upload(&x).unwrap(),
        dw: device.upload(&w).unwrap(),
        dy: device
            .upload(&vec![f16::from_f32(9.0); rows * stride])
            .unwrap(),
        x,
        w,
    }
}

#[test]
fn layernorm_matches_cpu() {
    let gpu = device();
    let device = gpu.device();
    let eps = 1e-5f32;
    for (rows, n_cols, stride) in cases() {
        let NormCase { x, w, dx, dw, dy } = norm_case(21, (3.0, 1.0), (rows, n_cols, stride));
        let b = halves(values(23, n_cols, 0.5));
        let db = device.upload(&b).unwrap();
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
        let (y, mean, rstd) = (download(&dy), download(&dmean), download(&drstd));
        let row = |r: usize| wide(&x[r * stride..r * stride + n_cols]);
        // The row's mean and 1 / sqrt(var + eps), in f64.
        let stats = |row: &[f64]| {
            let m = row.iter().sum::<f64>() / n_cols as f64;
            let var = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n_cols as f64;
            (m, 1.0 / (var + eps as f64).sqrt())
        };
        for r in 0..rows {
            let (m, rs) = stats(&row(r));
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
        }
        let want = |r: usize| {
            let row = row(r);
            let (m, rs) = stats(&row);
            (0..n_cols)
                .map(|c| (row[c] - m) * rs * w[c].to_f32() as f64 + b[c].to_f32() as f64)
                .collect()
        };
        check_rows(&wide(&y), (rows, n_cols, stride), 9.0, want, close_f16_out);
    }
}

/// An f16 output against its f64 reference: 2e-3 relative, absolute below 1.
fn close_f16_out(got: f64, want: f64) -> bool {
    (got - want).abs() <= 2e-3 * want.abs().max(1.0)
}

#[test]
fn rmsnorm_matches_cpu() {
    let gpu = device();
    let eps = 1e-6f32;
    for (rows, n_cols, stride) in cases() {
        let NormCase { x, w, dx, dw, dy } = norm_case(31, (2.0, 1.5), (rows, n_cols, stride));
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
        let y = wide(&dy.download().unwrap());
        let want = |r: usize| -> Vec<f64> {
            let row = wide(&x[r * stride..r * stride + n_cols]);
            let ms = row.iter().map(|v| v * v).sum::<f64>() / n_cols as f64;
            let scale = 1.0 / (ms + eps as f64).sqrt();
            (0..n_cols)
                .map(|c| row[c] * scale * w[c].to_f32() as f64)
                .collect()
        };
        check_rows(&y, (rows, n_cols, stride), 9.0, want, close_f16_out);
    }
}

/// A row longer than the block asked for would be cut at `BLOCK` columns: each kernel's
/// `requires = [n_cols <= BLOCK]` refuses the launch, naming the values, and nothing is written.
#[test]
fn rows_longer_than_the_block_are_refused() {
    let gpu = device();
    let (rows, n_cols, stride) = (2, 300, 304);
    let NormCase { dx, dw, dy, .. } = norm_case(41, (1.0, 1.0), (rows, n_cols, stride));
    let want = "the arguments break its requirement `n_cols <= BLOCK` (n_cols = 300, BLOCK = 256)";
    let refused = |err: tessera::launch::LaunchError, kernel: &str| {
        let message = err.to_string();
        assert!(
            message.contains(want) && message.contains(kernel),
            "{kernel}: {message}"
        );
    };
    let (y, x, w, grid) = (dy.ptr(), dx.ptr(), dw.ptr(), rows as u32);
    let (stride, n_cols) = (stride as i32, n_cols as i32);
    let rms = tile_rmsnorm::Consts { BLOCK: 256 };
    let err = launch_tile!(gpu, tile_rmsnorm, rms, grid, y, x, w, stride, n_cols, 1e-6);
    refused(err.unwrap_err(), "tile_rmsnorm");
    let stats = gpu.device().zeros::<f32>(rows).unwrap();
    let (b, mean, rstd) = (w, stats.ptr(), stats.ptr());
    let ln = tile_layernorm::Consts { BLOCK: 256 };
    let (s, n) = (stride, n_cols);
    let err = launch_tile!(
        gpu,
        tile_layernorm,
        ln,
        grid,
        y,
        x,
        w,
        b,
        mean,
        rstd,
        s,
        n,
        1e-5
    );
    refused(err.unwrap_err(), "tile_layernorm");
    let out = gpu.device().zeros::<f32>(rows * stride as usize).unwrap();
    let sm = tile_softmax::Consts { BLOCK: 256 };
    let (o, i) = (out.ptr(), out.ptr());
    let err = launch_tile!(gpu, tile_softmax, sm, grid, o, i, stride, stride, n_cols);
    refused(err.unwrap_err(), "tile_softmax");
    assert!(dy.download().unwrap().iter().all(|v| v.to_f32() == 9.0));
}
