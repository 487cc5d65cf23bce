//! Deterministic inputs: the seeded test generator with the draws the checks add, and the f32
//! bit patterns the conversion checks feed to `convert_probe` (every 16-bit pattern, rounding
//! midpoints of every narrow format, saturation and integer edges, NaN payloads, subnormals).

use tessera::dtype::{bf16, f16, f8e4m3, f8e5m2};

pub use tessera_test_support::Rng;

/// The draws of the parity checks beyond those of the shared test [`Rng`].
pub trait ParityDraws {
    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u32) -> bool;

    /// Uniform integer in `lo..=hi` (negative bounds too).
    fn signed_range(&mut self, lo: i32, hi: i32) -> i32;

    /// A random finite f32 whose exponent field is uniform over all finite exponents
    /// (subnormals and the largest values included).
    fn finite_f32(&mut self) -> f32;
}

impl ParityDraws for Rng {
    fn one_in(&mut self, n: u32) -> bool {
        self.next_u32().is_multiple_of(n)
    }

    fn signed_range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i32
    }

    fn finite_f32(&mut self) -> f32 {
        loop {
            let w = self.next_u32();
            if w & 0x7f80_0000 != 0x7f80_0000 {
                return f32::from_bits(w);
            }
        }
    }
}

/// The midpoint between adjacent f32 values `lo < hi` (exact: both are values of a format with
/// fewer significand bits than f32) and its two f32 neighbours.
fn midpoint_and_neighbours(lo: f32, hi: f32, out: &mut Vec<u32>) {
    let mid = ((lo as f64 + hi as f64) / 2.0) as f32;
    debug_assert_eq!(mid as f64, (lo as f64 + hi as f64) / 2.0);
    let bits = mid.to_bits();
    out.extend([bits.wrapping_sub(1), bits, bits + 1]);
}

/// Both signs of every pattern in `positive`.
fn both_signs(positive: Vec<u32>) -> Vec<u32> {
    let negative: Vec<u32> = positive.iter().map(|w| w ^ 0x8000_0000).collect();
    let mut all = positive;
    all.extend(negative);
    all
}

/// Every f16 rounding midpoint (between each pair of adjacent positive f16 values, and between
/// the largest finite value and the overflow threshold 65520), with its f32 neighbours, both
/// signs.
pub fn f16_midpoints() -> Vec<u32> {
    let mut out = Vec::new();
    for h in 0..0x7bffu16 {
        midpoint_and_neighbours(f16(h).to_f32(), f16(h + 1).to_f32(), &mut out);
    }
    // 65504 and 65536 (the next value with an unbounded exponent): the midpoint 65520 rounds
    // to infinity.
    midpoint_and_neighbours(65504.0, 65536.0, &mut out);
    both_signs(out)
}

/// Every bf16 rounding midpoint: the f32 pattern `h << 16 | 0x8000` and its neighbours for
/// every positive finite bf16 `h`, both signs.
pub fn bf16_midpoints() -> Vec<u32> {
    let mut out = Vec::new();
    for h in 0..=0x7f7fu32 {
        let mid = h << 16 | 0x8000;
        out.extend([mid - 1, mid, mid + 1]);
    }
    debug_assert_eq!(bf16(0x7f7f).to_f32(), f32::from_bits(0x7f7f_0000));
    both_signs(out)
}

/// f8 rounding and saturation: every e4m3 and e5m2 midpoint with its neighbours, the
/// saturation thresholds, and values far beyond them, both signs.
pub fn f8_edges() -> Vec<u32> {
    let mut out = Vec::new();
    for p in 0..0x7eu8 {
        midpoint_and_neighbours(f8e4m3(p).to_f32(), f8e4m3(p + 1).to_f32(), &mut out);
    }
    for p in 0..0x7bu8 {
        midpoint_and_neighbours(f8e5m2(p).to_f32(), f8e5m2(p + 1).to_f32(), &mut out);
    }
    // Beyond the largest finite values (448 and 57344): the midpoints to the next value of an
    // unbounded exponent (480, 61440), the values themselves, powers of two and infinity.
    midpoint_and_neighbours(448.0, 480.0, &mut out);
    midpoint_and_neighbours(57344.0, 61440.0, &mut out);
    for v in [
        448.0f32, 480.0, 512.0, 57344.0, 61440.0, 65536.0, 1e6, 1e30, 3.4e38,
    ] {
        out.push(v.to_bits());
    }
    out.push(f32::INFINITY.to_bits());
    // Every e4m3 and e5m2 value itself (exact conversions).
    for p in 0..0x7fu8 {
        out.push(f8e4m3(p).to_f32().to_bits());
        out.push(f8e5m2(p).to_f32().to_bits());
    }
    both_signs(out)
}

