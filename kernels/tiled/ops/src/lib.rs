//! Small kernels that exercise the elementwise semantics of the tile language (integer and
//! float arithmetic, comparisons, `where_`, casts, sub-word element types) and `if` on scalars,
//! each checked on the emulator against Rust's semantics in `tests/tiled_ops.rs`. They take
//! `Tensor` parameters; a kernel with several results writes them as the rows of one output.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{bf16, f16, tile_kernel};
use tessera_kernels_blocks::{elements, load_vector, store_row, vector_block};

/// `out = alpha * x` when `alpha != 0`, else `x + 1` (an `if` on a scalar yielding a tile).
#[tile_kernel(
    num_warps = 2,
    BLOCK = [256],
    requires = [out.size(0) == x.size(0)],
    uses = [load_vector, vector_block, elements]
)]
pub fn tile_scale_or_shift<const BLOCK: usize>(out: Tensor<f32, 1>, x: Tensor<f32, 1>, alpha: f32) {
    let (offs, mask, v) = load_vector::<BLOCK>(x, 0.0);
    let y = if alpha != 0.0 { v * alpha } else { v + 1.0 };
    store(elements(out, offs), y, mask);
}

/// Integer ops on `a`, `b` (`[n]`), one result row per op in `out: [10, n]`: `/`, `%`, `<<`,
/// `>>`, `&`, `|` with `^`, unary `-`, `abs`, `maximum`/`minimum`, comparisons.
#[tile_kernel(
    num_warps = 1,
    BLOCK = [128],
    requires = [b.size(0) == a.size(0), out.size(0) == 10 && out.size(1) == a.size(0)],
    uses = [load_vector, vector_block, elements, store_row]
)]
pub fn tile_int_ops<const BLOCK: usize>(out: Tensor<i32, 2>, a: Tensor<i32, 1>, b: Tensor<i32, 1>) {
    let (offs, mask, x) = load_vector::<BLOCK>(a, 0);
    let y = load(elements(b, offs), mask, 1);
    store_row(out, 0, offs, x / y, mask);
    store_row(out, 1, offs, x % y, mask);
    store_row(out, 2, offs, x << (y & 31), mask);
    store_row(out, 3, offs, x >> (y & 31), mask);
    store_row(out, 4, offs, (x & y) | (x ^ 0x55), mask);
    store_row(out, 5, offs, -x, mask);
    store_row(out, 6, offs, abs(x), mask);
    store_row(out, 7, offs, maximum(x, y) - minimum(x, y), mask);
    store_row(out, 8, offs, where_((x < y) & !(x == 0), x, y), mask);
    store_row(out, 9, offs, x >> 40, mask);
}

/// Float ops on `a`, `b` (`[n]`), one result row per op in `out: [9, n]`: `fma`, `sqrt`,
/// `rsqrt`, `exp2`, `log`, `maximum` (NaN propagating), `/`, casts to i32 (saturating) and
/// back, `%`.
#[tile_kernel(
    num_warps = 1,
    BLOCK = [128],
    requires = [b.size(0) == a.size(0), out.size(0) == 9 && out.size(1) == a.size(0)],
    uses = [load_vector, vector_block, elements, store_row]
)]
pub fn tile_float_ops<const BLOCK: usize>(
    out: Tensor<f32, 2>,
    a: Tensor<f32, 1>,
    b: Tensor<f32, 1>,
) {
    let (offs, mask, x) = load_vector::<BLOCK>(a, 1.0);
    let y = load(elements(b, offs), mask, 1.0);
    store_row(out, 0, offs, fma(x, y, 0.5), mask);
    store_row(out, 1, offs, sqrt(abs(x)), mask);
    store_row(out, 2, offs, rsqrt(abs(y) + 1.0), mask);
    store_row(out, 3, offs, exp2(x / 8.0), mask);
    store_row(out, 4, offs, log(abs(y) + 1.0), mask);
    store_row(out, 5, offs, maximum(x, y), mask);
    store_row(out, 6, offs, x / y, mask);
    store_row(out, 7, offs, (x * 1.0e9).to::<i32>().to::<f32>(), mask);
    store_row(out, 8, offs, x % y, mask);
}

