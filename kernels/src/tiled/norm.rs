//! Row-wise normalisations, one row per program (`BLOCK` ≥ the row length; columns past
//! `n_cols` are masked, so rows of any length up to `BLOCK` work).

use tessera::{f16, tile_fn, tile_kernel, Ptr};

/// Softmax of row `row` of `inp` (`n_cols ≤ BLOCK` columns of `T`, computed in f32) into the
/// same row of `out`: `out[r, c] = exp(x[r, c] - max_r) / Σ_c exp(x[r, c] - max_r)`.
#[tile_fn]
pub(crate) fn softmax_row<T, const BLOCK: usize>(
    out: Ptr<T>,
    inp: Ptr<T>,
    row: i32,
    in_stride: i32,
    out_stride: i32,
    n_cols: i32,
) {
    let cols = arange(0, BLOCK);
    let mask = cols < n_cols;
    let x = load(inp + row * in_stride + cols, mask, T::NEG_INFINITY).to::<f32>();
    let num = exp(x - x.max(0));
    store(
        out + row * out_stride + cols,
        (num / num.sum(0)).to::<T>(),
        mask,
    );
}

/// A row softmax kernel `$name` on `T` (f32 or f16) computed in f32, one row per program
/// ([`softmax_row`]), at the warp count and `BLOCK`s given.
macro_rules! softmax_kernel {
    ($(#[doc = $doc:tt])* $name:ident, num_warps = $warps:tt, BLOCK = $blocks:tt) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            T = [f32, f16],
            num_warps = $warps,
            BLOCK = $blocks,
            requires = [n_cols <= BLOCK],
            uses = [softmax_row]
        )]
        pub fn $name<T, const BLOCK: usize>(
            out: Ptr<T>,
            inp: Ptr<T>,
            in_stride: i32,
            out_stride: i32,
            n_cols: i32,
        ) {
            softmax_row::<T, BLOCK>(out, inp, program_id(0), in_stride, out_stride, n_cols);
        }
    };
}
pub(crate) use softmax_kernel;

softmax_kernel! {
    /// Row softmax of an f32 or f16 matrix, computed in f32:
    /// `out[r, c] = exp(x[r, c] - max_r) / Σ_c exp(x[r, c] - max_r)`.
    tile_softmax, num_warps = 4, BLOCK = [256, 1024, 4096]
}

/// LayerNorm of row `row` of `x` (f16, `n_cols ≤ BLOCK` columns, f32 statistics) into the same
/// row of `y`: `y = (x - mean) / sqrt(var + eps) * w + b` (biased variance); the row's
/// `(mean, rstd)` with `rstd = 1 / sqrt(var + eps)`.
#[tile_fn]
pub(crate) fn layernorm_row<const BLOCK: usize>(
    y: Ptr<f16>,
    x: Ptr<f16>,
    w: Ptr<f16>,
    b: Ptr<f16>,
    row: i32,
    stride: i32,
    n_cols: i32,
    eps: f32,
) -> (f32, f32) {
    let cols = arange(0, BLOCK);
    let mask = cols < n_cols;
    let xv = load(x + row * stride + cols, mask, 0.0).to::<f32>();
    let n = n_cols as f32;
    let mean = xv.sum(0) / n;
    let diff = where_(mask, xv - mean, 0.0);
    let var = (diff * diff).sum(0) / n;
    let rstd = 1.0 / sqrt(var + eps);
    let wv = load(w + cols, mask, 0.0).to::<f32>();
    let bv = load(b + cols, mask, 0.0).to::<f32>();
    store(
        y + row * stride + cols,
        (diff * rstd * wv + bv).to::<f16>(),
        mask,
    );
    (mean, rstd)
}

/// LayerNorm forward, f16 in and out, f32 statistics:
/// `y = (x - mean) / sqrt(var + eps) * w + b`, and `mean`, `rstd = 1 / sqrt(var + eps)` per row.
#[tile_kernel(
    num_warps = 4,
    BLOCK = [256, 1024, 4096],
    requires = [n_cols <= BLOCK],
    uses = [layernorm_row]
)]
pub fn tile_layernorm<const BLOCK: usize>(
    y: Ptr<f16>,
    x: Ptr<f16>,
    w: Ptr<f16>,
    b: Ptr<f16>,
    mean_out: Ptr<f32>,
    rstd_out: Ptr<f32>,
    stride: i32,
    n_cols: i32,
    eps: f32,
) {
    let row = program_id(0);
    let (mean, rstd) = layernorm_row::<BLOCK>(y, x, w, b, row, stride, n_cols, eps);
    store(mean_out + row, mean);
    store(rstd_out + row, rstd);
}

/// RMSNorm forward, f16 in and out, f32 math: `y = x / sqrt(mean(x²) + eps) * w`.
#[tile_kernel(num_warps = 4, BLOCK = [256, 1024, 4096], requires = [n_cols <= BLOCK])]
pub fn tile_rmsnorm<const BLOCK: usize>(
    y: Ptr<f16>,
    x: Ptr<f16>,
    w: Ptr<f16>,
    stride: i32,
    n_cols: i32,
    eps: f32,
) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let mask = cols < n_cols;
    let xv = load(x + row * stride + cols, mask, 0.0).to::<f32>();
    let ms = (xv * xv).sum(0) / (n_cols as f32);
    let scale = 1.0 / sqrt(ms + eps);
    let wv = load(w + cols, mask, 0.0).to::<f32>();
    store(y + row * stride + cols, (xv * scale * wv).to::<f16>(), mask);
}
