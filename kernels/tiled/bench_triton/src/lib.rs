//! The kernels of `shared/bench/triton_ref.py`, written with `#[tile_kernel]` at the
//! specialisations that script launches, so `tessera-examples --bench NAME` times the same work
//! with the same tile sizes and warp counts as Triton. They take `Tensor` parameters (the
//! script's kernels take torch tensors' pointers and strides):
//!
//! * softmax (f32, f16): `BLOCK = next_power_of_two(N)`, 4 warps up to 2048, 8 up to 4096, 16
//!   beyond (one kernel per warp count, each with the `BLOCK`s Triton runs at that count; the
//!   element type is a type parameter). One row per program.
//! * layernorm (f16 in and out, f32 statistics): `num_warps = min(max(BLOCK / 256, 1), 8)`.
//! * transpose (f32, f16): 64 × 64 tiles, 4 warps.
//! * gather along axis 1 (f32, f16; i32 indices): `N` columns, `4096 / N` rows per program, 4
//!   warps.
//! * matmul (f16, bf16 in; f32 accumulate; f16, bf16 out): Triton's tile configurations
//!   (`BM × BN × BK`, warps) and its grouped program order (`GROUP = 8` rows of tiles share their
//!   `b` columns in L2); `num_stages` adds software pipelining (Triton's `num_stages`), on sm_90a
//!   into `wgmma`'s NVMMA layouts with one `wgmma` group in flight; `bench_matmul_w8_wide` is
//!   Triton's 128 × 256 × 64 configuration.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{f16, tile_kernel};
use tessera_kernels_blocks::matmul::{dot_blocks_over_k, grouped_tile, matmul_tile};
use tessera_kernels_blocks::rows::{layernorm_row, softmax_row};
use tessera_kernels_blocks::tensor_block;
use tessera_kernels_blocks::transpose::transpose_block;
use tessera_kernels_blocks::{grouped_matmul, softmax_kernel};

softmax_kernel! {
    /// Row softmax of f32 or f16 values (computed in f32):
    /// `out[r, c] = exp(x[r, c] - max_r) / Σ_c exp(x[r, c] - max_r)`; 4 warps.
    bench_softmax_w4, num_warps = 4, BLOCK = [256, 1024, 2048]
}
softmax_kernel! {
    /// [`bench_softmax_w4`] with 8 warps (`BLOCK = 4096`).
    bench_softmax_w8, num_warps = 8, BLOCK = 4096
}
softmax_kernel! {
    /// [`bench_softmax_w4`] with 16 warps (`BLOCK = 8192`).
    bench_softmax_w16, num_warps = 16, BLOCK = 8192
}

/// LayerNorm forward as `triton_ref.py`'s kernel, f16 in and out, f32 statistics:
/// `y = (x - mean) · rsqrt(var + eps) · w + b` (biased variance) over the rows of `x: [rows, n]`
/// into `y` of its shape, `w`, `b: [n]`.
macro_rules! bench_layernorm {
    ($(#[doc = $doc:tt])* $name:ident, num_warps = $warps:tt, BLOCK = $blocks:tt) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            num_warps = $warps,
            BLOCK = $blocks,
            requires = [
                x.size(1) <= BLOCK,
                y.size(0) == x.size(0) && y.size(1) == x.size(1),
                w.size(0) == x.size(1) && b.size(0) == x.size(1),
            ],
            uses = [layernorm_row]
        )]
        pub fn $name<const BLOCK: usize>(
            x: Tensor<f16, 2>,
            y: Tensor<f16, 2>,
            w: Tensor<f16, 1>,
            b: Tensor<f16, 1>,
            eps: f32,
        ) {
            let (row, cols) = (program_id(0), arange(0, BLOCK));
            let xs = x + row * x.stride(0) + cols * x.stride(1);
            let ys = y + row * y.stride(0) + cols * y.stride(1);
            let (ws, bs) = (w + cols * w.stride(0), b + cols * b.stride(0));
            layernorm_row(ys, xs, ws, bs, cols < x.size(1), x.size(1), eps);
        }
    };
}

bench_layernorm! {
    /// LayerNorm forward as `triton_ref.py`'s kernel, f16 in and out, f32 statistics:
    /// `y = (x - mean) · rsqrt(var + eps) · w + b` (biased variance); 4 warps (`BLOCK ≤ 1024`).
    bench_layernorm_w4, num_warps = 4, BLOCK = [256, 1024]
}
bench_layernorm! {
    /// [`bench_layernorm_w4`] with 8 warps (`BLOCK ≥ 2048`).
    bench_layernorm_w8, num_warps = 8, BLOCK = [2048, 4096, 8192]
}

