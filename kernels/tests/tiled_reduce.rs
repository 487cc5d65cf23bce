//! Row and column reductions written with `#[tile_kernel]` (sum, max, argmax), against CPU
//! references on the test device (the GPU when present, else the emulator; see `support`), over
//! matrix shapes with ragged tails in both dimensions.

mod support;

use support::{device, download, draws, launch_tile};
use tessera::f16;
use tessera::launch::DeviceBuffer;
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
fn guarded_outputs(len: usize) -> (DeviceBuffer<f32>, DeviceBuffer<f32>, DeviceBuffer<i32>) {
    let device = device().device();
    (
        device.upload(&vec![5.0f32; len + 4]).unwrap(),
        device.upload(&vec![5.0f32; len + 4]).unwrap(),
        device.upload(&vec![-7i32; len + 4]).unwrap(),
    )
}

/// Launches each reduction `$kernel` (`BLOCK_M × BLOCK_N` = `$bm × $bn`, `$grid` programs)
/// over the `m × n` matrix `$x` (row stride `stride`) into its output buffer `$out`.
macro_rules! launch_each {
    ([$($kernel:ident => $out:ident),+], ($bm:expr, $bn:expr), $grid:expr, $x:expr,
     ($m:expr, $n:expr, $stride:expr)) => {{
        let gpu = device();
        let dx = gpu.device().upload($x).unwrap();
        let (m, n, stride) = ($m as i32, $n as i32, $stride as i32);
        $(
            let consts = $kernel::Consts { BLOCK_M: $bm, BLOCK_N: $bn };
            launch_tile!(gpu, $kernel, consts, $grid, $out.ptr(), dx.ptr(), m, n, stride).unwrap();
        )+
    }};
}

/// Checks the reductions of one axis: `lines(i)` yields line `i` of the matrix (a row or a
/// column), `len` lines, and the guard elements past them are untouched.
fn check_reductions<I: Iterator<Item = f32>>(
    outputs: (DeviceBuffer<f32>, DeviceBuffer<f32>, DeviceBuffer<i32>),
    len: usize,
    lines: impl Fn(usize) -> I,
    what: &str,
) {
    let (sum, max, arg) = (
        download(&outputs.0),
        download(&outputs.1),
        download(&outputs.2),
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
                let (sum, max, arg) = guarded_outputs(len);
                launch_each!(
                    [$sum => sum, $max => max, $arg => arg],
                    ($bm, $bn), (programs as u32,), &x, (m, n, stride)
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
    let device = gpu.device();
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
        let dx = device.upload(&x).unwrap();
        let dsum = device.zeros::<f16>(rows).unwrap();
        let dmin = device.zeros::<f16>(rows).unwrap();
        let darg = device.zeros::<i32>(rows).unwrap();
        launch_tile!(
            gpu,
            tile_row_stats_f16,
            tile_row_stats_f16::Consts { BLOCK: 512 },
            rows as u32,
            dsum.ptr(),
            dmin.ptr(),
            darg.ptr(),
            dx.ptr(),
            n as i32,
            stride as i32,
        )
        .unwrap();
        let (sum, min, arg) = (download(&dsum), download(&dmin), download(&darg));
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
    // A row longer than the block would be cut at 512 columns: refused before anything runs.
    let (d16, d32) = (
        device.zeros::<f16>(513).unwrap(),
        device.zeros::<i32>(1).unwrap(),
    );
    let (sum, min, arg, x) = (d16.ptr(), d16.ptr(), d32.ptr(), d16.ptr());
    let consts = tile_row_stats_f16::Consts { BLOCK: 512 };
    let err = launch_tile!(
        gpu,
        tile_row_stats_f16,
        consts,
        1,
        sum,
        min,
        arg,
        x,
        513,
        513
    );
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("requirement `n <= BLOCK` (n = 513, BLOCK = 512)"),
        "a row of 513 at BLOCK = 512"
    );
}
