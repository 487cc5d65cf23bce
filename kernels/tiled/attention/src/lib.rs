//! Flash attention forward (one pass, online softmax), as the `attention_kernel` of
//! `shared/bench/triton_ref.py`: `o = softmax(q · kᵀ · scale) · v` per batch and head over
//! `[B, H, N, D]` tensors of `T` (f16 or bf16), causal (`CAUSAL = 1`: query row `i` sees keys
//! `0..=i`) or not (`CAUSAL = 0`).
//!
//! The tensors may be strided views (heads interleaved row by row, `[B, N, H, D]` storage
//! transposed, is the usual one); the fast variant needs the last dimension contiguous and the
//! other strides multiples of 16 elements, and anything else runs the unaligned variant. `k`
//! and `v` have `N_k` rows (cross-attention when not causal) and the same strides; the
//! attribute's `requires` refuses, before anything runs, tensors of another head dimension than
//! `D`, `k`, `v` and `o` whose shapes do not match `q`'s, `k` and `v` of different strides, a
//! causal launch with `N_k ≠ N`, and a `scale` that is not positive.
//!
//! Each program computes `BM` query rows of one head (grid `(⌈N/BM⌉, B · H)`), walking the keys in
//! blocks of `BN`: `s = q · kᵀ` on tensor cores (f32 accumulator), scaled by
//! `scale · log₂(e)` so that `exp2` gives `exp` (`scale > 0`, so the row maximum is taken before
//! scaling and each score is scaled and shifted by one `fma`); the running row maximum `m_i`
//! and row sum `l_i` rescale the output accumulator by `exp2(m_old − m_new)` before `p · v` is
//! added, `p` being the probabilities of the block rounded to `T` (`p.to::<T>()`, taken from
//! `s`'s mma layout as the mma's `a` operand). A causal program stops at the block holding its
//! last row. Rows past `N` and keys past `N_k` are masked (keys as `−∞` scores, rows not
//! stored); the mask is computed only for the key blocks that reach past `N_k` or, causal, past
//! the program's first query row (an `if` on the block index, uniform across the program; the
//! others need none).
//!
//! At `num_stages` above 1 (2 at `D = 64`, 4 at `D = 128` on 8 warps: the faster on an H200;
//! 3 at `D = 128` on 4 warps, not compared there) the loop is
//! software-pipelined: on sm_90a `k` (through its transpose) and `v`, read by `load_block`, are
//! copied by TMA (`cp.async.bulk.tensor.4d`; by `cp.async` in the unaligned variant) into rings
//! of their own in the `wgmma` operands' NVMMA layouts, `q` is stored to shared
//! memory once before the loop, `p` is read from registers, and the group of `p · v` stays in
//! flight until the next iteration's `q · kᵀ` waits for its own.
//!
//! Offsets are `i32`: the launcher refuses a tensor whose elements lie 2³¹ or more apart.
//!
//! Tiles and registers (per thread, `32 · num_warps` threads): the `[BM, D]` pointer tiles of `q`
//! and `o` and the `[BN, D]` ones of `k` and `v` are 64-bit, the f32 accumulator `[BM, D]`, the
//! scores `[BM, BN]`. At `D = 128` a `[128, 128]` pointer tile needs 256 registers per thread at
//! 4 warps (past the language's 128 per tile), so `D = 128` runs at `BM = 64` with 4 warps or
//! `BM = 128` with 8.

#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

use tessera::tile_kernel;

