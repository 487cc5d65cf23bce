//! Tutorial 4: flash attention forward, `o = softmax(q · kᵀ · scale) · v` per head, in one pass
//! over the keys with an online softmax, causal or not.

use std::error::Error;
use tessera::launch::{Device, Module};
use tessera::{f16, tile_kernel, Ptr};

// ANCHOR: kernel
/// Flash attention over contiguous `[heads, seq, D]` tensors: each program computes `BM` query
/// rows of one head (grid `(⌈seq / BM⌉, heads)`) and walks the keys in blocks of `BN`, keeping
/// the running row maximum `m_i`, row sum `l_i` and output accumulator `acc`. With
/// `CAUSAL = 1`, query row `i` sees keys `0..=i` only.
#[tile_kernel(num_warps = 4, BM = 64, BN = 64, D = 64, CAUSAL = [0, 1])]
pub fn attention<const BM: usize, const BN: usize, const D: usize, const CAUSAL: usize>(
    q: Ptr<f16>,
    k: Ptr<f16>,
    v: Ptr<f16>,
    o: Ptr<f16>,
    seq: i32,
    scale: f32,
) {
    let pm = program_id(0);
    let base = program_id(1) * seq * D; // this head's first element
    let rm = pm * BM + arange(0, BM);
    let rd = arange(0, D);
    let q_offs = base + rm.expand_dims(1) * D + rd.expand_dims(0);
    let row_ok = rm.expand_dims(1) < seq;
    let q_tile = load(q + q_offs, row_ok, 0.0);
    let mut m_i = full::<f32>([BM], f32::NEG_INFINITY);
    let mut l_i = zeros::<f32>([BM]);
    let mut acc = zeros::<f32>([BM, D]);
    let qk_scale = scale * 1.44269504; // log2(e): exp2 below computes exp
    let end = if CAUSAL == 1 { minimum(seq, (pm + 1) * BM) } else { seq };
    for j in 0..cdiv(end, BN) {
        let rn = j * BN + arange(0, BN);
        let kv_offs = base + rn.expand_dims(1) * D + rd.expand_dims(0);
        let key_ok = rn.expand_dims(1) < seq;
        let k_tile = load(k + kv_offs, key_ok, 0.0);
        let v_tile = load(v + kv_offs, key_ok, 0.0);
        let s = dot(q_tile, k_tile.trans()) * qk_scale; // f32[BM, BN] scores
        let in_seq = rn.expand_dims(0) < seq;
        let keep = if CAUSAL == 1 {
            in_seq & (rn.expand_dims(0) <= rm.expand_dims(1))
        } else {
            in_seq.broadcast_to([BM, BN])
        };
        let s = where_(keep, s, f32::NEG_INFINITY);
        let m_new = maximum(m_i, s.max(1));
        let p = exp2(s - m_new.expand_dims(1));
        let alpha = exp2(m_i - m_new); // rescales what was summed under the old maximum
        l_i = l_i * alpha + p.sum(1);
        acc = acc * alpha.expand_dims(1);
        acc = dot(p.to::<f16>(), v_tile, acc);
        m_i = m_new;
    }
    store(o + q_offs, (acc / l_i.expand_dims(1)).to::<f16>(), row_ok);
}
// ANCHOR_END: kernel

// ANCHOR: host
/// Attention of `q`, `k`, `v` (each `[heads, seq, 64]`, contiguous) on `device`.
pub fn attention_f16(
    device: &Device,
    module: &Module,
    (q, k, v): (&[f16], &[f16], &[f16]),
    (heads, seq): (usize, usize),
    causal: bool,
) -> Result<Vec<f16>, Box<dyn Error>> {
    let d = 64;
    let (dq, dk, dv) = (device.upload(q)?, device.upload(k)?, device.upload(v)?);
    let out = device.zeros::<f16>(heads * seq * d)?;
    let consts = attention::Consts { BM: 64, BN: 64, D: d, CAUSAL: causal as usize };
    let grid = |c: &attention::Consts| (seq.div_ceil(c.BM) as u32, heads as u32);
    let scale = 1.0 / (d as f32).sqrt();
    let (q, k, v, o) = (dq.ptr(), dk.ptr(), dv.ptr(), out.ptr());
    attention::launch(device, module, consts, grid, q, k, v, o, seq as i32, scale)?;
    Ok(out.download()?)
}
// ANCHOR_END: host

#[cfg(test)]
mod tests {
    use super::attention_f16;
    use tessera::f16;
    use tessera::launch::Device;

    /// Attention in f64 from the f16 inputs.
    fn reference(
        q: &[f16],
        k: &[f16],
        v: &[f16],
        heads: usize,
        seq: usize,
        causal: bool,
    ) -> Vec<f64> {
        let d = 64;
        let at =
            |t: &[f16], h: usize, row: usize, c: usize| t[(h * seq + row) * d + c].to_f32() as f64;
        let mut out = vec![0.0; heads * seq * d];
        for h in 0..heads {
            for i in 0..seq {
                let keys = if causal { i + 1 } else { seq };
                let s: Vec<f64> = (0..keys)
                    .map(|j| (0..d).map(|c| at(q, h, i, c) * at(k, h, j, c)).sum::<f64>() / 8.0)
                    .collect();
                let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let p: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
                let l: f64 = p.iter().sum();
                for c in 0..d {
                    out[(h * seq + i) * d + c] =
                        (0..keys).map(|j| p[j] * at(v, h, j, c)).sum::<f64>() / l;
                }
            }
        }
        out
    }

    // ANCHOR: test
    #[test]
    fn attention_matches_the_cpu() {
        let device = Device::emulator();
        let module = device.host_module().unwrap();
        let (heads, seq) = (2, 100); // 100 rows: the second block of rows and keys is ragged
        let input = |seed| -> Vec<f16> {
            crate::values(seed, heads * seq * 64, 2.0).into_iter().map(f16::from_f32).collect()
        };
        let (q, k, v) = (input(11), input(12), input(13));
        for causal in [false, true] {
            let got = attention_f16(&device, &module, (&q, &k, &v), (heads, seq), causal).unwrap();
            let want = reference(&q, &k, &v, heads, seq, causal);
            for (i, (g, &w)) in got.iter().zip(&want).enumerate() {
                // p rounded to f16 before p · v, and the result rounded to f16.
                let g = g.to_f32() as f64;
                assert!(
                    (g - w).abs() <= 4e-3 * (1.0 + w.abs()),
                    "causal {causal} [{i}]: {g} vs {w}"
                );
            }
        }
    }
    // ANCHOR_END: test
}
