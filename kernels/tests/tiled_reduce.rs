//! Row and column reductions written with `#[tile_kernel]` (sum, max, argmax), against CPU
//! references on the test device (the GPU when present, else the emulator; see `support`), over
//! matrix shapes with ragged tails in both dimensions. The kernels take tensors: the matrix is
//! the first `n` columns of a `[m, stride]` one (a strided view), the outputs views of longer
//! allocations whose guard elements must stay untouched.

mod support;

use support::{device, device_and_module, draws, launch_tensors};
use tessera::f16;
use tessera::tensor::Tensor;
use tessera_kernels::tiled::reduce::{
    tile_col_argmax, tile_col_max, tile_col_sum, tile_row_argmax, tile_row_max, tile_row_stats_f16,
    tile_row_sum,
};

/// Multiples of 1/64 in [-8, 8) from the seeded test RNG: sums of a few hundred are exact in
/// f32, and repeated values make ties for argmax.
fn values(seed: u64, n: usize) -> Vec<f32> {
    draws(seed, n, |rng| {
        ((rng.next_u64() >> 54) as f32 - 512.0) / 64.0
    })
}

/// (m, n, stride): ragged in both dimensions, a padded stride, one row, one column.
#[rustfmt::skip]
const SHAPES: [(usize, usize, usize); 7] = [
    (1, 1, 1), (3, 5, 5), (4, 128, 128), (7, 300, 304), (33, 129, 129), (70, 64, 64),
    (1, 1000, 1000),
];

/// The shapes of the test device: on the GPU also large ones. Sums of multiples of 1/64 in
/// [-8, 8) stay exact in f32 while fewer than 2^15 are added (|sum| < 2^18 = 2^24 / 64).
fn shapes() -> Vec<(usize, usize, usize)> {
    device().cases(
        &SHAPES,
        &[(3000, 2000, 2000), (20_000, 64, 64), (5, 30_000, 30_001)],
    )
}

fn matrix(seed: u64, m: usize, stride: usize) -> Vec<f32> {
    values(seed, m * stride)
}

fn first_argmax(values: impl Iterator<Item = f32>) -> i32 {
    let mut best = (f32::NEG_INFINITY, 0i32);
    for (i, v) in values.enumerate() {
        if v > best.0 {
            best = (v, i as i32);
        }
    }
    best.1
}

/// Outputs for the sum, max and argmax of `len` lines, with 4 guard elements each (5.0, 5.0,
/// -7) that must stay untouched.
fn guarded_outputs(len: usize) -> (Tensor<f32>, Tensor<f32>, Tensor<i32>) {
    let (device, _) = device_and_module();
    (
        Tensor::from_slice(device, &vec![5.0f32; len + 4], &[len + 4]).unwrap(),
        Tensor::from_slice(device, &vec![5.0f32; len + 4], &[len + 4]).unwrap(),
        Tensor::from_slice(device, &vec![-7i32; len + 4], &[len + 4]).unwrap(),
    )
}

/// Launches each reduction `$kernel` (`BLOCK_M × BLOCK_N` = `$bm × $bn`, `$grid` programs)
/// over the `m × n` matrix `$x` (row stride `stride`: the first `n` columns of a `[m, stride]`
/// tensor) into the first `$len` elements of its output `$out`.
macro_rules! launch_each {
    ([$($kernel:ident => $out:ident),+], ($bm:expr, $bn:expr), $grid:expr, $x:expr,
     ($m:expr, $n:expr, $stride:expr), $len:expr) => {{
        let gpu = device();
        let (device, _) = device_and_module();
        let stored = Tensor::from_slice(device, $x, &[$m, $stride]).unwrap();
        let x = stored.view().slice(1, 0..$n).unwrap();
        $(
            let consts = $kernel::Consts { BLOCK_M: $bm, BLOCK_N: $bn };
            let mut out = $out.view_mut().slice(0, 0..$len).unwrap();
            launch_tensors!(gpu, $kernel, consts, $grid, &mut out, &x).unwrap();
        )+
    }};
}

/// Checks the reductions of one axis: `lines(i)` yields line `i` of the matrix (a row or a
/// column), `len` lines, and the guard elements past them are untouched.
fn check_reductions<I: Iterator<Item = f32>>(
    outputs: (Tensor<f32>, Tensor<f32>, Tensor<i32>),
    len: usize,
    lines: impl Fn(usize) -> I,
    what: &str,
) {
    let (sum, max, arg) = (
        outputs.0.to_vec().unwrap(),
        outputs.1.to_vec().unwrap(),
        outputs.2.to_vec().unwrap(),
    );
    for i in 0..len {
        assert_eq!(sum[i], lines(i).sum::<f32>(), "sum {what} {i}");
        assert_eq!(
            max[i],
            lines(i).fold(f32::NEG_INFINITY, f32::max),
            "max {what} {i}"
        );
        assert_eq!(arg[i], first_argmax(lines(i)), "argmax {what} {i}");
    }
    assert!(
        sum[len..].iter().chain(&max[len..]).all(|&v| v == 5.0),
        "wrote past {what}"
    );
    assert!(arg[len..].iter().all(|&v| v == -7), "wrote past {what}");
}

