//! Row and column reductions written with `#[tile_kernel]` (sum, max, argmax), against CPU
//! references on the test device (the GPU when present, else the emulator; see `support`), over
//! matrix shapes with ragged tails in both dimensions.

mod support;

use support::{device, launch_tile};
use tessera::f16;
use tessera_kernels::tiled::reduce::{
    tile_col_argmax, tile_col_max, tile_col_sum, tile_row_argmax, tile_row_max, tile_row_stats_f16,
    tile_row_sum,
};

fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            // Multiples of 1/64 in [-8, 8): sums of a few hundred are exact in f32, and
            // repeated values make ties for argmax.
            (((z ^ (z >> 31)) >> 54) as f32 - 512.0) / 64.0
        })
        .collect()
}

/// (m, n, stride): ragged in both dimensions, a padded stride, one row, one column.
const SHAPES: [(usize, usize, usize); 7] = [
    (1, 1, 1),
    (3, 5, 5),
    (4, 128, 128),
    (7, 300, 304),
    (33, 129, 129),
    (70, 64, 64),
    (1, 1000, 1000),
];

/// The shapes of the test device: on the GPU also large ones. Sums of multiples of 1/64 in
/// [-8, 8) stay exact in f32 while fewer than 2^15 are added (|sum| < 2^18 = 2^24 / 64).
fn shapes() -> Vec<(usize, usize, usize)> {
    let mut shapes = SHAPES.to_vec();
    if device().larger_shapes() {
        shapes.extend([(3000, 2000, 2000), (20_000, 64, 64), (5, 30_000, 30_001)]);
    }
    shapes
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

#[test]
fn row_reductions_match_cpu() {
    let gpu = device();
    let device = gpu.device();
    for (m, n, stride) in shapes() {
        let x = matrix(41, m, stride);
        let dx = device.upload(&x).unwrap();
        let (dsum, dmax) = (
            device.upload(&vec![5.0f32; m + 4]).unwrap(),
            device.upload(&vec![5.0f32; m + 4]).unwrap(),
        );
        let darg = device.upload(&vec![-7i32; m + 4]).unwrap();
        let grid = (m.div_ceil(4) as u32,);
        let consts = || tile_row_sum::Consts {
            BLOCK_M: 4,
            BLOCK_N: 128,
        };
        launch_tile!(
            gpu,
            tile_row_sum,
            consts(),
            grid,
            dsum.ptr(),
            dx.ptr(),
            m as i32,
            n as i32,
            stride as i32,
        )
        .unwrap();
        launch_tile!(
            gpu,
            tile_row_max,
            tile_row_max::Consts {
                BLOCK_M: 4,
                BLOCK_N: 128,
            },
            grid,
            dmax.ptr(),
            dx.ptr(),
            m as i32,
            n as i32,
            stride as i32,
        )
        .unwrap();
        launch_tile!(
            gpu,
            tile_row_argmax,
            tile_row_argmax::Consts {
                BLOCK_M: 4,
                BLOCK_N: 128,
            },
            grid,
            darg.ptr(),
            dx.ptr(),
            m as i32,
            n as i32,
            stride as i32,
        )
        .unwrap();
        let (sum, max, arg) = (
            dsum.download().unwrap(),
            dmax.download().unwrap(),
            darg.download().unwrap(),
        );
        for r in 0..m {
            let row = &x[r * stride..r * stride + n];
            assert_eq!(sum[r], row.iter().sum::<f32>(), "sum m {m} n {n} r {r}");
            assert_eq!(
                max[r],
                row.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                "max m {m} n {n} r {r}"
            );
            assert_eq!(
                arg[r],
                first_argmax(row.iter().copied()),
                "argmax m {m} n {n} r {r}"
            );
        }
        assert!(
            sum[m..].iter().chain(&max[m..]).all(|&v| v == 5.0),
            "wrote past m"
        );
        assert!(arg[m..].iter().all(|&v| v == -7), "wrote past m");
    }
}

#[test]
fn column_reductions_match_cpu() {
    let gpu = device();
    let device = gpu.device();
    for (m, n, stride) in shapes() {
        let x = matrix(43, m, stride);
        let dx = device.upload(&x).unwrap();
        let (dsum, dmax) = (
            device.upload(&vec![5.0f32; n + 4]).unwrap(),
            device.upload(&vec![5.0f32; n + 4]).unwrap(),
        );
        let darg = device.upload(&vec![-7i32; n + 4]).unwrap();
        let grid = (n.div_ceil(64) as u32,);
        launch_tile!(
            gpu,
            tile_col_sum,
            tile_col_sum::Consts {
                BLOCK_M: 32,
                BLOCK_N: 64,
            },
            grid,
            dsum.ptr(),
            dx.ptr(),
            m as i32,
            n as i32,
            stride as i32,
        )
        .unwrap();
        launch_tile!(
            gpu,
            tile_col_max,
            tile_col_max::Consts {
                BLOCK_M: 32,
                BLOCK_N: 64,
            },
            grid,
            dmax.ptr(),
            dx.ptr(),
            m as i32,
            n as i32,
            stride as i32,
        )
        .unwrap();
        launch_tile!(
            gpu,
            tile_col_argmax,
            tile_col_argmax::Consts {
                BLOCK_M: 32,
                BLOCK_N: 64,
            },
            grid,
            darg.ptr(),
            dx.ptr(),
            m as i32,
            n as i32,
            stride as i32,
        )
        .unwrap();
        let (sum, max, arg) = (
            dsum.download().unwrap(),
            dmax.download().unwrap(),
            darg.download().unwrap(),
        );
        for c in 0..n {
            let col = || (0..m).map(|r| x[r * stride + c]);
            assert_eq!(sum[c], col().sum::<f32>(), "sum m {m} n {n} c {c}");
            assert_eq!(
                max[c],
                col().fold(f32::NEG_INFINITY, f32::max),
                "max m {m} n {n} c {c}"
            );
            assert_eq!(arg[c], first_argmax(col()), "argmax m {m} n {n} c {c}");
        }
        assert!(
            sum[n..].iter().chain(&max[n..]).all(|&v| v == 5.0),
            "wrote past n"
        );
        assert!(arg[n..].iter().all(|&v| v == -7), "wrote past n");
    }
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
        let (sum, min, arg) = (
            dsum.download().unwrap(),
            dmin.download().unwrap(),
            darg.download().unwrap(),
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
}
