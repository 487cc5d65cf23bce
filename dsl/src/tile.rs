//! Runtime helpers of the code that `#[tile_kernel]` generates (and nothing else calls them
//! usefully by hand).
//!
//! * **Typed tiles.** A tile value of a kernel is one array of registers per thread,
//!   [`Tile<T, L, R>`]: `R` elements of type `T`, register `r` of the thread `(lane, warp)` holding
//!   the element at coordinate `L::LAYOUT(r, lane, warp)`. `L` is a marker type generated per
//!   layout, implementing [`Layout`]; [`assert_tile_layout`] checks it in `const` context, so an
//!   invalid layout fails to compile with the layout's own message, and a tile used where another
//!   layout is expected is a type error.
//! * **Element arithmetic** with the semantics the tile language documents: [`Elem`] (bits),
//!   [`Num`] (wrapping integer arithmetic, IEEE floats; `f16`/`bf16`/`f8` compute in `f32` and
//!   round back after every operation), [`Bits`], [`Cmp`], [`FloatMath`] (`ex2.approx`,
//!   `lg2.approx`, `sqrt.rn`, `rsqrt.approx`, `fma.rn` on the GPU).
//! * **Global memory**: [`load`] / [`store`] of a vector of `V` consecutive elements, any element
//!   width, as one predicated `ld/st.global` of 8, 16, 32, 64 or 128 bits (the 32-bit words of
//!   [`crate::device`], plus `u8`/`u16` accesses for sub-word vectors).
//! * **Reductions**: [`shfl_bfly`] of any element, [`argmax_combine`]/[`argmin_combine`].
//! * **Shared memory** slots of any element: [`st_shared_elem`]/[`ld_shared_elem`].
//! * **Host launching** (not on nvptx64): [`Specialisation`], [`Grid`], [`check_aligned`] and the
//!   launch/emulate functions that each kernel's generated module calls.
//!
//! Everything here has one signature and two bodies, as [`crate::device`]: inline PTX on
//! nvptx64, the emulator (or exact host code) elsewhere.

use crate::dtype::{bf16, f16, f8e4m3, f8e5m2};
use crate::{device, Ptr};
use core::marker::PhantomData;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

pub use tessera_layout::{expect_layout, Label, LayoutError, LinearLayout};

// ---------------------------------------------------------------------------------------------
// Layouts and typed tiles
// ---------------------------------------------------------------------------------------------

/// A layout known to rustc: implemented by the marker type that `#[tile_kernel]` generates for
/// every layout of a kernel (and usable for user-written layouts).
pub trait Layout: 'static {
    /// The distributed layout: inputs `register`, `lane`, `warp`; outputs `dim0`, `dim1`, ….
    const LAYOUT: LinearLayout;
}

/// A tile of one thread: `R` registers of `T` in layout `L` (see the [module docs](self)).
#[repr(transparent)]
pub struct Tile<T, L, const R: usize> {
    regs: [T; R],
    layout: PhantomData<L>,
}

impl<T: Copy, L, const R: usize> Clone for Tile<T, L, R> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Copy, L, const R: usize> Copy for Tile<T, L, R> {}

impl<T: Copy, L: Layout, const R: usize> Tile<T, L, R> {
    /// The tile whose register `r` is `regs[r]`.
    #[inline(always)]
    pub const fn from_regs(regs: [T; R]) -> Self {
        Tile {
            regs,
            layout: PhantomData,
        }
    }

    /// The registers. Generated code reads every operand through this function, named with the
    /// operand's expected type, so a tile of another layout does not type-check.
    #[inline(always)]
    pub const fn regs(self) -> [T; R] {
        self.regs
    }
}

/// Builds a layout from its bases: `register`, `lane` and `warp` bases (each a coordinate per
/// tile dimension) onto a tile of `shape` (`dim0` = `shape[0]`, …). An error of the layout
/// algebra is a compile error with its message when evaluated in `const` context.
pub const fn layout(
    register: &[&[u32]],
    lane: &[&[u32]],
    warp: &[&[u32]],
    shape: &[u32],
) -> LinearLayout {
    let mut l = LinearLayout::empty();
    let mut d = 0;
    while d < shape.len() {
        l = expect_layout(l.with_out_dim(Label::Dim(d as u8), shape[d]));
        d += 1;
    }
    l = with_bases(l, Label::Register, register);
    l = with_bases(l, Label::Lane, lane);
    with_bases(l, Label::Warp, warp)
}

const fn with_bases(l: LinearLayout, label: Label, bases: &[&[u32]]) -> LinearLayout {
    let mut l = expect_layout(l.with_in_dim(label));
    let mut k = 0;
    while k < bases.len() {
        l = expect_layout(l.with_basis(label, bases[k]));
        k += 1;
    }
    l
}

const fn fail(what: &'static str) -> ! {
    LayoutError::Incompatible { what }.panic()
}

/// Checks in `const` context that `L::LAYOUT` is a layout of a tile of `shape` held in `R`
/// registers by `num_warps` warps: inputs exactly `register` (size `R`), `lane` (32) and `warp`
/// (`num_warps`), in that order; outputs `dim0 … dim{rank-1}` of the shape's sizes; surjective.
/// Panics (a compile error in a `const` item) with a message naming what is wrong.
pub const fn assert_tile_layout<L: Layout, const R: usize>(shape: &[u32], num_warps: u32) {
    check_layout(&L::LAYOUT, shape, num_warps, R as u32);
}

/// [`assert_tile_layout`] for a user-written layout given to `convert_layout` (any register
/// count). The generated code puts this check on the user's path, so the error points there.
pub const fn assert_user_layout(layout: &LinearLayout, shape: &[u32], num_warps: u32) {
    check_layout(layout, shape, num_warps, layout.in_size(Label::Register));
}

