//! Atomics and scalar memory in the tile language, on `Tensor` parameters: a histogram
//! (`atomic_add` of ones into i32 and f16 bins), a split-K matmul (each program's partial f32
//! tile `atomic_add`ed into `c`), per-bucket `atomic_max`/`atomic_min` and bit operations,
//! numbers drawn from one counter by a tile whose layout repeats elements (each element's atomic
//! once, its old value to every copy), scalar tickets with `atomic_add`/`atomic_cas`/
//! `atomic_xchg`, and a cross-entropy-style per-row loss written with scalar `load`/`store`.
//! A tensor an atomic writes is an output: the launcher takes it by `&mut`.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::{f16, tile_kernel};
use tessera_kernels_blocks::{elements, load_vector, tensor_block, vector_block};

/// `bins[x[i]] += 1` for every `x[i]` in `0..bins.size(0)` (others ignored), `BLOCK` values per
/// program.
#[tile_kernel(num_warps = 4, BLOCK = [32, 256], uses = [load_vector, vector_block, elements])]
pub fn histogram<const BLOCK: usize>(x: Tensor<i32, 1>, bins: Tensor<i32, 1>) {
    let (_, mask, v) = load_vector::<BLOCK>(x, 0);
    let ok = mask & (v >= 0) & (v < bins.size(0));
    atomic_add(elements(bins, v), 1, ok, "relaxed");
}

/// [`histogram`] into f16 bins (`atom.add.noftz.f16`); exact while each bin stays ≤ 2048.
#[tile_kernel(num_warps = 4, BLOCK = 256, uses = [load_vector, vector_block, elements])]
pub fn histogram_f16<const BLOCK: usize>(x: Tensor<i32, 1>, bins: Tensor<f16, 1>) {
    let (_, mask, v) = load_vector::<BLOCK>(x, 0);
    let ok = mask & (v >= 0) & (v < bins.size(0));
    atomic_add(elements(bins, v), 1.0, ok);
}

/// `c += a · b` for f16 `a: [m, k]`, `b: [k, n]`, f32 `c: [m, n]` (any strides), split along
/// K: program `(i, j, s)` multiplies the K range `s · k_split .. (s + 1) · k_split` and adds
/// its partial tile into `c` with `atomic_add`. Grid: `(⌈m / BM⌉, ⌈n / BN⌉, ⌈k / k_split⌉)`.
#[tile_kernel(
    num_warps = 4,
    BM = 32,
    BN = 32,
    BK = 32,
    requires = [b.size(0) == a.size(1), c.size(0) == a.size(0), c.size(1) == b.size(1)],
    uses = [tensor_block]
)]
pub fn matmul_split_k<const BM: usize, const BN: usize, const BK: usize>(
    a: Tensor<f16, 2>,
    b: Tensor<f16, 2>,
    c: Tensor<f32, 2>,
    k_split: i32,
) {
    let (m, n) = (a.size(0), b.size(1));
    let k = a.size(1);
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let k0 = program_id(2) * k_split;
    let rk = arange(0, BK);
    let mut a_ptrs = a + rm.expand_dims(1) * a.stride(0) + (k0 + rk).expand_dims(0) * a.stride(1);
    let mut b_ptrs = b + (k0 + rk).expand_dims(1) * b.stride(0) + rn.expand_dims(0) * b.stride(1);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k_split, BK) {
        let kpos = k0 + kk * BK + rk;
        let k_ok = (kpos < k) & (kpos < k0 + k_split);
        let a_tile = load(a_ptrs, (rm.expand_dims(1) < m) & k_ok.expand_dims(0), 0.0);
        let b_tile = load(b_ptrs, k_ok.expand_dims(1) & (rn.expand_dims(0) < n), 0.0);
        acc = dot(a_tile, b_tile, acc);
        a_ptrs += BK * a.stride(1);
        b_ptrs += BK * b.stride(0);
    }
    let (c_ptrs, c_mask) = tensor_block(c, rm, rn);
    atomic_add(c_ptrs, acc, c_mask);
}

