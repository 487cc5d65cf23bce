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

use super::blocks::tensor_block;
use tessera::{f16, tile_fn, tile_kernel};

/// The `(row, column)` of the tile of `c` that program `pid` computes in Triton's grouped
/// order: programs walk down `GROUP` rows of tiles before moving one column right, so that the
/// programs running together share their tiles of `b` in L2.
#[tile_fn]
pub(crate) fn grouped_tile<const GROUP: usize>(pid: i32, tiles_m: i32, tiles_n: i32) -> (i32, i32) {
    let in_group = GROUP * tiles_n;
    let first_m = (pid / in_group) * GROUP;
    let group_rows = minimum(tiles_m - first_m, GROUP);
    (
        first_m + (pid % in_group) % group_rows,
        (pid % in_group) / group_rows,
    )
}

/// `acc + a[rm, ..k] · b[..k, rn]` in steps of `BK` along K: `a_ptrs` (`[BM, BK]`) and
/// `b_ptrs` (`[BK, BN]`) point at the first step's operand tiles and move by `a_step` and
/// `b_step` elements a step; rows past `m`, columns past `n` and the K tail load as `zero`.
#[tile_fn]
pub(crate) fn dot_over_k<const BK: usize>(
    mut a_ptrs: _,
    mut b_ptrs: _,
    a_step: i32,
    b_step: i32,
    rm: _,
    rn: _,
    rk: _,
    m: i32,
    n: i32,
    k: i32,
    mut acc: _,
    zero: _,
) -> _ {
    for kk in 0..cdiv(k, BK) {
        let k_left = k - kk * BK;
        let a_tile = load(
            a_ptrs,
            (rm.expand_dims(1) < m) & (rk.expand_dims(0) < k_left),
            zero,
        );
        let b_tile = load(
            b_ptrs,
            (rk.expand_dims(1) < k_left) & (rn.expand_dims(0) < n),
            zero,
        );
        acc = dot(a_tile, b_tile, acc);
        a_ptrs += a_step;
        b_ptrs += b_step;
    }
    acc
}

/// `a[rm, ..k] · w[rn, ..k]ᵀ` (`[BM, BN]`, f32) for `a: [m, k]` and `w: [n, k]` (a linear
/// layer's weight): [`dot_over_k`] on `wᵀ` read in place (`[BK, BN]` tiles), rows past `m` and
/// `n` and the K tail as zeros.
#[tile_fn]
pub(crate) fn dot_transposed_over_k<const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<_, 2>,
    w: Tensor<_, 2>,
    rm: _,
    rn: _,
) -> _ {
    let rk = arange(0, BK);
    let a_ptrs = a + rm.expand_dims(1) * a.stride(0) + rk.expand_dims(0) * a.stride(1);
    let w_ptrs = w + rk.expand_dims(1) * w.stride(1) + rn.expand_dims(0) * w.stride(0);
    let (a_step, w_step) = (BK * a.stride(1), BK * w.stride(1));
    let acc = zeros::<f32>([BM, BN]);
    let (m, n) = (a.size(0), w.size(0));
    dot_over_k::<BK>(
        a_ptrs,
        w_ptrs,
        a_step,
        w_step,
        rm,
        rn,
        rk,
        m,
        n,
        a.size(1),
        acc,
        0.0,
    )
}

/// Tile `(tile_m, tile_n)` (`BM × BN`) of `c = a · b` for `a: [m, k]`, `b: [k, n]`,
/// `c: [m, n]` (any strides): accumulated in `A` from zero, stored as `T` (masked at the edges);
/// `zero` is the zero of the operands' element type.
#[tile_fn]
pub(crate) fn matmul_tile<T, A, const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<_, 2>,
    b: Tensor<_, 2>,
    c: Tensor<T, 2>,
    tile_m: i32,
    tile_n: i32,
    zero: _,
) {
    let (m, n) = (a.size(0), b.size(1));
    let rm = tile_m * BM + arange(0, BM);
    let rn = tile_n * BN + arange(0, BN);
    let rk = arange(0, BK);
    let a_ptrs = a + rm.expand_dims(1) * a.stride(0) + rk.expand_dims(0) * a.stride(1);
    let b_ptrs = b + rk.expand_dims(1) * b.stride(0) + rn.expand_dims(0) * b.stride(1);
    let (a_step, b_step) = (BK * a.stride(1), BK * b.stride(0));
    let acc = zeros::<A>([BM, BN]);
    let acc = dot_over_k::<BK>(
        a_ptrs,
        b_ptrs,
        a_step,
        b_step,
        rm,
        rn,
        rk,
        m,
        n,
        a.size(1),
        acc,
        zero,
    );
    let (c_ptrs, c_mask) = tensor_block(c, rm, rn);
    store(c_ptrs, acc.to::<T>(), c_mask);
}

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
    uses = [matmul_tile, dot_over_k, tensor_block]
)]
pub fn tile_matmul<T, const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<T, 2>,
    b: Tensor<T, 2>,
    c: Tensor<T, 2>,
) {
    matmul_tile::<T, f32, BM, BN, BK>(a, b, c, program_id(0), program_id(1), 0.0);
}

