//! Register-sized value types: what fits one 32-bit PTX register ([`B32`]) and what a shuffle
//! can move ([`ShflValue`]: 32-bit values in one `shfl.sync`, 64-bit values as two).

use crate::dtype::{bf16, f16, f8e4m3, f8e5m2};

/// A value that is exactly one 32-bit register (`.b32`): the element type of the vectorized
/// loads and stores. Packed narrow types (`[f16; 2]`, `[i8; 4]`, ...) keep element 0 in the low
/// bits, as PTX `.f16x2` / byte fragments do.
pub trait B32: Copy {
    /// The register bits.
    fn to_b32(self) -> u32;
    /// From register bits.
    fn from_b32(bits: u32) -> Self;
}

impl B32 for u32 {
    #[inline(always)]
    fn to_b32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_b32(bits: u32) -> Self {
        bits
    }
}

impl B32 for i32 {
    #[inline(always)]
    fn to_b32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_b32(bits: u32) -> Self {
        bits as i32
    }
}

impl B32 for f32 {
    #[inline(always)]
    fn to_b32(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_b32(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

macro_rules! b32_pair {
    ($t:ty) => {
        impl B32 for [$t; 2] {
            #[inline(always)]
            fn to_b32(self) -> u32 {
                self[0].0 as u32 | (self[1].0 as u32) << 16
            }
            #[inline(always)]
            fn from_b32(bits: u32) -> Self {
                [
                    <$t>::from_bits(bits as u16),
                    <$t>::from_bits((bits >> 16) as u16),
                ]
            }
        }
    };
}
b32_pair!(f16);
b32_pair!(bf16);

macro_rules! b32_quad {
    ($t:ty, $from:expr, $to:expr) => {
        impl B32 for [$t; 4] {
            #[inline(always)]
            fn to_b32(self) -> u32 {
                let f: fn($t) -> u8 = $to;
                u32::from_le_bytes([f(self[0]), f(self[1]), f(self[2]), f(self[3])])
            }
            #[inline(always)]
            fn from_b32(bits: u32) -> Self {
                let f: fn(u8) -> $t = $from;
                let b = bits.to_le_bytes();
                [f(b[0]), f(b[1]), f(b[2]), f(b[3])]
            }
        }
    };
}
b32_quad!(u8, |b| b, |x| x);
b32_quad!(i8, |b| b as i8, |x| x as u8);
b32_quad!(f8e4m3, f8e4m3::from_bits, f8e4m3::to_bits);
b32_quad!(f8e5m2, f8e5m2::from_bits, f8e5m2::to_bits);

/// A value a warp shuffle can move: 32-bit values take one `shfl.sync`, 64-bit values
/// (`u64`, `i64`, `f64`) are split into two 32-bit halves shuffled one after the other
/// (low half first) with the same lane arguments.
pub trait ShflValue: Copy {
    /// Applies the 32-bit shuffle `f` to every 32-bit part.
    #[doc(hidden)]
    fn map_words(self, f: impl FnMut(u32) -> u32) -> Self;
}

impl<T: B32> ShflValue for T {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        T::from_b32(f(self.to_b32()))
    }
}

macro_rules! shfl64 {
    ($t:ty, $to:expr, $from:expr) => {
        impl ShflValue for $t {
            #[inline(always)]
            fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
                let to: fn($t) -> u64 = $to;
                let from: fn(u64) -> $t = $from;
                let bits = to(self);
                let lo = f(bits as u32);
                let hi = f((bits >> 32) as u32);
                from(lo as u64 | (hi as u64) << 32)
            }
        }
    };
}
shfl64!(u64, |x| x, |b| b);
shfl64!(i64, |x| x as u64, |b| b as i64);
shfl64!(f64, f64::to_bits, f64::from_bits);
