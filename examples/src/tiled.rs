//! The `#[tile_kernel]` part of the main example: softmax (f32, f16), LayerNorm (f16), 2-D
//! transpose (f32), gather along axis 1 (f32), scans (`cumsum` along columns and 1-D blocks,
//! forward and reversed, f32 and i32), matmul (f16, bf16) and flash attention (f16,
//! causal and not, head dimensions 64 and 128) from the kernel library
//! (`tessera_kernels::tiled`), each over shapes with ragged tails (masked lanes), on the GPU or
//! the emulator, compared with a CPU reference computed in f64:
//!
//! * transpose, gather, scans (`cumsum` of multiples of 1/64 in f32, wrapping in i32): exact.
//! * softmax f32: `|y − ref| ≤ 2e-5·ref + 1e-10` (f32 math with `ex2.approx`).
//! * softmax f16: `|y − ref| ≤ 1e-3·ref + 6e-8` (one f16 rounding: 2⁻¹¹ relative, 2⁻²⁴ absolute
//!   below the normal range).
//! * LayerNorm: `|y − ref| ≤ 2e-3·max(|ref|, 1)` (f16 output), `|mean − ref| ≤ 1e-5`,
//!   `|rstd − ref| ≤ 1e-4·ref`.
//! * matmul: `|c − ref| ≤ u·|ref| + 2⁻¹⁶·Σₖ|a·b|` with `u = 2⁻¹⁰` (f16 out) or `2⁻⁷` (bf16 out):
//!   twice the output rounding plus f32 accumulation.
//! * attention: every row against softmax attention in f64, the tolerance of
//!   [`crate::bench_attention`] (the probabilities' and the output's f16 roundings).
//!
//! Every output buffer is followed by canaries, and padding columns (row stride > row length)
//! hold a fill value that must survive: a write out of bounds fails the case.

use crate::checks::{with_canaries, Checks, TileRun};
use crate::data::{
    check_items, float_vec, layernorm_stats, parallel_vec, uniform_below, uniform_vec, within,
    Float, Verdict,
};
use tessera::launch::{DeviceElement, DeviceKind, KernelArgs, LaunchError};
use tessera::tensor::{Tensor, TensorMut, TensorRef};
use tessera::tile::{launch_on, Specialisation};
use tessera::{bf16, f16};
use tessera_kernels::tiled::attention::{tile_attention_d128_w4, tile_attention_d64};
use tessera_kernels::tiled::gather::tile_gather_cols;
use tessera_kernels::tiled::matmul::tile_matmul;
use tessera_kernels::tiled::norm::{tile_layernorm, tile_softmax};
use tessera_kernels::tiled::scan::{tile_cumsum_blocks, tile_cumsum_cols};
use tessera_kernels::tiled::transpose::tile_transpose;

/// The smallest of `blocks` (ascending) that holds `n` columns.
fn block_for(blocks: &[usize], n: usize) -> Result<usize, LaunchError> {
    blocks
        .iter()
        .copied()
        .find(|&b| b >= n)
        .ok_or_else(|| LaunchError::InvalidConfig {
            kernel: "examples".to_string(),
            reason: format!("rows of {n} columns exceed the compiled blocks {blocks:?}"),
        })
}

/// `n` as a grid dimension.
fn dim(n: usize) -> Result<u32, LaunchError> {
    u32::try_from(n).map_err(|_| LaunchError::InvalidConfig {
        kernel: "examples".to_string(),
        reason: format!("a grid of {n} programs is too large"),
    })
}

/// The tensors of a matmul launch: `a: [m, k]`, `b: [k, n]` and `c: [m, n]` (the first `m·n`
/// elements of a buffer with canaries after them).
struct MatmulOperands<'a, T: DeviceElement> {
    a: &'a Tensor<T>,
    b: &'a Tensor<T>,
    c: TensorMut<'a, T>,
}

/// The tensors of an attention launch (f16, `[1, BH, N, D]`): `q`, `k`, `v` and the output (the
/// first `BH·N·D` elements of a buffer with canaries after them), and the scale.
struct AttentionOperands<'a> {
    q: &'a Tensor<f16>,
    k: &'a Tensor<f16>,
    v: &'a Tensor<f16>,
    o: TensorMut<'a, f16>,
    scale: f32,
}

