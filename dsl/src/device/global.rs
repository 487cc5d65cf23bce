//! Vectorized, predicated global-memory loads and stores of 32-bit words.
//!
//! A load takes a predicate and an `other` value: lanes whose predicate is false do not touch
//! memory and get `other` (what Triton's masked `tl.load(..., other=)` lowers to):
//!
//! ```text
//! { .reg .pred p; setp.ne.b32 p, pred, 0;
//!   mov.b32 d0, other0; ...                       // (the asm outputs start as `other`)
//!   @p ld.global.v4.b32 {d0, d1, d2, d3}, [addr]; }
//! ```
//!
//! A store with a false predicate does nothing (`@p st.global.v4.b32 [addr], {...}`).
//! `v2`/`v4` accesses need an address aligned to 8/16 bytes (the emulator checks alignment and
//! null pointers). With all predicates true and consecutive lanes at consecutive 16 bytes a warp
//! moves 512 contiguous bytes per `v4` instruction (SASS `LDG.E.128` / `STG.E.128`).

use super::word::B32;
use crate::Ptr;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(target_arch = "nvptx64"))]
use crate::emulator::ops;

/// `@pred ld.global.b32 d, [ptr]`, `other` where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr` must point to a readable, 4-byte aligned global word.
#[inline(always)]
#[track_caller]
pub unsafe fn ld_global_v1<T: B32>(ptr: Ptr<T>, pred: bool, other: T) -> T {
    #[cfg(target_arch = "nvptx64")]
    {
        let mut d = other.to_b32();
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {pred}, 0;",
            "@p ld.global.b32 {d}, [{addr}];",
            "}}",
            d = inout(reg32) d,
            addr = in(reg64) ptr.addr(),
            pred = in(reg32) pred as u32,
            options(nostack, readonly)
        );
        T::from_b32(d)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let [d] = ops::ld_global::<1>(ptr.addr(), pred, [other.to_b32()], "ld.global.b32");
        T::from_b32(d)
    }
}

/// `@pred ld.global.v2.b32 {d0, d1}, [ptr]`, `other` where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr` must point to 2 readable words, 8-byte aligned.
#[inline(always)]
#[track_caller]
pub unsafe fn ld_global_v2<T: B32>(ptr: Ptr<T>, pred: bool, other: [T; 2]) -> [T; 2] {
    #[cfg(target_arch = "nvptx64")]
    {
        let mut d0 = other[0].to_b32();
        let mut d1 = other[1].to_b32();
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {pred}, 0;",
            "@p ld.global.v2.b32 {{{d0}, {d1}}}, [{addr}];",
            "}}",
            d0 = inout(reg32) d0,
            d1 = inout(reg32) d1,
            addr = in(reg64) ptr.addr(),
            pred = in(reg32) pred as u32,
            options(nostack, readonly)
        );
        [T::from_b32(d0), T::from_b32(d1)]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let d = ops::ld_global::<2>(
            ptr.addr(),
            pred,
            [other[0].to_b32(), other[1].to_b32()],
            "ld.global.v2.b32",
        );
        d.map(T::from_b32)
    }
}

/// `@pred ld.global.v4.b32 {d0, d1, d2, d3}, [ptr]`, `other` where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr` must point to 4 readable words, 16-byte aligned.
#[inline(always)]
#[track_caller]
pub unsafe fn ld_global_v4<T: B32>(ptr: Ptr<T>, pred: bool, other: [T; 4]) -> [T; 4] {
    #[cfg(target_arch = "nvptx64")]
    {
        let mut d0 = other[0].to_b32();
        let mut d1 = other[1].to_b32();
        let mut d2 = other[2].to_b32();
        let mut d3 = other[3].to_b32();
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {pred}, 0;",
            "@p ld.global.v4.b32 {{{d0}, {d1}, {d2}, {d3}}}, [{addr}];",
            "}}",
            d0 = inout(reg32) d0,
            d1 = inout(reg32) d1,
            d2 = inout(reg32) d2,
            d3 = inout(reg32) d3,
            addr = in(reg64) ptr.addr(),
            pred = in(reg32) pred as u32,
            options(nostack, readonly)
        );
        [
            T::from_b32(d0),
            T::from_b32(d1),
            T::from_b32(d2),
            T::from_b32(d3),
        ]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let d = ops::ld_global::<4>(ptr.addr(), pred, other.map(T::to_b32), "ld.global.v4.b32");
        d.map(T::from_b32)
    }
}

/// `@pred st.global.b32 [ptr], v`; nothing where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr` must point to a writable, 4-byte aligned global word.
#[inline(always)]
#[track_caller]
pub unsafe fn st_global_v1<T: B32>(ptr: Ptr<T>, pred: bool, value: T) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "{{",
        ".reg .pred p;",
        "setp.ne.b32 p, {pred}, 0;",
        "@p st.global.b32 [{addr}], {v};",
        "}}",
        v = in(reg32) value.to_b32(),
        addr = in(reg64) ptr.addr(),
        pred = in(reg32) pred as u32,
        options(nostack)
    );
    #[cfg(not(target_arch = "nvptx64"))]
    ops::st_global::<1>(ptr.addr(), pred, [value.to_b32()], "st.global.b32");
}

/// `@pred st.global.v2.b32 [ptr], {v0, v1}`; nothing where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr` must point to 2 writable words, 8-byte aligned.
#[inline(always)]
#[track_caller]
pub unsafe fn st_global_v2<T: B32>(ptr: Ptr<T>, pred: bool, value: [T; 2]) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "{{",
        ".reg .pred p;",
        "setp.ne.b32 p, {pred}, 0;",
        "@p st.global.v2.b32 [{addr}], {{{v0}, {v1}}};",
        "}}",
        v0 = in(reg32) value[0].to_b32(),
        v1 = in(reg32) value[1].to_b32(),
        addr = in(reg64) ptr.addr(),
        pred = in(reg32) pred as u32,
        options(nostack)
    );
    #[cfg(not(target_arch = "nvptx64"))]
    ops::st_global::<2>(ptr.addr(), pred, value.map(T::to_b32), "st.global.v2.b32");
}

/// `@pred st.global.v4.b32 [ptr], {v0, v1, v2, v3}`; nothing where `pred` is false.
///
/// # Safety
/// When `pred` is true, `ptr` must point to 4 writable words, 16-byte aligned.
#[inline(always)]
#[track_caller]
pub unsafe fn st_global_v4<T: B32>(ptr: Ptr<T>, pred: bool, value: [T; 4]) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "{{",
        ".reg .pred p;",
        "setp.ne.b32 p, {pred}, 0;",
        "@p st.global.v4.b32 [{addr}], {{{v0}, {v1}, {v2}, {v3}}};",
        "}}",
        v0 = in(reg32) value[0].to_b32(),
        v1 = in(reg32) value[1].to_b32(),
        v2 = in(reg32) value[2].to_b32(),
        v3 = in(reg32) value[3].to_b32(),
        addr = in(reg64) ptr.addr(),
        pred = in(reg32) pred as u32,
        options(nostack)
    );
    #[cfg(not(target_arch = "nvptx64"))]
    ops::st_global::<4>(ptr.addr(), pred, value.map(T::to_b32), "st.global.v4.b32");
}
