//! Matrix multiplication `c = a · b` with `a: [m, k]`, `b: [k, n]`, `c: [m, n]` tensors of any
//! strides, f16 or bf16 inputs, f32 accumulation on tensor cores (`mma.sync` m16n8k16, `wgmma`
//! on sm_90a), f16/bf16 output; i8 (i32 accumulator and output) and f8 (`c = a · wᵀ`) too.
//! Each program computes a `BM × BN` tile of `c`, walking K in steps of `BK`: the operand tiles
//! are loaded with 128-bit accesses, staged through swizzled shared memory and read into the
//! mma operand layouts with `ldmatrix` (`.trans` for `b`); masked loads give zeros past the
//! edges, so every shape works.
//!
//! Every kernel takes `Tensor` arguments and `requires` that their shapes agree (`b` has `a`'s
//! `k` rows, `c` is `[m, n]`): a mismatch is refused at launch, before anything runs. The fast
//! variant assumes each tensor's last dimension contiguous, its other stride and the inner
//! sizes multiples of 16 elements and its start 16-byte aligned (the launcher checks; anything
//! else runs the unaligned variant, correct at any strides: a transposed view of `b` is `b`
//! column-major). Offsets are `i32`: the launcher refuses a tensor whose elements lie 2³¹ or
//! more apart.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]
// `f16` names the output of `tile_matmul_f8_grouped`, a kernel of the sm_90a PTX alone: no other
// device build names it (its amdgpu build has no body: no Ampere variant to plan one from).
#![cfg_attr(
    any(
        target_arch = "amdgpu",
        all(target_arch = "nvptx64", not(target_feature = "sm_90a"))
    ),
    allow(unused_imports)
)]

use tessera::{f16, tile_kernel};
use tessera_kernels_blocks::matmul::{
    dot_blocks_over_k, dot_over_k, dot_transposed_over_k, grouped_tile, matmul_tile,
};
use tessera_kernels_blocks::tensor_block;

/// `c = a · b` on `T` inputs (f16 or bf16) with an f32 accumulator, rounded to `T`.
///
/// `num_stages` 2 to 4 software-pipeline the K loop: the tiles of `a` and `b` for iteration
/// `i + S - 1` are copied by `cp.async` straight into the swizzled shared layouts that
/// `ldmatrix` (sm_80) or `wgmma` (sm_90a) reads, while iteration `i` computes. Grid:
/// `(⌈m / BM⌉, ⌈n / BN⌉)`.
#[tile_kernel(
    T = [f16, bf16],
    num_warps = 4,
    num_stages = [1, 2, 3, 4],
    BM = 64,
    BN = 64,
    BK = 32,
    requires = [b.size(0) == a.size(1), c.size(0) == a.size(0), c.size(1) == b.size(1)],
    uses = [matmul_tile, dot_blocks_over_k, tensor_block]
)]
pub fn tile_matmul<T, const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<T, 2>,
    b: Tensor<T, 2>,
    c: Tensor<T, 2>,
) {
    matmul_tile::<T, f32, BM, BN, BK>(a, b, c, program_id(0), program_id(1));
}

/// `c = a · b` on i8 inputs with an i32 accumulator (`mma.sync` m16n8k32, on sm_90a
/// `wgmma.m64n64k32.s32.s8.s8`, on AMD `v_mfma_i32_32x32x16_i8` (gfx90a: two
/// `v_mfma_i32_32x32x8i8`); wrapping, as the instructions without `.satfinite`), unpipelined or
/// over 3 stages. Grid: `(⌈m / BM⌉, ⌈n / BN⌉)`.
#[tile_kernel(
    num_warps = 4,
    num_stages = [1, 3],
    BM = 64,
    BN = 64,
    BK = 32,
    requires = [b.size(0) == a.size(1), c.size(0) == a.size(0), c.size(1) == b.size(1)],
    uses = [matmul_tile, dot_blocks_over_k, tensor_block]
)]
pub fn tile_matmul_i8<const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<i8, 2>,
    b: Tensor<i8, 2>,
    c: Tensor<i32, 2>,
) {
    matmul_tile::<i32, i32, BM, BN, BK>(a, b, c, program_id(0), program_id(1));
}