/// The body of the attention kernels (one `#[tile_kernel]` per set of specialisations whose
/// tiles fit the register budget).
macro_rules! attention_kernel {
    ($(#[doc = $doc:tt])* $name:ident, num_warps = $warps:tt, num_stages = $stages:tt, BM = $bm:tt, BN = $bn:tt, D = $d:tt) => {
        $(#[doc = $doc])*
        #[tile_kernel(
            T = [f16, bf16],
            num_warps = $warps,
            num_stages = $stages,
            BM = $bm,
            BN = $bn,
            D = $d,
            CAUSAL = [0, 1],
            requires = [
                q.size(3) == D,
                k.size(0) == q.size(0) && k.size(1) == q.size(1) && k.size(3) == D,
                v.size(0) == k.size(0) && v.size(1) == k.size(1) && v.size(2) == k.size(2),
                v.size(3) == D,
                v.stride(0) == k.stride(0) && v.stride(1) == k.stride(1),
                v.stride(2) == k.stride(2) && v.stride(3) == k.stride(3),
                o.size(0) == q.size(0) && o.size(1) == q.size(1) && o.size(2) == q.size(2),
                o.size(3) == D,
                CAUSAL == 0 || k.size(2) == q.size(2),
                scale > 0.0,
            ]
        )]
        pub fn $name<T, const BM: usize, const BN: usize, const D: usize, const CAUSAL: usize>(
            q: Tensor<T, 4>,
            k: Tensor<T, 4>,
            v: Tensor<T, 4>,
            o: Tensor<T, 4>,
            scale: f32,
        ) {
            let pm = program_id(0);
            let (batch, head) = (program_id(1) / q.size(1), program_id(1) % q.size(1));
            let (seq, keys) = (q.size(2), k.size(2));
            let rm = pm * BM + arange(0, BM);
            let rd = arange(0, D);
            let q_offs = batch * q.stride(0)
                + head * q.stride(1)
                + rm.expand_dims(1) * q.stride(2)
                + rd.expand_dims(0) * q.stride(3);
            let row_ok = rm.expand_dims(1) < seq;
            let q_tile = load(q + q_offs, row_ok, 0.0);
            let mut m_i = full::<f32>([BM], f32::NEG_INFINITY);
            let mut l_i = zeros::<f32>([BM]);
            let mut acc = zeros::<f32>([BM, D]);
            // `scale > 0` (`requires`): the maximum of the scaled scores is the scaled maximum, so
            // each score is scaled and shifted by one fused multiply-add.
            let qk_scale = scale * 1.44269504;
            let end = if CAUSAL == 1 {
                minimum(keys, (pm + 1) * BM)
            } else {
                keys
            };
            // Keys below `edge` are seen by every row of the program: the blocks that end at or
            // before it need no mask.
            let edge = if CAUSAL == 1 {
                minimum(keys, pm * BM + 1)
            } else {
                keys
            };
            for j in 0..cdiv(end, BN) {
                let rn = j * BN + arange(0, BN);
                // Blocks of this head's keys and values (zeros past `keys`): copied by TMA in the
                // pipelined loop of the aligned sm_90a variant.
                let k_tile = load_block(k, [batch, head, j * BN, 0], [BN, D]);
                let v_tile = load_block(v, [batch, head, j * BN, 0], [BN, D]);
                let s = dot(q_tile, k_tile.trans());
                // Only the blocks reaching past `edge` hold a masked score.
                let s = if (j + 1) * BN > edge {
                    let in_seq = rn.expand_dims(0) < keys;
                    let keep = if CAUSAL == 1 {
                        in_seq & (rn.expand_dims(0) <= rm.expand_dims(1))
                    } else {
                        in_seq.broadcast_to([BM, BN])
                    };
                    where_(keep, s, f32::NEG_INFINITY)
                } else {
                    s
                };
                let m_new = maximum(m_i, s.max(1) * qk_scale);
                let p = exp2(fma(s, qk_scale, -m_new.expand_dims(1)));
                let alpha = exp2(m_i - m_new);
                l_i = fma(l_i, alpha, p.sum(1));
                acc = acc * alpha.expand_dims(1);
                acc = dot(p.to::<T>(), v_tile, acc);
                m_i = m_new;
            }
            let o_offs = batch * o.stride(0)
                + head * o.stride(1)
                + rm.expand_dims(1) * o.stride(2)
                + rd.expand_dims(0) * o.stride(3);
            store(o + o_offs, (acc / l_i.expand_dims(1)).to::<T>(), row_ok);
        }
    };
}

attention_kernel! {
    /// Flash attention forward at head dimension 64 (see the [module docs](self)): 128 query
    /// rows and 64 keys per step, 4 or 8 warps, 1 or 2 stages.
    tile_attention_d64, num_warps = [4, 8], num_stages = [1, 2], BM = 128, BN = 64, D = 64
}
attention_kernel! {
    /// Flash attention forward at head dimension 128 (see the [module docs](self)): 64 query
    /// rows and 64 keys per step on 4 warps (a `[128, 128]` pointer tile would need 256
    /// registers per thread at 4 warps), 1 or 3 stages.
    tile_attention_d128_w4, num_warps = 4, num_stages = [1, 3], BM = 64, BN = 64, D = 128
}
attention_kernel! {
    /// Flash attention forward at head dimension 128 (see the [module docs](self)): 128 query
    /// rows and 64 keys per step on 8 warps, 1 or 4 stages.
    tile_attention_d128_w8, num_warps = 8, num_stages = [1, 4], BM = 128, BN = 64, D = 128
}
