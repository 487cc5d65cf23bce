//! Row-wise normalisations, one row per program (`BLOCK` ≥ the row length; columns past the
//! row's length are masked, so rows of any length up to `BLOCK` work).
//!
//! The kernels (`tile_softmax`, `tile_layernorm`, `tile_rmsnorm`, and the benchmark's in
//! `bench_triton`) take `Tensor` parameters: the rows of a `[rows, n]` tensor of any strides
//! (padded rows, a transposed view), one program per row (grid `rows`), with `requires`
//! refusing a row longer than the block and operands whose shapes do not match. The row helpers
//! take pointer tiles, so the kernels share them.

use tessera::{f16, tile_fn, tile_kernel};

/// Softmax of the row at the pointer tile `inp` (`[BLOCK]`, the elements past the row masked by
/// `mask`, `T` computed in f32) into the pointer tile `out`:
/// `out[c] = exp(x[c] - max) · (1 / Σ_c exp(x[c] - max))`. The row's one reciprocal replaces a
/// division per element (`/` is IEEE `div.rn`, several instructions each).
#[tile_fn]
pub(crate) fn softmax_row<T>(out: _, inp: _, mask: _) {
    let x = load(inp, mask, T::NEG_INFINITY).to::<f32>();
    let num = exp(x - x.max(0));
    let inv_sum = 1.0 / num.sum(0);
    store(out, (num * inv_sum).to::<T>(), mask);
}

/// A row softmax kernel `$name` on `T` (f32 or f16) computed in f32: the rows of `inp: [rows,
/// n]` (any strides) into `out` of its shape, one row per program (grid `rows`,
/// [`softmax_row`]), at the warp count and `BLOCK`s given; `requires` refuses a row longer
/// than the block and an output of another shape.
macro_rules! softmax_kernel {
    ($(#[doc = $doc:tt])* $name:ident, num_warps = $warps:tt, BLOCK = $blocks:tt) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            T = [f32, f16],
            num_warps = $warps,
            BLOCK = $blocks,
            requires = [
                inp.size(1) <= BLOCK,
                out.size(0) == inp.size(0) && out.size(1) == inp.size(1),
            ],
            uses = [softmax_row]
        )]
        pub fn $name<T, const BLOCK: usize>(out: Tensor<T, 2>, inp: Tensor<T, 2>) {
            let (row, cols) = (program_id(0), arange(0, BLOCK));
            let x = inp + row * inp.stride(0) + cols * inp.stride(1);
            let y = out + row * out.stride(0) + cols * out.stride(1);
            softmax_row::<T>(y, x, cols < inp.size(1));
        }
    };
}
pub(crate) use softmax_kernel;

softmax_kernel! {
    /// Row softmax of `inp` into `out` (both `[rows, n]`, f32 or f16, computed in f32, any
    /// strides): `out[r, c] = exp(x[r, c] - max_r) / Σ_c exp(x[r, c] - max_r)`, one row per
    /// program (grid `rows`).
    tile_softmax, num_warps = 4, BLOCK = [256, 1024, 4096]
}

/// LayerNorm of the row at the pointer tile `x` (`[BLOCK]` f16, the elements past the row's
/// `n_cols` masked by `mask`, f32 statistics) into the pointer tile `y`, with the weight and
/// bias at the pointer tiles `w` and `b`: `y = (x - mean) · rstd · w + b` (biased variance) with
/// `rstd = rsqrt(var + eps)` (`rsqrt.approx`), one `fma` per element; the row's `(mean, rstd)`.
/// The mean and variance multiply by the row's one reciprocal of `n_cols`.
#[tile_fn]
pub(crate) fn layernorm_row(y: _, x: _, w: _, b: _, mask: _, n_cols: i32, eps: f32) -> (f32, f32) {
    let xv = load(x, mask, 0.0).to::<f32>();
    let inv_n = 1.0 / (n_cols as f32);
    let mean = xv.sum(0) * inv_n;
    let diff = where_(mask, xv - mean, 0.0);
    let var = (diff * diff).sum(0) * inv_n;
    let rstd = rsqrt(var + eps);
    let wv = load(w, mask, 0.0).to::<f32>();
    let bv = load(b, mask, 0.0).to::<f32>();
    store(y, fma(diff * rstd, wv, bv).to::<f16>(), mask);
    (mean, rstd)
}

/// LayerNorm forward over the rows of `x: [rows, n]` into `y` of its shape, f16 in and out,
/// f32 statistics: `y = (x - mean) · rstd · w + b` with `w`, `b: [n]`, and per row `mean` and
/// `rstd = rsqrt(var + eps)` into `mean_out`, `rstd_out: [rows]` ([`layernorm_row`]). Any strides;
/// one row per program (grid `rows`).
#[tile_kernel(
    num_warps = 4,
    BLOCK = [256, 1024, 4096],
    requires = [
        x.size(1) <= BLOCK,
        y.size(0) == x.size(0) && y.size(1) == x.size(1),
        w.size(0) == x.size(1) && b.size(0) == x.size(1),
        mean_out.size(0) == x.size(0) && rstd_out.size(0) == x.size(0),
        eps >= 0.0,
    ],
    uses = [layernorm_row]
)]
pub fn tile_layernorm<const BLOCK: usize>(
    y: Tensor<f16, 2>,
    x: Tensor<f16, 2>,
    w: Tensor<f16, 1>,
    b: Tensor<f16, 1>,
    mean_out: Tensor<f32, 1>,
    rstd_out: Tensor<f32, 1>,
    eps: f32,
) {
    let (row, cols) = (program_id(0), arange(0, BLOCK));
    let (xs, ys) = (
        x + row * x.stride(0) + cols * x.stride(1),
        y + row * y.stride(0) + cols * y.stride(1),
    );
    let (ws, bs) = (w + cols * w.stride(0), b + cols * b.stride(0));
    let mask = cols < x.size(1);
    let (mean, rstd) = layernorm_row(ys, xs, ws, bs, mask, x.size(1), eps);
    store(mean_out + row * mean_out.stride(0), mean);
    store(rstd_out + row * rstd_out.stride(0), rstd);
}

/// RMSNorm forward over the rows of `x: [rows, n]` into `y` of its shape, f16 in and out, f32
/// math: `y = x · rsqrt(mean(x²) + eps) · w` with `w: [n]` (`rsqrt.approx`). Any strides; one
/// row per program (grid `rows`).
#[tile_kernel(
    num_warps = 4,
    BLOCK = [256, 1024, 4096],
    requires = [
        eps >= 0.0,
        x.size(1) <= BLOCK,
        w.size(0) == x.size(1),
        y.size(0) == x.size(0) && y.size(1) == x.size(1),
    ]
)]
pub fn tile_rmsnorm<const BLOCK: usize>(
    y: Tensor<f16, 2>,
    x: Tensor<f16, 2>,
    w: Tensor<f16, 1>,
    eps: f32,
) {
    let (row, cols) = (program_id(0), arange(0, BLOCK));
    let mask = cols < x.size(1);
    let xv = load(x + row * x.stride(0) + cols * x.stride(1), mask, 0.0).to::<f32>();
    let ms = (xv * xv).sum(0) / (x.size(1) as f32);
    let scale = rsqrt(ms + eps);
    let wv = load(w + cols * w.stride(0), mask, 0.0).to::<f32>();
    let ys = y + row * y.stride(0) + cols * y.stride(1);
    store(ys, (xv * scale * wv).to::<f16>(), mask);
}
