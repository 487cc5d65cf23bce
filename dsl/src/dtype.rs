//! Storage types for the narrow floating-point formats: [`f16`](struct@f16), [`bf16`], [`f8e4m3`], [`f8e5m2`].
//!
//! Each is a `#[repr(transparent)]` wrapper of its bit pattern, so a buffer of them has exactly the
//! memory layout the GPU expects. Conversions are pure integer code (usable on the host, in the
//! emulator and on the device) and are **bit-identical to the PTX `cvt` instructions** that the
//! device runtime layer ([`crate::device`]) uses on the GPU:
//!
//! | conversion | PTX | rounding | overflow | NaN result |
//! |---|---|---|---|---|
//! | f32 → f16 | `cvt.rn.f16.f32` | nearest-even | ±inf | `0x7fff` |
//! | f32 → bf16 | `cvt.rn.bf16.f32` | nearest-even | ±inf | `0x7fff` |
//! | f32 → e4m3 | `cvt.rn.satfinite.e4m3x2.f32` | nearest-even | ±448 (max finite) | `0x7f` |
//! | f32 → e5m2 | `cvt.rn.satfinite.e5m2x2.f32` | nearest-even | ±57344 (max finite, also for ±inf) | `0x7f` |
//! | f16 → f32 | `cvt.f32.f16` | exact | — | `0x7fffffff` |
//! | bf16 → f32 | `shl.b32 d, a, 16` | exact | — | payload kept |
//! | e4m3/e5m2 → f16 | `cvt.rn.f16x2.e4m3x2` / `.e5m2x2` | exact | — | `0x7fff` |
//!
//! Subnormals are kept in every direction (no flush to zero). The NaN encodings follow NVIDIA's
//! reference conversions (`cuda_fp16.hpp`, `cuda_bf16.hpp`, `cuda_fp8.hpp`: NaN results are the
//! canonical positive NaN, the input sign and payload are dropped). e4m3 is the OCP "E4M3FN"
//! format: bias 7, no infinities, `S.1111.111` is NaN, largest finite `S.1111.110` = ±448.
//! e5m2 is IEEE-like: bias 15, infinities and NaNs, largest finite ±57344: `S.11111.00` is
//! ±inf, `S.11111.01`, `.10` and `.11` are NaNs (0x7f, the all-ones pattern, is what the hardware
//! conversion produces).

use core::cmp::Ordering;
use core::fmt;

/// Description of a binary floating-point format narrower than f32.
struct Format {
    exp_bits: u32,
    man_bits: u32,
    bias: i32,
    /// Bit pattern (without sign) of the largest finite value.
    max_finite: u32,
    /// Bit pattern (without sign) of +infinity, `None` if the format has none.
    infinity: Option<u32>,
    /// Canonical NaN produced by conversions into this format.
    nan: u32,
    /// `true`: finite overflow and ±inf saturate to ±max_finite (`.satfinite`).
    saturate: bool,
    /// `true`: decode by shifting the bits into the top of an f32 (bf16), keeping NaN payloads.
    decode_by_shift: bool,
}

const F16: Format = Format {
    exp_bits: 5,
    man_bits: 10,
    bias: 15,
    max_finite: 0x7bff,
    infinity: Some(F16_INFINITY),
    nan: 0x7fff,
    saturate: false,
    decode_by_shift: false,
};
const BF16: Format = Format {
    exp_bits: 8,
    man_bits: 7,
    bias: 127,
    max_finite: 0x7f7f,
    infinity: Some(0x7f80),
    nan: 0x7fff,
    saturate: false,
    decode_by_shift: true,
};
const E4M3: Format = Format {
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    max_finite: 0x7e,
    infinity: None,
    nan: 0x7f,
    saturate: true,
    decode_by_shift: false,
};
const E5M2: Format = Format {
    exp_bits: 5,
    man_bits: 2,
    bias: 15,
    max_finite: 0x7b,
    infinity: Some(0x7c),
    // Measured on sm_90 (H100): `cvt.rn.satfinite.e5m2x2.f32` gives 0x7f for every NaN input,
    // whatever its sign and payload. 0x7d, 0x7e and 0x7f all decode as NaN.
    nan: 0x7f,
    saturate: true,
    decode_by_shift: false,
};

