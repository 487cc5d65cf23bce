//! Autotuned kernels (`autotune(key = […])` in the attribute): the generated `launch_tuned`
//! times the candidates on the first launch for a key value and launches the fastest (see
//! `tessera::launch::autotune`; the emulator takes the first candidate).
//!
//! ```text
//! let tuned = tuned_matmul::launch_tuned(&device, &module,
//!     |c: &tuned_matmul::Consts| (cdiv(m, c.BM) * cdiv(n, c.BN)) as u32,
//!     a.ptr(), b.ptr(), c.ptr(), m, n, k)?;
//! println!("{} ({:?})", tuned.choice.candidate, tuned.choice.source);
//! ```
//!
//! A kernel with `Tensor` parameters is tuned on a stream, its key read from the tensors' sizes
//! (`tuned_tensor_matmul`: `key = [a.size(0), b.size(1), a.size(1)]`):
//!
//! ```text
//! let grid = |c: &tuned_tensor_matmul::Consts, s: &tuned_tensor_matmul::Sizes|
//!     ((s.c[0].div_ceil(c.BM) * s.c[1].div_ceil(c.BN)) as u32,);
//! let choice = tuned_tensor_matmul::launch_tuned(&stream, &module, grid, &a, &b, &mut c)?;
//! ```

use super::matmul::{dot_over_k, grouped_matmul, grouped_tile, matmul_tile};
use tessera::{tile_kernel, Ptr};

/// `out[i] = alpha · x[i] + y[i]` for `i < n` (computed in f32), `BLOCK` elements per program;
/// tuned per `n` over three (BLOCK, num_warps) configurations.
#[tile_kernel(
    T = [f16, f32],
    BLOCK = [256, 1024],
    num_warps = [2, 4],
    autotune(
        key = [n],
        configs = [(BLOCK = 256, num_warps = 2), (BLOCK = 1024, num_warps = 4), (BLOCK = 1024, num_warps = 2)]
    )
)]
pub fn tuned_axpy<T, const BLOCK: usize>(x: Ptr<T>, y: Ptr<T>, out: Ptr<T>, alpha: f32, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let xs = load(x + offs, mask, 0.0).to::<f32>();
    let ys = load(y + offs, mask, 0.0).to::<f32>();
    store(out + offs, (xs * alpha + ys).to::<T>(), mask);
}

grouped_matmul! {
    /// `c = a · b` (`a: [m, k]`, `b: [k, n]`, `c: [m, n]`, row-major) in f16 or bf16 with an f32
    /// accumulator, programs in groups of `GROUP` tile rows; tuned per `(m, n, k)` between
    /// Triton's benchmark configurations `(BM, BN, BK, warps) = (64, 128, 64, 4)` and
    /// `(128, 128, 64, 8)` (`configs` keeps those two of the four combinations).
    tuned_matmul,
    BM = [64, 128],
    BN = 128,
    BK = 64,
    num_warps = [4, 8],
    autotune(key = [m, n, k], configs = [(BM = 64, num_warps = 4), (BM = 128, num_warps = 8)])
}

/// `c = a · b` on tensors (`a: [m, k]`, `b: [k, n]`, `c: [m, n]`, any strides: a transposed
/// view of `b` is `b` column-major) in f16 or bf16 with an f32 accumulator: `tuned_matmul`'s
/// program order and candidates, tuned per `(m, n, k)` read from the tensors' sizes. `b`'s rows
/// are `a`'s columns and `c` is `[m, n]`: the kernel reads `m`, `k` from `a` and `n` from `b`.
#[tile_kernel(
    T = [f16, bf16],
    BM = [64, 128],
    BN = 128,
    BK = 64,
    GROUP = 8,
    num_warps = [4, 8],
    autotune(
        key = [a.size(0), b.size(1), a.size(1)],
        configs = [(BM = 64, num_warps = 4), (BM = 128, num_warps = 8)]
    ),
    requires = [
        b.size(0) == a.size(1),
        c.size(0) == a.size(0),
        c.size(1) == b.size(1),
    ],
    uses = [grouped_tile, dot_over_k]
)]
pub fn tuned_tensor_matmul<
    T,
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const GROUP: usize,
>(
    a: Tensor<T, 2>,
    b: Tensor<T, 2>,
    c: Tensor<T, 2>,
) {
    let m = a.size(0);
    let k = a.size(1);
    let n = b.size(1);
    let (tile_m, tile_n) = grouped_tile::<GROUP>(program_id(0), cdiv(m, BM), cdiv(n, BN));
    let rm = tile_m * BM + arange(0, BM);
    let rn = tile_n * BN + arange(0, BN);
    let rk = arange(0, BK);
    let a_ptrs = a + rm.expand_dims(1) * a.stride(0) + rk.expand_dims(0) * a.stride(1);
    let b_ptrs = b + rk.expand_dims(1) * b.stride(0) + rn.expand_dims(0) * b.stride(1);
    let (a_step, b_step) = (BK * a.stride(1), BK * b.stride(0));
    let acc = zeros::<f32>([BM, BN]);
    let acc = dot_over_k::<BK>(
        a_ptrs, b_ptrs, a_step, b_step, rm, rn, rk, m, n, k, acc, 0.0,
    );
    store(
        c + rm.expand_dims(1) * c.stride(0) + rn.expand_dims(0) * c.stride(1),
        acc.to::<T>(),
        (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n),
    );
}
