//! The `#[tile_kernel]` benchmark families of `triton_ref.py` — softmax, layernorm, matmul,
//! transpose, gather — with the kernels of `tessera_kernels::tiled::bench_triton`, launched as
//! the script launches Triton's:
//!
//! * softmax: `BLOCK = next_power_of_two(N)` (at least 256), 4 warps up to 2048, 8 at 4096,
//!   16 at 8192; one row per program (`M` programs; the script's kernel loops over rows with
//!   `min(M, 8·SMs)` programs, and the launcher here does not know the SM count).
//! * layernorm: `BLOCK = next_power_of_two(N)` (at least 256), `num_warps = min(max(BLOCK /
//!   256, 1), 8)` (4 below 1024), `eps = 1e-5`, one row per program.
//! * transpose: 64 × 64 tiles, 4 warps, grid `(⌈M/64⌉, ⌈N/64⌉)`.
//! * gather: `4096 / N` rows per program, 4 warps; indices uniform in `0..N`.
//! * matmul: the script's configurations `(BM, BN, BK, warps) = (64, 128, 64, 4)`,
//!   `(128, 128, 64, 8)` and `(128, 256, 64, 8)`, `GROUP = 8`, unpipelined and
//!   software-pipelined (`num_stages`: 4 and 6 for the first, 3 and 4 for the second, 3 for the
//!   third; on sm_90a TMA rings read by `wgmma` with one group in flight); each is timed and
//!   verified, the row reports the fastest (as the script reports its best). `(128, 128, 64, 4)`
//!   is not run.
//!
//! Verification, against f64 references from the same rounded inputs:
//! * softmax f32 `|y − ref| ≤ 2e-5·ref + 1e-10`, f16 `≤ 1e-3·ref + 6e-8`; layernorm
//!   `≤ 2e-3·max(|ref|, 1)`: every row when `M·N ≤ 2²²`, else 256 rows spread evenly (first
//!   and last included), each row whole.
//! * transpose, gather: exact, every element.
//! * matmul `|c − ref| ≤ u·|ref| + 2⁻¹⁶·Σₖ|a·b|`, `u = 2⁻¹⁰` (f16) or `2⁻⁷` (bf16): every
//!   element when `M·N·K ≤ 2²⁷`, else a 64 × 64 grid of rows × columns spread evenly.

use crate::bench::{best_config_row, time_tile, BenchRow, Family, Figure, Timed};
use crate::data::{
    check_items, float_vec, layernorm_stats, parallel_vec, row_f64, spread, uniform_below, within,
    Float, Verdict,
};
use tessera::launch::{Device, DeviceElement, LaunchError, Module};
use tessera::tensor::Tensor;
use tessera::{bf16, f16};
use tessera_kernels::tiled::bench_triton::*;

/// Row lengths the compiled softmax and layernorm blocks cover.
const MAX_ROW: usize = 8192;
/// Rows verified when a matrix has more than `2²²` elements.
const SAMPLED_ROWS: usize = 256;

/// Whether family `family` can run rows (the last dimension) of `n` elements.
pub fn check_columns(family: Family, n: usize) -> Result<(), String> {
    let name = family.name();
    match family {
        Family::Softmax | Family::Layernorm if n == 0 || n > MAX_ROW => Err(format!(
            "{name} rows of {n} elements: the compiled blocks hold 1..={MAX_ROW}"
        )),
        Family::Gather if ![32, 64, 128, 256].contains(&n) => Err(format!(
            "gather rows of {n} elements: compiled for N = 32, 64, 128, 256 (the script's)"
        )),
        _ if n == 0 => Err(format!("{name}: empty rows")),
        _ => Ok(()),
    }
}

/// `n` programs along one grid axis.
fn programs(n: usize) -> Result<u32, LaunchError> {
    u32::try_from(n).map_err(|_| invalid(format!("a grid of {n} programs is too large")))
}

fn invalid(reason: String) -> LaunchError {
    LaunchError::InvalidConfig {
        kernel: "bench".to_string(),
        reason,
    }
}

/// The smallest compiled row block of `n` elements (powers of two from 256; 512 is not
/// compiled and takes 1024).
fn row_block(n: usize) -> usize {
    [256, 1024, 2048, 4096, 8192]
        .into_iter()
        .find(|&b| b >= n)
        .unwrap_or(8192)
}

