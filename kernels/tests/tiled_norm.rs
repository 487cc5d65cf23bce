//! Softmax, LayerNorm and RMSNorm written with `#[tile_kernel]` over `[rows, n]` tensors,
//! against CPU references on the test device (the GPU when present, else the emulator; see
//! `support`), over row lengths with ragged tails (masked columns), rows of padded storage
//! (`[rows, stride]` sliced to `n` columns: strides keeping rows 16-byte aligned, the vectorized
//! variant, and unpadded ones, the unaligned variant), a transposed view, and the launches the
//! kernels refuse.

mod support;

use support::{device, device_and_module, draws};
use tessera::f16;
use tessera::launch::{DeviceElement, LaunchError};
use tessera::tensor::{Tensor, TensorMut, TensorRef};
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

/// `[rows, stride]` storage of `values` on the test device.
fn storage<T: DeviceElement>(values: &[T], (rows, _, stride): (usize, usize, usize)) -> Tensor<T> {
    Tensor::from_slice(device().device(), values, &[rows, stride]).unwrap()
}

/// The first `n_cols` columns of `[rows, stride]` storage: the `[rows, n_cols]` view a kernel
/// reads (`rows_of_mut`: writes).
fn rows_of<T: DeviceElement>(t: &Tensor<T>, n_cols: usize) -> TensorRef<'_, T> {
    t.view().slice(1, 0..n_cols).unwrap()
}

fn rows_of_mut<T: DeviceElement>(t: &mut Tensor<T>, n_cols: usize) -> TensorMut<'_, T> {
    t.view_mut().slice(1, 0..n_cols).unwrap()
}

/// Runs `tile_softmax` at `$t` on the rows of `$x` (`rows × stride` storage, rows of `n_cols`)
/// into storage filled with `$fill`; gives the output storage.
macro_rules! softmax_rows {
    ($t:ident, $x:expr, $fill:expr, $case:expr) => {{
        let (rows, n_cols, stride) = $case;
        let (device, module) = device_and_module();
        let stream = device.stream().unwrap();
        let x = storage($x, $case);
        let mut out = storage(&vec![$fill; rows * stride], $case);
        let consts = tile_softmax::Consts {
            BLOCK: block_for(n_cols),
        };
        let (mut y, grid) = (rows_of_mut(&mut out, n_cols), rows as u32);
        tile_softmax::$t::launch(&stream, module, consts, grid, &mut y, &rows_of(&x, n_cols))
            .unwrap();
        stream.synchronize().unwrap();
        out.to_vec().unwrap()
    }};
}

