//! Probes of AMD's matrix cores: every `v_mfma` of the device layer on one wave, against
//! [`mfma_reference`], the products written out from the CDNA3 ISA's fragment definitions.
//! Built for amdgpu and the host (the emulator in AMD mode runs it); nvptx64 has no `v_mfma`.

use tessera::device::*;
use tessera::Ptr;

/// Words [`mfma_probe`] writes per lane: the accumulators of `32x32x8` f16 and bf16 (16 each),
/// `16x16x16` f16 and bf16 (4 each), `32x32x16` i8 (16) and `16x16x32` i8 (4), `32x32x16` f8e4m3
/// (16) and `16x16x32` f8e4m3 (4), the same of f8e5m2.
pub const MFMA_PROBE_WORDS: usize = 100;

tessera::device_kernel! {
    /// One wave (block (64, 1, 1); lane `l` = thread `l`) runs each `v_mfma` of the device layer
    /// once. Lane `l`'s fragments are words `4l, 4l + 1` (A) and `4l + 2, 4l + 3` (B) of
    /// `f16s` (f16 pairs, low half first), `bf16s` (bf16 pairs), `i8s` (four i8 a word, byte
    /// 0 first) and `f8s` (four f8 a word, read as e4m3 and as e5m2); its accumulator register
    /// `r` starts at `16l + r` (f32 or i32). It writes [`MFMA_PROBE_WORDS`] words at
    /// `out[100l]`: the results of `mfma_f32_32x32x8_f16`, `_bf16`, `mfma_f32_16x16x16_f16`,
    /// `_bf16`, `mfma_i32_32x32x16_i8`, `mfma_i32_16x16x32_i8`, `mfma_f32_32x32x16_f8e4m3`,
    /// `mfma_f32_16x16x32_f8e4m3`, `mfma_f32_32x32x16_f8e5m2` and `mfma_f32_16x16x32_f8e5m2`, in
    /// that order (f32 as bits).
    pub fn mfma_probe(
        f16s: Ptr<u32>,
        bf16s: Ptr<u32>,
        i8s: Ptr<u32>,
        f8s: Ptr<u32>,
        out: Ptr<u32>,
    ) => MFMA_PROBE {
        let l = thread_idx_x();
        let fragments = |x: Ptr<u32>| {
            let w = ld_global_v4(x.offset(4 * l as isize), true, [0u32; 4]);
            ([w[0], w[1]], [w[2], w[3]])
        };
        let c16: [f32; 16] = core::array::from_fn(|r| (16 * l + r as u32) as f32);
        let c4: [f32; 4] = core::array::from_fn(|r| (16 * l + r as u32) as f32);
        let (h_a, h_b) = fragments(f16s);
        let (b_a, b_b) = fragments(bf16s);
        let (i_a, i_b) = fragments(i8s);
        let (q_a, q_b) = fragments(f8s);
        let o = out.offset((MFMA_PROBE_WORDS as u32 * l) as isize);
        let o = store_words(o, mfma_f32_32x32x8_f16(h_a, h_b, c16).map(f32::to_bits));
        let o = store_words(o, mfma_f32_32x32x8_bf16(b_a, b_b, c16).map(f32::to_bits));
        let o = store_words(o, mfma_f32_16x16x16_f16(h_a, h_b, c4).map(f32::to_bits));
        let o = store_words(o, mfma_f32_16x16x16_bf16(b_a, b_b, c4).map(f32::to_bits));
        let o = store_words(o, mfma_i32_32x32x16_i8(i_a, i_b, c16.map(|x| x as i32)).map(|x| x as u32));
        let o = store_words(o, mfma_i32_16x16x32_i8(i_a, i_b, c4.map(|x| x as i32)).map(|x| x as u32));
        let o = store_words(o, mfma_f32_32x32x16_f8e4m3(q_a, q_b, c16).map(f32::to_bits));
        let o = store_words(o, mfma_f32_16x16x32_f8e4m3(q_a, q_b, c4).map(f32::to_bits));
        let o = store_words(o, mfma_f32_32x32x16_f8e5m2(q_a, q_b, c16).map(f32::to_bits));
        store_words(o, mfma_f32_16x16x32_f8e5m2(q_a, q_b, c4).map(f32::to_bits));
    }
}

/// Stores `words` at `o` by 128-bit stores (`N` a multiple of 4; the loop unrolled, the words
/// staying in registers) and returns the address after them.
#[inline(always)]
#[track_caller]
unsafe fn store_words<const N: usize>(o: Ptr<u32>, words: [u32; N]) -> Ptr<u32> {
    for j in 0..N / 4 {
        let v = [
            words[4 * j],
            words[4 * j + 1],
            words[4 * j + 2],
            words[4 * j + 3],
        ];
        st_global_v4(o.offset(4 * j as isize), true, v);
    }
    o.offset(N as isize)
}