impl Format {
    #[inline]
    const fn sign_bit(&self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }

    /// Rounds `x` to this format, round-to-nearest-even, returning the bit pattern.
    #[inline]
    const fn round_f32(&self, x: f32) -> u32 {
        let u = x.to_bits();
        let sign = if u >> 31 != 0 { self.sign_bit() } else { 0 };
        let a = u & 0x7fff_ffff;
        if a > 0x7f80_0000 {
            return self.nan;
        }
        if a == 0x7f80_0000 {
            return sign
                | match self.infinity {
                    Some(inf) if !self.saturate => inf,
                    _ => self.max_finite,
                };
        }
        if a == 0 {
            return sign;
        }
        // |x| = sig * 2^e2 with sig < 2^24.
        let exp_field = (a >> 23) as i32;
        let (sig, e2) = if exp_field == 0 {
            (a, -149)
        } else {
            (a & 0x7f_ffff | 0x80_0000, exp_field - 150)
        };
        let log2 = 31 - sig.leading_zeros() as i32 + e2;
        let man = self.man_bits as i32;
        // Exponent of the target quantum (unit in the last place) at this magnitude.
        let min_quantum = 1 - self.bias - man;
        let quantum = if log2 - man > min_quantum {
            log2 - man
        } else {
            min_quantum
        };
        // Always > 0: f32 carries more mantissa bits than any target format here.
        let shift = (quantum - e2) as u32;
        let q = if shift >= 32 {
            0 // |x| < 2^(quantum-8): far below half a quantum.
        } else {
            let q = sig >> shift;
            let rem = sig & ((1u32 << shift) - 1);
            let half = 1u32 << (shift - 1);
            if rem > half || (rem == half && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        };
        // One formula for normals and subnormals; a mantissa carry moves into the exponent field.
        let bits =
            (((quantum + self.bias + man) as u32) << self.man_bits) + q - (1 << self.man_bits);
        let bits = if q == 0 { 0 } else { bits };
        if bits > self.max_finite {
            return sign
                | match self.infinity {
                    Some(inf) if !self.saturate => inf,
                    _ => self.max_finite,
                };
        }
        sign | bits
    }

    /// `bits` taken apart: sign, magnitude, exponent field, mantissa, and whether it is an
    /// infinity or a NaN of this format.
    #[inline]
    const fn parts(&self, bits: u32) -> Parts {
        let mag = bits & (self.sign_bit() - 1);
        let exp_field = mag >> self.man_bits;
        let class = match self.infinity {
            Some(inf) if mag == inf => Class::Infinity,
            Some(_) if exp_field == (1 << self.exp_bits) - 1 => Class::Nan,
            None if mag > self.max_finite => Class::Nan,
            _ => Class::Finite,
        };
        Parts {
            negative: bits & self.sign_bit() != 0,
            mag,
            exp_field,
            man: mag & ((1 << self.man_bits) - 1),
            class,
        }
    }

    /// The f16 bits of the value of `bits`, exactly, for a format no wider than f16 (f8): the
    /// exponent rebiased and the mantissa shifted, a subnormal normalised; ±inf as f16's, NaN as
    /// f16's canonical `0x7fff` (what rounding [`decode`](Self::decode)'s f32 gives). Integer
    /// operations only: what the f8 → f16 widening compiles to where no instruction does it.
    #[inline]
    const fn widen_to_f16_bits(&self, bits: u32) -> u16 {
        let Parts {
            negative,
            exp_field,
            man,
            class,
            ..
        } = self.parts(bits);
        let sign = if negative { 0x8000u32 } else { 0 };
        match class {
            Class::Infinity => return (sign | F16_INFINITY) as u16,
            Class::Nan => return F16.nan as u16,
            Class::Finite => {}
        }
        let up = F16.man_bits - self.man_bits;
        let rebias = (F16.bias - self.bias) as u32;
        if exp_field != 0 {
            return (sign | ((exp_field + rebias) << F16.man_bits) | (man << up)) as u16;
        }
        if man == 0 || rebias == 0 {
            // ±0; or f16's own subnormal (e5m2: its subnormals are f16's with fewer bits).
            return (sign | (man << up)) as u16;
        }
        // Subnormal: man · 2^(1 - bias - man_bits), normal in f16 (e4m3: ≥ 2⁻⁹): the leading
        // one becomes the implicit bit.
        let top = 31 - man.leading_zeros(); // the leading one's position, < man_bits
        let shift = self.man_bits - top;
        let frac = (man << shift) & ((1 << self.man_bits) - 1);
        let e = 1 + rebias - shift;
        (sign | (e << F16.man_bits) | (frac << up)) as u16
    }

    /// Exact value of the bit pattern `bits` as f32 (every value of these formats is an f32).
    /// NaNs map to `nan_f32`.
    #[inline]
    const fn decode(&self, bits: u32, nan_f32: u32) -> f32 {
        if self.decode_by_shift {
            return f32::from_bits(bits << 16);
        }
        let Parts {
            negative,
            mag,
            exp_field,
            man,
            class,
        } = self.parts(bits);
        let sign = if negative { 0x8000_0000u32 } else { 0 };
        match class {
            Class::Infinity => return f32::from_bits(sign | 0x7f80_0000),
            Class::Nan => return f32::from_bits(nan_f32),
            Class::Finite => {}
        }
        if mag == 0 {
            return f32::from_bits(sign);
        }
        if exp_field == 0 {
            // Subnormal: man * 2^(1 - bias - man_bits); normalise into an f32 normal.
            let lz = man.leading_zeros() - (32 - self.man_bits); // leading zeros within man_bits
            let shift = lz + 1;
            let frac = (man << shift) & ((1 << self.man_bits) - 1);
            let e = 1 - self.bias - shift as i32 + 127;
            return f32::from_bits(sign | ((e as u32) << 23) | (frac << (23 - self.man_bits)));
        }
        let e = exp_field as i32 - self.bias + 127;
        f32::from_bits(sign | ((e as u32) << 23) | (man << (23 - self.man_bits)))
    }
}

/// A bit pattern of a [`Format`] taken apart ([`Format::parts`]).
struct Parts {
    negative: bool,
    /// The bits without the sign.
    mag: u32,
    exp_field: u32,
    man: u32,
    class: Class,
}

/// What a bit pattern of a [`Format`] encodes.
enum Class {
    Finite,
    Infinity,
    Nan,
}

/// f16's +infinity.
const F16_INFINITY: u32 = 0x7c00;

macro_rules! storage_float {
    ($(#[$doc:meta])* $name:ident, $bits:ty, $fmt:expr, $nan_f32:expr) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[repr(transparent)]
        #[derive(Clone, Copy, Default)]
        pub struct $name(pub $bits);

        impl $name {
            /// Positive zero.
            pub const ZERO: Self = Self(0);
            /// The canonical NaN that conversions into this format produce.
            pub const NAN: Self = Self($fmt.nan as $bits);
            /// Largest finite value.
            pub const MAX: Self = Self($fmt.max_finite as $bits);

            /// Wraps a bit pattern.
            #[inline(always)]
            pub const fn from_bits(bits: $bits) -> Self {
                Self(bits)
            }

            /// The bit pattern.
            #[inline(always)]
            pub const fn to_bits(self) -> $bits {
                self.0
            }

            /// Rounds an f32 to this format (see the module table for rounding, overflow and NaN).
            #[inline]
            pub const fn from_f32(x: f32) -> Self {
                Self($fmt.round_f32(x) as $bits)
            }

            /// The exact value as f32 (NaN maps as in the module table).
            #[inline]
            pub const fn to_f32(self) -> f32 {
                $fmt.decode(self.0 as u32, $nan_f32)
            }

            /// `true` for NaN encodings.
            #[inline]
            pub const fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?} = {:#x})", stringify!($name), self.to_f32(), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        /// Compares values (not bits): `-0 == +0`, NaN is unequal to everything.
        impl PartialEq for $name {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $name {
            #[inline]
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl From<$name> for f32 {
            #[inline]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }
    };
}

storage_float!(
    /// IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits), stored as its bits.
    f16, u16, F16, 0x7fff_ffff
);
storage_float!(
    /// bfloat16 (1 sign, 8 exponent, 7 mantissa bits: the top half of an f32), stored as its bits.
    bf16, u16, BF16, 0 /* unused: bf16 decodes by shifting */
);
storage_float!(
    /// OCP FP8 E4M3 ("E4M3FN": 4 exponent, 3 mantissa bits, no infinities), stored as its bits.
    f8e4m3, u8, E4M3, 0x7fff_ffff
);
storage_float!(
    /// OCP FP8 E5M2 (5 exponent, 2 mantissa bits, IEEE-like), stored as its bits.
    f8e5m2, u8, E5M2, 0x7fff_ffff
);

/// The f16 conversions of the f8 format `$t` (PTX `$fmt`, format `$format`): to f16 by the bits,
/// from f16 through f32 (f16 → f32 is exact).
macro_rules! f8_f16_conversions {
    ($t:ident, $fmt:literal, $format:ident) => {
        impl $t {
            #[doc = concat!(
                "Exact conversion to f16 (`cvt.rn.f16x2.", $fmt, "x2`); NaN gives the canonical ",
                "f16 NaN `0x7fff`. Integer operations on the bits (no rounding is needed)."
            )]
            #[inline]
            pub const fn to_f16(self) -> f16 {
                f16($format.widen_to_f16_bits(self.0 as u32))
            }

            #[doc = concat!(
                "Rounds an f16 to ", $fmt, " (`cvt.rn.satfinite.", $fmt, "x2.f16x2`: one ",
                "rounding, f16 → f32 is exact)."
            )]
            #[inline]
            pub const fn from_f16(x: f16) -> Self {
                Self::from_f32(x.to_f32())
            }
        }
    };
}
f8_f16_conversions!(f8e4m3, "e4m3", E4M3);
f8_f16_conversions!(f8e5m2, "e5m2", E5M2);

/// Packs two f16 into one 32-bit register the way PTX `.f16x2` does: `lo` in bits 0..16.
#[inline(always)]
pub const fn pack_f16x2(lo: f16, hi: f16) -> u32 {
    lo.0 as u32 | (hi.0 as u32) << 16
}

/// Packs two bf16 into one `.bf16x2` register: `lo` in bits 0..16.
#[inline(always)]
pub const fn pack_bf16x2(lo: bf16, hi: bf16) -> u32 {
    lo.0 as u32 | (hi.0 as u32) << 16
}

/// Unpacks an `.f16x2` register into `[lo, hi]`.
#[inline(always)]
pub const fn unpack_f16x2(r: u32) -> [f16; 2] {
    [f16(r as u16), f16((r >> 16) as u16)]
}

/// Unpacks a `.bf16x2` register into `[lo, hi]`.
#[inline(always)]
pub const fn unpack_bf16x2(r: u32) -> [bf16; 2] {
    [bf16(r as u16), bf16((r >> 16) as u16)]
}

/// Packs four signed bytes into one register, element 0 in bits 0..8 (PTX `.s8` fragment order).
#[inline(always)]
pub const fn pack_s8x4(v: [i8; 4]) -> u32 {
    u32::from_le_bytes([v[0] as u8, v[1] as u8, v[2] as u8, v[3] as u8])
}

/// Unpacks a register of four signed bytes, element 0 from bits 0..8.
#[inline(always)]
pub const fn unpack_s8x4(r: u32) -> [i8; 4] {
    let b = r.to_le_bytes();
    [b[0] as i8, b[1] as i8, b[2] as i8, b[3] as i8]
}
