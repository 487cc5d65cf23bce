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

/// A reduction kernel over the `m × n` matrix `x` (row stride `stride`) writing `out`.
macro_rules! reduction_kernel {
    (
        $(#[doc = $doc:tt])* $name:ident -> $out:ident, BLOCK_M = $bm:tt, BLOCK_N = $bn:tt,
        { $($body:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[tile_kernel(num_warps = 4, BLOCK_M = $bm, BLOCK_N = $bn, uses = [masked_tile, block_offsets])]
        pub fn $name<const BLOCK_M: usize, const BLOCK_N: usize>(
            out: Ptr<$out>,
            x: Ptr<f32>,
            m: i32,
            n: i32,
            stride: i32,
        ) {
            $($body)*
        }
    };
}

/// The sum, max and argmax kernels of one direction: each program keeps `$KEPT` indices
/// `$kept` of one axis (those below `$kept_n` are stored) and walks the other axis, `$walked`,
/// in chunks of `$WALKED` up to `$walked_n`, reducing each `[BLOCK_M, BLOCK_N]` chunk along
/// `axis`.
macro_rules! axis_reductions {
    (
        $(#[doc = $sum_doc:tt])* $sum:ident,
        $(#[doc = $max_doc:tt])* $max:ident,
        $(#[doc = $argmax_doc:tt])* $argmax:ident,
        keep $kept:ident < $kept_n:ident by $KEPT:ident,
        walk $walked:ident < $walked_n:ident by $WALKED:ident,
        axis = $axis:literal, BLOCK_M = $bm:tt, BLOCK_N = $bn:tt
    ) => {
        reduction_kernel! {
            $(#[doc = $sum_doc])*
            $sum -> f32, BLOCK_M = $bm, BLOCK_N = $bn, {
                let $kept = program_id(0) * $KEPT + arange(0, $KEPT);
                let mut acc = zeros::<f32>([$KEPT]);
                for start in (0..$walked_n).step_by($WALKED) {
                    let $walked = start + arange(0, $WALKED);
                    acc += masked_tile(x, rows, cols, m, n, stride, 0.0).sum($axis);
                }
                store(out + $kept, acc, $kept < $kept_n);
            }
        }

        reduction_kernel! {
            $(#[doc = $max_doc])*
            $max -> f32, BLOCK_M = $bm, BLOCK_N = $bn, {
                let $kept = program_id(0) * $KEPT + arange(0, $KEPT);
                let mut acc = full::<f32>([$KEPT], f32::NEG_INFINITY);
                for start in (0..$walked_n).step_by($WALKED) {
                    let $walked = start + arange(0, $WALKED);
                    let tile = masked_tile(x, rows, cols, m, n, stride, f32::NEG_INFINITY);
                    acc = maximum(acc, tile.max($axis));
                }
                store(out + $kept, acc, $kept < $kept_n);
            }
        }

        reduction_kernel! {
            $(#[doc = $argmax_doc])*
            $argmax -> i32, BLOCK_M = $bm, BLOCK_N = $bn, {
                let $kept = program_id(0) * $KEPT + arange(0, $KEPT);
                let mut best = full::<f32>([$KEPT], f32::NEG_INFINITY);
                let mut best_index = zeros::<i32>([$KEPT]);
                for start in (0..$walked_n).step_by($WALKED) {
                    let $walked = start + arange(0, $WALKED);
                    let tile = masked_tile(x, rows, cols, m, n, stride, f32::NEG_INFINITY);
                    let chunk_max = tile.max($axis);
                    let chunk_index = tile.argmax($axis) + start;
                    // A strictly larger maximum moves the index: ties keep the earlier chunk's.
                    let better = chunk_max > best;
                    best = where_(better, chunk_max, best);
                    best_index = where_(better, chunk_index, best_index);
                }
                store(out + $kept, best_index, $kept < $kept_n);
            }
        }
    };
}

axis_reductions! {
    /// `out[r] = Σ_c x[r, c]`, `BLOCK_M` rows per program.
    tile_row_sum,
    /// `out[r] = max_c x[r, c]` (`-inf` for an empty row).
    tile_row_max,
    /// `out[r] = argmax_c x[r, c]`, the first column on ties.
    tile_row_argmax,
    keep rows < m by BLOCK_M,
    walk cols < n by BLOCK_N,
    axis = 1, BLOCK_M = [4], BLOCK_N = [128]
}

axis_reductions! {
    /// `out[c] = Σ_r x[r, c]`, `BLOCK_N` columns per program.
    tile_col_sum,
    /// `out[c] = max_r x[r, c]`.
    tile_col_max,
    /// `out[c] = argmax_r x[r, c]`, the first row on ties.
    tile_col_argmax,
    keep cols < n by BLOCK_N,
    walk rows < m by BLOCK_M,
    axis = 0, BLOCK_M = [32], BLOCK_N = [64]
}

/// Per row of an f16 matrix (one row per program, `n ≤ BLOCK`): the sum (accumulated in f32,
/// rounded once to f16), the minimum and the argmin (first column on ties).
#[tile_kernel(num_warps = 2, BLOCK = [512], requires = [n <= BLOCK])]
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
    store(sum_out + row, zeroed.sum(0));
    store(min_out + row, v.min(0));
    store(argmin_out + row, v.argmin(0));
}
