//! Element types of tiles: their storage bits ([`Elem`]), the narrow floats' conversions
//! ([`NarrowFloat`]), bitwise operations ([`Bits`]) and comparisons ([`Cmp`]).

use crate::dtype::{bf16, f16, f8e4m3, f8e5m2};
use crate::{device, Ptr};

/// An element type of a tile: its storage bits.
pub trait Elem: Copy + 'static {
    /// Storage width (`bool` is a byte holding 0 or 1).
    const BITS: u32;
    /// The storage bits, zero-extended.
    fn to_bits(self) -> u64;
    /// From storage bits (the low [`Self::BITS`]).
    fn from_bits(bits: u64) -> Self;
}

/// `impl Elem` for each `type: width, |value| its bits, |bits| the value`.
macro_rules! elem {
    ($($t:ty: $width:expr, |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl Elem for $t {
            const BITS: u32 = $width;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                let $v = self;
                $to
            }
            #[inline(always)]
            fn from_bits($b: u64) -> Self {
                $from
            }
        }
    )*};
}

/// [`Elem`] for each integer type `$t`, whose bits are those of the unsigned `$u` of its width.
macro_rules! elem_int {
    ($($t:ty, $u:ty);*) => {
        elem! { $($t: <$t>::BITS, |x| x as $u as u64, |bits| bits as $u as $t;)* }
    };
}
elem_int!(i8, u8; i16, u16; i32, u32; i64, u64; u8, u8; u16, u16; u32, u32; u64, u64);

/// [`Elem`] for each narrow float `$t`, a newtype over its storage bits `$bits`.
macro_rules! elem_storage {
    ($($t:ident, $bits:ty);*) => {
        elem! { $($t: <$bits>::BITS, |x| x.0 as u64, |bits| $t(bits as $bits);)* }
    };
}
elem_storage!(f16, u16; bf16, u16; f8e4m3, u8; f8e5m2, u8);

elem! {
    bool: 8, |x| x as u64, |bits| bits as u8 != 0;
    f32: 32, |x| f32::to_bits(x) as u64, |bits| f32::from_bits(bits as u32);
    f64: 64, |x| f64::to_bits(x), |bits| f64::from_bits(bits);
}

impl<T: 'static> Elem for Ptr<T> {
    const BITS: u32 = 64;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self.addr()
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        Ptr::from_addr(bits)
    }
}

/// Narrow floats: to f32 and back (`cvt`), as [`crate::device`] converts.
pub trait NarrowFloat: Elem {
    /// Exact widening to f32.
    fn widen(self) -> f32;
    /// Rounding to this format (`cvt.rn`; f8 saturates as `cvt.rn.satfinite`).
    fn narrow(x: f32) -> Self;
    /// `(narrow(lo), narrow(hi))`, bit for bit: for f16 and bf16 one `cvt.rn.{f16,bf16}x2.f32`,
    /// whose packed result a `wgmma` or a 32-bit store then takes as it is.
    #[inline(always)]
    fn narrow_pair(lo: f32, hi: f32) -> (Self, Self) {
        (Self::narrow(lo), Self::narrow(hi))
    }
}

/// `impl NarrowFloat` for each `type: widen, narrow` (the [`crate::device`] conversions).
macro_rules! narrow_float {
    ($($t:ident: $widen:ident, $narrow:ident $(, $pair:ident)?);* $(;)?) => {$(
        impl NarrowFloat for $t {
            #[inline(always)]
            fn widen(self) -> f32 {
                device::$widen(self)
            }
            #[inline(always)]
            fn narrow(x: f32) -> Self {
                device::$narrow(x)
            }
            $(
                #[inline(always)]
                fn narrow_pair(lo: f32, hi: f32) -> (Self, Self) {
                    device::$pair(lo, hi)
                }
            )?
        }
    )*};
}
narrow_float!(
    f16: f16_to_f32, f32_to_f16, f32x2_to_f16x2;
    bf16: bf16_to_f32, f32_to_bf16, f32x2_to_bf16x2;
    f8e4m3: f8e4m3_to_f32, f32_to_f8e4m3;
    f8e5m2: f8e5m2_to_f32, f32_to_f8e5m2;
);

