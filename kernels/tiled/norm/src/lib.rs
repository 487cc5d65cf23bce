//! Row-wise normalisations, one row per program (`BLOCK` ≥ the row length; columns past the
//! row's length are masked, so rows of any length up to `BLOCK` work).
//!
//! The kernels (`tile_softmax`, `tile_layernorm`, `tile_rmsnorm`, and the benchmark's in
//! `bench_triton`) take `Tensor` parameters: the rows of a `[rows, n]` tensor of any strides
//! (padded rows, a transposed view), one program per row (grid `rows`), with `requires`
//! refusing a row longer than the block and operands whose shapes do not match. The row helpers
//! (`tessera_kernels_blocks::rows`) take pointer tiles, so these kernels and the benchmark's
//! share them.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{f16, tile_kernel};
use tessera_kernels_blocks::rows::{layernorm_row, softmax_row};
use tessera_kernels_blocks::softmax_kernel;

softmax_kernel! {
    /// Row softmax of `inp` into `out` (both `[rows, n]`, f32 or f16, computed in f32, any
    /// strides): `out[r, c] = exp(x[r, c] - max_r) / Σ_c exp(x[r, c] - max_r)`, one row per
    /// program (grid `rows`).
    tile_softmax, num_warps = 4, BLOCK = [256, 1024, 4096]
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