/// Line `i` of the `m × n` matrix `x` (row stride `stride`) along `axis`: row `i` (axis 1) or
/// column `i` (axis 0).
fn line(x: &[f32], (m, n, stride): (usize, usize, usize), axis: usize, i: usize) -> Vec<f32> {
    if axis == 1 {
        x[i * stride..i * stride + n].to_vec()
    } else {
        (0..m).map(|r| x[r * stride + i]).collect()
    }
}

/// A `#[test]` per axis: its sum, max and argmax kernels (`BLOCK_M × BLOCK_N` = `$bm × $bn`)
/// on a matrix drawn from `$seed`, over every shape, against the CPU. Axis 1 reduces the rows
/// (a program per `BLOCK_M` rows), axis 0 the columns (a program per `BLOCK_N` columns).
macro_rules! reduction_tests {
    ($($test:ident: axis $axis:literal, seed $seed:literal, [$sum:ident, $max:ident, $arg:ident], ($bm:expr, $bn:expr);)*) => {$(
        #[test]
        fn $test() {
            for (m, n, stride) in shapes() {
                let x = matrix($seed, m, stride);
                let (len, programs, what) = match $axis {
                    1 => (m, m.div_ceil($bm), format!("m {m} n {n} r")),
                    _ => (n, n.div_ceil($bn), format!("m {m} n {n} c")),
                };
                let (mut sum, mut max, mut arg) = guarded_outputs(len);
                launch_each!(
                    [$sum => sum, $max => max, $arg => arg],
                    ($bm, $bn), (programs as u32,), &x, (m, n, stride), len
                );
                let lines = |i: usize| line(&x, (m, n, stride), $axis, i).into_iter();
                check_reductions((sum, max, arg), len, lines, &what);
            }
        }
    )*};
}

reduction_tests! {
    row_reductions_match_cpu: axis 1, seed 41, [tile_row_sum, tile_row_max, tile_row_argmax], (4, 128);
    column_reductions_match_cpu: axis 0, seed 43, [tile_col_sum, tile_col_max, tile_col_argmax], (32, 64);
}

#[test]
fn f16_row_sum_min_argmin_match_cpu() {
    let gpu = device();
    let (device, _) = device_and_module();
    let consts = tile_row_stats_f16::Consts { BLOCK: 512 };
    for (rows, n, stride) in [
        (2usize, 1usize, 8usize),
        (3, 77, 80),
        (2, 512, 512),
        (1, 300, 301),
    ] {
        let x: Vec<f16> = matrix(47, rows, stride)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let stored = Tensor::from_slice(device, &x, &[rows, stride]).unwrap();
        let tx = stored.view().slice(1, 0..n).unwrap();
        let mut tsum = Tensor::<f16>::zeros(device, &[rows]).unwrap();
        let mut tmin = Tensor::<f16>::zeros(device, &[rows]).unwrap();
        let mut targ = Tensor::<i32>::zeros(device, &[rows]).unwrap();
        launch_tensors!(
            gpu,
            tile_row_stats_f16,
            consts,
            rows as u32,
            &mut tsum,
            &mut tmin,
            &mut targ,
            &tx,
        )
        .unwrap();
        let (sum, min, arg) = (
            tsum.to_vec().unwrap(),
            tmin.to_vec().unwrap(),
            targ.to_vec().unwrap(),
        );
        for r in 0..rows {
            let row: Vec<f32> = x[r * stride..r * stride + n]
                .iter()
                .map(|v| v.to_f32())
                .collect();
            // Multiples of 1/64: the f32 accumulation is exact, rounded once to f16.
            let want_sum = f16::from_f32(row.iter().sum::<f32>());
            assert_eq!(
                sum[r].to_bits(),
                want_sum.to_bits(),
                "sum rows {rows} n {n} r {r}"
            );
            let m = row.iter().copied().fold(f32::INFINITY, f32::min);
            assert_eq!(min[r].to_f32(), m, "min n {n} r {r}");
            let first = row.iter().position(|&v| v == m).unwrap() as i32;
            assert_eq!(arg[r], first, "argmin n {n} r {r}");
        }
    }
    // A row longer than the block would be cut at 512 columns, and outputs of another length
    // than the rows: refused before anything runs.
    let refused = |[rows, n]: [usize; 2], outputs: usize| {
        let x = Tensor::<f16>::zeros(device, &[rows, n]).unwrap();
        let mut sum = Tensor::<f16>::zeros(device, &[outputs]).unwrap();
        let mut min = Tensor::<f16>::zeros(device, &[outputs]).unwrap();
        let mut arg = Tensor::<i32>::zeros(device, &[outputs]).unwrap();
        let grid = rows as u32;
        let err = launch_tensors!(
            gpu,
            tile_row_stats_f16,
            consts,
            grid,
            &mut sum,
            &mut min,
            &mut arg,
            &x
        );
        err.unwrap_err().to_string()
    };
    let text = refused([1, 513], 1);
    assert!(
        text.contains("requirement `x.size(1) <= BLOCK` (x.size(1) = 513, BLOCK = 512)"),
        "a row of 513 at BLOCK = 512: {text}"
    );
    let text = refused([2, 8], 1);
    assert!(
        text.contains(
            "requirement `sum_out.size(0) == x.size(0)` (sum_out.size(0) = 1, x.size(0) = 2)"
        ),
        "outputs of 1 for 2 rows: {text}"
    );
}
