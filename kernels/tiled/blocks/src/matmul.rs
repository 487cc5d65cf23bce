//! The blocks of the matmuls: Triton's grouped program order, the K loops (`a · b` and
//! `a · wᵀ`) and a whole `BM × BN` tile of `c`, and `grouped_matmul!`, which stamps a grouped
//! matmul kernel (the benchmark's and the autotuned ones).

use tessera::tile_fn;

/// The `(row, column)` of the tile of `c` that program `pid` computes in Triton's grouped
/// order: programs walk down `GROUP` rows of tiles before moving one column right, so that the
/// programs running together share their tiles of `b` in L2.
#[tile_fn]
pub fn grouped_tile<const GROUP: usize>(pid: i32, tiles_m: i32, tiles_n: i32) -> (i32, i32) {
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
pub fn dot_over_k<const BK: usize>(
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
pub fn dot_transposed_over_k<const BM: usize, const BN: usize, const BK: usize>(
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

/// `acc + a[m0.., ..k] · b[..k, n0..]` (`[BM, BN]`) in steps of `BK` along K, each step's
/// operand tiles read as blocks (`load_block`: zeros past `a`'s rows and columns and `b`'s
/// rows and columns). In a pipelined loop of an sm_90a variant whose tensors are 16-byte
/// aligned, the blocks are copied by TMA; otherwise by `cp.async` (or loaded, unpipelined).
#[tile_fn]
pub fn dot_blocks_over_k<const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<_, 2>,
    b: Tensor<_, 2>,
    m0: i32,
    n0: i32,
    mut acc: _,
) -> _ {
    for kk in 0..cdiv(a.size(1), BK) {
        let a_tile = load_block(a, [m0, kk * BK], [BM, BK]);
        let b_tile = load_block(b, [kk * BK, n0], [BK, BN]);
        acc = dot(a_tile, b_tile, acc);
    }
    acc
}

/// Tile `(tile_m, tile_n)` (`BM × BN`) of `c = a · b` for `a: [m, k]`, `b: [k, n]`,
/// `c: [m, n]` (any strides): accumulated in `A` from zero ([`dot_blocks_over_k`]), stored as
/// `T` (masked at the edges).
#[tile_fn]
pub fn matmul_tile<T, A, const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<_, 2>,
    b: Tensor<_, 2>,
    c: Tensor<T, 2>,
    tile_m: i32,
    tile_n: i32,
) {
    let (m0, n0) = (tile_m * BM, tile_n * BN);
    let acc = dot_blocks_over_k::<BM, BN, BK>(a, b, m0, n0, zeros::<A>([BM, BN]));
    let (c_ptrs, c_mask) = tensor_block(c, m0 + arange(0, BM), n0 + arange(0, BN));
    store(c_ptrs, acc.to::<T>(), c_mask);
}

/// `c = a · b` (tensors of any strides, as `tile_matmul`) in f16 or bf16 with an f32
/// accumulator, `BM × BN` tiles of `c`, programs in Triton's grouped order over 8 rows of tiles
/// ([`grouped_tile`]; grid `(⌈m / BM⌉ · ⌈n / BN⌉,)`): the kernels of the benchmark and the
/// autotuned matmul, each with its own `#[tile_kernel]` settings (warps, stages, `BM`, `BN`,
/// `BK`, `autotune`).
#[macro_export]
macro_rules! grouped_matmul {
    ($(#[doc = $doc:tt])* $name:ident, $($settings:tt)*) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            T = [f16, bf16],
            GROUP = 8,
            requires = [b.size(0) == a.size(1), c.size(0) == a.size(0), c.size(1) == b.size(1)],
            uses = [grouped_tile, matmul_tile, dot_blocks_over_k, tensor_block],
            $($settings)*
        )]
        pub fn $name<T, const BM: usize, const BN: usize, const BK: usize, const GROUP: usize>(
            a: Tensor<T, 2>,
            b: Tensor<T, 2>,
            c: Tensor<T, 2>,
        ) {
            let (m, n) = (a.size(0), b.size(1));
            let (tile_m, tile_n) = grouped_tile::<GROUP>(program_id(0), cdiv(m, BM), cdiv(n, BN));
            matmul_tile::<T, f32, BM, BN, BK>(a, b, c, tile_m, tile_n);
        }
    };
}