const fn check_layout(l: &LinearLayout, shape: &[u32], num_warps: u32, registers: u32) {
    if l.num_in_dims() != 3
        || !l.in_label(0).same(Label::Register)
        || !l.in_label(1).same(Label::Lane)
        || !l.in_label(2).same(Label::Warp)
    {
        fail("a tile layout must have exactly the input dimensions register, lane, warp, in that order");
    }
    if l.in_size(Label::Register) != registers {
        fail("the tile's register count differs from the layout's register dimension");
    }
    if l.in_size(Label::Lane) != 32 {
        fail("a tile layout's lane dimension must have size 32 (a warp)");
    }
    if l.in_size(Label::Warp) != num_warps {
        fail("the layout's warp dimension differs from the kernel's num_warps");
    }
    if l.num_out_dims() != shape.len() {
        fail("the layout's number of output dimensions differs from the tile's rank");
    }
    let mut d = 0;
    while d < shape.len() {
        if !l.out_label(d).same(Label::Dim(d as u8)) {
            fail("a tile layout's output dimensions must be dim0, dim1, ... in order");
        }
        if l.out_size(Label::Dim(d as u8)) != shape[d] {
            fail("the layout's output sizes differ from the tile's shape");
        }
        d += 1;
    }
    match l.check_surjective() {
        Ok(()) => {}
        Err(e) => e.panic(),
    }
}

// ---------------------------------------------------------------------------------------------
// Elements
// ---------------------------------------------------------------------------------------------

/// An element type of a tile: its storage bits.
pub trait Elem: Copy + 'static {
    /// Storage width (`bool` is a byte holding 0 or 1).
    const BITS: u32;
    /// The storage bits, zero-extended.
    fn to_bits(self) -> u64;
    /// From storage bits (the low [`Self::BITS`]).
    fn from_bits(bits: u64) -> Self;
}

macro_rules! elem_int {
    ($($t:ty, $u:ty);*) => {$(
        impl Elem for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                self as $u as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
        }
    )*};
}
elem_int!(i8, u8; i16, u16; i32, u32; i64, u64; u8, u8; u16, u16; u32, u32; u64, u64);

impl Elem for bool {
    const BITS: u32 = 8;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits as u8 != 0
    }
}

impl Elem for f32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl Elem for f64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

macro_rules! elem_storage {
    ($($t:ident, $bits:ty);*) => {$(
        impl Elem for $t {
            const BITS: u32 = <$bits>::BITS;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                self.0 as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                $t(bits as $bits)
            }
        }
    )*};
}
elem_storage!(f16, u16; bf16, u16; f8e4m3, u8; f8e5m2, u8);

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

/// Arithmetic of the tile language.
///
/// Integers wrap (`+ - * neg abs` as `wrapping_*`); integer `/` and `%` truncate toward zero and
/// give 0 for a zero divisor (no trap; `MIN / -1` wraps to `MIN`, `MIN % -1` is 0). Floats are
/// IEEE (`/` is `div.rn`); `max`/`min` propagate NaN (PTX `max.NaN`/`min.NaN`) and order
/// `-0 < +0`; `neg`/`abs` only change the sign bit. `f16`, `bf16`, `f8e4m3`, `f8e5m2` convert to
/// `f32` (exact), compute there, and round back (`cvt.rn`) after each operation.
///
/// **NaN encodings (f32).** A NaN that f32 `+ - * / % max min` produce is the GPU's canonical
/// NaN `0x7fffffff` whatever the operands' NaN payloads, on the GPU (measured on sm_90) and on
/// the host (see [`crate::device::add_f32`]); `neg`/`abs` keep payloads. f32 `%` is the exact
/// IEEE `fmod` on both sides ([`fmod_f32`], integer code: the same bits on the GPU and the
/// host). f64 arithmetic is the host's IEEE arithmetic (the PTX ISA: double-precision
/// instructions support NaN payloads; not measured).
pub trait Num: Elem {
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    fn rem(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    /// The additive identity.
    const ZERO: Self;
    /// The identity of `max`: the smallest value (`-inf` for floats).
    const LOWEST: Self;
    /// The identity of `min`: the largest value (`+inf` for floats).
    const HIGHEST: Self;
}

macro_rules! num_signed {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)] fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)] fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_div(b) } }
            #[inline(always)] fn rem(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_rem(b) } }
            #[inline(always)] fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)] fn abs(a: Self) -> Self { a.wrapping_abs() }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if a > b { a } else { b } }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if a < b { a } else { b } }
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}
num_signed!(i8, i16, i32, i64);

macro_rules! num_unsigned {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)] fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)] fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a / b } }
            #[inline(always)] fn rem(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a % b } }
            #[inline(always)] fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)] fn abs(a: Self) -> Self { a }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if a > b { a } else { b } }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if a < b { a } else { b } }
            const ZERO: Self = 0;
            const LOWEST: Self = 0;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}
num_unsigned!(u8, u16, u32, u64);