/// For bucket `b = i % buckets` (`buckets` the length of the outputs, all of one length):
/// `maxes[b] = max(…, x[i])`, `mins[b] = min(…, x[i])`, `ors[b] |= 1 << (x[i] & 31)`,
/// `ands[b] &= !(1 << (x[i] & 31))`, `xors[b] ^= x[i]`.
#[tile_kernel(
    num_warps = 4,
    BLOCK = 128,
    requires = [
        mins.size(0) == maxes.size(0) && ors.size(0) == maxes.size(0),
        ands.size(0) == maxes.size(0) && xors.size(0) == maxes.size(0),
    ],
    uses = [load_vector, vector_block, elements]
)]
pub fn bucket_reduce<const BLOCK: usize>(
    x: Tensor<i32, 1>,
    maxes: Tensor<i32, 1>,
    mins: Tensor<i32, 1>,
    ors: Tensor<u32, 1>,
    ands: Tensor<u32, 1>,
    xors: Tensor<u32, 1>,
) {
    let (offs, mask, v) = load_vector::<BLOCK>(x, 0);
    let b = offs % maxes.size(0);
    atomic_max(elements(maxes, b), v, mask);
    atomic_min(elements(mins, b), v, mask, "acq_rel", "gpu");
    let bit = 1u32 << (v & 31).to::<u32>();
    atomic_or(elements(ors, b), bit, mask);
    atomic_and(elements(ands, b), !bit, mask);
    atomic_xor(elements(xors, b), v.to::<u32>(), mask, "relaxed", "cta");
}

/// `out[i] = atomic_add(counter[0], 1)` for `i < n` (`n` the length of `out`), as one tile
/// atomic per program on a tile of `BLOCK` pointers to the same counter: the old values are
/// `0 .. n` in some order. At `BLOCK = 32` with 4 warps the tile's layout holds each element on
/// several threads.
#[tile_kernel(num_warps = 4, BLOCK = [32, 256], uses = [vector_block, elements])]
pub fn take_numbers<const BLOCK: usize>(counter: Tensor<i32, 1>, out: Tensor<i32, 1>) {
    let (offs, mask) = vector_block::<BLOCK>(out);
    let old = atomic_add(counter + offs * 0, 1, mask);
    store(elements(out, offs), old, mask);
}

/// Scalar atomics, once per program `p`: `out[p, 0] = atomic_add(counter[0], 1)` (a ticket),
/// `out[p, 1] = atomic_cas(slots[p % 4], 0, p + 1)` (the first program of each slot finds 0),
/// `out[p, 2] = atomic_xchg(last[0], p)` (the programs form one chain from the initial value).
/// Grid: the rows of `out` (`[programs, 3]`).
#[tile_kernel(num_warps = 4, requires = [slots.size(0) == 4, out.size(1) == 3])]
pub fn tickets(
    counter: Tensor<i32, 1>,
    slots: Tensor<i32, 1>,
    last: Tensor<i32, 1>,
    out: Tensor<i32, 2>,
) {
    let p = program_id(0);
    let ticket = atomic_add(counter, 1);
    let seen = atomic_cas(slots + (p % 4) * slots.stride(0), 0, p + 1, "acquire");
    let before = atomic_xchg(last, p, "release", "gpu");
    let row = out + p * out.stride(0);
    store(row, ticket);
    store(row + out.stride(1), seen);
    store(row + 2 * out.stride(1), before);
}

/// Cross-entropy per row of `logits: [rows, n_cols]`: `loss[r] = logsumexp(logits[r, :]) -
/// logits[r, target[r]]`, the target read and the loss written as scalars (once per program);
/// rows whose target is negative (ignored) leave `loss[r]` as it was. `n_cols ≤ BLOCK`; grid:
/// the rows.
#[tile_kernel(
    num_warps = 4,
    BLOCK = 128,
    requires = [
        logits.size(1) <= BLOCK,
        target.size(0) == logits.size(0) && loss.size(0) == logits.size(0),
    ]
)]
pub fn row_loss<const BLOCK: usize>(
    logits: Tensor<f32, 2>,
    target: Tensor<i32, 1>,
    loss: Tensor<f32, 1>,
) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let line = logits + row * logits.stride(0);
    let x = load(
        line + cols * logits.stride(1),
        cols < logits.size(1),
        f32::NEG_INFINITY,
    );
    let top = x.max(0);
    let lse = log(exp(x - top).sum(0)) + top;
    let t = load(target + row * target.stride(0));
    let picked = load(line + t * logits.stride(1), t >= 0, 0.0);
    store(loss + row * loss.stride(0), lse - picked, t >= 0);
}