/// Bitwise operations (integers) and logical ones (`bool`). Shifts follow PTX `shl`/`shr`:
/// an amount of at least the bit width (or negative) gives 0, or the sign fill for `shr` of a
/// negative signed value.
pub trait Bits: Elem {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
    /// `!a` (every bit flipped; logical not for `bool`).
    fn not(a: Self) -> Self;
    /// `a << b`, as PTX `shl`.
    fn shl(a: Self, b: Self) -> Self;
    /// `a >> b`, as PTX `shr` (arithmetic for signed types).
    fn shr(a: Self, b: Self) -> Self;
}

macro_rules! bits_int {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            #[inline(always)] fn and(a: Self, b: Self) -> Self { a & b }
            #[inline(always)] fn or(a: Self, b: Self) -> Self { a | b }
            #[inline(always)] fn xor(a: Self, b: Self) -> Self { a ^ b }
            #[inline(always)] fn not(a: Self) -> Self { !a }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shl(a: Self, b: Self) -> Self {
                if b < 0 || b as u64 >= <$t>::BITS as u64 { 0 } else { a << b }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shr(a: Self, b: Self) -> Self {
                if b < 0 || b as u64 >= <$t>::BITS as u64 {
                    if a < 0 { !0 } else { 0 }
                } else {
                    a >> b
                }
            }
        }
    )*};
}
bits_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Bits for bool {
    #[inline(always)]
    fn and(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline(always)]
    fn or(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline(always)]
    fn xor(a: Self, b: Self) -> Self {
        a ^ b
    }
    #[inline(always)]
    fn not(a: Self) -> Self {
        !a
    }
    #[inline(always)]
    fn shl(a: Self, b: Self) -> Self {
        a & !b
    }
    #[inline(always)]
    fn shr(a: Self, b: Self) -> Self {
        a & !b
    }
}

/// Comparisons: integers and `bool` (`false < true`) by value; floats IEEE (NaN compares unequal
/// to everything, `-0 == +0`); narrow floats by their f32 value.
pub trait Cmp: Elem {
    /// `a < b`.
    fn lt(a: Self, b: Self) -> bool;
    /// `a <= b`.
    fn le(a: Self, b: Self) -> bool;
    /// `a == b`.
    fn eq(a: Self, b: Self) -> bool;
    /// `a != b`.
    #[inline(always)]
    fn ne(a: Self, b: Self) -> bool {
        !Self::eq(a, b)
    }
    /// `a > b`.
    #[inline(always)]
    fn gt(a: Self, b: Self) -> bool {
        Self::lt(b, a)
    }
    /// `a >= b`.
    #[inline(always)]
    fn ge(a: Self, b: Self) -> bool {
        Self::le(b, a)
    }
}

macro_rules! cmp_native {
    ($($t:ty),*) => {$(
        impl Cmp for $t {
            #[inline(always)] fn lt(a: Self, b: Self) -> bool { a < b }
            #[inline(always)] fn le(a: Self, b: Self) -> bool { a <= b }
            #[inline(always)] fn eq(a: Self, b: Self) -> bool { a == b }
        }
    )*};
}
cmp_native!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! cmp_narrow {
    ($($t:ident),*) => {$(
        impl Cmp for $t {
            #[inline(always)] fn lt(a: Self, b: Self) -> bool { a.widen() < b.widen() }
            #[inline(always)] fn le(a: Self, b: Self) -> bool { a.widen() <= b.widen() }
            #[inline(always)] fn eq(a: Self, b: Self) -> bool { a.widen() == b.widen() }
        }
    )*};
}
cmp_narrow!(f16, bf16, f8e4m3, f8e5m2);