/// One `v_mfma` as the CDNA3 ISA defines it, for the 64 lanes of a wave: `nd` its M = N, `kw`
/// the elements of a lane's A and B fragments, `a(l, i)` / `b(l, i)` element `i` of lane `l`'s,
/// `c(l, r)` its accumulator register `r`. A's row `l % nd`, B's column `l % nd`, both at K
/// `kw·(l / nd) + i`; D's register `r` of lane `l` at column `l % nd` and row
/// `8·(r / 4) + 4·(l / 32) + r % 4` (`nd` 32) or `4·(l / 16) + r` (`nd` 16). `D[l][r]`, exact
/// (f64 sums of products of f16/bf16/i8 values; the caller rounds).
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
fn mfma_by_the_isa(
    nd: usize,
    kw: usize,
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    c: impl Fn(usize, usize) -> f64,
) -> Vec<Vec<f64>> {
    let k_total = kw * 64 / nd;
    let registers = nd * nd / 64;
    let a_at = |row: usize, k: usize| a(row + nd * (k / kw), k % kw);
    let b_at = |k: usize, col: usize| b(col + nd * (k / kw), k % kw);
    (0..64)
        .map(|l| {
            (0..registers)
                .map(|r| {
                    let col = l % nd;
                    let row = if nd == 32 {
                        8 * (r / 4) + 4 * (l / 32) + r % 4
                    } else {
                        4 * (l / 16) + r
                    };
                    c(l, r)
                        + (0..k_total)
                            .map(|k| a_at(row, k) * b_at(k, col))
                            .sum::<f64>()
                })
                .collect()
        })
        .collect()
}

/// Element `i` of lane `l`'s fragment `operand` (0: A, 1: B) in the probe's input `x`: bits
/// `bits·(i % n)..` of word `4l + 2·operand + i / n`, `n = 32 / bits` elements a word.
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
fn fragment_element(x: &[u32], bits: usize, operand: usize, l: usize, i: usize) -> u32 {
    let n = 32 / bits;
    let word = x[4 * l + 2 * operand + i / n];
    (word >> (bits * (i % n))) & (u32::MAX >> (32 - bits))
}

/// The host's reference of [`mfma_probe`] on the inputs `f16s`, `bf16s`, `i8s`, `f8s` (256
/// words each): per lane its [`MFMA_PROBE_WORDS`] words, the f32 results rounded once from the exact
/// sums and the i32 ones wrapped. Bit-exact for inputs whose partial sums all fit f32's
/// mantissa (small integers, say), where the order of the hardware's additions cannot show.
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
pub fn mfma_reference(f16s: &[u32], bf16s: &[u32], i8s: &[u32], f8s: &[u32]) -> Vec<u32> {
    use tessera::dtype::{bf16, f16, f8e4m3, f8e5m2};
    let c = |l: usize, r: usize| (16 * l + r) as f64;
    // One instruction's D (per lane, per register) on the elements `value(operand, l, i)`.
    let d = |nd: usize, kw: usize, value: &dyn Fn(usize, usize, usize) -> f64| {
        mfma_by_the_isa(nd, kw, |l, i| value(0, l, i), |l, i| value(1, l, i), c)
    };
    let of_f16 = |op, l, i| f64::from(f16(fragment_element(f16s, 16, op, l, i) as u16).to_f32());
    let of_bf16 = |op, l, i| f64::from(bf16(fragment_element(bf16s, 16, op, l, i) as u16).to_f32());
    let of_i8 = |op, l, i| f64::from(fragment_element(i8s, 8, op, l, i) as u8 as i8);
    let of_e4m3 =
        |op, l, i| f64::from(f8e4m3::from_bits(fragment_element(f8s, 8, op, l, i) as u8).to_f32());
    let of_e5m2 =
        |op, l, i| f64::from(f8e5m2::from_bits(fragment_element(f8s, 8, op, l, i) as u8).to_f32());
    let float = |d: Vec<Vec<f64>>| -> Vec<Vec<u32>> {
        d.iter()
            .map(|v| v.iter().map(|&x| (x as f32).to_bits()).collect())
            .collect()
    };
    let int = |d: Vec<Vec<f64>>| -> Vec<Vec<u32>> {
        d.iter()
            .map(|v| v.iter().map(|&x| x as i64 as i32 as u32).collect())
            .collect()
    };
    // In the probe's order: 32x32x8 f16, bf16; 16x16x16 f16, bf16; 32x32x16 i8; 16x16x32 i8;
    // 32x32x16 and 16x16x32 f8e4m3, then f8e5m2.
    let parts = [
        float(d(32, 4, &of_f16)),
        float(d(32, 4, &of_bf16)),
        float(d(16, 4, &of_f16)),
        float(d(16, 4, &of_bf16)),
        int(d(32, 8, &of_i8)),
        int(d(16, 8, &of_i8)),
        float(d(32, 8, &of_e4m3)),
        float(d(16, 8, &of_e4m3)),
        float(d(32, 8, &of_e5m2)),
        float(d(16, 8, &of_e5m2)),
    ];
    (0..64)
        .flat_map(|l| parts.iter().flat_map(move |p| p[l].iter().copied()))
        .collect()
}