/// `launch_tiled!(checks, kernel<CONST = value, …>, grid, args)`: launches the specialisation
/// of the `#[tile_kernel]` module `kernel` for those constants and `args` on `grid` through
/// [`Checks::launch_tile`], under the kernel's name.
macro_rules! launch_tiled {
    ($checks:expr, $kernel:ident<$($name:ident = $value:tt),+>, $grid:expr, $args:expr) => {{
        let args = $args;
        let spec = $kernel::specialisation(&$kernel::Consts { $($name: $value),+ }, &args)?;
        $checks.launch_tile(stringify!($kernel), $kernel::EXPLAIN, spec, $grid, args)
    }};
    ($checks:expr, $kernel:ident::$types:ident<$($name:ident = $value:tt),+>, $grid:expr, $args:expr) => {{
        let args = $args;
        let spec = $kernel::$types::specialisation(&$kernel::Consts { $($name: $value),+ }, &args)?;
        let name = concat!(stringify!($kernel), "::", stringify!($types));
        $checks.launch_tile(name, $kernel::EXPLAIN, spec, $grid, args)
    }};
}

/// A one-line description of a comparison.
fn describe(verdict: &Verdict, what: &str) -> String {
    let plural = if verdict.items == 1 { "" } else { "s" };
    match &verdict.failure {
        Some(m) => format!("{what} {}: {}", m.item, m.detail),
        None if verdict.worst == 0.0 => format!("{} {what}{plural} exact", verdict.items),
        None => format!(
            "{} {what}{plural} within tolerance (worst |err|/tol {:.2})",
            verdict.items, verdict.worst
        ),
    }
}

/// `Ok` when `y` is `want` to the bit, else the failure at `at()`.
fn same_bits(y: f32, want: f32, at: impl Fn() -> String) -> Result<(), String> {
    if y.to_bits() == want.to_bits() {
        Ok(())
    } else {
        Err(format!("{} = {y}, want {want}", at()))
    }
}

