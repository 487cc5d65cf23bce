//! Scans written with `#[tile_kernel]` (`cumsum`, `cumprod`, forward and reversed) on `i32`
//! and `f32`, against CPU references on the test device (the GPU when present, else the
//! emulator; see `support`), over ragged shapes and at 1 to 8 warps, so that the scanned axis
//! runs over registers, lanes and warps. The values make every result exact in any order of
//! combination: multiples of 1/64 in [-8, 8) for sums (exact in f32 below 2^17 terms), ±1, ±2
//! and ±1/2 for products (powers of two), wrapping integers.

mod support;

use support::{assert_refused, device, device_and_module, launch_tensors, leading_view};
use tessera::tensor::Tensor;
use tessera_kernels::tiled::scan::{
    tile_cumprod_rows, tile_cumsum_blocks, tile_cumsum_cols, tile_cumsum_cols_reverse,
    tile_cumsum_rows,
};

/// An element type of the scan kernels, with its CPU arithmetic.
trait Element:
    tile_cumsum_rows::Listed_T
    + tile_cumsum_cols::Listed_T
    + tile_cumsum_cols_reverse::Listed_T
    + tile_cumsum_blocks::Listed_T
    + tile_cumprod_rows::Listed_T
    + tessera::launch::DeviceElement
    + Copy
    + PartialEq
    + std::fmt::Debug
{
    const NAME: &'static str;
    const GUARD: Self;
    /// A summand from 64 random bits.
    fn summand(bits: u64) -> Self;
    /// A factor from 64 random bits.
    fn factor(bits: u64) -> Self;
    fn add(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn zero() -> Self;
    fn one() -> Self;
}

impl Element for i32 {
    const NAME: &'static str = "i32";
    const GUARD: Self = -77;
    fn summand(bits: u64) -> Self {
        (bits >> 32) as i32 // wraps
    }
    fn factor(bits: u64) -> Self {
        [1, -1, 3, 1, -2, 5, 1, 7][(bits >> 61) as usize]
    }
    fn add(a: Self, b: Self) -> Self {
        a.wrapping_add(b)
    }
    fn mul(a: Self, b: Self) -> Self {
        a.wrapping_mul(b)
    }
    fn zero() -> Self {
        0
    }
    fn one() -> Self {
        1
    }
}

impl Element for f32 {
    const NAME: &'static str = "f32";
    const GUARD: Self = -77.25;
    fn summand(bits: u64) -> Self {
        ((bits >> 54) as f32 - 512.0) / 64.0
    }
    fn factor(bits: u64) -> Self {
        [1.0, -1.0, 2.0, 0.5, 1.0, -2.0, -0.5, 1.0][(bits >> 61) as usize]
    }
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
    fn mul(a: Self, b: Self) -> Self {
        a * b
    }
    fn zero() -> Self {
        0.0
    }
    fn one() -> Self {
        1.0
    }
}

fn random<T: Element>(seed: u64, n: usize, draw: fn(u64) -> T) -> Vec<T> {
    let mut rng = tessera_test_support::Rng::new(seed);
    (0..n).map(|_| draw(rng.next_u64())).collect()
}

/// The inclusive scan of `line` by `op` (from its end when `reverse`).
fn scan<T: Element>(line: &[T], op: fn(T, T) -> T, start: T, reverse: bool) -> Vec<T> {
    let mut out = vec![start; line.len()];
    let mut acc = start;
    let order: Vec<usize> = if reverse {
        (0..line.len()).rev().collect()
    } else {
        (0..line.len()).collect()
    };
    for i in order {
        acc = op(acc, line[i]);
        out[i] = acc;
    }
    out
}

/// The `m × n` matrix (row stride `stride`) `x` scanned along its rows (`axis = 1`) or columns
/// (`axis = 0`); elements off the matrix (padding) keep the guard.
fn scan_matrix<T: Element>(
    x: &[T],
    (m, n, stride): (usize, usize, usize),
    axis: usize,
    (op, start): (fn(T, T) -> T, T),
    reverse: bool,
) -> Vec<T> {
    let mut out = vec![T::GUARD; x.len()];
    if axis == 1 {
        for r in 0..m {
            let row = &x[r * stride..r * stride + n];
            out[r * stride..r * stride + n].copy_from_slice(&scan(row, op, start, reverse));
        }
    } else {
        for c in 0..n {
            let col: Vec<T> = (0..m).map(|r| x[r * stride + c]).collect();
            for (r, v) in scan(&col, op, start, reverse).into_iter().enumerate() {
                out[r * stride + c] = v;
            }
        }
    }
    out
}

/// (m, n, stride) within the kernels' blocks (n ≤ 256 for rows, m ≤ 128 for columns).
#[rustfmt::skip]
const SHAPES: [(usize, usize, usize); 6] = [
    (1, 1, 1), (3, 5, 7), (2, 128, 128), (7, 33, 40), (128, 9, 9), (100, 128, 130),
];

/// Scans `$x` (the matrix `$shape = (m, n, stride)`, as an `[m, n]` view of its padded rows)
/// with `$kernel` (`Consts` given in braces) along `$axis` (1: rows, a program per `BLOCK_M`
/// rows; 0: columns, a program per `BLOCK_N` columns) into the same view of an output that
/// starts as the guard, and checks the whole output against [`scan_matrix`].
macro_rules! check_matrix_scan {
    ($kernel:ident $consts:tt, $x:expr, $shape:expr, $axis:expr, $op:expr, $reverse:expr, $what:expr) => {{
        let gpu = device();
        let (device, _) = device_and_module();
        let (m, n, stride): (usize, usize, usize) = $shape;
        let consts = $kernel::Consts $consts;
        let programs = if $axis == 1 {
            m.div_ceil(consts.BLOCK_M)
        } else {
            n.div_ceil(consts.BLOCK_N)
        };
        let tx = Tensor::from_slice(device, $x, &[m, stride]).unwrap();
        let mut tout = Tensor::from_slice(device, &vec![T::GUARD; $x.len()], &[m, stride]).unwrap();
        let x_view = tx.view().slice(1, 0..n).unwrap();
        launch_tensors!(
            gpu,
            $kernel,
            consts,
            (programs as u32,),
            &mut tout.view_mut().slice(1, 0..n).unwrap(),
            &x_view
        )
        .unwrap();
        let want = scan_matrix($x, $shape, $axis, $op, $reverse);
        assert_eq!(tout.to_vec().unwrap(), want, "{}", $what);
    }};
}

/// How a case is named in a failure: the element type, the shape and the warps.
fn case_name<T: Element>((m, n, stride): (usize, usize, usize), num_warps: u32) -> String {
    format!(
        "{} m {m} n {n} stride {stride} num_warps {num_warps}",
        T::NAME
    )
}

fn cumsum_rows_and_columns<T: Element>() {
    for (case, &shape) in SHAPES.iter().enumerate() {
        let (m, _, stride) = shape;
        let x = random::<T>(case as u64 + 1, m * stride, T::summand);
        let sum = (T::add as fn(T, T) -> T, T::zero());
        for num_warps in [1u32, 4, 8] {
            let what = case_name::<T>(shape, num_warps);
            let rows = format!("cumsum rows: {what}");
            check_matrix_scan!(
                tile_cumsum_rows {
                    BLOCK_M: 2,
                    BLOCK_N: 256,
                    num_warps
                },
                &x,
                shape,
                1,
                sum,
                false,
                rows
            );
            let columns = format!("cumsum columns: {what}");
            check_matrix_scan!(
                tile_cumsum_cols {
                    BLOCK_M: 256,
                    BLOCK_N: 4,
                    num_warps
                },
                &x,
                shape,
                0,
                sum,
                false,
                columns
            );
        }
        for num_warps in [2u32, 8] {
            let what = format!(
                "reversed cumsum columns: {}",
                case_name::<T>(shape, num_warps)
            );
            check_matrix_scan!(
                tile_cumsum_cols_reverse {
                    BLOCK_M: 128,
                    BLOCK_N: 8,
                    num_warps
                },
                &x,
                shape,
                0,
                sum,
                true,
                what
            );
        }
    }
}

fn cumsum_blocks<T: Element>() {
    let gpu = device();
    let (device, _) = device_and_module();
    for n in [1usize, 7, 1000, 1024, 2500] {
        let x = random::<T>(n as u64, n, T::summand);
        for num_warps in [1u32, 4] {
            let tx = Tensor::from_slice(device, &x, &[n]).unwrap();
            let mut dout = Tensor::from_slice(device, &vec![T::GUARD; n + 4], &[n + 4]).unwrap();
            let mut drev = Tensor::from_slice(device, &vec![T::GUARD; n + 4], &[n + 4]).unwrap();
            let consts = tile_cumsum_blocks::Consts {
                BLOCK: 1024,
                num_warps,
            };
            let grid = (n.div_ceil(1024) as u32,);
            launch_tensors!(
                gpu,
                tile_cumsum_blocks,
                consts,
                grid,
                &mut leading_view(&mut dout, &[n]),
                &mut leading_view(&mut drev, &[n]),
                &tx
            )
            .unwrap();
            let (got, got_rev) = (dout.to_vec().unwrap(), drev.to_vec().unwrap());
            let mut want = Vec::new();
            let mut want_rev = Vec::new();
            for block in x.chunks(1024) {
                want.extend(scan(block, T::add, T::zero(), false));
                want_rev.extend(scan(block, T::add, T::zero(), true));
            }
            want.extend([T::GUARD; 4]);
            want_rev.extend([T::GUARD; 4]);
            let what = format!("{} n {n} num_warps {num_warps}", T::NAME);
            assert_eq!(got, want, "cumsum blocks: {what}");
            assert_eq!(got_rev, want_rev, "reversed cumsum blocks: {what}");
        }
    }
}

/// The column scan of a transposed view: `x` is stored `n × m` row-major and scanned as its
/// `[m, n]` transpose (row stride 1, column stride `m`), into a contiguous `[m, n]` output.
fn cumsum_of_a_transposed_view<T: Element>() {
    let gpu = device();
    let (device, _) = device_and_module();
    for (m, n) in [(5usize, 3usize), (100, 17), (128, 8)] {
        let stored = random::<T>((m * n) as u64 + 7, n * m, T::summand);
        let tx = Tensor::from_slice(device, &stored, &[n, m]).unwrap();
        let xt = tx.view().transpose(0, 1).unwrap();
        let mut out = Tensor::from_slice(device, &vec![T::GUARD; m * n], &[m, n]).unwrap();
        let consts = tile_cumsum_cols::Consts {
            BLOCK_M: 256,
            BLOCK_N: 4,
            num_warps: 4,
        };
        let grid = (n.div_ceil(4) as u32,);
        launch_tensors!(gpu, tile_cumsum_cols, consts, grid, &mut out, &xt).unwrap();
        let x: Vec<T> = (0..m * n).map(|i| stored[(i % n) * m + i / n]).collect();
        let want = scan_matrix(&x, (m, n, n), 0, (T::add, T::zero()), false);
        let what = format!("cumsum columns of a transposed view: {} {m}x{n}", T::NAME);
        assert_eq!(out.to_vec().unwrap(), want, "{what}");
    }
}

fn cumprod_rows<T: Element>() {
    for (case, &(m, n, stride)) in SHAPES.iter().enumerate() {
        let n = n.min(128);
        let x = random::<T>(case as u64 + 100, m * stride, T::factor);
        let product = (T::mul as fn(T, T) -> T, T::one());
        let what = format!("cumprod rows: {} m {m} n {n}", T::NAME);
        check_matrix_scan!(
            tile_cumprod_rows {
                BLOCK_M: 4,
                BLOCK_N: 128
            },
            &x,
            (m, n, stride),
            1,
            product,
            false,
            what
        );
    }
}

/// A `#[test]` per check, running it on `i32` and then on `f32`.
macro_rules! i32_and_f32_tests {
    ($($check:ident => $test:ident;)*) => {$(
        #[test]
        fn $test() {
            $check::<i32>();
            $check::<f32>();
        }
    )*};
}

i32_and_f32_tests! {
    cumsum_rows_and_columns => cumsum_rows_and_columns_match_cpu;
    cumsum_blocks => cumsum_of_ragged_blocks_matches_cpu;
    cumprod_rows => cumprod_rows_match_cpu;
    cumsum_of_a_transposed_view => cumsum_of_a_transposed_view_matches_cpu;
}

/// A scanned axis longer than the block would be cut: each matrix scan's `requires` refuses it
/// before anything runs, naming the values; so is an output of another shape than the input.
#[test]
fn scans_longer_than_the_block_are_refused() {
    let gpu = device();
    let (device, _) = device_and_module();
    let tensor = |sizes: &[usize]| Tensor::<i32>::zeros(device, sizes).unwrap();
    let (wide, mut wide_out) = (tensor(&[1, 257]), tensor(&[1, 257]));
    let (tall, mut tall_out) = (tensor(&[300, 3]), tensor(&[300, 3]));
    let (x, mut other) = (tensor(&[4, 8]), tensor(&[4, 9]));
    let rows = tile_cumsum_rows::Consts {
        BLOCK_M: 2,
        BLOCK_N: 256,
        num_warps: 4,
    };
    let cols = tile_cumsum_cols::Consts {
        BLOCK_M: 256,
        BLOCK_N: 4,
        num_warps: 4,
    };
    let launches = [
        launch_tensors!(gpu, tile_cumsum_rows, rows, 1, &mut wide_out, &wide),
        launch_tensors!(gpu, tile_cumsum_cols, cols, 1, &mut tall_out, &tall),
        launch_tensors!(gpu, tile_cumsum_rows, rows, 2, &mut other, &x),
    ];
    let wanted = [
        "requirement `x.size(1) <= BLOCK_N` (x.size(1) = 257, BLOCK_N = 256)",
        "requirement `x.size(0) <= BLOCK_M` (x.size(0) = 300, BLOCK_M = 256)",
        "requirement `out.size(0) == x.size(0) && out.size(1) == x.size(1)`",
    ];
    assert_refused(launches, wanted);
}
