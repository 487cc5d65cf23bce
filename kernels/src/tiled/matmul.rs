//! Matrix multiplication `c = a · b` with `a: [m, k]`, `b: [k, n]`, `c: [m, n]` row-major, f16
//! or bf16 inputs, f32 accumulation on tensor cores (`mma.sync` m16n8k16), f16/bf16 output.
//! Each program computes a `BM × BN` tile of `c`, walking K in steps of `BK`: the operand tiles
//! are loaded with 128-bit accesses, staged through swizzled shared memory and read into the
//! mma operand layouts with `ldmatrix` (`.trans` for `b`); masked loads give zeros past the
//! edges, so every shape works.

use tessera::{tile_kernel, Ptr};

/// `c = a · b` on `T` inputs (f16 or bf16) with an f32 accumulator, rounded to `T`.
///
/// `num_stages` 2 to 4 software-pipeline the K loop: the tiles of `a` and `b` for iteration
/// `i + S - 1` are copied by `cp.async` straight into the swizzled shared layouts that
/// `ldmatrix` (sm_80) or `wgmma` (sm_90a) reads, while iteration `i` computes.
#[tile_kernel(T = [f16, bf16], num_warps = 4, num_stages = [1, 2, 3, 4], BM = 64, BN = 64, BK = 32)]
pub fn tile_matmul<T, const BM: usize, const BN: usize, const BK: usize>(
    a: Ptr<T>,
    b: Ptr<T>,
    c: Ptr<T>,
    m: i32,
    n: i32,
    k: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let rk = arange(0, BK);
    let mut a_ptrs = a + rm.expand_dims(1) * k + rk.expand_dims(0);
    let mut b_ptrs = b + rk.expand_dims(1) * n + rn.expand_dims(0);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k, BK) {
        let k_left = k - kk * BK;
        let a_tile = load(
            a_ptrs,
            (rm.expand_dims(1) < m) & (rk.expand_dims(0) < k_left),
            0.0,
        );
        let b_tile = load(
            b_ptrs,
            (rk.expand_dims(1) < k_left) & (rn.expand_dims(0) < n),
            0.0,
        );
        acc = dot(a_tile, b_tile, acc);
        a_ptrs += BK;
        b_ptrs += BK * n;
    }
    let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    store(
        c + rm.expand_dims(1) * n + rn.expand_dims(0),
        acc.to::<T>(),
        c_mask,
    );
}

/// `c = a · b` on i8 inputs with an i32 accumulator (`mma.sync` m16n8k32; wrapping, as the
/// instruction without `.satfinite`).
#[tile_kernel(num_warps = 4, BM = 64, BN = 64, BK = 32)]
pub fn tile_matmul_i8<const BM: usize, const BN: usize, const BK: usize>(
    a: Ptr<i8>,
    b: Ptr<i8>,
    c: Ptr<i32>,
    m: i32,
    n: i32,
    k: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let rk = arange(0, BK);
    let mut a_ptrs = a + rm.expand_dims(1) * k + rk.expand_dims(0);
    let mut b_ptrs = b + rk.expand_dims(1) * n + rn.expand_dims(0);
    let mut acc = zeros::<i32>([BM, BN]);
    for kk in 0..cdiv(k, BK) {
        let k_left = k - kk * BK;
        let a_tile = load(
            a_ptrs,
            (rm.expand_dims(1) < m) & (rk.expand_dims(0) < k_left),
            0,
        );
        let b_tile = load(
            b_ptrs,
            (rk.expand_dims(1) < k_left) & (rn.expand_dims(0) < n),
            0,
        );
        acc = dot(a_tile, b_tile, acc);
        a_ptrs += BK;
        b_ptrs += BK * n;
    }
    let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    store(c + rm.expand_dims(1) * n + rn.expand_dims(0), acc, c_mask);
}
