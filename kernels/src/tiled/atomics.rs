//! Atomics and scalar memory in the tile language: a histogram (`atomic_add` of ones into i32
//! and f16 bins), a split-K matmul (each program's partial f32 tile `atomic_add`ed into `c`),
//! per-bucket `atomic_max`/`atomic_min` and bit operations, numbers drawn from one counter by a
//! tile whose layout repeats elements (each element's atomic once, its old value to every copy),
//! scalar tickets with `atomic_add`/`atomic_cas`/`atomic_xchg`, and a cross-entropy-style
//! per-row loss written with scalar `load`/`store`.

use tessera::{f16, tile_kernel, Ptr};

/// `bins[x[i]] += 1` for every `x[i]` in `0..num_bins` (others ignored), `BLOCK` values per
/// program.
#[tile_kernel(num_warps = 4, BLOCK = [32, 256])]
pub fn histogram<const BLOCK: usize>(x: Ptr<i32>, bins: Ptr<i32>, n: i32, num_bins: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0);
    let ok = mask & (v >= 0) & (v < num_bins);
    atomic_add(bins + v, 1, ok, "relaxed");
}

/// [`histogram`] into f16 bins (`atom.add.noftz.f16`); exact while each bin stays ≤ 2048.
#[tile_kernel(num_warps = 4, BLOCK = 256)]
pub fn histogram_f16<const BLOCK: usize>(x: Ptr<i32>, bins: Ptr<f16>, n: i32, num_bins: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0);
    let ok = mask & (v >= 0) & (v < num_bins);
    atomic_add(bins + v, 1.0, ok);
}

/// `c += a · b` for f16 `a: [m, k]`, `b: [k, n]`, f32 `c: [m, n]` (row-major), split along K:
/// program `(i, j, s)` multiplies the K range `s · k_split .. (s + 1) · k_split` and adds its
/// partial tile into `c` with `atomic_add`.
#[tile_kernel(num_warps = 4, BM = 32, BN = 32, BK = 32)]
pub fn matmul_split_k<const BM: usize, const BN: usize, const BK: usize>(
    a: Ptr<f16>,
    b: Ptr<f16>,
    c: Ptr<f32>,
    m: i32,
    n: i32,
    k: i32,
    k_split: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let k0 = program_id(2) * k_split;
    let rk = arange(0, BK);
    let mut a_ptrs = a + rm.expand_dims(1) * k + (k0 + rk).expand_dims(0);
    let mut b_ptrs = b + (k0 + rk).expand_dims(1) * n + rn.expand_dims(0);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k_split, BK) {
        let kpos = k0 + kk * BK + rk;
        let k_ok = (kpos < k) & (kpos < k0 + k_split);
        let a_tile = load(a_ptrs, (rm.expand_dims(1) < m) & k_ok.expand_dims(0), 0.0);
        let b_tile = load(b_ptrs, k_ok.expand_dims(1) & (rn.expand_dims(0) < n), 0.0);
        acc = dot(a_tile, b_tile, acc);
        a_ptrs += BK;
        b_ptrs += BK * n;
    }
    let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    atomic_add(c + rm.expand_dims(1) * n + rn.expand_dims(0), acc, c_mask);
}

/// For bucket `b = i % buckets`: `maxes[b] = max(…, x[i])`, `mins[b] = min(…, x[i])`,
/// `ors[b] |= 1 << (x[i] & 31)`, `ands[b] &= !(1 << (x[i] & 31))`, `xors[b] ^= x[i]`.
#[tile_kernel(num_warps = 4, BLOCK = 128)]
pub fn bucket_reduce<const BLOCK: usize>(
    x: Ptr<i32>,
    maxes: Ptr<i32>,
    mins: Ptr<i32>,
    ors: Ptr<u32>,
    ands: Ptr<u32>,
    xors: Ptr<u32>,
    n: i32,
    buckets: i32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, 0);
    let b = offs % buckets;
    atomic_max(maxes + b, v, mask);
    atomic_min(mins + b, v, mask, "acq_rel", "gpu");
    let bit = 1u32 << (v & 31).to::<u32>();
    atomic_or(ors + b, bit, mask);
    atomic_and(ands + b, !bit, mask);
    atomic_xor(xors + b, v.to::<u32>(), mask, "relaxed", "cta");
}

/// `out[i] = atomic_add(counter, 1)` for `i < n`, as one tile atomic per program on a tile of
/// `BLOCK` pointers to the same counter: the old values are `0 .. n` in some order. At
/// `BLOCK = 32` with 4 warps the tile's layout holds each element on several threads.
#[tile_kernel(num_warps = 4, BLOCK = [32, 256])]
pub fn take_numbers<const BLOCK: usize>(counter: Ptr<i32>, out: Ptr<i32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let old = atomic_add(counter + offs * 0, 1, mask);
    store(out + offs, old, mask);
}

/// Scalar atomics, once per program: `out[3p] = atomic_add(counter, 1)` (a ticket),
/// `out[3p + 1] = atomic_cas(slots + p % 4, 0, p + 1)` (the first program of each slot finds 0),
/// `out[3p + 2] = atomic_xchg(last, p)` (the programs form one chain from the initial value).
#[tile_kernel(num_warps = 4)]
pub fn tickets(counter: Ptr<i32>, slots: Ptr<i32>, last: Ptr<i32>, out: Ptr<i32>) {
    let p = program_id(0);
    let ticket = atomic_add(counter, 1);
    let seen = atomic_cas(slots + p % 4, 0, p + 1, "acquire");
    let before = atomic_xchg(last, p, "release", "gpu");
    store(out + 3 * p, ticket);
    store(out + 3 * p + 1, seen);
    store(out + 3 * p + 2, before);
}

/// Cross-entropy per row: `loss[r] = logsumexp(logits[r, :]) - logits[r, target[r]]`, the
/// target read and the loss written as scalars (once per program); rows whose target is
/// negative (ignored) leave `loss[r]` as it was. `n_cols ≤ BLOCK`.
#[tile_kernel(num_warps = 4, BLOCK = 128)]
pub fn row_loss<const BLOCK: usize>(
    logits: Ptr<f32>,
    target: Ptr<i32>,
    loss: Ptr<f32>,
    n_cols: i32,
) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let x = load(
        logits + row * n_cols + cols,
        cols < n_cols,
        f32::NEG_INFINITY,
    );
    let top = x.max(0);
    let lse = log(exp(x - top).sum(0)) + top;
    let t = load(target + row);
    let picked = load(logits + row * n_cols + t, t >= 0, 0.0);
    store(loss + row, lse - picked, t >= 0);
}
