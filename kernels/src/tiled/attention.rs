//! Flash attention forward (one pass, online softmax), as the `attention_kernel` of
//! `shared/bench/triton_ref.py`: `o = softmax(q · kᵀ · scale) · v` per (batch · head) over
//! contiguous `[BH, SEQ, D]` tensors of `T` (f16 or bf16), causal (`CAUSAL = 1`: query row `i`
//! sees keys `0..=i`) or not (`CAUSAL = 0`).
//!
//! Each program computes `BM` query rows of one head (grid `(⌈SEQ/BM⌉, BH)`), walking the keys in
//! blocks of `BN`: `s = q · kᵀ` on tensor cores (f32 accumulator), scaled by
//! `scale · log₂(e)` so that `exp2` gives `exp`; the running row maximum `m_i` and row sum `l_i`
//! rescale the output accumulator by `exp2(m_old − m_new)` before `p · v` is added, `p` being the
//! probabilities of the block rounded to `T` (`p.to::<T>()`, taken from `s`'s mma layout as the
//! mma's `a` operand). A causal program stops at the block holding its last row. Rows and keys
//! past `SEQ` are masked (keys as `−∞` scores, rows not stored).
//!
//! At `num_stages` above 1 (2 at `D = 64`, 4 at `D = 128` on 8 warps: the faster on an H200;
//! 3 at `D = 128` on 4 warps, not compared there) the loop is
//! software-pipelined: on sm_90a `k` (through its transpose) and `v` are copied by `cp.async`
//! into rings of their own in the `wgmma` operands' NVMMA layouts, `q` is stored to shared
//! memory once before the loop, `p` is read from registers, and the group of `p · v` stays in
//! flight until the next iteration's `q · kᵀ` waits for its own.
//!
//! Offsets are `i32`: `BH · SEQ · D` must be below 2³¹.
//!
//! Tiles and registers (per thread, `32 · num_warps` threads): the `[BM, D]` pointer tiles of `q`
//! and `o` and the `[BN, D]` ones of `k` and `v` are 64-bit, the f32 accumulator `[BM, D]`, the
//! scores `[BM, BN]`. At `D = 128` a `[128, 128]` pointer tile needs 256 registers per thread at
//! 4 warps (past the language's 128 per tile), so `D = 128` runs at `BM = 64` with 4 warps or
//! `BM = 128` with 8.

use tessera::{tile_kernel, Ptr};

/// The body of the attention kernels (one `#[tile_kernel]` per set of specialisations whose
/// tiles fit the register budget).
macro_rules! attention_kernel {
    ($(#[doc = $doc:tt])* $name:ident, num_warps = $warps:tt, num_stages = $stages:tt, BM = $bm:tt, BN = $bn:tt, D = $d:tt) => {
        $(#[doc = $doc])*
        #[tile_kernel(T = [f16, bf16], num_warps = $warps, num_stages = $stages, BM = $bm, BN = $bn, D = $d, CAUSAL = [0, 1])]
        pub fn $name<T, const BM: usize, const BN: usize, const D: usize, const CAUSAL: usize>(
            q: Ptr<T>,
            k: Ptr<T>,
            v: Ptr<T>,
            o: Ptr<T>,
            seq: i32,
            scale: f32,
        ) {
            let pm = program_id(0);
            let base = program_id(1) * seq * D;
            let rm = pm * BM + arange(0, BM);
            let rd = arange(0, D);
            let q_offs = base + rm.expand_dims(1) * D + rd.expand_dims(0);
            let row_ok = rm.expand_dims(1) < seq;
            let q_tile = load(q + q_offs, row_ok, 0.0);
            let mut m_i = full::<f32>([BM], f32::NEG_INFINITY);
            let mut l_i = zeros::<f32>([BM]);
            let mut acc = zeros::<f32>([BM, D]);
            let qk_scale = scale * 1.44269504;
            let end = if CAUSAL == 1 {
                minimum(seq, (pm + 1) * BM)
            } else {
                seq
            };
            for j in 0..cdiv(end, BN) {
                let rn = j * BN + arange(0, BN);
                let kv_offs = base + rn.expand_dims(1) * D + rd.expand_dims(0);
                let key_ok = rn.expand_dims(1) < seq;
                let k_tile = load(k + kv_offs, key_ok, 0.0);
                let v_tile = load(v + kv_offs, key_ok, 0.0);
                let s = dot(q_tile, k_tile.trans()) * qk_scale;
                let in_seq = rn.expand_dims(0) < seq;
                let keep = if CAUSAL == 1 {
                    in_seq & (rn.expand_dims(0) <= rm.expand_dims(1))
                } else {
                    in_seq.broadcast_to([BM, BN])
                };
                let s = where_(keep, s, f32::NEG_INFINITY);
                let m_new = maximum(m_i, s.max(1));
                let p = exp2(s - m_new.expand_dims(1));
                let alpha = exp2(m_i - m_new);
                l_i = l_i * alpha + p.sum(1);
                acc = acc * alpha.expand_dims(1);
                acc = dot(p.to::<T>(), v_tile, acc);
                m_i = m_new;
            }
            store(
                o + q_offs,
                (acc / l_i.expand_dims(1)).to::<T>(),
                row_ok,
            );
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