/// NaN-propagating maximum with `-0 < +0` (PTX `max.NaN.f32`; a NaN result is the canonical
/// `0x7fffffff`).
#[inline(always)]
pub fn max_f32(a: f32, b: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: f32;
        // SAFETY: register-only instruction (sm_80+).
        unsafe {
            asm!("max.NaN.f32 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
                 options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        max_nan(a, b)
    }
}

/// NaN-propagating minimum with `-0 < +0` (PTX `min.NaN.f32`; a NaN result is the canonical
/// `0x7fffffff`).
#[inline(always)]
pub fn min_f32(a: f32, b: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: f32;
        // SAFETY: register-only instruction (sm_80+).
        unsafe {
            asm!("min.NaN.f32 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
                 options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        min_nan(a, b)
    }
}

macro_rules! nan_minmax {
    ($max:ident, $min:ident, $t:ty, $nan:expr) => {
        #[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
        #[inline(always)]
        fn $max(a: $t, b: $t) -> $t {
            if a.is_nan() || b.is_nan() {
                $nan
            } else if a == b {
                // Equal values differ at most in the sign of zero: +0 wins.
                <$t>::from_bits(a.to_bits() & b.to_bits())
            } else if a > b {
                a
            } else {
                b
            }
        }
        #[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
        #[inline(always)]
        fn $min(a: $t, b: $t) -> $t {
            if a.is_nan() || b.is_nan() {
                $nan
            } else if a == b {
                <$t>::from_bits(a.to_bits() | b.to_bits())
            } else if a < b {
                a
            } else {
                b
            }
        }
    };
}
// PTX ISA, `max`/`min`: "If .NaN modifier is specified, the result is canonical NaN if any of
// the inputs is NaN". The f64 pair is software on the GPU as well (the same constant there).
nan_minmax!(max_nan, min_nan, f32, device::CANONICAL_NAN_F32);
nan_minmax!(max_nan_f64, min_nan_f64, f64, f64::NAN);

/// f32 `%` (see [`Num`]): the exact IEEE remainder `x - trunc(x / y)·y` with the sign of `x`
/// (C's `fmodf`, Rust's `%` on the host), computed with integer long division on the
/// significands so the GPU and the emulator give the same bits. (LLVM lowers `frem` on nvptx64 to
/// `fma(-trunc(x / y), y, x)`, which is wrong once the quotient exceeds 2^24: `1e30 % 0.29` came
/// out as -9.8e21.) NaN results are the canonical `0x7fffffff`.
#[inline(always)]
fn rem_f32(a: f32, b: f32) -> f32 {
    fmod_f32(a, b)
}

/// Exact IEEE `fmod` of two f32 values (the tile language's f32 `%`): integer long division on
/// the significands, so the GPU and the emulator give the same bits; NaN results are canonical.
#[inline]
pub fn fmod_f32(x: f32, y: f32) -> f32 {
    const SIGN: u32 = 0x8000_0000;
    const HIDDEN: u32 = 0x0080_0000;
    let (ux, uy) = (x.to_bits(), y.to_bits());
    let sign = ux & SIGN;
    let (ax, ay) = (ux & !SIGN, uy & !SIGN);
    // x infinite or NaN, y zero or NaN: NaN.
    if ax >= 0x7f80_0000 || ay == 0 || ay > 0x7f80_0000 {
        return f32::from_bits(device::CANONICAL_NAN_F32_BITS);
    }
    // |x| < |y| (y infinite included): x itself; |x| = |y|: a zero with x's sign.
    if ax < ay {
        return x;
    }
    if ax == ay {
        return f32::from_bits(sign);
    }
    // Significand and exponent of each, subnormals normalised (significand in [2^23, 2^24)).
    let split = |a: u32| -> (i32, u32) {
        let e = (a >> 23) as i32;
        if e == 0 {
            let shift = a.leading_zeros() as i32 - 8;
            (1 - shift, a << shift)
        } else {
            (e, (a & (HIDDEN - 1)) | HIDDEN)
        }
    };
    let (mut ex, mut mx) = split(ax);
    let (ey, my) = split(ay);
    // Long division, one quotient bit per step: keep mx the remainder of (mx·2^(ex-ey)) / my.
    while ex > ey {
        if mx >= my {
            mx -= my;
        }
        if mx == 0 {
            return f32::from_bits(sign);
        }
        mx <<= 1;
        ex -= 1;
    }
    if mx >= my {
        mx -= my;
    }
    if mx == 0 {
        return f32::from_bits(sign);
    }
    // Renormalise; the result is exact, so it is either normal or a subnormal of y's scale.
    while mx < HIDDEN {
        mx <<= 1;
        ex -= 1;
    }
    let bits = if ex > 0 {
        ((ex as u32) << 23) | (mx & (HIDDEN - 1))
    } else {
        mx >> (1 - ex)
    };
    f32::from_bits(sign | bits)
}

impl Num for f32 {
    #[inline(always)]
    fn add(a: Self, b: Self) -> Self {
        device::add_f32(a, b)
    }
    #[inline(always)]
    fn sub(a: Self, b: Self) -> Self {
        device::sub_f32(a, b)
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        device::mul_f32(a, b)
    }
    #[inline(always)]
    fn div(a: Self, b: Self) -> Self {
        device::div_f32(a, b)
    }
    #[inline(always)]
    fn rem(a: Self, b: Self) -> Self {
        rem_f32(a, b)
    }
    #[inline(always)]
    fn neg(a: Self) -> Self {
        device::neg_f32(a)
    }
    #[inline(always)]
    fn abs(a: Self) -> Self {
        device::abs_f32(a)
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        max_f32(a, b)
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        min_f32(a, b)
    }
    const ZERO: Self = 0.0;
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
}

impl Num for f64 {
    #[inline(always)]
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
    #[inline(always)]
    fn sub(a: Self, b: Self) -> Self {
        a - b
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        a * b
    }
    #[inline(always)]
    fn div(a: Self, b: Self) -> Self {
        a / b
    }
    #[inline(always)]
    fn rem(a: Self, b: Self) -> Self {
        a % b
    }
    #[inline(always)]
    fn neg(a: Self) -> Self {
        -a
    }
    #[inline(always)]
    fn abs(a: Self) -> Self {
        f64::from_bits(a.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        max_nan_f64(a, b)
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        min_nan_f64(a, b)
    }
    const ZERO: Self = 0.0;
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
}

/// Narrow floats: to f32 and back (`cvt`), as [`crate::device`] converts.
pub trait NarrowFloat: Elem {
    /// Exact widening to f32.
    fn widen(self) -> f32;
    /// Rounding to this format (`cvt.rn`; f8 saturates as `cvt.rn.satfinite`).
    fn narrow(x: f32) -> Self;
}

impl NarrowFloat for f16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        device::f16_to_f32(self)
    }
    #[inline(always)]
    fn narrow(x: f32) -> Self {
        device::f32_to_f16(x)
    }
}
impl NarrowFloat for bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        device::bf16_to_f32(self)
    }
    #[inline(always)]
    fn narrow(x: f32) -> Self {
        device::f32_to_bf16(x)
    }
}
impl NarrowFloat for f8e4m3 {
    #[inline(always)]
    fn widen(self) -> f32 {
        device::f8e4m3_to_f32(self)
    }
    #[inline(always)]
    fn narrow(x: f32) -> Self {
        device::f32_to_f8e4m3(x)
    }
}
impl NarrowFloat for f8e5m2 {
    #[inline(always)]
    fn widen(self) -> f32 {
        device::f8e5m2_to_f32(self)
    }
    #[inline(always)]
    fn narrow(x: f32) -> Self {
        device::f32_to_f8e5m2(x)
    }
}

