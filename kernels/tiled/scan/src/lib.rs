//! Scans (`cumsum`, `cumprod`) of `i32` and `f32` tiles: along the rows and the columns of an
//! `[m, n]` tensor (any strides: a padded or transposed view works), forward and reversed, and
//! along ragged 1-D blocks, at several `num_warps` so that the scanned axis runs over
//! registers, lanes and warps.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile_kernel;
use tessera_kernels_blocks::{elements, load_vector, tensor_block, vector_block};

/// A scan of a block of the `[m, n]` tensor `x` into `out` (of `x`'s shape): the program loads
/// the tile at `rows × cols` (`fill` outside the tensor) and stores `scan` of it (`tile`) at the
/// same places. The scanned axis fits one block: `requires` refuses a longer one, which the scan
/// would cut.
macro_rules! matrix_scan {
    (
        $(#[doc = $doc:tt])* $name:ident,
        num_warps = $warps:tt, BLOCK_M = $bm:tt, BLOCK_N = $bn:tt,
        rows = [$($rows:tt)*], cols = [$($cols:tt)*], fill = $fill:literal, scan = [$($scan:tt)*],
        requires = [$($requires:tt)*]
    ) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            T = [i32, f32],
            num_warps = $warps,
            BLOCK_M = $bm,
            BLOCK_N = $bn,
            requires = [
                $($requires)*,
                out.size(0) == x.size(0) && out.size(1) == x.size(1),
            ],
            uses = [tensor_block]
        )]
        pub fn $name<T, const BLOCK_M: usize, const BLOCK_N: usize>(
            out: Tensor<T, 2>,
            x: Tensor<T, 2>,
        ) {
            let rows = $($rows)*;
            let cols = $($cols)*;
            let (src, mask) = tensor_block(x, rows, cols);
            let (dst, _) = tensor_block(out, rows, cols);
            let tile = load(src, mask, $fill);
            store(dst, $($scan)*, mask);
        }
    };
}

matrix_scan! {
    /// `out[r, c] = Σ_{c' ≤ c} x[r, c']` for `x: [m, n]`, `n ≤ BLOCK_N`, `BLOCK_M` rows per
    /// program (grid `ceil(m / BLOCK_M)`).
    tile_cumsum_rows, num_warps = [1, 4, 8], BLOCK_M = [2], BLOCK_N = [256],
    rows = [program_id(0) * BLOCK_M + arange(0, BLOCK_M)], cols = [arange(0, BLOCK_N)],
    fill = 0, scan = [tile.cumsum(1)], requires = [x.size(1) <= BLOCK_N]
}

matrix_scan! {
    /// `out[r, c] = Σ_{r' ≤ r} x[r', c]` for `x: [m, n]`, `m ≤ BLOCK_M`, `BLOCK_N` columns per
    /// program (grid `ceil(n / BLOCK_N)`).
    tile_cumsum_cols, num_warps = [1, 4, 8], BLOCK_M = [256], BLOCK_N = [4],
    rows = [arange(0, BLOCK_M)], cols = [program_id(0) * BLOCK_N + arange(0, BLOCK_N)],
    fill = 0, scan = [cumsum(tile, 0)], requires = [x.size(0) <= BLOCK_M]
}

matrix_scan! {
    /// `out[r, c] = Σ_{r' ≥ r} x[r', c]` for `x: [m, n]`, `m ≤ BLOCK_M` (the reversed scan of
    /// [`tile_cumsum_cols`]), `BLOCK_N` columns per program.
    tile_cumsum_cols_reverse, num_warps = [2, 8], BLOCK_M = [128], BLOCK_N = [8],
    rows = [arange(0, BLOCK_M)], cols = [program_id(0) * BLOCK_N + arange(0, BLOCK_N)],
    fill = 0, scan = [tile.cumsum(0, true)], requires = [x.size(0) <= BLOCK_M]
}

matrix_scan! {
    /// `out[r, c] = Π_{c' ≤ c} x[r, c']` for `x: [m, n]`, `n ≤ BLOCK_N` (integers wrap),
    /// `BLOCK_M` rows per program.
    tile_cumprod_rows, num_warps = 4, BLOCK_M = [4], BLOCK_N = [128],
    rows = [program_id(0) * BLOCK_M + arange(0, BLOCK_M)], cols = [arange(0, BLOCK_N)],
    fill = 1, scan = [tile.cumprod(1)], requires = [x.size(1) <= BLOCK_N]
}

/// For each block of `BLOCK` elements of `x: [n]`: `out` its running sum, `rev` its running sum
/// from the end of the block (masked-off elements count as 0); `out` and `rev` of `x`'s length.
#[tile_kernel(
    T = [i32, f32],
    num_warps = [1, 4],
    BLOCK = [1024],
    requires = [out.size(0) == x.size(0) && rev.size(0) == x.size(0)],
    uses = [load_vector, vector_block, elements]
)]
pub fn tile_cumsum_blocks<T, const BLOCK: usize>(
    out: Tensor<T, 1>,
    rev: Tensor<T, 1>,
    x: Tensor<T, 1>,
) {
    let (offs, mask, v) = load_vector::<BLOCK>(x, 0);
    store(elements(out, offs), v.cumsum(0), mask);
    store(elements(rev, offs), v.cumsum(0, true), mask);
}
