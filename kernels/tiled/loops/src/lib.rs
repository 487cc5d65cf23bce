//! `while` loops: a binary search per program (scalars carried, a scalar `load` and an `if`
//! in the body) and an iteration carrying tiles until every element has converged (the
//! condition reduces a tile to a scalar, so the whole program leaves the loop together).

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile_kernel;
use tessera_kernels_blocks::{elements, load_vector, vector_block};

/// `out[p]` = the first index `i < n` with `sorted[i] >= queries[p]`, or `n` (a lower bound, as
/// `slice::partition_point`; `n` the length of `sorted`, ascending); one query per program
/// (grid: the queries; programs past them store nothing).
#[tile_kernel(num_warps = 1, requires = [out.size(0) == queries.size(0)])]
pub fn search_sorted(sorted: Tensor<f32, 1>, queries: Tensor<f32, 1>, out: Tensor<i32, 1>) {
    let p = program_id(0);
    let inside = p < queries.size(0);
    let q = load(queries + p * queries.stride(0), inside, 0.0);
    let mut lo = 0;
    let mut hi = sorted.size(0);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if load(sorted + mid * sorted.stride(0)) < q {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    store(out + p * out.stride(0), lo, inside);
}

/// Collatz stopping times of the positive values of `x: [n]`, `BLOCK` per program: `steps[i]` =
/// how many steps (`v → v / 2` for even `v`, `v → 3v + 1` for odd) take `x[i]` to 1, and
/// `rounds[p]` = how many rounds program `p`'s loop ran (the largest stopping time of its
/// block; programs past the length of `rounds` store none). Masked-off elements start at 1 and
/// take no step.
#[tile_kernel(
    num_warps = [1, 4],
    BLOCK = [128],
    requires = [steps.size(0) == x.size(0)],
    uses = [load_vector, vector_block, elements]
)]
pub fn collatz_steps<const BLOCK: usize>(
    x: Tensor<i32, 1>,
    steps: Tensor<i32, 1>,
    rounds: Tensor<i32, 1>,
) {
    let (offs, mask, mut v) = load_vector::<BLOCK>(x, 1);
    let mut count = zeros::<i32>([BLOCK]);
    let mut round = 0;
    while v.max(0) > 1 {
        let moving = v > 1;
        let next = where_(v % 2 == 1, 3 * v + 1, v / 2);
        count = count + where_(moving, 1, 0);
        v = where_(moving, next, v);
        round += 1;
    }
    store(elements(steps, offs), count, mask);
    let p = program_id(0);
    store(rounds + p * rounds.stride(0), round, p < rounds.size(0));
}