macro_rules! num_narrow {
    ($($t:ident),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(a: Self, b: Self) -> Self { Self::narrow(device::add_f32(a.widen(), b.widen())) }
            #[inline(always)] fn sub(a: Self, b: Self) -> Self { Self::narrow(device::sub_f32(a.widen(), b.widen())) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { Self::narrow(device::mul_f32(a.widen(), b.widen())) }
            #[inline(always)] fn div(a: Self, b: Self) -> Self { Self::narrow(device::div_f32(a.widen(), b.widen())) }
            #[inline(always)] fn rem(a: Self, b: Self) -> Self { Self::narrow(rem_f32(a.widen(), b.widen())) }
            #[inline(always)] fn neg(a: Self) -> Self { Self::narrow(-a.widen()) }
            #[inline(always)] fn abs(a: Self) -> Self { Self::narrow(<f32 as Num>::abs(a.widen())) }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { Self::narrow(max_f32(a.widen(), b.widen())) }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { Self::narrow(min_f32(a.widen(), b.widen())) }
            const ZERO: Self = $t::ZERO;
            const LOWEST: Self = $t(!$t::MAX.0);
            const HIGHEST: Self = $t::MAX;
        }
    )*};
}
num_narrow!(f16, bf16, f8e4m3, f8e5m2);