/// Softmax of one row in f64.
fn softmax_ref(row: impl Iterator<Item = f64> + Clone) -> Vec<f64> {
    let max = row.clone().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = row.map(|v| (v - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

/// The wrapping running sums of `v[range]` (from its end when `reverse`) against `got[range]`:
/// the first element that differs, as `"{name}[i] = … but {what} is …"`.
fn running_sums(
    v: &[i32],
    got: &[i32],
    range: std::ops::Range<usize>,
    reverse: bool,
    name: &str,
    what: &str,
) -> Result<(), String> {
    let mut order: Vec<usize> = range.collect();
    if reverse {
        order.reverse();
    }
    let mut sum = 0i32;
    for i in order {
        sum = sum.wrapping_add(v[i]);
        if got[i] != sum {
            return Err(format!("{name}[{i}] = {} but {what} is {sum}", got[i]));
        }
    }
    Ok(())
}

/// One row of a padded output (`n` columns, then padding that must still hold the fill,
/// `is_fill`): the worst `|value(got) − want(c)| / tol(want(c))` over the columns, or the first
/// column that fails.
fn padded_row<T: Copy + std::fmt::Display>(
    row: &[T],
    n: usize,
    want: impl Fn(usize) -> f64,
    tol: impl Fn(f64) -> f64,
    value: impl Fn(T) -> f64,
    is_fill: impl Fn(T) -> bool,
) -> Result<f64, String> {
    let mut worst = 0f64;
    for (c, &y) in row.iter().enumerate() {
        if c >= n {
            if !is_fill(y) {
                return Err(format!("column {c}: wrote {y} into the row padding"));
            }
            continue;
        }
        let want = want(c);
        worst = worst.max(within(value(y), want, tol(want), &format!("column {c}"))?);
    }
    Ok(worst)
}

impl Checks<'_> {
    /// Launches `spec` (the generated module's choice for these arguments), keeping its
    /// emulator report and the entry's name for the layout summary.
    fn launch_tile<A: KernelArgs>(
        &mut self,
        kernel: &'static str,
        explain: &'static str,
        spec: &'static Specialisation<A>,
        grid: [u32; 3],
        args: A,
    ) -> Result<(), LaunchError> {
        let report = launch_on(self.device, self.module, spec, grid, args)?;
        self.record(kernel, report);
        let at = match self.tile_runs.iter().position(|r| r.kernel == kernel) {
            Some(at) => at,
            None => {
                self.tile_runs.push(TileRun {
                    kernel,
                    explain,
                    entries: Vec::new(),
                });
                self.tile_runs.len() - 1
            }
        };
        let entry = (spec.kernel.name, spec.num_warps, spec.shared_bytes);
        if !self.tile_runs[at].entries.contains(&entry) {
            self.tile_runs[at].entries.push(entry);
        }
        Ok(())
    }

    /// A tensor of `n` elements of `fill` followed by canaries.
    fn padded_tensor<T: DeviceElement>(
        &self,
        n: usize,
        (fill, canary): (T, T),
    ) -> Result<Tensor<T>, LaunchError> {
        let init = with_canaries(n, fill, canary);
        Tensor::from_slice(self.device, &init, &[init.len()])
    }

    /// Pushes the outcome of `verdict`, failing it too when the canaries after `n` changed.
    fn conclude<T: DeviceElement>(
        &mut self,
        label: String,
        verdict: Verdict,
        what: &str,
        got: &[T],
        n: usize,
        canary: T,
    ) {
        let canary_ok = got[n..].iter().all(|&v| v == canary);
        let ok = verdict.failure.is_none() && canary_ok;
        let mut detail = describe(&verdict, what);
        if !canary_ok {
            detail.push_str("; wrote past the end of the output");
        }
        self.push(label, ok, detail);
    }

    /// `tile_softmax` at `T = f32` over `rows` rows of `n` columns at row stride `stride`.
    pub fn softmax_f32(&mut self, rows: usize, n: usize, stride: usize) -> Result<(), LaunchError> {
        let x: Vec<f32> = uniform_vec(31, rows * stride)
            .into_iter()
            .map(|v| 8.0 * v)
            .collect();
        let tol = |w: f64| 2e-5 * w + 1e-10;
        let label = format!("tile_softmax f32 {rows}x{n} stride {stride}");
        self.softmax(
            x,
            (n, stride),
            (-1.0, -12345.5),
            tol,
            label,
            |s, mut out, inp, block, grid| {
                let args = tile_softmax::T_f32::args(&mut out, &inp)?;
                launch_tiled!(s, tile_softmax::T_f32<BLOCK = block>, grid, args)
            },
        )
    }

    /// `tile_softmax` at `T = f16` over `rows` rows of `n` columns at row stride `stride`.
    pub fn softmax_f16(&mut self, rows: usize, n: usize, stride: usize) -> Result<(), LaunchError> {
        let x: Vec<f16> = float_vec(32, rows * stride, 6.0);
        let tol = |w: f64| 1e-3 * w + 6e-8;
        let label = format!("tile_softmax_f16 {rows}x{n} stride {stride}");
        let (fill, canary) = (f16::from_f32(-1.0), f16::from_f32(-4321.0));
        self.softmax(
            x,
            (n, stride),
            (fill, canary),
            tol,
            label,
            |s, mut out, inp, block, grid| {
                let args = tile_softmax::T_f16::args(&mut out, &inp)?;
                launch_tiled!(s, tile_softmax::T_f16<BLOCK = block>, grid, args)
            },
        )
    }

    /// A row softmax over the rows of `x` (`n` columns at row stride `stride`) into an output
    /// of the same strides filled with `fill` and followed by `canary`s; `launch` launches the
    /// kernel of element type `T` at `BLOCK = block` on the two `[rows, n]` views. Each column
    /// within `tol(want)` of the f64 softmax.
    #[allow(clippy::type_complexity)]
    fn softmax<T: Float + std::fmt::Display>(
        &mut self,
        x: Vec<T>,
        (n, stride): (usize, usize),
        (fill, canary): (T, T),
        tol: impl Fn(f64) -> f64 + Sync,
        label: String,
        launch: impl FnOnce(
            &mut Self,
            TensorMut<'_, T>,
            TensorRef<'_, T>,
            usize,
            [u32; 3],
        ) -> Result<(), LaunchError>,
    ) -> Result<(), LaunchError> {
        let rows = x.len() / stride;
        let tx = Tensor::from_slice(self.device, &x, &[rows, stride])?;
        let mut out = self.padded_tensor(rows * stride, (fill, canary))?;
        let out_rows = out.view_mut().as_strided(&[rows, n], &[stride, 1], 0)?;
        let block = block_for(&[256, 1024, 4096], n)?;
        let inp = tx.view().slice(1, 0..n)?;
        launch(self, out_rows, inp, block, [dim(rows)?, 1, 1])?;
        let got = out.to_vec()?;
        let verdict = check_items(rows, |r| {
            let row = &x[r * stride..r * stride + n];
            let want = softmax_ref(row.iter().map(|v| v.wide() as f64));
            let is_fill = |y: T| y.wide().to_bits() == fill.wide().to_bits();
            let padded = &got[r * stride..(r + 1) * stride];
            padded_row(padded, n, |c| want[c], &tol, |y| y.wide() as f64, is_fill)
        });
        self.conclude(label, verdict, "row", &got, rows * stride, canary);
        Ok(())
    }

    /// `tile_layernorm` (f16 in and out, f32 statistics) over `rows` rows of `n` columns.
    pub fn layernorm(&mut self, rows: usize, n: usize, stride: usize) -> Result<(), LaunchError> {
        let eps = 1e-5f32;
        let x: Vec<f16> = float_vec(41, rows * stride, 3.0);
        let w: Vec<f16> = float_vec(42, n, 1.0);
        let b: Vec<f16> = float_vec(43, n, 0.5);
        let tensor = |v: &[f16], sizes: &[usize]| Tensor::from_slice(self.device, v, sizes);
        let (tx, tw, tb) = (
            tensor(&x, &[rows, stride])?,
            tensor(&w, &[n])?,
            tensor(&b, &[n])?,
        );
        let (fill, canary) = (f16::from_f32(9.0), f16::from_f32(-4321.0));
        let mut y = self.padded_tensor(rows * stride, (fill, canary))?;
        let mut mean = self.padded_tensor(rows, (0f32, -12345.5))?;
        let mut rstd = self.padded_tensor(rows, (0f32, -12345.5))?;
        let block = block_for(&[256, 1024, 4096], n)?;
        let args = tile_layernorm::args(
            &mut y.view_mut().as_strided(&[rows, n], &[stride, 1], 0)?,
            &tx.view().slice(1, 0..n)?,
            &tw,
            &tb,
            &mut mean.view_mut().slice(0, 0..rows)?,
            &mut rstd.view_mut().slice(0, 0..rows)?,
            eps,
        )?;
        launch_tiled!(
            self,
            tile_layernorm<BLOCK = block>,
            [dim(rows)?, 1, 1],
            args
        )?;
        let (got, got_mean, got_rstd) = (y.to_vec()?, mean.to_vec()?, rstd.to_vec()?);
        let verdict = check_items(rows, |r| {
            let row: Vec<f64> = x[r * stride..r * stride + n]
                .iter()
                .map(|v| v.to_f32() as f64)
                .collect();
            let (m, rs) = layernorm_stats(&row, eps);
            let mut worst = within(got_mean[r] as f64, m, 1e-5, "mean")?;
            worst = worst.max(within(got_rstd[r] as f64, rs, 1e-4 * rs, "rstd")?);
            let want = |c: usize| (row[c] - m) * rs * w[c].to_f32() as f64 + b[c].to_f32() as f64;
            let tol = |want: f64| 2e-3 * want.abs().max(1.0);
            let is_fill = |v: f16| v.to_bits() == fill.to_bits();
            let padded = &got[r * stride..(r + 1) * stride];
            let columns = padded_row(padded, n, want, tol, |v| v.to_f32() as f64, is_fill)?;
            Ok(worst.max(columns))
        });
        let stats_canaries = got_mean[rows..]
            .iter()
            .chain(&got_rstd[rows..])
            .all(|&v| v == -12345.5);
        let label = format!("tile_layernorm f16 {rows}x{n} stride {stride}");
        if stats_canaries {
            self.conclude(label, verdict, "row", &got, rows * stride, canary);
        } else {
            let detail = "wrote past the end of mean or rstd".to_string();
            self.push(label, false, detail);
        }
        Ok(())
    }

    /// `tile_transpose` (f32, 32 × 32 tiles) of an `m × n` matrix.
    pub fn transpose_tiled(&mut self, m: usize, n: usize) -> Result<(), LaunchError> {
        let x = uniform_vec(51, m * n);
        let tx = Tensor::from_slice(self.device, &x, &[m, n])?;
        let canary = -12345.5f32;
        let mut out = self.padded_tensor(m * n, (0f32, canary))?;
        let args = tile_transpose::args(
            &tx,
            &mut out.view_mut().slice(0, 0..m * n)?.reshape(&[n, m])?,
        )?;
        let grid = [dim(m.div_ceil(32))?, dim(n.div_ceil(32))?, 1];
        launch_tiled!(self, tile_transpose<BM = 32, BN = 32>, grid, args)?;
        let got = out.to_vec()?;
        // out[j, i] = x[i, j]: row j of the output is column j of x.
        let verdict = check_items(n, |j| {
            for i in 0..m {
                same_bits(got[j * m + i], x[i * n + j], || format!("out[{j}, {i}]"))?;
            }
            Ok(0.0)
        });
        let label = format!("tile_transpose f32 {m}x{n}");
        self.conclude(label, verdict, "output row", &got, m * n, canary);
        Ok(())
    }

    /// `tile_gather_cols`: `out[i, j] = src[i, index[i, j]]`, `src: [m, n]` (`n ≤ 32`),
    /// `index, out: [m, k]`.
    pub fn gather(&mut self, m: usize, n: usize, k: usize) -> Result<(), LaunchError> {
        let src = uniform_vec(61, m * n);
        let index: Vec<i32> = parallel_vec(m * k, |i| uniform_below(62, i as u64, n as u32) as i32);
        let tsrc = Tensor::from_slice(self.device, &src, &[m, n])?;
        let tindex = Tensor::from_slice(self.device, &index, &[m, k])?;
        let canary = -12345.5f32;
        let mut out = self.padded_tensor(m * k, (0f32, canary))?;
        let args = tile_gather_cols::args(
            &tsrc,
            &tindex,
            &mut out.view_mut().slice(0, 0..m * k)?.reshape(&[m, k])?,
        )?;
        let grid = [dim(m.div_ceil(32))?, dim(k.div_ceil(32))?, 1];
        launch_tiled!(self, tile_gather_cols<BM = 32, BN = 32, BK = 32>, grid, args)?;
        let got = out.to_vec()?;
        let verdict = check_items(m, |i| {
            for j in 0..k {
                let want = src[i * n + index[i * k + j] as usize];
                same_bits(got[i * k + j], want, || format!("out[{i}, {j}]"))?;
            }
            Ok(0.0)
        });
        let label = format!("tile_gather_cols f32 [{m}x{n}] by [{m}x{k}]");
        self.conclude(label, verdict, "row", &got, m * k, canary);
        Ok(())
    }

    /// `tile_matmul` (64 × 64 × 32 tiles; `launch` launches its specialisation of element type
    /// `T`): `c = a · b` on tensors `a: [m, k]`, `b: [k, n]`.
    fn matmul<T: Float>(
        &mut self,
        m: usize,
        n: usize,
        k: usize,
        launch: impl FnOnce(&mut Self, MatmulOperands<'_, T>, [u32; 3]) -> Result<(), LaunchError>,
    ) -> Result<(), LaunchError> {
        let a: Vec<T> = float_vec(71, m * k, 1.0);
        let b: Vec<T> = float_vec(72, k * n, 1.0);
        let ta = Tensor::from_slice(self.device, &a, &[m, k])?;
        let tb = Tensor::from_slice(self.device, &b, &[k, n])?;
        let canary = T::narrow(-4321.0);
        let mut c = self.padded_tensor(m * n, (T::default(), canary))?;
        let operands = MatmulOperands {
            a: &ta,
            b: &tb,
            c: c.view_mut().slice(0, 0..m * n)?.reshape(&[m, n])?,
        };
        launch(
            self,
            operands,
            [dim(m.div_ceil(64))?, dim(n.div_ceil(64))?, 1],
        )?;
        let bf16_out = T::DTYPE_NAME == bf16::DTYPE_NAME;
        let got = c.to_vec()?;
        let unit = if bf16_out {
            2f64.powi(-7)
        } else {
            2f64.powi(-10)
        };
        let (af, bf): (Vec<f64>, Vec<f64>) = (
            a.iter().map(|v| v.wide() as f64).collect(),
            b.iter().map(|v| v.wide() as f64).collect(),
        );
        let verdict = check_items(m, |i| {
            // Row i of a·b and of |a|·|b|, accumulated along the rows of b (cache friendly).
            let (mut want, mut magnitude) = (vec![0f64; n], vec![0f64; n]);
            for p in 0..k {
                let x = af[i * k + p];
                for (j, &y) in bf[p * n..(p + 1) * n].iter().enumerate() {
                    want[j] += x * y;
                    magnitude[j] += (x * y).abs();
                }
            }
            let mut worst = 0f64;
            for j in 0..n {
                let tol = unit * want[j].abs() + 2f64.powi(-16) * magnitude[j];
                let y = got[i * n + j].wide() as f64;
                worst = worst.max(within(y, want[j], tol, &format!("c[{i}, {j}]"))?);
            }
            Ok(worst)
        });
        let label = format!("tile_matmul {} {m}x{n}x{k}", T::DTYPE_NAME);
        self.conclude(label, verdict, "row", &got, m * n, canary);
        Ok(())
    }

    /// Flash attention on `[bh, n, d]` f16 (`tile_attention_d64` at 4 warps for `d = 64`,
    /// `tile_attention_d128_w4` for `d = 128`), causal or not.
    fn attention(
        &mut self,
        [bh, n, d]: [usize; 3],
        causal: bool,
        launch: impl FnOnce(&mut Self, AttentionOperands<'_>, [u32; 3]) -> Result<(), LaunchError>,
        bm: usize,
    ) -> Result<(), LaunchError> {
        let len = bh * n * d;
        let q: Vec<f16> = float_vec(81, len, 2.0);
        let k: Vec<f16> = float_vec(82, len, 2.0);
        let v: Vec<f16> = float_vec(83, len, 1.0);
        let sizes = [1, bh, n, d];
        let tensor = |x: &[f16]| Tensor::from_slice(self.device, x, &sizes);
        let (tq, tk, tv) = (tensor(&q)?, tensor(&k)?, tensor(&v)?);
        let canary = f16::from_f32(-4321.0);
        let mut out = self.padded_tensor(len, (f16::default(), canary))?;
        let operands = AttentionOperands {
            q: &tq,
            k: &tk,
            v: &tv,
            o: out.view_mut().slice(0, 0..len)?.reshape(&sizes)?,
            scale: 1.0 / (d as f32).sqrt(),
        };
        launch(self, operands, [dim(n.div_ceil(bm))?, dim(bh)?, 1])?;
        let got = out.to_vec()?;
        let verdict = check_items(bh * n, |x| {
            let (h, i) = (x / n, x % n);
            crate::bench_attention::check_row((&q, &k, &v, &got), (h, i), (n, d), causal)
        });
        let kind = if causal { " causal" } else { "" };
        let label = format!("tile_attention f16{kind} [{bh}, {n}, {d}]");
        self.conclude(label, verdict, "row", &got, len, canary);
        Ok(())
    }

    /// `tile_cumsum_cols` (f32, 256 rows × 4 columns per program, at 1, 4 and 8 warps) of an
    /// `m × n` matrix (`m ≤ 256`), and `tile_cumsum_blocks` (i32, blocks of 1024, running sums
    /// from both ends) of `len` elements: exact (multiples of 1/64; wrapping integers).
    pub fn scans(&mut self, m: usize, n: usize, len: usize) -> Result<(), LaunchError> {
        let x: Vec<f32> = parallel_vec(m * n, |i| {
            (uniform_below(81, i as u64, 1024) as f32 - 512.0) / 64.0
        });
        let tx = Tensor::from_slice(self.device, &x, &[m, n])?;
        let canary = -12345.5f32;
        for num_warps in [1u32, 4, 8] {
            let mut out = self.padded_tensor(m * n, (0f32, canary))?;
            let args = tile_cumsum_cols::T_f32::args(
                &mut out.view_mut().slice(0, 0..m * n)?.reshape(&[m, n])?,
                &tx,
            )?;
            let grid = [dim(n.div_ceil(4))?, 1, 1];
            launch_tiled!(
                self,
                tile_cumsum_cols::T_f32<BLOCK_M = 256, BLOCK_N = 4, num_warps = num_warps>,
                grid,
                args
            )?;
            let got = out.to_vec()?;
            let verdict = check_items(n, |c| {
                let mut sum = 0f32;
                for r in 0..m {
                    sum += x[r * n + c];
                    same_bits(got[r * n + c], sum, || format!("out[{r}, {c}]"))?;
                }
                Ok(0.0)
            });
            let label = format!("tile_cumsum_cols f32 {m}x{n} num_warps {num_warps}");
            self.conclude(label, verdict, "column", &got, m * n, canary);
        }
        let v: Vec<i32> = parallel_vec(len, |i| uniform_below(82, i as u64, u32::MAX) as i32);
        let tv = Tensor::from_slice(self.device, &v, &[len])?;
        let canary = -77i32;
        for num_warps in [1u32, 4] {
            let (mut out, mut rev) = (
                self.padded_tensor(len, (0i32, canary))?,
                self.padded_tensor(len, (0i32, canary))?,
            );
            let args = tile_cumsum_blocks::T_i32::args(
                &mut out.view_mut().slice(0, 0..len)?,
                &mut rev.view_mut().slice(0, 0..len)?,
                &tv,
            )?;
            let grid = [dim(len.div_ceil(1024))?, 1, 1];
            launch_tiled!(
                self,
                tile_cumsum_blocks::T_i32<BLOCK = 1024, num_warps = num_warps>,
                grid,
                args
            )?;
            let (got, got_rev) = (out.to_vec()?, rev.to_vec()?);
            let verdict = check_items(len.div_ceil(1024), |b| {
                let range = b * 1024..len.min(b * 1024 + 1024);
                running_sums(&v, &got, range.clone(), false, "out", "the running sum")?;
                running_sums(&v, &got_rev, range, true, "rev", "the sum from the end")?;
                Ok(0.0)
            });
            let label = format!("tile_cumsum_blocks i32 {len} num_warps {num_warps}");
            let rev_ok = got_rev[len..].iter().all(|&r| r == canary);
            let verdict = if rev_ok {
                verdict
            } else {
                Verdict {
                    failure: Some(crate::data::Mismatch {
                        item: len,
                        detail: "wrote past the end of rev".into(),
                    }),
                    ..verdict
                }
            };
            self.conclude(label, verdict, "block", &got, len, canary);
        }
        Ok(())
    }

    /// Every `#[tile_kernel]` case, sized for the device.
    pub fn run_tiled(&mut self) -> Result<(), LaunchError> {
        let gpu = self.device.kind() == DeviceKind::Gpu;
        // (rows, columns, row stride): ragged rows (unaligned variant), aligned ones.
        let mut rows = vec![(4, 1000, 1000), (3, 1024, 1040), (2, 4093, 4096)];
        if gpu {
            rows.extend([(4096, 1024, 1024), (1000, 4000, 4000), (8192, 4096, 4096)]);
        }
        for &(r, n, stride) in &rows {
            self.softmax_f32(r, n, stride)?;
        }
        for &(r, n, stride) in &rows {
            self.softmax_f16(r, n, stride)?;
        }
        let mut norm_rows = vec![(4, 1000, 1000), (2, 4096, 4096)];
        if gpu {
            norm_rows.extend([(4096, 1024, 1024), (3000, 4000, 4000)]);
        }
        for &(r, n, stride) in &norm_rows {
            self.layernorm(r, n, stride)?;
        }
        let mut matrices = vec![(70, 45), (128, 96)];
        if gpu {
            matrices.extend([(4096, 4096), (1000, 3001)]);
        }
        for &(m, n) in &matrices {
            self.transpose_tiled(m, n)?;
        }
        let mut gathers = vec![(100, 32, 32), (37, 20, 50)];
        if gpu {
            gathers.extend([(65_536, 32, 32), (10_007, 31, 100)]);
        }
        for &(m, n, k) in &gathers {
            self.gather(m, n, k)?;
        }
        self.scans(100, 37, 2500)?;
        if gpu {
            self.scans(256, 100_003, 3_000_017)?;
        }
        let mut products = vec![(64, 64, 32), (70, 33, 45), (128, 96, 100)];
        if gpu {
            products.extend([(1024, 1024, 1024), (1000, 999, 1001)]);
        }
        // A specialisation without AMD code (a dot no `mfma` plan exists for) would be listed as
        // not run while the emulator emulates amdgpu; these have AMD code (`v_mfma`).
        for &(m, n, k) in &products {
            self.unless_nvidia_only(|checks| {
                checks.matmul::<f16>(m, n, k, |checks, mut ops, grid| {
                    let args = tile_matmul::T_f16::args(ops.a, ops.b, &mut ops.c)?;
                    launch_tiled!(checks, tile_matmul::T_f16<BM = 64, BN = 64, BK = 32, num_stages = 1>, grid, args)
                })
            })?;
        }
        for &(m, n, k) in &products {
            self.unless_nvidia_only(|checks| {
                checks.matmul::<bf16>(m, n, k, |checks, mut ops, grid| {
                    let args = tile_matmul::T_bf16::args(ops.a, ops.b, &mut ops.c)?;
                    launch_tiled!(checks, tile_matmul::T_bf16<BM = 64, BN = 64, BK = 32, num_stages = 1>, grid, args)
                })
            })?;
        }
        // On the emulator (one host thread per GPU thread) two heads of 70 rows: ragged rows and
        // keys, one program per head; the kernel tests run longer sequences (several programs per
        // head, causal programs past the first).
        let mut heads = vec![[2, 70, 64], [1, 70, 128]];
        if gpu {
            heads.extend([[2, 130, 64], [8, 1024, 64], [4, 1000, 128]]);
        }
        // Attention of `shape` through `$kernel`'s specialisation at `$consts`, `$bm` rows per
        // program, its arguments from the tensors `attention` makes.
        macro_rules! attention_through {
            ($checks:expr, $kernel:ident [$($consts:tt)*], $bm:expr, $shape:expr, $causal:expr) => {{
                let launch = |checks: &mut Self, mut ops: AttentionOperands<'_>, grid: [u32; 3]| {
                    let (q, k, v, o) = (ops.q, ops.k, ops.v, &mut ops.o);
                    let args = $kernel::T_f16::args(q, k, v, o, ops.scale)?;
                    launch_tiled!(checks, $kernel::T_f16<$($consts)*>, grid, args)
                };
                $checks.unless_nvidia_only(|checks| checks.attention($shape, $causal, launch, $bm))?;
            }};
        }
        for causal in [0, 1] {
            for &shape in &heads {
                if shape[2] == 64 {
                    attention_through!(
                        self,
                        tile_attention_d64[
                            BM = 128, BN = 64, D = 64, CAUSAL = causal, num_warps = 4, num_stages = 1
                        ],
                        128,
                        shape,
                        causal == 1
                    );
                } else {
                    attention_through!(
                        self,
                        tile_attention_d128_w4[BM = 64, BN = 64, D = 128, CAUSAL = causal, num_stages = 1],
                        64,
                        shape,
                        causal == 1
                    );
                }
            }
        }
        Ok(())
    }
}