#[test]
fn softmax_f32_matches_cpu() {
    for (rows, n_cols, stride) in cases() {
        let x = values(11, rows * stride, 8.0);
        let out = softmax_rows!(T_f32, &x, -1.0f32, (rows, n_cols, stride));
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
        let out = softmax_rows!(T_f16, &x, fill, (rows, n_cols, stride));
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

/// The f16 input, weight and output storage of a normalisation over `rows × stride` storage
/// (rows of `n_cols`).
struct NormCase {
    x: Vec<f16>,
    w: Vec<f16>,
    tx: Tensor<f16>,
    tw: Tensor<f16>,
    /// Filled with 9.0, which the masked columns keep.
    ty: Tensor<f16>,
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
    let case = (rows, n_cols, stride);
    NormCase {
        tx: storage(&x, case),
        tw: Tensor::from_slice(device, &w, &[n_cols]).unwrap(),
        ty: storage(&vec![f16::from_f32(9.0); rows * stride], case),
        x,
        w,
    }
}

/// LayerNorm of `case`'s rows (`x` at `seed`) through `tile_layernorm`; checks the output, the
/// masked columns and the statistics against the f64 reference.
fn check_layernorm(seed: u64, (rows, n_cols, stride): (usize, usize, usize)) {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let eps = 1e-5f32;
    let case = (rows, n_cols, stride);
    let NormCase {
        x,
        w,
        tx,
        tw,
        mut ty,
    } = norm_case(seed, (3.0, 1.0), case);
    let b = halves(values(seed + 2, n_cols, 0.5));
    let tb = Tensor::from_slice(device, &b, &[n_cols]).unwrap();
    let mut mean = Tensor::<f32>::zeros(device, &[rows]).unwrap();
    let mut rstd = Tensor::<f32>::zeros(device, &[rows]).unwrap();
    let consts = tile_layernorm::Consts {
        BLOCK: block_for(n_cols),
    };
    tile_layernorm::launch(
        &stream,
        module,
        consts,
        rows as u32,
        &mut rows_of_mut(&mut ty, n_cols),
        &rows_of(&tx, n_cols),
        &tw,
        &tb,
        &mut mean,
        &mut rstd,
        eps,
    )
    .unwrap();
    stream.synchronize().unwrap();
    let (y, mean, rstd) = (
        ty.to_vec().unwrap(),
        mean.to_vec().unwrap(),
        rstd.to_vec().unwrap(),
    );
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
    check_rows(&wide(&y), case, 9.0, want, close_f16_out);
}

#[test]
fn layernorm_matches_cpu() {
    for case in cases() {
        check_layernorm(21, case);
    }
}

/// An f16 output against its f64 reference: 2e-3 relative, absolute below 1.
fn close_f16_out(got: f64, want: f64) -> bool {
    (got - want).abs() <= 2e-3 * want.abs().max(1.0)
}

/// RMSNorm of `tx`'s `[rows, n_cols]` view into `ty`'s, through `tile_rmsnorm`.
fn rmsnorm(
    (tx, tw, ty): (TensorRef<'_, f16>, &Tensor<f16>, &mut TensorMut<'_, f16>),
    eps: f32,
) -> Result<(), LaunchError> {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let (rows, n_cols) = (tx.sizes()[0], tx.sizes()[1]);
    let consts = tile_rmsnorm::Consts {
        BLOCK: block_for(n_cols),
    };
    tile_rmsnorm::launch(&stream, module, consts, rows as u32, ty, &tx, tw, eps)?;
    stream.synchronize()
}

/// The f64 RMSNorm of `row` with weight `w`.
fn rmsnorm_ref(row: &[f64], w: &[f16], eps: f32) -> Vec<f64> {
    let ms = row.iter().map(|v| v * v).sum::<f64>() / row.len() as f64;
    let scale = 1.0 / (ms + eps as f64).sqrt();
    (0..row.len())
        .map(|c| row[c] * scale * w[c].to_f32() as f64)
        .collect()
}

#[test]
fn rmsnorm_matches_cpu() {
    let eps = 1e-6f32;
    for (rows, n_cols, stride) in cases() {
        let case = (rows, n_cols, stride);
        let NormCase {
            x,
            w,
            tx,
            tw,
            mut ty,
        } = norm_case(31, (2.0, 1.5), case);
        rmsnorm(
            (rows_of(&tx, n_cols), &tw, &mut rows_of_mut(&mut ty, n_cols)),
            eps,
        )
        .unwrap();
        let y = wide(&ty.to_vec().unwrap());
        let want = |r: usize| rmsnorm_ref(&wide(&x[r * stride..r * stride + n_cols]), &w, eps);
        check_rows(&y, case, 9.0, want, close_f16_out);
    }
}

/// A transposed view (the input stored column-major, so a row's elements lie `rows` apart):
/// the kernels read the strides, which the unaligned variant serves.
#[test]
fn rmsnorm_of_a_transposed_view() {
    let device = device().device();
    let (rows, n_cols) = (37, 300);
    let x = halves(values(51, rows * n_cols, 2.0));
    let w = halves(values(52, n_cols, 1.0));
    let mut stored = vec![f16::from_f32(0.0); rows * n_cols];
    for r in 0..rows {
        for c in 0..n_cols {
            stored[c * rows + r] = x[r * n_cols + c];
        }
    }
    let t = Tensor::from_slice(device, &stored, &[n_cols, rows]).unwrap();
    let tw = Tensor::from_slice(device, &w, &[n_cols]).unwrap();
    let mut y = Tensor::<f16>::zeros(device, &[rows, n_cols]).unwrap();
    let eps = 1e-6;
    rmsnorm(
        (t.view().transpose(0, 1).unwrap(), &tw, &mut y.view_mut()),
        eps,
    )
    .unwrap();
    let got = wide(&y.to_vec().unwrap());
    let want = |r: usize| rmsnorm_ref(&wide(&x[r * n_cols..(r + 1) * n_cols]), &w, eps);
    check_rows(&got, (rows, n_cols, n_cols), 0.0, want, close_f16_out);
}

/// Launches the kernels cannot serve are refused before anything runs, naming the condition and
/// the values: a row longer than the block (it would be cut at `BLOCK` columns), a weight or an
/// output of another shape, a negative `eps`; nothing is written.
#[test]
fn launches_the_kernels_cannot_serve_are_refused() {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let (rows, n_cols, stride) = (2, 300, 304);
    let NormCase { tx, tw, mut ty, .. } = norm_case(41, (1.0, 1.0), (rows, n_cols, stride));
    let refused = |err: LaunchError, kernel: &str, want: &str| {
        let message = err.to_string();
        assert!(
            message.contains(want) && message.contains(kernel),
            "{kernel}: {message} does not contain {want:?}"
        );
    };
    let long =
        "the arguments break its requirement `x.size(1) <= BLOCK` (x.size(1) = 300, BLOCK = 256)";
    let (x, grid) = (rows_of(&tx, n_cols), rows as u32);
    let rms = tile_rmsnorm::Consts { BLOCK: 256 };
    let mut y = rows_of_mut(&mut ty, n_cols);
    let err = tile_rmsnorm::launch(&stream, module, rms, grid, &mut y, &x, &tw, 1e-6);
    refused(err.unwrap_err(), "tile_rmsnorm", long);
    let rms = tile_rmsnorm::Consts { BLOCK: 1024 };
    let short_w = tw.view().slice(0, 0..299).unwrap();
    let err = tile_rmsnorm::launch(&stream, module, rms, grid, &mut y, &x, &short_w, 1e-6);
    refused(
        err.unwrap_err(),
        "tile_rmsnorm",
        "`w.size(0) == x.size(1)` (w.size(0) = 299",
    );
    let err = tile_rmsnorm::launch(&stream, module, rms, grid, &mut y, &x, &tw, -1e-6);
    refused(
        err.unwrap_err(),
        "tile_rmsnorm",
        "`eps >= 0.0` (eps = -0.000001)",
    );
    let mut stats = Tensor::<f32>::zeros(device, &[rows]).unwrap();
    let mut stats2 = Tensor::<f32>::zeros(device, &[rows]).unwrap();
    let mut layernorm = |block: usize, mean: &mut TensorMut<'_, f32>| {
        let ln = tile_layernorm::Consts { BLOCK: block };
        let rstd = &mut stats2;
        tile_layernorm::launch(
            &stream, module, ln, grid, &mut y, &x, &tw, &tw, mean, rstd, 1e-5,
        )
    };
    refused(
        layernorm(256, &mut stats.view_mut()).unwrap_err(),
        "tile_layernorm",
        long,
    );
    let err = layernorm(1024, &mut stats.view_mut().slice(0, 0..1).unwrap()).unwrap_err();
    refused(
        err,
        "tile_layernorm",
        "`mean_out.size(0) == x.size(0) && rstd_out.size(0) == x.size(0)`",
    );
    let mut out = Tensor::<f32>::zeros(device, &[rows, n_cols]).unwrap();
    let inp = Tensor::<f32>::zeros(device, &[rows, n_cols]).unwrap();
    let softmax = |block: usize, out: &mut TensorMut<'_, f32>| {
        let sm = tile_softmax::Consts { BLOCK: block };
        tile_softmax::T_f32::launch(&stream, module, sm, grid, out, &inp).unwrap_err()
    };
    let want = "`inp.size(1) <= BLOCK` (inp.size(1) = 300, BLOCK = 256)";
    refused(softmax(256, &mut out.view_mut()), "tile_softmax", want);
    let want = "`out.size(0) == inp.size(0) && out.size(1) == inp.size(1)`";
    let err = softmax(1024, &mut out.view_mut().slice(0, 0..1).unwrap());
    refused(err, "tile_softmax", want);
    stream.synchronize().unwrap();
    assert!(ty.to_vec().unwrap().iter().all(|v| v.to_f32() == 9.0));
}