/// Float → integer and integer → float edges: half-integers (ties), the i32/u32 range limits
/// as f32, integers around powers of two that f32 cannot represent exactly (as `i32`/`u32` bit
/// patterns for the int → float conversions).
pub fn integer_edges() -> Vec<u32> {
    let mut floats: Vec<f32> = Vec::new();
    for m in -40i32..40 {
        floats.extend([m as f32 + 0.5, m as f32 + 0.25, m as f32 + 0.75]);
    }
    for e in [20, 22, 23, 24] {
        let p = (1u32 << e) as f32;
        floats.extend([p - 1.5, p - 0.5, p + 0.5, p + 1.5]);
    }
    floats.extend([
        -0.0,
        0.49999997,
        0.5,
        -0.49999997,
        -0.5,
        -0.99999994,
        -1.0,
        2147483520.0, // largest f32 below 2^31
        2147483648.0, // 2^31: overflows i32
        -2147483648.0,
        -2147483904.0, // next below -2^31: saturates
        4294967040.0,  // largest f32 below 2^32
        4294967296.0,  // 2^32: overflows u32
        1e10,
        -1e10,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ]);
    let mut out: Vec<u32> = floats.iter().map(|x| x.to_bits()).collect();
    for e in 23..32u32 {
        for d in [-3i64, -1, 0, 1, 2, 3, 5] {
            let v = ((1i64 << e) + d) as u32;
            out.extend([v, v.wrapping_neg()]);
        }
    }
    out.extend([
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_ffff,
        0xffff_ff7f,
        0xffff_ff80,
        0xffff_ff81,
    ]);
    out
}

/// NaNs with various payloads and signs, infinities, zeros, f32 subnormals and extremes.
pub fn special_f32() -> Vec<u32> {
    both_signs(vec![
        0x7f80_0001, // signalling NaN, smallest payload
        0x7fa0_0000,
        0x7fbf_ffff, // signalling NaN, largest payload
        0x7fc0_0000, // quiet NaN
        0x7fc0_0001,
        0x7fd5_5555,
        0x7fff_ffff, // the GPU's canonical NaN
        0x7f80_0000, // infinity
        0x0000_0000,
        0x0000_0001, // smallest subnormal
        0x0000_0002,
        0x0000_0003,
        0x0040_0000,
        0x007f_ffff, // largest subnormal
        0x0080_0000, // smallest normal
        0x0080_0001,
        0x337f_ffff, // just below 2^-24 (half the smallest f16 subnormal is 2^-25)
        0x3300_0000, // 2^-25
        0x3300_0001,
        0x3380_0000, // 2^-24: smallest f16 subnormal
        0x3880_0000, // 2^-14: smallest f16 normal
        0x387f_ffff,
        0x7f7f_ffff, // largest finite
        0x7f7f_8000,
        0x3f80_0000,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Below a midpoint rounds down, above rounds up: the inputs sit on the rounding edges.
    #[test]
    fn midpoints_are_rounding_edges() {
        let f16_edges = f16_midpoints();
        assert_eq!(f16_edges.len(), 2 * 3 * 0x7bff + 6);
        for triple in f16_edges.chunks(3) {
            let [below, mid, above] = [triple[0], triple[1], triple[2]].map(f32::from_bits);
            let (lo, hi) = (f16::from_f32(below), f16::from_f32(above));
            assert_eq!(hi.to_bits().wrapping_sub(lo.to_bits()), 1, "{mid}");
            let rounded = f16::from_f32(mid).to_bits();
            assert!(rounded == lo.to_bits() || rounded == hi.to_bits());
            assert_eq!(rounded % 2, 0, "ties go to the even pattern: {mid}");
        }
        for triple in bf16_midpoints().chunks(3) {
            let (lo, hi) = (
                bf16::from_f32(f32::from_bits(triple[0])),
                bf16::from_f32(f32::from_bits(triple[2])),
            );
            assert_eq!(hi.to_bits() - lo.to_bits(), 1);
        }
        let f8 = f8_edges();
        assert!(f8.contains(&464f32.to_bits()) && f8.contains(&(-59392f32).to_bits()));
    }

    #[test]
    fn specials_include_both_nan_kinds_and_subnormals() {
        let s = special_f32();
        assert!(s.contains(&0x7f80_0001) && s.contains(&0xffc0_0000) && s.contains(&0x8000_0001));
        assert!(integer_edges().contains(&2147483648f32.to_bits()));
    }
}
