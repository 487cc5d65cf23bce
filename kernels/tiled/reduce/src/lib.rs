//! Row and column reductions of an `[m, n]` f32 tensor (any strides): sums, maxima and argmax
//! (first index on ties), each program reducing a block of rows (columns) while it walks the
//! other axis in chunks, with loop-carried accumulators, into an `out` of one element per row
//! (column); `requires` refuses an `out` of another length.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{f16, tile_fn, tile_kernel};
use tessera_kernels_blocks::tensor_block;

/// The tile of `x` (`[m, n]`) at `rows × cols`, `fill` outside the matrix.
#[tile_fn]
fn masked_tile(x: Tensor<f32, 2>, rows: _, cols: _, fill: f32) -> _ {
    let (ptrs, mask) = tensor_block(x, rows, cols);
    load(ptrs, mask, fill)
}

/// A reduction kernel over the `[m, n]` tensor `x` writing `out` (`[$len]`: `m` for the row
/// reductions, `n` for the column ones).
macro_rules! reduction_kernel {
    (
        $(#[doc = $doc:tt])* $name:ident -> $out:ident [$($len:tt)*], BLOCK_M = $bm:tt, BLOCK_N = $bn:tt,
        { $($body:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            num_warps = 4,
            BLOCK_M = $bm,
            BLOCK_N = $bn,
            requires = [out.size(0) == $($len)*],
            uses = [masked_tile, tensor_block]
        )]
        pub fn $name<const BLOCK_M: usize, const BLOCK_N: usize>(
            out: Tensor<$out, 1>,
            x: Tensor<f32, 2>,
        ) {
            let (m, n) = (x.size(0), x.size(1));
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
        keep $kept:ident < $kept_n:ident (x.size($kept_dim:literal)) by $KEPT:ident,
        walk $walked:ident < $walked_n:ident by $WALKED:ident,
        axis = $axis:literal, BLOCK_M = $bm:tt, BLOCK_N = $bn:tt
    ) => {
        reduction_kernel! {
            $(#[doc = $sum_doc])*
            $sum -> f32 [x.size($kept_dim)], BLOCK_M = $bm, BLOCK_N = $bn, {
                let $kept = program_id(0) * $KEPT + arange(0, $KEPT);
                let mut acc = zeros::<f32>([$KEPT]);
                for start in (0..$walked_n).step_by($WALKED) {
                    let $walked = start + arange(0, $WALKED);
                    acc += masked_tile(x, rows, cols, 0.0).sum($axis);
                }
                store(out + $kept * out.stride(0), acc, $kept < $kept_n);
            }
        }

        reduction_kernel! {
            $(#[doc = $max_doc])*
            $max -> f32 [x.size($kept_dim)], BLOCK_M = $bm, BLOCK_N = $bn, {
                let $kept = program_id(0) * $KEPT + arange(0, $KEPT);
                let mut acc = full::<f32>([$KEPT], f32::NEG_INFINITY);
                for start in (0..$walked_n).step_by($WALKED) {
                    let $walked = start + arange(0, $WALKED);
                    let tile = masked_tile(x, rows, cols, f32::NEG_INFINITY);
                    acc = maximum(acc, tile.max($axis));
                }
                store(out + $kept * out.stride(0), acc, $kept < $kept_n);
            }
        }

        reduction_kernel! {
            $(#[doc = $argmax_doc])*
            $argmax -> i32 [x.size($kept_dim)], BLOCK_M = $bm, BLOCK_N = $bn, {
                let $kept = program_id(0) * $KEPT + arange(0, $KEPT);
                let mut best = full::<f32>([$KEPT], f32::NEG_INFINITY);
                let mut best_index = zeros::<i32>([$KEPT]);
                for start in (0..$walked_n).step_by($WALKED) {
                    let $walked = start + arange(0, $WALKED);
                    let tile = masked_tile(x, rows, cols, f32::NEG_INFINITY);
                    let chunk_max = tile.max($axis);
                    let chunk_index = tile.argmax($axis) + start;
                    // A strictly larger maximum moves the index: ties keep the earlier chunk's.
                    let better = chunk_max > best;
                    best = where_(better, chunk_max, best);
                    best_index = where_(better, chunk_index, best_index);
                }
                store(out + $kept * out.stride(0), best_index, $kept < $kept_n);
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
    keep rows < m (x.size(0)) by BLOCK_M,
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
    keep cols < n (x.size(1)) by BLOCK_N,
    walk rows < m by BLOCK_M,
    axis = 0, BLOCK_M = [32], BLOCK_N = [64]
}

/// Per row of an `[rows, n]` f16 tensor (one row per program, `n ≤ BLOCK`, any strides): the
/// sum (accumulated in f32, rounded once to f16), the minimum and the argmin (first column on
/// ties), into `[rows]` outputs.
#[tile_kernel(
    num_warps = 2,
    BLOCK = [512],
    requires = [
        x.size(1) <= BLOCK,
        sum_out.size(0) == x.size(0),
        min_out.size(0) == x.size(0),
        argmin_out.size(0) == x.size(0),
    ]
)]
pub fn tile_row_stats_f16<const BLOCK: usize>(
    sum_out: Tensor<f16, 1>,
    min_out: Tensor<f16, 1>,
    argmin_out: Tensor<i32, 1>,
    x: Tensor<f16, 2>,
) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let mask = cols < x.size(1);
    let v = load(
        x + row * x.stride(0) + cols * x.stride(1),
        mask,
        f16::INFINITY,
    );
    let zeroed = where_(mask, v, 0.0 as f16);
    store(sum_out + row * sum_out.stride(0), zeroed.sum(0));
    store(min_out + row * min_out.stride(0), v.min(0));
    store(argmin_out + row * argmin_out.stride(0), v.argmin(0));
}