/// The rows verified: all when `m·n ≤ 2²²`, else [`SAMPLED_ROWS`] spread evenly.
fn rows_to_check(m: usize, n: usize) -> Vec<usize> {
    if m * n <= 1 << 22 {
        (0..m).collect()
    } else {
        spread(m, SAMPLED_ROWS)
    }
}

/// `checked` for a comparison over `picked` of `total` `unit`s.
fn checked_text(verdict: &Verdict, picked: usize, total: usize, unit: &str) -> String {
    let plural = if total == 1 { "" } else { "s" };
    let what = if picked == total {
        format!("all {total} {unit}{plural}")
    } else {
        format!("{picked} of {total} {unit}{plural} (spread evenly)")
    };
    match &verdict.failure {
        Some(m) => format!("{what}: FAILED at {unit} {}: {}", m.item, m.detail),
        None if verdict.worst == 0.0 => format!("{what}, exact"),
        None => format!("{what}, worst |err|/tol {:.2}", verdict.worst),
    }
}

/// One measured case: its time, the PTX entry timed, its check and the check's summary
/// ([`checked_text`]).
struct Measured {
    timed: Timed,
    entry: &'static str,
    verdict: Verdict,
    checked: String,
}

impl Measured {
    /// The case whose check `verdict` compared `picked` of `total` `unit`s.
    fn new(
        timed: Timed,
        entry: &'static str,
        verdict: Verdict,
        (picked, total, unit): (usize, usize, &str),
    ) -> Self {
        let checked = checked_text(&verdict, picked, total, unit);
        Measured {
            timed,
            entry,
            verdict,
            checked,
        }
    }

    /// The bench row of this case of kernel `name` on `shape` of `dtype`.
    fn row(
        self,
        device: &Device,
        name: &'static str,
        shape: &[usize],
        dtype: &'static str,
        figure: Figure,
    ) -> BenchRow {
        BenchRow {
            name,
            shape: shape.to_vec(),
            dtype,
            ms: self.timed.ms,
            figure,
            ok: self.verdict.failure.is_none(),
            clock: self.timed.clock,
            repetitions: self.timed.repetitions,
            device: device.name(),
            entry: self.entry.to_string(),
            checked: self.checked,
            config: None,
        }
    }
}

/// Times one specialisation of a generated kernel module:
/// `timed!(device, module, kernel<CONST = value, …>, grid, args)` gives `(Timed, entry name)`
/// (`kernel::T_f16<…>` for the element types of a kernel with type parameters).
macro_rules! timed {
    ($device:expr, $module:expr, $kernel:ident $(:: $types:ident)? <$($name:ident = $value:tt),+>,
     $grid:expr, tensors($($tensor:expr),+)) => {
        timed!($device, $module, $kernel $(:: $types)? <$($name = $value),+>, $grid,
            $kernel $(:: $types)? ::args($($tensor),+)?)
    };
    ($device:expr, $module:expr, $kernel:ident $(:: $types:ident)? <$($name:ident = $value:tt),+>,
     $grid:expr, $args:expr) => {{
        let args = $args;
        let consts = $kernel::Consts { $($name: $value),+ };
        let spec = $kernel $(:: $types)? ::specialisation(&consts, &args)?;
        let timed = time_tile($device, $module, spec, $grid, args)?;
        Ok::<_, LaunchError>((timed, spec.kernel.name))
    }};
}

/// Times the softmax of `BLOCK = $block` on elements `$types` (`T_f32`, `T_f16`) on the kernel
/// of its warp count (4 warps up to 2048, 8 at 4096, 16 at 8192), as `triton_ref.py` picks.
macro_rules! timed_softmax {
    ($device:expr, $module:expr, $block:expr, $grid:expr, ($out:expr, $x:expr) => $types:ident) => {
        match $block {
            4096 => timed!(
                $device,
                $module,
                bench_softmax_w8::$types<BLOCK = 4096>,
                $grid,
                tensors($out, $x)
            ),
            8192 => timed!(
                $device,
                $module,
                bench_softmax_w16::$types<BLOCK = 8192>,
                $grid,
                tensors($out, $x)
            ),
            block => timed!(
                $device,
                $module,
                bench_softmax_w4::$types<BLOCK = block>,
                $grid,
                tensors($out, $x)
            ),
        }
    };
}