/// `y = xᵀ` for `x: [m, n]` f32 or f16 (`y: [n, m]`, rows contiguous), 64 × 64 tiles, 4 warps.
#[tile_kernel(
    T = [f32, f16],
    num_warps = 4,
    BM = 64,
    BN = 64,
    requires = [
        y.size(0) == x.size(1) && y.size(1) == x.size(0),
        x.stride(1) == 1 && y.stride(1) == 1,
    ],
    uses = [transpose_block, tensor_block]
)]
pub fn bench_transpose<T, const BM: usize, const BN: usize>(x: Tensor<T, 2>, y: Tensor<T, 2>) {
    transpose_block::<BM, BN>(x, y, program_id(0), program_id(1));
}

/// `out[i, j] = src[i, index[i, j]]` for `src, index, out: [m, N]` (indices in `0..N`),
/// `4096 / N` rows per program, 4 warps; f32 or f16 values.
#[tile_kernel(
    T = [f32, f16],
    num_warps = 4,
    N = [32, 64, 128, 256],
    requires = [
        src.size(1) == N && index.size(1) == N,
        index.size(0) == src.size(0),
        out.size(0) == src.size(0) && out.size(1) == N,
    ],
    uses = [tensor_block]
)]
pub fn bench_gather<T, const N: usize>(
    src: Tensor<T, 2>,
    index: Tensor<i32, 2>,
    out: Tensor<T, 2>,
) {
    let rm = program_id(0) * (4096 / N) + arange(0, 4096 / N);
    let rn = arange(0, N);
    let (table_ptrs, mask) = tensor_block(src, rm, rn);
    let (index_ptrs, _) = tensor_block(index, rm, rn);
    let table = load(table_ptrs, mask, 0.0);
    let idx = load(index_ptrs, mask, 0);
    let (out_ptrs, _) = tensor_block(out, rm, rn);
    store(out_ptrs, gather(table, idx, 1), mask);
}

grouped_matmul! {
    /// `c = a · b` (`a: [m, k]`, `b: [k, n]`, `c: [m, n]`, row-major) in f16 or bf16 with an f32
    /// accumulator, `BM × BN` tiles of `c` per program walking K in steps of `BK`, programs in
    /// groups of `GROUP` tile rows (Triton's L2-friendly order); 4 warps, 64 × 128 × 64 (Triton's
    /// config `(64, 128, 64, 4)`), unpipelined or over 4 stages (Triton's best at 1024³) or 6
    /// (with TMA copies the deeper ring costs no registers: the faster at 1024³ on an H200).
    bench_matmul_w4, num_warps = 4, num_stages = [1, 4, 6], BM = 64, BN = 128, BK = 64
}
grouped_matmul! {
    /// [`bench_matmul_w4`] with 8 warps and 128 × 128 × 64 tiles (Triton's `(128, 128, 64, 8)`),
    /// unpipelined or software-pipelined over 3 or 4 stages (Triton's H100 configuration uses
    /// 3): `cp.async` rings; on sm_90a the rings hold the NVMMA layouts the two warpgroups'
    /// `wgmma`s read, with one `wgmma` group in flight.
    bench_matmul_w8, num_warps = 8, num_stages = [1, 3, 4], BM = 128, BN = 128, BK = 64
}
grouped_matmul! {
    /// [`bench_matmul_w8`] with 128 × 256 × 64 tiles over 3 stages (Triton's `(128, 256, 64, 8)`,
    /// its best from 2048³ up): an f32 accumulator of 128 registers a thread, one
    /// `wgmma.m64n256k16` per warpgroup and K step on sm_90a; the rings take 194 KiB there (4
    /// slots: 3 stages and the group in flight), 144 KiB on sm_80.
    bench_matmul_w8_wide, num_warps = 8, num_stages = 3, BM = 128, BN = 256, BK = 64
}
grouped_matmul! {
    /// [`bench_matmul_w8`] software-pipelined: 8 warps, 128 × 128 × 32 tiles, the operand tiles
    /// of the next 2 iterations in flight by `cp.async` (`num_stages = 3`, Triton's sm_80 matmul
    /// configuration `(128, 128, 32, 8)` with 3 stages). `tessera-examples --bench` does not
    /// launch it yet.
    bench_matmul_pipelined, num_warps = 8, num_stages = 3, BM = 128, BN = 128, BK = 32
}
