//! Float math (`tanh`, `erf`, `sin`, `cos`, `sigmoid`, `clamp`), `umulhi`, Triton's random
//! numbers (`randint`, `rand`, `randn`) and dropout, on `Tensor` parameters, checked in
//! `tests/tiled_random.rs`. A kernel with several results writes them as the rows of one
//! `[results, n]` output.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{bf16, tile_kernel};
use tessera_kernels_blocks::{elements, load_vector, store_row, vector_block};

/// One result row per function of `x: [n]` in `out: [6, n]`: `tanh`, `erf`, `sin`, `cos`,
/// `sigmoid`, `clamp(x, -1.5, 2.0)`.
#[tile_kernel(
    num_warps = 4,
    BLOCK = [512],
    requires = [out.size(0) == 6 && out.size(1) == x.size(0)],
    uses = [load_vector, vector_block, elements, store_row]
)]
pub fn tile_math<const BLOCK: usize>(out: Tensor<f32, 2>, x: Tensor<f32, 1>) {
    let (offs, mask, v) = load_vector::<BLOCK>(x, 0.0);
    store_row(out, 0, offs, tanh(v), mask);
    store_row(out, 1, offs, v.erf(), mask);
    store_row(out, 2, offs, sin(v), mask);
    store_row(out, 3, offs, v.cos(), mask);
    store_row(out, 4, offs, sigmoid(v), mask);
    store_row(out, 5, offs, v.clamp(-1.5, 2.0), mask);
}

/// `tanh`, `erf`, `sigmoid` of bf16 `x: [n]` (computed in f32, rounded once), the rows of
/// `out: [3, n]`.
#[tile_kernel(
    num_warps = 1,
    BLOCK = [128],
    requires = [out.size(0) == 3 && out.size(1) == x.size(0)],
    uses = [vector_block, elements, store_row]
)]
pub fn tile_math_bf16<const BLOCK: usize>(out: Tensor<bf16, 2>, x: Tensor<bf16, 1>) {
    let (offs, mask) = vector_block::<BLOCK>(x);
    let v = load(elements(x, offs), mask);
    store_row(out, 0, offs, v.tanh(), mask);
    store_row(out, 1, offs, erf(v), mask);
    store_row(out, 2, offs, v.sigmoid(), mask);
}

/// `umulhi` of the u32 tiles `a`, `b` (`out_u`), and, as i32, their `umulhi` (row 0 of `out_i:
/// [2, n]`) and `clamp(a, -1000, 1000)` (row 1).
#[tile_kernel(
    num_warps = 1,
    BLOCK = [128],
    requires = [
        b.size(0) == a.size(0) && out_u.size(0) == a.size(0),
        out_i.size(0) == 2 && out_i.size(1) == a.size(0),
    ],
    uses = [load_vector, vector_block, elements, store_row]
)]
pub fn tile_umulhi<const BLOCK: usize>(
    out_u: Tensor<u32, 1>,
    out_i: Tensor<i32, 2>,
    a: Tensor<u32, 1>,
    b: Tensor<u32, 1>,
) {
    let (offs, mask, x) = load_vector::<BLOCK>(a, 0u32);
    let y = load(elements(b, offs), mask, 0u32);
    store(elements(out_u, offs), umulhi(x, y), mask);
    let xi = x.to::<i32>();
    store_row(out_i, 0, offs, xi.umulhi(y.to::<i32>()), mask);
    store_row(out_i, 1, offs, clamp(xi, -1000, 1000), mask);
}

/// `randint`, `rand`, `randn` of `seed` at offsets `0..n` (`n` the outputs' length): Triton's
/// `tl.randint`, `tl.rand`, `tl.randn` bit for bit (`randn` up to its `log`/`cos`
/// approximations).
#[tile_kernel(
    num_warps = 4,
    BLOCK = [1024],
    requires = [uniform.size(0) == ints.size(0) && normal.size(0) == ints.size(0)],
    uses = [vector_block, elements]
)]
pub fn tile_random<const BLOCK: usize>(
    ints: Tensor<u32, 1>,
    uniform: Tensor<f32, 1>,
    normal: Tensor<f32, 1>,
    seed: i64,
) {
    let (offs, mask) = vector_block::<BLOCK>(ints);
    store(elements(ints, offs), randint(seed, offs), mask);
    store(elements(uniform, offs), rand(seed, offs), mask);
    store(elements(normal, offs), randn(seed, offs), mask);
}

/// Dropout of `x: [n]` into `out: [n]`: `out[i] = x[i] / (1 - p)` where `rand(seed, i) > p`,
/// else 0 (Triton's tutorial `_seeded_dropout`: each element kept with probability `1 - p`).
#[tile_kernel(
    num_warps = 4,
    BLOCK = [1024],
    requires = [out.size(0) == x.size(0)],
    uses = [load_vector, vector_block, elements]
)]
pub fn tile_dropout<const BLOCK: usize>(out: Tensor<f32, 1>, x: Tensor<f32, 1>, p: f32, seed: i32) {
    let (offs, mask, v) = load_vector::<BLOCK>(x, 0.0);
    let keep = rand(seed, offs) > p;
    store(elements(out, offs), where_(keep, v / (1.0 - p), 0.0), mask);
}