/// Times the matmul on elements `$types` (`T_f16`, `T_bf16`) in configuration `$config` (an
/// index into [`MATMUL_CONFIGS`]): `bench_matmul_w4` (4 warps, 64 × 128 × 64) unpipelined and
/// over 4 and 6 stages, `bench_matmul_w8` (8 warps, 128 × 128 × 64) unpipelined and over 3 and
/// 4 stages, `bench_matmul_w8_wide` (8 warps, 128 × 256 × 64, 3 stages); `GROUP = 8` all.
macro_rules! timed_matmul {
    ($device:expr, $module:expr, $config:expr, $grid:expr, ($a:expr, $b:expr, $c:expr) => $types:ident) => {
        match $config {
            0 => timed!($device, $module,
                bench_matmul_w4::$types<BM = 64, BN = 128, BK = 64, GROUP = 8, num_stages = 1>, $grid, tensors($a, $b, $c)),
            1 => timed!($device, $module,
                bench_matmul_w4::$types<BM = 64, BN = 128, BK = 64, GROUP = 8, num_stages = 4>, $grid, tensors($a, $b, $c)),
            2 => timed!($device, $module,
                bench_matmul_w8::$types<BM = 128, BN = 128, BK = 64, GROUP = 8, num_stages = 1>, $grid, tensors($a, $b, $c)),
            3 => timed!($device, $module,
                bench_matmul_w8::$types<BM = 128, BN = 128, BK = 64, GROUP = 8, num_stages = 3>, $grid, tensors($a, $b, $c)),
            4 => timed!($device, $module,
                bench_matmul_w8::$types<BM = 128, BN = 128, BK = 64, GROUP = 8, num_stages = 4>, $grid, tensors($a, $b, $c)),
            5 => timed!($device, $module,
                bench_matmul_w4::$types<BM = 64, BN = 128, BK = 64, GROUP = 8, num_stages = 6>, $grid, tensors($a, $b, $c)),
            _ => timed!($device, $module,
                bench_matmul_w8_wide::$types<BM = 128, BN = 256, BK = 64, GROUP = 8>, $grid, tensors($a, $b, $c)),
        }
    };
}

/// The matmul configurations `(BM, BN, BK, warps)` and stages, in the order of
/// `timed_matmul!`'s index.
const MATMUL_CONFIGS: [([usize; 4], u32); 7] = [
    ([64, 128, 64, 4], 1),
    ([64, 128, 64, 4], 4),
    ([128, 128, 64, 8], 1),
    ([128, 128, 64, 8], 3),
    ([128, 128, 64, 8], 4),
    ([64, 128, 64, 4], 6),
    ([128, 256, 64, 8], 3),
];

/// Runs one case of a tile-kernel family.
pub fn run(
    family: Family,
    device: &Device,
    module: &Module,
    dtype: &str,
    shape: &[usize],
) -> Result<BenchRow, LaunchError> {
    match (family, dtype, shape) {
        (Family::Softmax, "float32", &[m, n]) => softmax::<f32>(
            device,
            m,
            n,
            |(out, x), block, grid| timed_softmax!(device, module, block, grid, (out, x) => T_f32),
        ),
        (Family::Softmax, "float16", &[m, n]) => softmax::<f16>(
            device,
            m,
            n,
            |(out, x), block, grid| timed_softmax!(device, module, block, grid, (out, x) => T_f16),
        ),
        (Family::Layernorm, "float16", &[m, n]) => layernorm(device, module, m, n),
        (Family::Transpose, "float32", &[m, n]) => transpose::<f32>(
            device,
            m,
            n,
            |(x, y), grid| timed!(device, module, bench_transpose::T_f32<BM = 64, BN = 64>, grid, tensors(x, y)),
        ),
        (Family::Transpose, "float16", &[m, n]) => transpose::<f16>(
            device,
            m,
            n,
            |(x, y), grid| timed!(device, module, bench_transpose::T_f16<BM = 64, BN = 64>, grid, tensors(x, y)),
        ),
        (Family::Gather, "float32", &[m, n]) => gather::<f32>(device, m, n, |(s, i, o), grid| {
            timed!(
                device,
                module,
                bench_gather::T_f32<N = n>,
                grid,
                tensors(s, i, o)
            )
        }),
        (Family::Gather, "float16", &[m, n]) => gather::<f16>(device, m, n, |(s, i, o), grid| {
            timed!(
                device,
                module,
                bench_gather::T_f16<N = n>,
                grid,
                tensors(s, i, o)
            )
        }),
        (Family::Matmul, "float16", &[m, n, k]) => matmul::<f16>(
            device,
            [m, n, k],
            |(a, b, c), config, grid| timed_matmul!(device, module, config, grid, (a, b, c) => T_f16),
        ),
        (Family::Matmul, "bfloat16", &[m, n, k]) => matmul::<bf16>(
            device,
            [m, n, k],
            |(a, b, c), config, grid| timed_matmul!(device, module, config, grid, (a, b, c) => T_bf16),
        ),
        _ => Err(invalid(format!(
            "no {} benchmark for {dtype} {shape:?}",
            family.name()
        ))),
    }
}