/// Narrow types: `u8` in, `i16` out (`3·x − 100`), `f16` and `bf16` round trips of `f32`; every
/// tensor of `x`'s length.
#[tile_kernel(
    num_warps = 1,
    BLOCK = [256],
    requires = [
        bytes.size(0) == x.size(0) && bytes_out.size(0) == x.size(0),
        halves_out.size(0) == x.size(0) && brains_out.size(0) == x.size(0),
    ],
    uses = [vector_block, elements]
)]
pub fn tile_narrow_ops<const BLOCK: usize>(
    bytes_out: Tensor<i16, 1>,
    bytes: Tensor<u8, 1>,
    halves_out: Tensor<f16, 1>,
    brains_out: Tensor<bf16, 1>,
    x: Tensor<f32, 1>,
) {
    let (offs, mask) = vector_block::<BLOCK>(x);
    let v = load(elements(bytes, offs), mask, 0u8);
    store(elements(bytes_out, offs), v.to::<i16>() * 3 - 100, mask);
    let f = load(elements(x, offs), mask, 0.0);
    let halves = f.to::<f16>() * (2.0 as f16);
    store(elements(halves_out, offs), halves, mask);
    store(elements(brains_out, offs), f.to::<bf16>(), mask);
}

/// `out[2i] = a[i]`, `out[2i + 1] = b[i]` for `a, b: [n]`, `out: [2n]`: `join` then `reshape`
/// (register renamings when the joined dimension is a register dimension, as inference
/// arranges).
#[tile_kernel(
    num_warps = 2,
    BLOCK = [256],
    requires = [b.size(0) == a.size(0) && out.size(0) == 2 * a.size(0)],
    uses = [load_vector, vector_block, elements]
)]
pub fn tile_interleave<const BLOCK: usize>(
    out: Tensor<f32, 1>,
    a: Tensor<f32, 1>,
    b: Tensor<f32, 1>,
) {
    let (offs, mask, x) = load_vector::<BLOCK>(a, 0.0);
    let y = load(elements(b, offs), mask, 0.0);
    let pairs = join(x, y).reshape([2 * BLOCK]);
    let out_offs = program_id(0) * (2 * BLOCK) + arange(0, 2 * BLOCK);
    store(
        out + out_offs * out.stride(0),
        pairs,
        out_offs < out.size(0),
    );
}

/// The inverse, for `x: [2n]`: `a[i] = x[2i]`, `b[i] = x[2i + 1]` (`reshape` then `split`), and
/// the transposed pairs `t[j, i] = x[2i + j]` (`t: [2, n]`) through `trans`.
#[tile_kernel(
    num_warps = 2,
    BLOCK = [256],
    requires = [
        x.size(0) == 2 * a.size(0) && b.size(0) == a.size(0),
        t.size(0) == 2 && t.size(1) == a.size(0),
    ]
)]
pub fn tile_deinterleave<const BLOCK: usize>(
    a: Tensor<f32, 1>,
    b: Tensor<f32, 1>,
    t: Tensor<f32, 2>,
    x: Tensor<f32, 1>,
) {
    let n = a.size(0);
    let offs = program_id(0) * (2 * BLOCK) + arange(0, 2 * BLOCK);
    let v = load(x + offs * x.stride(0), offs < 2 * n, 0.0).reshape([BLOCK, 2]);
    let (even, odd) = v.split();
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    store(a + i * a.stride(0), even, i < n);
    store(b + i * b.stride(0), odd, i < n);
    let pairs = v.trans();
    let j = arange(0, 2);
    store(
        t + j.expand_dims(1) * t.stride(0) + i.expand_dims(0) * t.stride(1),
        pairs,
        i.expand_dims(0) < n,
    );
}

/// Rank-0 values made one-element tiles, for `x: [rows, BLOCK]`: `sums[row] = Σ x[row, :]`,
/// the reduction's scalar stored as `total.expand_dims(0)`, and `rows[row] = row`,
/// `program_id` stored as `row.reshape([1])` (each the `[1]` splat of the scalar). Grid: the
/// rows.
#[tile_kernel(
    num_warps = 1,
    BLOCK = [128],
    requires = [x.size(1) == BLOCK, sums.size(0) == x.size(0) && rows.size(0) == x.size(0)]
)]
pub fn tile_scalar_splat<const BLOCK: usize>(
    sums: Tensor<f32, 1>,
    rows: Tensor<i32, 1>,
    x: Tensor<f32, 2>,
) {
    let row = program_id(0);
    let total = load(x + row * x.stride(0) + arange(0, BLOCK) * x.stride(1)).sum(0);
    let one = arange(0, 1);
    store(sums + (row + one) * sums.stride(0), total.expand_dims(0));
    store(rows + (row + one) * rows.stride(0), row.reshape([1]));
}
