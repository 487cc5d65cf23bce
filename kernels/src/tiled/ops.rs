//! Small kernels that exercise the elementwise semantics of the tile language (integer and
//! float arithmetic, comparisons, `where_`, casts, sub-word element types) and `if` on scalars,
//! each checked on the emulator against Rust's semantics in `tests/tiled_ops.rs`.

use tessera::{bf16, f16, tile_kernel, Ptr};

/// `out = alpha * x` when `alpha != 0`, else `x + 1` (an `if` on a scalar yielding a tile).
#[tile_kernel(num_warps = 2, BLOCK = [256])]
pub fn tile_scale_or_shift<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>, n: i32, alpha: f32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0.0);
    let y = if alpha != 0.0 { v * alpha } else { v + 1.0 };
    store(out + offs, y, mask);
}

/// Integer ops on `a`, `b` (`n` elements), one result row of `n` per op in `out` (10 rows):
/// `/`, `%`, `<<`, `>>`, `&`, `|` with `^`, unary `-`, `abs`, `maximum`/`minimum`, comparisons.
#[tile_kernel(num_warps = 1, BLOCK = [128])]
pub fn tile_int_ops<const BLOCK: usize>(out: Ptr<i32>, a: Ptr<i32>, b: Ptr<i32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + offs, mask, 0);
    let y = load(b + offs, mask, 1);
    store(out + offs, x / y, mask);
    store(out + n + offs, x % y, mask);
    store(out + 2 * n + offs, x << (y & 31), mask);
    store(out + 3 * n + offs, x >> (y & 31), mask);
    store(out + 4 * n + offs, (x & y) | (x ^ 0x55), mask);
    store(out + 5 * n + offs, -x, mask);
    store(out + 6 * n + offs, abs(x), mask);
    store(out + 7 * n + offs, maximum(x, y) - minimum(x, y), mask);
    store(out + 8 * n + offs, where_((x < y) & !(x == 0), x, y), mask);
    store(out + 9 * n + offs, x >> 40, mask);
}

/// Float ops (9 result rows): `fma`, `sqrt`, `rsqrt`, `exp2`, `log`, `abs`, `maximum` (NaN
/// propagating), `/`, and casts to i32 (saturating) and back.
#[tile_kernel(num_warps = 1, BLOCK = [128])]
pub fn tile_float_ops<const BLOCK: usize>(out: Ptr<f32>, a: Ptr<f32>, b: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + offs, mask, 1.0);
    let y = load(b + offs, mask, 1.0);
    store(out + offs, fma(x, y, 0.5), mask);
    store(out + n + offs, sqrt(abs(x)), mask);
    store(out + 2 * n + offs, rsqrt(abs(y) + 1.0), mask);
    store(out + 3 * n + offs, exp2(x / 8.0), mask);
    store(out + 4 * n + offs, log(abs(y) + 1.0), mask);
    store(out + 5 * n + offs, maximum(x, y), mask);
    store(out + 6 * n + offs, x / y, mask);
    store(
        out + 7 * n + offs,
        (x * 1.0e9).to::<i32>().to::<f32>(),
        mask,
    );
    store(out + 8 * n + offs, x % y, mask);
}

/// Narrow types: `u8` in, `i16` out (`3·x − 100`), `f16` and `bf16` round trips of `f32`.
#[tile_kernel(num_warps = 1, BLOCK = [256])]
pub fn tile_narrow_ops<const BLOCK: usize>(
    bytes_out: Ptr<i16>,
    bytes: Ptr<u8>,
    halves_out: Ptr<f16>,
    brains_out: Ptr<bf16>,
    x: Ptr<f32>,
    n: i32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(bytes + offs, mask, 0u8);
    store(bytes_out + offs, v.to::<i16>() * 3 - 100, mask);
    let f = load(x + offs, mask, 0.0);
    store(halves_out + offs, f.to::<f16>() * (2.0 as f16), mask);
    store(brains_out + offs, f.to::<bf16>(), mask);
}

/// `out[2i] = a[i]`, `out[2i + 1] = b[i]`: `join` then `reshape` (register renamings when the
/// joined dimension is a register dimension, as inference arranges).
#[tile_kernel(num_warps = 2, BLOCK = [256])]
pub fn tile_interleave<const BLOCK: usize>(out: Ptr<f32>, a: Ptr<f32>, b: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + offs, mask, 0.0);
    let y = load(b + offs, mask, 0.0);
    let pairs = join(x, y).reshape([2 * BLOCK]);
    let out_offs = program_id(0) * (2 * BLOCK) + arange(0, 2 * BLOCK);
    store(out + out_offs, pairs, out_offs < 2 * n);
}

/// The inverse: `a[i] = x[2i]`, `b[i] = x[2i + 1]` (`reshape` then `split`), and the
/// transposed pairs `t[j, i] = x[2i + j]` through `trans`.
#[tile_kernel(num_warps = 2, BLOCK = [256])]
pub fn tile_deinterleave<const BLOCK: usize>(
    a: Ptr<f32>,
    b: Ptr<f32>,
    t: Ptr<f32>,
    x: Ptr<f32>,
    n: i32,
) {
    let offs = program_id(0) * (2 * BLOCK) + arange(0, 2 * BLOCK);
    let v = load(x + offs, offs < 2 * n, 0.0).reshape([BLOCK, 2]);
    let (even, odd) = v.split();
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    store(a + i, even, i < n);
    store(b + i, odd, i < n);
    let pairs = v.trans();
    let j = arange(0, 2);
    store(
        t + j.expand_dims(1) * n + i.expand_dims(0),
        pairs,
        i.expand_dims(0) < n,
    );
}

/// Rank-0 values made one-element tiles: `sums[row] = Σ x[row, :]`, the reduction's scalar
/// stored as `total.expand_dims(0)`, and `rows[row] = row`, `program_id` stored as
/// `row.reshape([1])` (each the `[1]` splat of the scalar).
#[tile_kernel(num_warps = 1, BLOCK = [128])]
pub fn tile_scalar_splat<const BLOCK: usize>(sums: Ptr<f32>, rows: Ptr<i32>, x: Ptr<f32>) {
    let row = program_id(0);
    let total = load(x + row * BLOCK + arange(0, BLOCK)).sum(0);
    let one = arange(0, 1);
    store(sums + row + one, total.expand_dims(0));
    store(rows + row + one, row.reshape([1]));
}