/// The softmax kernels' tensors: `out` and `inp`, `[m, n]` each.
type SoftmaxTensors<'a, T> = (&'a mut Tensor<T>, &'a Tensor<T>);
/// What times one kernel: the result and the PTX entry timed.
type TimedEntry = Result<(Timed, &'static str), LaunchError>;

/// Row softmax of an `m × n` matrix of `T` (computed in f32).
fn softmax<T: Float>(
    device: &Device,
    m: usize,
    n: usize,
    time: impl FnOnce(SoftmaxTensors<'_, T>, usize, [u32; 3]) -> TimedEntry,
) -> Result<BenchRow, LaunchError> {
    let x: Vec<T> = float_vec(101, m * n, 4.0);
    let tx = Tensor::from_slice(device, &x, &[m, n])?;
    let mut out = Tensor::<T>::zeros(device, &[m, n])?;
    let (timed, entry) = time((&mut out, &tx), row_block(n), [programs(m)?, 1, 1])?;
    let got = out.to_vec()?;
    let rows = rows_to_check(m, n);
    let f16_out = T::DTYPE_NAME == f16::DTYPE_NAME;
    let verdict = check_items(rows.len(), |k| {
        let r = rows[k];
        let row = row_f64(&x, r, n);
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row.iter().map(|v| (v - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        let mut worst = 0f64;
        for (c, e) in e.iter().enumerate() {
            let want = e / sum;
            let tol = if f16_out {
                1e-3 * want + 6e-8
            } else {
                2e-5 * want + 1e-10
            };
            let y = got[r * n + c].wide() as f64;
            worst = worst.max(within(y, want, tol, &format!("row {r} column {c}"))?);
        }
        Ok(worst)
    });
    let bytes = 2.0 * (m * n * std::mem::size_of::<T>()) as f64;
    let figure = Figure::gbps(bytes, timed.ms);
    let measured = Measured::new(timed, entry, verdict, (rows.len(), m, "row"));
    Ok(measured.row(device, "softmax", &[m, n], T::DTYPE_NAME, figure))
}

/// LayerNorm forward of an `m × n` f16 matrix (`w`, `b` uniform in [0, 1) as `torch.rand`).
fn layernorm(
    device: &Device,
    module: &Module,
    m: usize,
    n: usize,
) -> Result<BenchRow, LaunchError> {
    let eps = 1e-5f32;
    let x: Vec<f16> = float_vec(111, m * n, 2.0);
    let w: Vec<f16> = parallel_vec(n, |i| {
        f16::from_f32(0.5 + 0.5 * crate::data::uniform(112, i as u64))
    });
    let b: Vec<f16> = parallel_vec(n, |i| {
        f16::from_f32(0.5 + 0.5 * crate::data::uniform(113, i as u64))
    });
    let tx = Tensor::from_slice(device, &x, &[m, n])?;
    let (tw, tb) = (
        Tensor::from_slice(device, &w, &[n])?,
        Tensor::from_slice(device, &b, &[n])?,
    );
    let mut y = Tensor::<f16>::zeros(device, &[m, n])?;
    let block = row_block(n);
    let grid = [programs(m)?, 1, 1];
    let (timed, entry) = if block <= 1024 {
        timed!(
            device,
            module,
            bench_layernorm_w4<BLOCK = block>,
            grid,
            tensors(&tx, &mut y, &tw, &tb, eps)
        )?
    } else {
        timed!(
            device,
            module,
            bench_layernorm_w8<BLOCK = block>,
            grid,
            tensors(&tx, &mut y, &tw, &tb, eps)
        )?
    };
    let got = y.to_vec()?;
    let rows = rows_to_check(m, n);
    let verdict = check_items(rows.len(), |k| {
        let r = rows[k];
        let row = row_f64(&x, r, n);
        let (mean, rstd) = layernorm_stats(&row, eps);
        let mut worst = 0f64;
        for c in 0..n {
            let want = (row[c] - mean) * rstd * w[c].to_f32() as f64 + b[c].to_f32() as f64;
            let tol = 2e-3 * want.abs().max(1.0);
            let v = got[r * n + c].to_f32() as f64;
            worst = worst.max(within(v, want, tol, &format!("row {r} column {c}"))?);
        }
        Ok(worst)
    });
    let figure = Figure::gbps(2.0 * (m * n * 2) as f64, timed.ms);
    let measured = Measured::new(timed, entry, verdict, (rows.len(), m, "row"));
    Ok(measured.row(device, "layernorm", &[m, n], f16::DTYPE_NAME, figure))
}

/// `y = xᵀ` for an `m × n` matrix of `T`.
fn transpose<T: Float>(
    device: &Device,
    m: usize,
    n: usize,
    time: impl FnOnce((&Tensor<T>, &mut Tensor<T>), [u32; 3]) -> TimedEntry,
) -> Result<BenchRow, LaunchError> {
    let x: Vec<T> = float_vec(121, m * n, 1.0);
    let tx = Tensor::from_slice(device, &x, &[m, n])?;
    let mut y = Tensor::<T>::zeros(device, &[n, m])?;
    let grid = [programs(m.div_ceil(64))?, programs(n.div_ceil(64))?, 1];
    let (timed, entry) = time((&tx, &mut y), grid)?;
    let got = y.to_vec()?;
    // Row j of y (n rows of m) is column j of x.
    let verdict = check_items(n, |j| {
        for i in 0..m {
            if got[j * m + i] != x[i * n + j] {
                let (v, want) = (got[j * m + i].wide(), x[i * n + j].wide());
                return Err(format!("y[{j}, {i}] = {v}, want {want}"));
            }
        }
        Ok(0.0)
    });
    let figure = Figure::gbps(2.0 * (m * n * std::mem::size_of::<T>()) as f64, timed.ms);
    let measured = Measured::new(timed, entry, verdict, (n, n, "output row"));
    Ok(measured.row(device, "transpose", &[m, n], T::DTYPE_NAME, figure))
}

/// `out[i, j] = src[i, index[i, j]]` for `src, index, out: [m, n]`.
fn gather<T: Float>(
    device: &Device,
    m: usize,
    n: usize,
    time: impl FnOnce((&Tensor<T>, &Tensor<i32>, &mut Tensor<T>), [u32; 3]) -> TimedEntry,
) -> Result<BenchRow, LaunchError> {
    let src: Vec<T> = float_vec(131, m * n, 1.0);
    let index: Vec<i32> = parallel_vec(m * n, |i| uniform_below(132, i as u64, n as u32) as i32);
    let tsrc = Tensor::from_slice(device, &src, &[m, n])?;
    let tindex = Tensor::from_slice(device, &index, &[m, n])?;
    let mut out = Tensor::<T>::zeros(device, &[m, n])?;
    let rows_per_program = 4096 / n;
    let grid = [programs(m.div_ceil(rows_per_program))?, 1, 1];
    let (timed, entry) = time((&tsrc, &tindex, &mut out), grid)?;
    let got = out.to_vec()?;
    let verdict = check_items(m, |i| {
        for j in 0..n {
            let want = src[i * n + index[i * n + j] as usize];
            if got[i * n + j] != want {
                let v = got[i * n + j].wide();
                return Err(format!("out[{i}, {j}] = {v}, want {}", want.wide()));
            }
        }
        Ok(0.0)
    });
    let bytes = (m * n * (2 * std::mem::size_of::<T>() + 4)) as f64;
    let figure = Figure::gbps(bytes, timed.ms);
    let measured = Measured::new(timed, entry, verdict, (m, m, "row"));
    Ok(measured.row(device, "gather", &[m, n], T::DTYPE_NAME, figure))
}

/// The matmul kernels' tensors: `a: [m, k]`, `b: [k, n]`, `c: [m, n]`.
type MatmulTensors<'a, T> = (&'a Tensor<T>, &'a Tensor<T>, &'a mut Tensor<T>);

/// `c = a · b` with `a: [m, k]`, `b: [k, n]` of `T`; `time(args, config, grid)` times
/// configuration `config` of [`MATMUL_CONFIGS`].
fn matmul<T: Float>(
    device: &Device,
    [m, n, k]: [usize; 3],
    time: impl Fn(MatmulTensors<'_, T>, usize, [u32; 3]) -> TimedEntry,
) -> Result<BenchRow, LaunchError> {
    let a: Vec<T> = float_vec(141, m * k, 1.0);
    let b: Vec<T> = float_vec(142, k * n, 1.0);
    let ta = Tensor::from_slice(device, &a, &[m, k])?;
    let tb = Tensor::from_slice(device, &b, &[k, n])?;
    let af = parallel_vec(a.len(), |i| a[i].wide() as f64);
    let bf = parallel_vec(b.len(), |i| b[i].wide() as f64);
    let unit = if T::DTYPE_NAME == bf16::DTYPE_NAME {
        2f64.powi(-7)
    } else {
        2f64.powi(-10)
    };
    let (rows, cols) = if m * n * k <= 1 << 27 {
        ((0..m).collect(), (0..n).collect())
    } else {
        (spread(m, 64), spread(n, 64))
    };
    let mut best: Option<(Timed, &'static str, [usize; 4])> = None;
    let mut checks = Vec::new();
    for (index, &(config, stages)) in MATMUL_CONFIGS.iter().enumerate() {
        let mut c = Tensor::<T>::zeros(device, &[m, n])?;
        let tiles = m.div_ceil(config[0]) * n.div_ceil(config[1]);
        let (timed, entry) = time((&ta, &tb, &mut c), index, [programs(tiles)?, 1, 1])?;
        let got = c.to_vec()?;
        let verdict = check_items(rows.len(), |x| {
            let i = rows[x];
            // Row i of a·b and of |a|·|b| at the checked columns, along the rows of b.
            let (mut want, mut magnitude) = (vec![0f64; cols.len()], vec![0f64; cols.len()]);
            for p in 0..k {
                let a_ip = af[i * k + p];
                for (c, &j) in cols.iter().enumerate() {
                    let product = a_ip * bf[p * n + j];
                    want[c] += product;
                    magnitude[c] += product.abs();
                }
            }
            let mut worst = 0f64;
            for (c, &j) in cols.iter().enumerate() {
                let tol = unit * want[c].abs() + 2f64.powi(-16) * magnitude[c];
                let v = got[i * n + j].wide() as f64;
                worst = worst.max(within(v, want[c], tol, &format!("c[{i}, {j}]"))?);
            }
            Ok(worst)
        });
        checks.push((config, stages, verdict));
        if best.as_ref().is_none_or(|b| timed.ms < b.0.ms) {
            best = Some((timed, entry, config));
        }
    }
    let Some((timed, entry, config)) = best else {
        return Err(invalid("no matmul configuration ran".to_string()));
    };
    let entries = if rows.len() == m && cols.len() == n {
        format!("all {} elements", m * n)
    } else {
        format!(
            "{} of {} elements ({} rows x {} columns spread evenly)",
            rows.len() * cols.len(),
            m * n,
            rows.len(),
            cols.len()
        )
    };
    let mut failures = Vec::new();
    let mut worst = 0f64;
    for (config, stages, verdict) in &checks {
        worst = worst.max(verdict.worst);
        if let Some(f) = &verdict.failure {
            failures.push(format!(
                "config {config:?} ({stages} stages) FAILED at row {}: {}",
                f.item, f.detail
            ));
        }
    }
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let what = format!("{entries} of each config");
    Ok(best_config_row(
        device,
        ("matmul", vec![m, n, k], T::DTYPE_NAME),
        (&timed, entry, config),
        flops,
        (&what, worst, &failures),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_rows_and_tolerances() {
        assert_eq!(
            [1, 256, 257, 1000, 1024, 2000, 4096, 5000, 8192].map(row_block),
            [256, 256, 1024, 1024, 1024, 2048, 4096, 8192, 8192]
        );
        assert_eq!(rows_to_check(4, 1000), vec![0, 1, 2, 3]);
        let sampled = rows_to_check(16384, 8192);
        assert_eq!(sampled.len(), SAMPLED_ROWS);
        assert_eq!((sampled[0], sampled[SAMPLED_ROWS - 1]), (0, 16383));
        assert!((within(1.0, 1.0005, 1e-3, "x").unwrap() - 0.5).abs() < 1e-9);
        let err = within(1.0, 1.002, 1e-3, "row 3").unwrap_err();
        assert!(err.starts_with("row 3: got 1e0, want 1.002e0"), "{err}");
        assert!(within(f64::NAN, 1.0, 1.0, "x").is_err());
        assert!(check_columns(Family::Gather, 64).is_ok());
        assert!(check_columns(Family::Softmax, 8192).is_ok());
        assert!(check_columns(Family::Transpose, 0).is_err());
        let failed = check_items(10, |k| if k == 7 { Err("bad".into()) } else { Ok(0.1) });
        let text = checked_text(&failed, 10, 20, "row");
        assert_eq!(text, "10 of 20 rows (spread evenly): FAILED at row 7: bad");
    }
}