/// `c = a · b` on i8 inputs with an i32 accumulator (`mma.sync` m16n8k32, on sm_90a
/// `wgmma.m64n64k32.s32.s8.s8`; wrapping, as the instructions without `.satfinite`),
/// unpipelined or over 3 stages. Grid: `(⌈m / BM⌉, ⌈n / BN⌉)`.
#[tile_kernel(
    num_warps = 4,
    num_stages = [1, 3],
    BM = 64,
    BN = 64,
    BK = 32,
    requires = [b.size(0) == a.size(1), c.size(0) == a.size(0), c.size(1) == b.size(1)],
    uses = [matmul_tile, dot_over_k, tensor_block]
)]
pub fn tile_matmul_i8<const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<i8, 2>,
    b: Tensor<i8, 2>,
    c: Tensor<i32, 2>,
) {
    matmul_tile::<i32, i32, BM, BN, BK>(a, b, c, program_id(0), program_id(1), 0);
}

/// `c = a · wᵀ` on f8 inputs (e4m3 or e5m2) with an f32 accumulator and f32 output, for
/// `a: [m, k]` and `w: [n, k]` (K contiguous in the fast variant, as a linear layer's weight),
/// `BM × BN` tiles of `c` walking K in steps of `BK`, unpipelined or over 3 stages. On sm_90a
/// the dot is `wgmma.m64nNk32` with both operands K-major in shared memory (f8 `wgmma` reads no
/// other order); on sm_80 the operands are widened to f16 (exact) for `mma.sync`. Grid:
/// `(⌈m / BM⌉, ⌈n / BN⌉)`.
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

/// `c = a · wᵀ` as [`tile_matmul_f8`] at the tiles f8 `wgmma` runs fast at, for sm_90a only
/// (`targets = [sm_90a]`): 128 × 128 tiles of `c` on 8 warps (two warpgroups, one
/// `wgmma.m64n128k32` each per K step), K in steps of 128 over 4 stages, programs in groups of
/// `GROUP` tile rows, the f32 accumulator rounded to f16. The kernel is in the sm_90a PTX alone:
/// an sm_80 body at these tiles (f8 widened to f16 in software for `mma.sync`) would spill, and
/// take ptxas close to a minute per entry. Elsewhere a launch is an `UnsupportedTarget` error.
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

/// `c = a · b` (tensors of any strides, as [`tile_matmul`]) in f16 or bf16 with an f32
/// accumulator, `BM × BN` tiles of `c`, programs in Triton's grouped order over 8 rows of tiles
/// ([`grouped_tile`]; grid `(⌈m / BM⌉ · ⌈n / BN⌉,)`): the kernels of the benchmark and the
/// autotuned matmul, each with its own `#[tile_kernel]` settings (warps, stages, `BM`, `BN`,
/// `BK`, `autotune`).
macro_rules! grouped_matmul {
    ($(#[doc = $doc:tt])* $name:ident, $($settings:tt)*) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            T = [f16, bf16],
            GROUP = 8,
            requires = [b.size(0) == a.size(1), c.size(0) == a.size(0), c.size(1) == b.size(1)],
            uses = [grouped_tile, matmul_tile, dot_over_k, tensor_block],
            $($settings)*
        )]
        pub fn $name<T, const BM: usize, const BN: usize, const BK: usize, const GROUP: usize>(
            a: Tensor<T, 2>,
            b: Tensor<T, 2>,
            c: Tensor<T, 2>,
        ) {
            let (m, n) = (a.size(0), b.size(1));
            let (tile_m, tile_n) = grouped_tile::<GROUP>(program_id(0), cdiv(m, BM), cdiv(n, BN));
            matmul_tile::<T, f32, BM, BN, BK>(a, b, c, tile_m, tile_n, 0.0);
        }
    };
}
pub(crate) use grouped_matmul;