/// Bitwise operations (integers) and logical ones (`bool`). Shifts follow PTX `shl`/`shr`:
/// an amount of at least the bit width (or negative) gives 0, or the sign fill for `shr` of a
/// negative signed value.
pub trait Bits: Elem {
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
    fn not(a: Self) -> Self;
    fn shl(a: Self, b: Self) -> Self;
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
    fn lt(a: Self, b: Self) -> bool;
    fn le(a: Self, b: Self) -> bool;
    fn eq(a: Self, b: Self) -> bool;
    #[inline(always)]
    fn ne(a: Self, b: Self) -> bool {
        !Self::eq(a, b)
    }
    #[inline(always)]
    fn gt(a: Self, b: Self) -> bool {
        Self::lt(b, a)
    }
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

/// Float math. On the GPU (f32): `exp(x) = ex2.approx.f32(x · log₂e)`, `exp2 = ex2.approx.f32`,
/// `log(x) = lg2.approx.f32(x) · ln 2`, `log2 = lg2.approx.f32`, `sqrt = sqrt.rn.f32`,
/// `rsqrt = rsqrt.approx.f32`, `fma = fma.rn.f32` (Triton's choices for `tl.exp` & co.; the
/// approximations are within 2 ulp). On the host the same formulas with exact `exp2`/`log2`/
/// `sqrt`, so results may differ from the GPU in the last bits. f64: `sqrt.rn.f64`,
/// `rsqrt.approx.f64`, `fma.rn.f64`; f64 `exp`/`log` are not provided (no PTX instruction).
/// Narrow floats compute in f32.
///
/// f32 NaN results are the canonical `0x7fffffff` on the host as on the GPU (see [`Num`]):
/// `fma.rn.f32` is `FFMA` (the FMA pipe, measured canonical through `FADD`); ptxas builds
/// `sqrt.rn.f32` and `div.rn.f32` from `MUFU` and `FFMA` with slow paths whose NaNs come from
/// `FADD` or `MUFU.RSQ -QNAN`; `ex2`/`lg2`/`rsqrt.approx` are single `MUFU`s, taken to return
/// the same canonical NaN (not measured bit for bit).
pub trait FloatMath: Num {
    fn sqrt(a: Self) -> Self;
    fn rsqrt(a: Self) -> Self;
    fn fma(a: Self, b: Self, c: Self) -> Self;
}

/// `exp`, `exp2`, `log`, `log2` (see [`FloatMath`]): f32 and the narrow floats.
pub trait Transcendental: FloatMath {
    fn exp(a: Self) -> Self;
    fn exp2(a: Self) -> Self;
    fn log(a: Self) -> Self;
    fn log2(a: Self) -> Self;
}

macro_rules! ptx_unary_f32 {
    ($(#[$doc:meta])* $name:ident, $ptx:literal, $host:expr) => {
        $(#[$doc])*
        ///
        /// On the host: the exact function, NaN results the GPU's canonical `0x7fffffff`.
        #[inline(always)]
        pub fn $name(x: f32) -> f32 {
            #[cfg(target_arch = "nvptx64")]
            {
                let d: f32;
                // SAFETY: register-only instruction.
                unsafe {
                    asm!(concat!($ptx, " {d}, {a};"), d = out(reg32) d, a = in(reg32) x,
                         options(pure, nomem, nostack));
                }
                d
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let f: fn(f32) -> f32 = $host;
                device::canonicalize_nan_f32(f(x))
            }
        }
    };
}

ptx_unary_f32!(
    /// `ex2.approx.f32`: 2^x.
    ex2_approx_f32, "ex2.approx.f32", f32::exp2
);
ptx_unary_f32!(
    /// `lg2.approx.f32`: log₂ x.
    lg2_approx_f32, "lg2.approx.f32", f32::log2
);
ptx_unary_f32!(
    /// `sqrt.rn.f32`: √x, correctly rounded.
    sqrt_rn_f32, "sqrt.rn.f32", f32::sqrt
);
ptx_unary_f32!(
    /// `rsqrt.approx.f32`: 1/√x.
    rsqrt_approx_f32, "rsqrt.approx.f32", |x: f32| 1.0 / x.sqrt()
);

/// `fma.rn.f32`: `a·b + c` rounded once (NaN results canonical, `0x7fffffff`).
#[inline(always)]
pub fn fma_rn_f32(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: f32;
        // SAFETY: register-only instruction.
        unsafe {
            asm!("fma.rn.f32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a,
                 b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        device::canonicalize_nan_f32(a.mul_add(b, c))
    }
}

/// `sqrt.rn.f64`, `rsqrt.approx.f64`, `fma.rn.f64`.
#[inline(always)]
pub fn sqrt_rn_f64(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: f64;
        // SAFETY: register-only instruction.
        unsafe {
            asm!("sqrt.rn.f64 {d}, {a};", d = out(reg64) d, a = in(reg64) x,
                 options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// `rsqrt.approx.f64`: 1/√x.
#[inline(always)]
pub fn rsqrt_approx_f64(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: f64;
        // SAFETY: register-only instruction.
        unsafe {
            asm!("rsqrt.approx.f64 {d}, {a};", d = out(reg64) d, a = in(reg64) x,
                 options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        1.0 / x.sqrt()
    }
}

/// `fma.rn.f64`: `a·b + c` rounded once.
#[inline(always)]
pub fn fma_rn_f64(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: f64;
        // SAFETY: register-only instruction.
        unsafe {
            asm!("fma.rn.f64 {d}, {a}, {b}, {c};", d = out(reg64) d, a = in(reg64) a,
                 b = in(reg64) b, c = in(reg64) c, options(pure, nomem, nostack));
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

impl FloatMath for f32 {
    #[inline(always)]
    fn sqrt(a: Self) -> Self {
        sqrt_rn_f32(a)
    }
    #[inline(always)]
    fn rsqrt(a: Self) -> Self {
        rsqrt_approx_f32(a)
    }
    #[inline(always)]
    fn fma(a: Self, b: Self, c: Self) -> Self {
        fma_rn_f32(a, b, c)
    }
}

impl Transcendental for f32 {
    #[inline(always)]
    fn exp(a: Self) -> Self {
        ex2_approx_f32(device::mul_f32(a, core::f32::consts::LOG2_E))
    }
    #[inline(always)]
    fn exp2(a: Self) -> Self {
        ex2_approx_f32(a)
    }
    #[inline(always)]
    fn log(a: Self) -> Self {
        device::mul_f32(lg2_approx_f32(a), core::f32::consts::LN_2)
    }
    #[inline(always)]
    fn log2(a: Self) -> Self {
        lg2_approx_f32(a)
    }
}

impl FloatMath for f64 {
    #[inline(always)]
    fn sqrt(a: Self) -> Self {
        sqrt_rn_f64(a)
    }
    #[inline(always)]
    fn rsqrt(a: Self) -> Self {
        rsqrt_approx_f64(a)
    }
    #[inline(always)]
    fn fma(a: Self, b: Self, c: Self) -> Self {
        fma_rn_f64(a, b, c)
    }
}

macro_rules! math_narrow {
    ($($t:ident),*) => {$(
        impl FloatMath for $t {
            #[inline(always)] fn sqrt(a: Self) -> Self { Self::narrow(sqrt_rn_f32(a.widen())) }
            #[inline(always)] fn rsqrt(a: Self) -> Self { Self::narrow(rsqrt_approx_f32(a.widen())) }
            #[inline(always)]
            fn fma(a: Self, b: Self, c: Self) -> Self {
                Self::narrow(fma_rn_f32(a.widen(), b.widen(), c.widen()))
            }
        }
        impl Transcendental for $t {
            #[inline(always)] fn exp(a: Self) -> Self { Self::narrow(<f32 as Transcendental>::exp(a.widen())) }
            #[inline(always)] fn exp2(a: Self) -> Self { Self::narrow(ex2_approx_f32(a.widen())) }
            #[inline(always)] fn log(a: Self) -> Self { Self::narrow(<f32 as Transcendental>::log(a.widen())) }
            #[inline(always)] fn log2(a: Self) -> Self { Self::narrow(lg2_approx_f32(a.widen())) }
        }
    )*};
}
math_narrow!(f16, bf16, f8e4m3, f8e5m2);

// ---------------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------------

/// `shfl.sync.bfly` of any element over the whole warp: the value of lane `lane ^ lane_mask`.
/// Elements of up to 32 bits take one shuffle, 64-bit ones two.
#[inline(always)]
pub fn shfl_bfly<T: Elem>(value: T, lane_mask: u32) -> T {
    let bits = value.to_bits();
    let lo = device::shfl_bfly_b32(
        device::FULL_MASK,
        bits as u32,
        lane_mask,
        device::SHFL_C_FULL,
    );
    if T::BITS <= 32 {
        T::from_bits(lo as u64)
    } else {
        let hi = device::shfl_bfly_b32(
            device::FULL_MASK,
            (bits >> 32) as u32,
            lane_mask,
            device::SHFL_C_FULL,
        );
        T::from_bits(lo as u64 | (hi as u64) << 32)
    }
}

/// The `(value, index)` pair `argmax` keeps: the larger value; on a tie (or both NaN) the
/// smaller index; NaN counts as larger than every number (so `argmax` finds the first NaN).
#[inline(always)]
pub fn argmax_combine<T: Cmp>(a: (T, i32), b: (T, i32)) -> (T, i32) {
    let a_nan = !T::eq(a.0, a.0);
    let b_nan = !T::eq(b.0, b.0);
    let take_b = if a_nan || b_nan {
        b_nan && (!a_nan || b.1 < a.1)
    } else {
        T::gt(b.0, a.0) || (T::eq(b.0, a.0) && b.1 < a.1)
    };
    if take_b {
        b
    } else {
        a
    }
}

/// The `(value, index)` pair `argmin` keeps: the smaller value; on a tie (or both NaN) the
/// smaller index; NaN counts as smaller than every number (so `argmin` finds the first NaN).
#[inline(always)]
pub fn argmin_combine<T: Cmp>(a: (T, i32), b: (T, i32)) -> (T, i32) {
    let a_nan = !T::eq(a.0, a.0);
    let b_nan = !T::eq(b.0, b.0);
    let take_b = if a_nan || b_nan {
        b_nan && (!a_nan || b.1 < a.1)
    } else {
        T::lt(b.0, a.0) || (T::eq(b.0, a.0) && b.1 < a.1)
    };
    if take_b {
        b
    } else {
        a
    }
}

// ---------------------------------------------------------------------------------------------
// Shared memory of any element width
// ---------------------------------------------------------------------------------------------

/// Bytes of one shared-memory slot of `T` as [`st_shared_elem`] uses it: 4 for elements of up to
/// 32 bits (widened to a word, so no two threads ever write parts of one word), 8 for 64-bit ones.
pub const fn shared_slot_bytes<T: Elem>() -> u32 {
    if T::BITS <= 32 {
        4
    } else {
        8
    }
}

/// Stores one element into its slot at shared-window address `addr` (`st.shared.b32`, or
/// `st.shared.v2.b32` for 64-bit elements; see [`shared_slot_bytes`]).
///
/// # Safety
/// `addr` must be inside the block's dynamic shared memory, aligned to the slot size.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_elem<T: Elem>(addr: u32, value: T) {
    let bits = value.to_bits();
    if T::BITS <= 32 {
        device::st_shared_v1::<u32>(addr, bits as u32)
    } else {
        device::st_shared_v2::<u32>(addr, [bits as u32, (bits >> 32) as u32])
    }
}

/// Loads one element from its slot at shared-window address `addr` (see [`st_shared_elem`]).
///
/// # Safety
/// As [`st_shared_elem`].
#[inline(always)]
#[track_caller]
pub unsafe fn ld_shared_elem<T: Elem>(addr: u32) -> T {
    if T::BITS <= 32 {
        T::from_bits(device::ld_shared_v1::<u32>(addr) as u64)
    } else {
        let [lo, hi] = device::ld_shared_v2::<u32>(addr);
        T::from_bits(lo as u64 | (hi as u64) << 32)
    }
}

/// Converts a tile between two layouts known only to rustc (a user's `convert_layout` layout on
/// either side) through shared memory, generically: barrier; every owner of an element of `S`
/// (no duplicate register, lane or warp bit set) stores it at slot `packed coordinate` of a
/// buffer of `2^(output bits)` slots at `base`; barrier; every register of `D` loads its
/// element. Correct for any pair of valid layouts of one tile; not bank-conflict free (the
/// planned conversions of inferred layouts are), which is the price of a layout the code
/// generator cannot see. `base` must hold `2^(output bits) × shared_slot_bytes::<T>()` bytes.
///
/// # Safety
/// Every thread of the block must call it (it has barriers) with its own `lane` and `warp`, and
/// `base` must be a shared-memory range of the size above that nothing else uses meanwhile.
#[inline(always)]
#[track_caller]
pub unsafe fn convert_through_shared<
    T: Elem,
    S: Layout,
    D: Layout,
    const RS: usize,
    const RD: usize,
>(
    src: Tile<T, S, RS>,
    base: u32,
    lane: u32,
    warp: u32,
) -> Tile<T, D, RD> {
    let slot = shared_slot_bytes::<T>();
    // Everything about the layouts is evaluated by rustc: no call into the layout crate remains
    // in device code (nvptx64 cannot link one).
    let free = const { S::LAYOUT.free_variable_masks() };
    let (src_bases, src_bits) = const { basis_table(&S::LAYOUT) };
    let (dst_bases, dst_bits) = const { basis_table(&D::LAYOUT) };
    let owner = lane & free[1] == 0 && warp & free[2] == 0;
    let src_thread =
        xor_image(&src_bases[1], src_bits[1], lane) ^ xor_image(&src_bases[2], src_bits[2], warp);
    let dst_thread =
        xor_image(&dst_bases[1], dst_bits[1], lane) ^ xor_image(&dst_bases[2], dst_bits[2], warp);
    device::sync_threads();
    let regs = src.regs();
    // Unrolled with constant register indices (up to MAX_TILE_REGISTERS; the dead copies fold
    // away), so the register arrays stay in registers instead of local memory.
    macro_rules! store_register {
        ($r:expr) => {
            if let Some(&value) = regs.get($r) {
                if owner && ($r as u32) & free[0] == 0 {
                    let at = (xor_image(&src_bases[0], src_bits[0], $r) ^ src_thread) as u32;
                    st_shared_elem(base + at * slot, value);
                }
            }
        };
    }
    for_each_register!(store_register);
    device::sync_threads();
    let mut out = [T::from_bits(0); RD];
    macro_rules! load_register {
        ($r:expr) => {
            if let Some(place) = out.get_mut($r) {
                let at = (xor_image(&dst_bases[0], dst_bits[0], $r) ^ dst_thread) as u32;
                *place = ld_shared_elem(base + at * slot);
            }
        };
    }
    for_each_register!(load_register);
    Tile::from_regs(out)
}

/// Registers a tile may have per thread (128 32-bit registers of 8-bit elements: 512; the
/// front end's budget keeps every tile within it).
pub const MAX_TILE_REGISTERS: usize = 512;

/// Calls `$m!(k)` for every register index `k < MAX_TILE_REGISTERS` (constant expressions).
macro_rules! for_each_register {
    ($m:ident) => {
        for_each_register!(@sixteen $m, 0 16 32 48 64 80 96 112 128 144 160 176 192 208 224 240
            256 272 288 304 320 336 352 368 384 400 416 432 448 464 480 496);
    };
    (@sixteen $m:ident, $($base:literal)*) => {
        $(
            $m!({ $base + 0 }); $m!({ $base + 1 }); $m!({ $base + 2 }); $m!({ $base + 3 });
            $m!({ $base + 4 }); $m!({ $base + 5 }); $m!({ $base + 6 }); $m!({ $base + 7 });
            $m!({ $base + 8 }); $m!({ $base + 9 }); $m!({ $base + 10 }); $m!({ $base + 11 });
            $m!({ $base + 12 }); $m!({ $base + 13 }); $m!({ $base + 14 }); $m!({ $base + 15 });
        )*
    };
}
use for_each_register;

/// The packed bases of a tile layout's `register`, `lane` and `warp` dimensions (32 slots each,
/// unused ones zero) and their numbers of bits, for evaluating the layout in device code.
pub const fn basis_table(l: &LinearLayout) -> ([[u64; 32]; 3], [u32; 3]) {
    let mut table = [[0u64; 32]; 3];
    let mut bits = [0u32; 3];
    let labels = [Label::Register, Label::Lane, Label::Warp];
    let mut d = 0;
    while d < 3 {
        if let Some(i) = l.in_index(labels[d]) {
            bits[d] = l.in_bits_at(i);
            let mut k = 0;
            while k < bits[d] as usize && k < 32 {
                table[d][k] = l.packed_basis(i, k);
                k += 1;
            }
        }
        d += 1;
    }
    (table, bits)
}

/// `⊕ bases[k]` over the set bits `k < bits` of `x`.
#[inline(always)]
fn xor_image(bases: &[u64; 32], bits: u32, x: u32) -> u64 {
    let mut acc = 0u64;
    let mut k = 0;
    while k < bits {
        if x >> k & 1 == 1 {
            acc ^= bases[k as usize];
        }
        k += 1;
    }
    acc
}

// ---------------------------------------------------------------------------------------------
// Global memory
// ---------------------------------------------------------------------------------------------

/// Packs `V` elements into 32-bit words, element 0 in the low bits of word 0.
#[inline(always)]
fn pack_words<T: Elem, const V: usize>(values: [T; V]) -> [u32; 4] {
    let mut words = [0u32; 4];
    let mut i = 0;
    while i < V {
        let bits = values[i].to_bits();
        let at = i as u32 * T::BITS;
        let w = (at / 32) as usize;
        if T::BITS == 64 {
            words[w] = bits as u32;
            words[w + 1] = (bits >> 32) as u32;
        } else {
            words[w] |= (bits as u32) << (at % 32);
        }
        i += 1;
    }
    words
}

/// Unpacks what [`pack_words`] packed.
#[inline(always)]
fn unpack_words<T: Elem, const V: usize>(words: [u32; 4]) -> [T; V] {
    core::array::from_fn(|i| {
        let at = i as u32 * T::BITS;
        let w = (at / 32) as usize;
        if T::BITS == 64 {
            T::from_bits(words[w] as u64 | (words[w + 1] as u64) << 32)
        } else {
            let mask = if T::BITS == 32 {
                u32::MAX
            } else {
                (1u32 << T::BITS) - 1
            };
            T::from_bits(((words[w] >> (at % 32)) & mask) as u64)
        }
    })
}

/// Loads `V` consecutive elements at `ptr` with one predicated access of `V × T::BITS` bits
/// (8 or 16: `ld.global.u8`/`u16`; 32, 64, 128: `ld.global{,.v2,.v4}.b32`, i.e. SASS `LDG.E`,
/// `LDG.E.64`, `LDG.E.128`). Where `pred` is false nothing is read and the result is `other`.
///
/// # Safety
/// When `pred` is true, `ptr .. ptr + V` must be readable global memory aligned to the access
/// size (the emulator checks alignment and null).
#[inline(always)]
#[track_caller]
pub unsafe fn load<T: Elem, const V: usize>(ptr: Ptr<T>, pred: bool, other: [T; V]) -> [T; V] {
    let bits = V as u32 * T::BITS;
    let o = pack_words(other);
    let words: [u32; 4] = match bits {
        8 | 16 => [ld_global_sub(ptr.addr(), pred, o[0], bits), 0, 0, 0],
        32 => [device::ld_global_v1::<u32>(ptr.cast(), pred, o[0]), 0, 0, 0],
        64 => {
            let [a, b] = device::ld_global_v2::<u32>(ptr.cast(), pred, [o[0], o[1]]);
            [a, b, 0, 0]
        }
        128 => device::ld_global_v4::<u32>(ptr.cast(), pred, o),
        _ => panic!("tile load: unsupported vector width"),
    };
    unpack_words(words)
}

/// Stores `V` consecutive elements at `ptr` with one predicated access (see [`load`]); nothing
/// where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr .. ptr + V` must be writable global memory aligned to the access.
#[inline(always)]
#[track_caller]
pub unsafe fn store<T: Elem, const V: usize>(ptr: Ptr<T>, pred: bool, value: [T; V]) {
    let bits = V as u32 * T::BITS;
    let w = pack_words(value);
    match bits {
        8 | 16 => st_global_sub(ptr.addr(), pred, w[0], bits),
        32 => device::st_global_v1::<u32>(ptr.cast(), pred, w[0]),
        64 => device::st_global_v2::<u32>(ptr.cast(), pred, [w[0], w[1]]),
        128 => device::st_global_v4::<u32>(ptr.cast(), pred, w),
        _ => panic!("tile store: unsupported vector width"),
    }
}

/// Host checks of a sub-word global access: not null, aligned (as the emulator does for words).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn check_sub_word(addr: u64, bytes: u64, op: &str) {
    assert!(
        addr >= 4096,
        "{op} of a null global pointer (address {addr:#x})"
    );
    assert!(
        addr.is_multiple_of(bytes),
        "{op} at {addr:#x} is not {bytes}-byte aligned"
    );
}

/// `@pred ld.global.u8/u16 d, [addr]`, `other` where `pred` is false.
#[inline(always)]
#[track_caller]
unsafe fn ld_global_sub(addr: u64, pred: bool, other: u32, bits: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let mut d = other;
        if bits == 8 {
            asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {pred}, 0;",
                "@p ld.global.u8 {d}, [{addr}];",
                "}}",
                d = inout(reg32) d,
                addr = in(reg64) addr,
                pred = in(reg32) pred as u32,
                options(nostack, readonly)
            );
        } else {
            asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {pred}, 0;",
                "@p ld.global.u16 {d}, [{addr}];",
                "}}",
                d = inout(reg32) d,
                addr = in(reg64) addr,
                pred = in(reg32) pred as u32,
                options(nostack, readonly)
            );
        }
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        use core::sync::atomic::{AtomicU16, AtomicU8, Ordering};
        if !pred {
            return other;
        }
        if bits == 8 {
            check_sub_word(addr, 1, "ld.global.u8");
            AtomicU8::from_ptr(addr as usize as *mut u8).load(Ordering::Relaxed) as u32
        } else {
            check_sub_word(addr, 2, "ld.global.u16");
            AtomicU16::from_ptr(addr as usize as *mut u16).load(Ordering::Relaxed) as u32
        }
    }
}

/// `@pred st.global.u8/u16 [addr], v`.
#[inline(always)]
#[track_caller]
unsafe fn st_global_sub(addr: u64, pred: bool, value: u32, bits: u32) {
    #[cfg(target_arch = "nvptx64")]
    {
        if bits == 8 {
            asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {pred}, 0;",
                "@p st.global.u8 [{addr}], {v};",
                "}}",
                v = in(reg32) value,
                addr = in(reg64) addr,
                pred = in(reg32) pred as u32,
                options(nostack)
            );
        } else {
            asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {pred}, 0;",
                "@p st.global.u16 [{addr}], {v};",
                "}}",
                v = in(reg32) value,
                addr = in(reg64) addr,
                pred = in(reg32) pred as u32,
                options(nostack)
            );
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        use core::sync::atomic::{AtomicU16, AtomicU8, Ordering};
        if !pred {
            return;
        }
        if bits == 8 {
            check_sub_word(addr, 1, "st.global.u8");
            AtomicU8::from_ptr(addr as usize as *mut u8).store(value as u8, Ordering::Relaxed)
        } else {
            check_sub_word(addr, 2, "st.global.u16");
            AtomicU16::from_ptr(addr as usize as *mut u16).store(value as u16, Ordering::Relaxed)
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::*;

#[cfg(test)]
mod fmod_tests {
    use super::fmod_f32;

    /// Against the host's IEEE `fmod` (Rust's `%` on x86-64 is exact) on special values and a
    /// dense sample of bit patterns, including huge quotients and subnormals.
    #[test]
    fn fmod_is_exact_ieee_remainder() {
        let mut values: Vec<f32> = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.28890562,
            1e30,
            -1e30,
            1e38,
            1e-38,
            1e-45,
            -1e-45,
            2.7,
            -2.7,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            3.0,
            0.1,
        ];
        let mut s = 0x9e37_79b9_u32;
        for _ in 0..3000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            values.push(f32::from_bits(s));
        }
        for &x in &values {
            for &y in values.iter().step_by(7) {
                let want = x % y;
                let got = fmod_f32(x, y);
                if want.is_nan() {
                    assert_eq!(got.to_bits(), 0x7fff_ffff, "{x:e} % {y:e}");
                } else {
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{x:e} % {y:e}: {got:e} vs {want:e}"
                    );
                }
            }
        }
    }
}
