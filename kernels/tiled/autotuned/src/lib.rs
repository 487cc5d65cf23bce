//! Autotuned kernels (`autotune(key = […])` in the attribute): the generated `launch_tuned`
//! times the candidates on the first launch for a key value and launches the fastest (see
//! `tessera::launch::autotune`; the emulator takes the first candidate).
//!
//! ```text
//! let tuned = tuned_axpy::launch_tuned(&device, &module,
//!     |c: &tuned_axpy::Consts| n.div_ceil(c.BLOCK) as u32, x.ptr(), y.ptr(), out.ptr(), 2.0, n)?;
//! println!("{} ({:?})", tuned.choice.candidate, tuned.choice.source);
//! ```
//!
//! A kernel with `Tensor` parameters is tuned on a stream, its key read from the tensors' sizes
//! (`tuned_matmul`: `key = [a.size(0), b.size(1), a.size(1)]`):
//!
//! ```text
//! let grid = |c: &tuned_matmul::Consts, s: &tuned_matmul::Sizes|
//!     ((s.c[0].div_ceil(c.BM) * s.c[1].div_ceil(c.BN)) as u32,);
//! let choice = tuned_matmul::launch_tuned(&stream, &module, grid, &a, &b, &mut c)?;
//! ```

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{tile_kernel, Ptr};
use tessera_kernels_blocks::grouped_matmul;
use tessera_kernels_blocks::matmul::{dot_blocks_over_k, grouped_tile, matmul_tile};
use tessera_kernels_blocks::tensor_block;

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
    /// `c = a · b` (`a: [m, k]`, `b: [k, n]`, `c: [m, n]` tensors of any strides, as
    /// `tessera_kernels_matmul::tile_matmul`) in f16 or bf16 with an f32 accumulator,
    /// programs in groups of `GROUP` tile rows; tuned per `(m, n, k)`, read from the tensors'
    /// sizes, between Triton's benchmark configurations `(BM, BN, BK, warps) = (64, 128, 64, 4)`
    /// and `(128, 128, 64, 8)` (`configs` keeps those two of the four combinations).
    tuned_matmul,
    BM = [64, 128],
    BN = 128,
    BK = 64,
    num_warps = [4, 8],
    autotune(
        key = [a.size(0), b.size(1), a.size(1)],
        configs = [(BM = 64, num_warps = 4), (BM = 128, num_warps = 8)]
    )
}
