//! The row blocks of the normalisations: a row's softmax and LayerNorm, and
//! `softmax_kernel!`, which stamps a row-softmax kernel (`tile_softmax` and the benchmark's).

use tessera::tile_fn;

/// Softmax of the row at the pointer tile `inp` (`[BLOCK]`, the elements past the row masked by
/// `mask`, `T` computed in f32) into the pointer tile `out`:
/// `out[c] = exp(x[c] - max) · (1 / Σ_c exp(x[c] - max))`. The row's one reciprocal replaces a
/// division per element (`/` is IEEE `div.rn`, several instructions each).
#[tile_fn]
pub fn softmax_row<T>(out: _, inp: _, mask: _) {
    let x = load(inp, mask, T::NEG_INFINITY).to::<f32>();
    let num = exp(x - x.max(0));
    let inv_sum = 1.0 / num.sum(0);
    store(out, (num * inv_sum).to::<T>(), mask);
}

/// A row softmax kernel `$name` on `T` (f32 or f16) computed in f32: the rows of `inp: [rows,
/// n]` (any strides) into `out` of its shape, one row per program (grid `rows`,
/// [`softmax_row`]), at the warp count and `BLOCK`s given; `requires` refuses a row longer
/// than the block and an output of another shape.
#[macro_export]
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

/// LayerNorm of the row at the pointer tile `x` (`[BLOCK]` f16, the elements past the row's
/// `n_cols` masked by `mask`, f32 statistics) into the pointer tile `y`, with the weight and
/// bias at the pointer tiles `w` and `b`: `y = (x - mean) · rstd · w + b` (biased variance) with
/// `rstd = rsqrt(var + eps)` (`rsqrt.approx`), one `fma` per element; the row's `(mean, rstd)`.
/// The mean and variance multiply by the row's one reciprocal of `n_cols`.
#[tile_fn]
pub fn layernorm_row(y: _, x: _, w: _, b: _, mask: _, n_cols: i32, eps: f32) -> (f32, f32) {
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
