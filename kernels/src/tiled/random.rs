//! Float math (`tanh`, `erf`, `sin`, `cos`, `sigmoid`, `clamp`), `umulhi`, Triton's random
//! numbers (`randint`, `rand`, `randn`) and dropout, checked in `tests/tiled_random.rs`.

use tessera::{bf16, tile_kernel, Ptr};

/// One result row of `n` per function of `x` in `out` (6 rows): `tanh`, `erf`, `sin`, `cos`,
/// `sigmoid`, `clamp(x, -1.5, 2.0)`.
#[tile_kernel(num_warps = 4, BLOCK = [512])]
pub fn tile_math<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0.0);
    store(out + offs, tanh(v), mask);
    store(out + n + offs, v.erf(), mask);
    store(out + 2 * n + offs, sin(v), mask);
    store(out + 3 * n + offs, v.cos(), mask);
    store(out + 4 * n + offs, sigmoid(v), mask);
    store(out + 5 * n + offs, v.clamp(-1.5, 2.0), mask);
}

/// `tanh`, `erf`, `sigmoid` of bf16 (computed in f32, rounded once), rows of `n` in `out`.
#[tile_kernel(num_warps = 1, BLOCK = [128])]
pub fn tile_math_bf16<const BLOCK: usize>(out: Ptr<bf16>, x: Ptr<bf16>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask);
    store(out + offs, v.tanh(), mask);
    store(out + n + offs, erf(v), mask);
    store(out + 2 * n + offs, v.sigmoid(), mask);
}

/// `umulhi` of u32 (row 0) and i32 (row 1) tiles, and `clamp` of i32 (row 2).
#[tile_kernel(num_warps = 1, BLOCK = [128])]
pub fn tile_umulhi<const BLOCK: usize>(
    out_u: Ptr<u32>,
    out_i: Ptr<i32>,
    a: Ptr<u32>,
    b: Ptr<u32>,
    n: i32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + offs, mask, 0u32);
    let y = load(b + offs, mask, 0u32);
    store(out_u + offs, umulhi(x, y), mask);
    let xi = x.to::<i32>();
    store(out_i + offs, xi.umulhi(y.to::<i32>()), mask);
    store(out_i + n + offs, clamp(xi, -1000, 1000), mask);
}

/// `randint`, `rand`, `randn` of `seed` at offsets `0..n`: Triton's `tl.randint`, `tl.rand`,
/// `tl.randn` bit for bit (`randn` up to its `log`/`cos` approximations).
#[tile_kernel(num_warps = 4, BLOCK = [1024])]
pub fn tile_random<const BLOCK: usize>(
    ints: Ptr<u32>,
    uniform: Ptr<f32>,
    normal: Ptr<f32>,
    seed: i64,
    n: i32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(ints + offs, randint(seed, offs), mask);
    store(uniform + offs, rand(seed, offs), mask);
    store(normal + offs, randn(seed, offs), mask);
}

/// Dropout: `out[i] = x[i] / (1 - p)` where `rand(seed, i) > p`, else 0 (Triton's tutorial
/// `_seeded_dropout`: each element kept with probability `1 - p`).
#[tile_kernel(num_warps = 4, BLOCK = [1024])]
pub fn tile_dropout<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>, n: i32, p: f32, seed: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0.0);
    let keep = rand(seed, offs) > p;
    store(out + offs, where_(keep, v / (1.0 - p), 0.0), mask);
}
