//! Gather along axis 1: `out[i, j] = src[i, index[i, j]]` for `src: [m, n]` f32 and
//! `index: [m, k]` i32 (row-major, values in `0..n`). A program takes `BM` rows; `n ≤ BN`, so a
//! row of the source lies in one tile. The rows sit on lanes and warps and the columns on
//! lanes and registers of one warp, so the gathered axis stays inside each warp and the gather
//! is done with warp shuffles only: no shared memory.

use tessera::{tile_kernel, Ptr};

/// `out[i, j] = src[i, index[i, j]]`, `BM` rows per program, `BK` index columns per program.
#[tile_kernel(num_warps = 4, BM = 32, BN = 32, BK = 32)]
pub fn tile_gather_cols<const BM: usize, const BN: usize, const BK: usize>(
    src: Ptr<f32>,
    index: Ptr<i32>,
    out: Ptr<f32>,
    m: i32,
    n: i32,
    k: i32,
) {
    let rows = program_id(0) * BM + arange(0, BM);
    let cols = arange(0, BN);
    let picks = program_id(1) * BK + arange(0, BK);
    let row_ok = rows.expand_dims(1) < m;
    let table = load(
        src + rows.expand_dims(1) * n + cols.expand_dims(0),
        row_ok & (cols.expand_dims(0) < n),
        0.0,
    );
    let pick_mask = row_ok & (picks.expand_dims(0) < k);
    let at = rows.expand_dims(1) * k + picks.expand_dims(0);
    let which = load(index + at, pick_mask, 0);
    store(out + at, gather(table, which, 1), pick_mask);
}
