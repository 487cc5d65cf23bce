//! Scans (`cumsum`, `cumprod`) of `i32` and `f32` tiles: along the rows and the columns of an
//! `m × n` matrix (row stride `stride`), forward and reversed, and along ragged 1-D blocks, at
//! several `num_warps` so that the scanned axis runs over registers, lanes and warps.

use super::blocks::block_offsets;
use tessera::{tile_kernel, Ptr};

/// A scan of a block of an `m × n` matrix (row stride `stride`): the program loads the tile at
/// `rows × cols` (`fill` outside the matrix) and stores `scan` of it (`tile`) at the same
/// places. The scanned axis fits one block: `requires` refuses a longer one, which the scan
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
            requires = [$($requires)*],
            uses = [block_offsets]
        )]
        pub fn $name<T, const BLOCK_M: usize, const BLOCK_N: usize>(
            out: Ptr<T>,
            x: Ptr<T>,
            m: i32,
            n: i32,
            stride: i32,
        ) {
            let rows = $($rows)*;
            let cols = $($cols)*;
            let (offs, mask) = block_offsets(rows, cols, m, n, stride);
            let tile = load(x + offs, mask, $fill);
            store(out + offs, $($scan)*, mask);
        }
    };
}

matrix_scan! {
    /// `out[r, c] = Σ_{c' ≤ c} x[r, c']` for `c < n ≤ BLOCK_N`, `BLOCK_M` rows per program.
    tile_cumsum_rows, num_warps = [1, 4, 8], BLOCK_M = [2], BLOCK_N = [256],
    rows = [program_id(0) * BLOCK_M + arange(0, BLOCK_M)], cols = [arange(0, BLOCK_N)],
    fill = 0, scan = [tile.cumsum(1)], requires = [n <= BLOCK_N]
}

matrix_scan! {
    /// `out[r, c] = Σ_{r' ≤ r} x[r', c]` for `r < m ≤ BLOCK_M`, `BLOCK_N` columns per program.
    tile_cumsum_cols, num_warps = [1, 4, 8], BLOCK_M = [256], BLOCK_N = [4],
    rows = [arange(0, BLOCK_M)], cols = [program_id(0) * BLOCK_N + arange(0, BLOCK_N)],
    fill = 0, scan = [cumsum(tile, 0)], requires = [m <= BLOCK_M]
}

matrix_scan! {
    /// `out[r, c] = Σ_{r' ≥ r} x[r', c]` for `r < m ≤ BLOCK_M` (the reversed scan of
    /// [`tile_cumsum_cols`]), `BLOCK_N` columns per program.
    tile_cumsum_cols_reverse, num_warps = [2, 8], BLOCK_M = [128], BLOCK_N = [8],
    rows = [arange(0, BLOCK_M)], cols = [program_id(0) * BLOCK_N + arange(0, BLOCK_N)],
    fill = 0, scan = [tile.cumsum(0, true)], requires = [m <= BLOCK_M]
}

matrix_scan! {
    /// `out[r, c] = Π_{c' ≤ c} x[r, c']` for `c < n ≤ BLOCK_N` (integers wrap), `BLOCK_M` rows
    /// per program.
    tile_cumprod_rows, num_warps = 4, BLOCK_M = [4], BLOCK_N = [128],
    rows = [program_id(0) * BLOCK_M + arange(0, BLOCK_M)], cols = [arange(0, BLOCK_N)],
    fill = 1, scan = [tile.cumprod(1)], requires = [n <= BLOCK_N]
}

/// For each block of `BLOCK` elements of `x[..n]`: `out` its running sum, `rev` its running
/// sum from the end of the block (masked-off elements count as 0).
#[tile_kernel(T = [i32, f32], num_warps = [1, 4], BLOCK = [1024])]
pub fn tile_cumsum_blocks<T, const BLOCK: usize>(out: Ptr<T>, rev: Ptr<T>, x: Ptr<T>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0);
    store(out + offs, v.cumsum(0), mask);
    store(rev + offs, v.cumsum(0, true), mask);
}
