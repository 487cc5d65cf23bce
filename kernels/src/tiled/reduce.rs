//! Row and column reductions of an `m × n` f32 matrix (row stride `stride`): sums, maxima and
//! argmax (first index on ties), each program reducing a block of rows (columns) while it walks
//! the other axis in chunks, with loop-carried accumulators.

use super::blocks::block_offsets;
use tessera::{f16, tile_fn, tile_kernel, Ptr};

/// The tile of `x` (`m × n`, row stride `stride`) at `rows × cols`, `fill` outside the matrix.
#[tile_fn]
fn masked_tile(x: Ptr<f32>, rows: _, cols: _, m: i32, n: i32, stride: i32, fill: f32) -> _ {
    let (offs, mask) = block_offsets(rows, cols, m, n, stride);
    load(x + offs, mask, fill)
}

/// `out[r] = Σ_c x[r, c]`, `BLOCK_M` rows per program.
#[tile_kernel(num_warps = 4, BLOCK_M = [4], BLOCK_N = [128], uses = [masked_tile, block_offsets])]
pub fn tile_row_sum<const BLOCK_M: usize, const BLOCK_N: usize>(
    out: Ptr<f32>,
    x: Ptr<f32>,
    m: i32,
    n: i32,
    stride: i32,
) {
    let rows = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
    let mut acc = zeros::<f32>([BLOCK_M]);
    for start in (0..n).step_by(BLOCK_N) {
        let cols = start + arange(0, BLOCK_N);
        acc += masked_tile(x, rows, cols, m, n, stride, 0.0).sum(1);
    }
    store(out + rows, acc, rows < m);
}

/// `out[r] = max_c x[r, c]` (`-inf` for an empty row).
#[tile_kernel(num_warps = 4, BLOCK_M = [4], BLOCK_N = [128], uses = [masked_tile, block_offsets])]
pub fn tile_row_max<const BLOCK_M: usize, const BLOCK_N: usize>(
    out: Ptr<f32>,
    x: Ptr<f32>,
    m: i32,
    n: i32,
    stride: i32,
) {
    let rows = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
    let mut acc = full::<f32>([BLOCK_M], f32::NEG_INFINITY);
    for start in (0..n).step_by(BLOCK_N) {
        let cols = start + arange(0, BLOCK_N);
        let tile = masked_tile(x, rows, cols, m, n, stride, f32::NEG_INFINITY);
        acc = maximum(acc, tile.max(1));
    }
    store(out + rows, acc, rows < m);
}

/// `out[r] = argmax_c x[r, c]`, the first column on ties.
#[tile_kernel(num_warps = 4, BLOCK_M = [4], BLOCK_N = [128], uses = [masked_tile, block_offsets])]
pub fn tile_row_argmax<const BLOCK_M: usize, const BLOCK_N: usize>(
    out: Ptr<i32>,
    x: Ptr<f32>,
    m: i32,
    n: i32,
    stride: i32,
) {
    let rows = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
    let mut best = full::<f32>([BLOCK_M], f32::NEG_INFINITY);
    let mut best_index = zeros::<i32>([BLOCK_M]);
    for start in (0..n).step_by(BLOCK_N) {
        let cols = start + arange(0, BLOCK_N);
        let tile = masked_tile(x, rows, cols, m, n, stride, f32::NEG_INFINITY);
        let chunk_max = tile.max(1);
        let chunk_index = tile.argmax(1) + start;
        // A strictly larger maximum moves the index: ties keep the earlier chunk's.
        let better = chunk_max > best;
        best = where_(better, chunk_max, best);
        best_index = where_(better, chunk_index, best_index);
    }
    store(out + rows, best_index, rows < m);
}

/// `out[c] = Σ_r x[r, c]`, `BLOCK_N` columns per program.
#[tile_kernel(num_warps = 4, BLOCK_M = [32], BLOCK_N = [64], uses = [masked_tile, block_offsets])]
pub fn tile_col_sum<const BLOCK_M: usize, const BLOCK_N: usize>(
    out: Ptr<f32>,
    x: Ptr<f32>,
    m: i32,
    n: i32,
    stride: i32,
) {
    let cols = program_id(0) * BLOCK_N + arange(0, BLOCK_N);
    let mut acc = zeros::<f32>([BLOCK_N]);
    for start in (0..m).step_by(BLOCK_M) {
        let rows = start + arange(0, BLOCK_M);
        acc += masked_tile(x, rows, cols, m, n, stride, 0.0).sum(0);
    }
    store(out + cols, acc, cols < n);
}

/// `out[c] = max_r x[r, c]`.
#[tile_kernel(num_warps = 4, BLOCK_M = [32], BLOCK_N = [64], uses = [masked_tile, block_offsets])]
pub fn tile_col_max<const BLOCK_M: usize, const BLOCK_N: usize>(
    out: Ptr<f32>,
    x: Ptr<f32>,
    m: i32,
    n: i32,
    stride: i32,
) {
    let cols = program_id(0) * BLOCK_N + arange(0, BLOCK_N);
    let mut acc = full::<f32>([BLOCK_N], f32::NEG_INFINITY);
    for start in (0..m).step_by(BLOCK_M) {
        let rows = start + arange(0, BLOCK_M);
        let tile = masked_tile(x, rows, cols, m, n, stride, f32::NEG_INFINITY);
        acc = maximum(acc, tile.max(0));
    }
    store(out + cols, acc, cols < n);
}

/// `out[c] = argmax_r x[r, c]`, the first row on ties.
#[tile_kernel(num_warps = 4, BLOCK_M = [32], BLOCK_N = [64], uses = [masked_tile, block_offsets])]
pub fn tile_col_argmax<const BLOCK_M: usize, const BLOCK_N: usize>(
    out: Ptr<i32>,
    x: Ptr<f32>,
    m: i32,
    n: i32,
    stride: i32,
) {
    let cols = program_id(0) * BLOCK_N + arange(0, BLOCK_N);
    let mut best = full::<f32>([BLOCK_N], f32::NEG_INFINITY);
    let mut best_index = zeros::<i32>([BLOCK_N]);
    for start in (0..m).step_by(BLOCK_M) {
        let rows = start + arange(0, BLOCK_M);
        let tile = masked_tile(x, rows, cols, m, n, stride, f32::NEG_INFINITY);
        let chunk_max = tile.max(0);
        let chunk_index = tile.argmax(0) + start;
        let better = chunk_max > best;
        best = where_(better, chunk_max, best);
        best_index = where_(better, chunk_index, best_index);
    }
    store(out + cols, best_index, cols < n);
}

/// Per row of an f16 matrix (one row per program, `n ≤ BLOCK`): the sum (accumulated in f32,
/// rounded once to f16), the minimum and the argmin (first column on ties).
#[tile_kernel(num_warps = 2, BLOCK = [512])]
pub fn tile_row_stats_f16<const BLOCK: usize>(
    sum_out: Ptr<f16>,
    min_out: Ptr<f16>,
    argmin_out: Ptr<i32>,
    x: Ptr<f16>,
    n: i32,
    stride: i32,
) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let mask = cols < n;
    let v = load(x + row * stride + cols, mask, f16::INFINITY);
    let zeroed = where_(mask, v, 0.0 as f16);
    let one = arange(0, 1);
    store(sum_out + row + one, zeroed.sum(0) + zeros::<f16>([1]));
    store(min_out + row + one, v.min(0) + zeros::<f16>([1]));
    store(argmin_out + row + one, v.argmin(0) + zeros::<i32>([1]));
}
