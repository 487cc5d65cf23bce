//! `while` loops: a binary search per program (scalars carried, a scalar `load` and an `if`
//! in the body) and an iteration carrying tiles until every element has converged (the
//! condition reduces a tile to a scalar, so the whole program leaves the loop together).

use tessera::{tile_kernel, Ptr};

/// `out[p]` = the first index `i < n` with `sorted[i] >= queries[p]`, or `n` (a lower bound, as
/// `slice::partition_point`); one query per program. `sorted[..n]` is ascending.
#[tile_kernel(num_warps = 1)]
pub fn search_sorted(sorted: Ptr<f32>, n: i32, queries: Ptr<f32>, out: Ptr<i32>) {
    let p = program_id(0);
    let q = load(queries + p);
    let mut lo = 0;
    let mut hi = n;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if load(sorted + mid) < q {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    store(out + p, lo);
}

/// Collatz stopping times of the positive values `x[..n]`, `BLOCK` per program: `steps[i]` =
/// how many steps (`v → v / 2` for even `v`, `v → 3v + 1` for odd) take `x[i]` to 1, and
/// `rounds[p]` = how many rounds the program's loop ran (the largest stopping time of its
/// block). Masked-off elements start at 1 and take no step.
#[tile_kernel(num_warps = [1, 4], BLOCK = [128])]
pub fn collatz_steps<const BLOCK: usize>(x: Ptr<i32>, steps: Ptr<i32>, rounds: Ptr<i32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let mut v = load(x + offs, mask, 1);
    let mut count = zeros::<i32>([BLOCK]);
    let mut round = 0;
    while v.max(0) > 1 {
        let moving = v > 1;
        let next = where_(v % 2 == 1, 3 * v + 1, v / 2);
        count = count + where_(moving, 1, 0);
        v = where_(moving, next, v);
        round += 1;
    }
    store(steps + offs, count, mask);
    store(rounds + program_id(0), round);
}