/// `c = a · wᵀ` on f8 inputs (e4m3 or e5m2) with an f32 accumulator and f32 output, for
/// `a: [m, k]` and `w: [n, k]` (K contiguous in the fast variant, as a linear layer's weight),
/// `BM × BN` tiles of `c` walking K in steps of `BK`, unpipelined or over 3 stages. On sm_90a
/// the dot is `wgmma.m64nNk32` with both operands K-major in shared memory (f8 `wgmma` reads no
/// other order); on sm_80 the operands are widened to f16 (exact) for `mma.sync`; on AMD the dot
/// is `v_mfma_f32_32x32x16_fp8_fp8`/`_bf8_bf8` on gfx950 and pairs of `v_mfma_f32_32x32x8f16` on
/// the elements widened to f16 on gfx942 and gfx90a. Grid: `(⌈m / BM⌉, ⌈n / BN⌉)`.
#[tile_kernel(
    T = [f8e4m3, f8e5m2],
    num_warps = 4,
    num_stages = [1, 3],
    BM = 64,
    BN = 64,
    BK = 32,
    requires = [w.size(1) == a.size(1), c.size(0) == a.size(0), c.size(1) == w.size(0)],
    uses = [dot_transposed_over_k, dot_over_k, tensor_block]
)]
pub fn tile_matmul_f8<T, const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<T, 2>,
    w: Tensor<T, 2>,
    c: Tensor<f32, 2>,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let acc = dot_transposed_over_k::<BM, BN, BK>(a, w, rm, rn);
    let (c_ptrs, c_mask) = tensor_block(c, rm, rn);
    store(c_ptrs, acc, c_mask);
}

/// `c = a · wᵀ` as [`tile_matmul_f8`] at the tiles f8 `wgmma` runs fast at, for sm_90a alone of
/// NVIDIA's targets (`targets = [sm_90a]`): 128 × 128 tiles of `c` on 8 warps (two warpgroups,
/// one `wgmma.m64n128k32` each per K step), K in steps of 128 over 4 stages, programs in groups
/// of `GROUP` tile rows, the f32 accumulator rounded to f16. The kernel is in the sm_90a PTX
/// alone: an sm_80 body at these tiles (f8 widened to f16 in software for `mma.sync`) would
/// spill, and take ptxas close to a minute per entry; on other NVIDIA targets a launch is an
/// `UnsupportedTarget` error. AMD code objects have it, planned from the same source (the f8
/// `v_mfma` on gfx950, pairs of f16 ones on gfx942 and gfx90a; the loop not pipelined).
#[tile_kernel(
    T = [f8e4m3, f8e5m2],
    targets = [sm_90a],
    num_warps = 8,
    num_stages = 4,
    BM = 128,
    BN = 128,
    BK = 128,
    GROUP = 8,
    requires = [w.size(1) == a.size(1), c.size(0) == a.size(0), c.size(1) == w.size(0)],
    uses = [grouped_tile, dot_transposed_over_k, dot_over_k, tensor_block]
)]
pub fn tile_matmul_f8_grouped<
    T,
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const GROUP: usize,
>(
    a: Tensor<T, 2>,
    w: Tensor<T, 2>,
    c: Tensor<f16, 2>,
) {
    let (m, n) = (c.size(0), c.size(1));
    let (tile_m, tile_n) = grouped_tile::<GROUP>(program_id(0), cdiv(m, BM), cdiv(n, BN));
    let rm = tile_m * BM + arange(0, BM);
    let rn = tile_n * BN + arange(0, BN);
    let acc = dot_transposed_over_k::<BM, BN, BK>(a, w, rm, rn);
    let (c_ptrs, c_mask) = tensor_block(c, rm, rn);
    store(c_ptrs, acc.to::<f16>(), c_mask);
}
