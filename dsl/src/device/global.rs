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
//!
//! On amdgpu a load or store is a Rust access of `N` words at the alignment of `N` words
//! under a branch on the predicate (`global_load_dwordx4` / `global_store_dwordx4` for `v4`).

use super::word::B32;
use crate::Ptr;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(target_arch = "amdgpu")]
use super::amdgpu as amd;

#[cfg(not(tessera_device))]
use crate::emulator::ops;

/// `asm!` of the predicated instruction `$instr` (`@p ...`, its address operand `{addr}`) in a
/// scoped block that sets the predicate from `$pred` (asm operands have no predicate class):
/// `{ .reg .pred p; setp.ne.b32 p, pred, 0; @p ...; }`. The `$operand`s come first.
#[cfg(target_arch = "nvptx64")]
macro_rules! predicated_asm {
    ($instr:expr, $addr:expr, $pred:expr, [$($operand:tt)*], $($option:ident),+) => {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {pred}, 0;",
            $instr,
            "}}",
            $($operand)*
            addr = in(reg64) $addr,
            pred = in(reg32) $pred as u32,
            options($($option),+)
        )
    };
}

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
        predicated_asm!(
            "@p ld.global.b32 {d}, [{addr}];",
            ptr.addr(),
            pred,
            [d = inout(reg32) d,],
            nostack, readonly
        );
        T::from_b32(d)
    }
    #[cfg(target_arch = "amdgpu")]
    {
        let other = amd::Words1([other.to_b32()]);
        T::from_b32(amd::load_words(ptr.addr(), pred, other).0[0])
    }
    #[cfg(not(tessera_device))]
    {
        let [d] = ops::ld_global::<1>(ptr.addr(), pred, [other.to_b32()], "ld.global.b32");
        T::from_b32(d)
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
    predicated_asm!(
        "@p st.global.b32 [{addr}], {v};",
        ptr.addr(),
        pred,
        [v = in(reg32) value.to_b32(),],
        nostack
    );
    #[cfg(target_arch = "amdgpu")]
    amd::store_words(ptr.addr(), pred, amd::Words1([value.to_b32()]));
    #[cfg(not(tessera_device))]
    ops::st_global::<1>(ptr.addr(), pred, [value.to_b32()], "st.global.b32");
}

/// Defines the predicated vector load `$ld` and store `$st` of `$n` words (aligned to `$align`
/// bytes): the instructions `$ld_asm`/`$st_asm` on the registers `$w`, named `$ld_ptx`/`$st_ptx`
/// in the emulator's diagnostics.
macro_rules! vector_access {
    (
        $n:literal, $align:literal, $words:ident, [$($w:ident),+],
        $(#[$ld_doc:meta])* $ld:ident, $ld_ptx:literal, $ld_asm:literal,
        $(#[$st_doc:meta])* $st:ident, $st_ptx:literal, $st_asm:literal
    ) => {
        $(#[$ld_doc])*
        ///
        /// # Safety
        #[doc = concat!(
            "When `pred` is true, `ptr` must point to ", $n, " readable words, ", $align,
            "-byte aligned."
        )]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $ld<T: B32>(ptr: Ptr<T>, pred: bool, other: [T; $n]) -> [T; $n] {
            #[cfg(target_arch = "nvptx64")]
            {
                let [$(mut $w),+] = crate::unroll::map(other, T::to_b32);
                predicated_asm!(
                    $ld_asm,
                    ptr.addr(),
                    pred,
                    [$($w = inout(reg32) $w,)+],
                    nostack, readonly
                );
                [$(T::from_b32($w)),+]
            }
            #[cfg(target_arch = "amdgpu")]
            {
                let other = amd::$words(crate::unroll::map(other, T::to_b32));
                crate::unroll::map(amd::load_words(ptr.addr(), pred, other).0, T::from_b32)
            }
            #[cfg(not(tessera_device))]
            {
                let d = ops::ld_global::<$n>(ptr.addr(), pred, crate::unroll::map(other, T::to_b32), $ld_ptx);
                crate::unroll::map(d, T::from_b32)
            }
        }

        $(#[$st_doc])*
        ///
        /// # Safety
        #[doc = concat!(
            "When `pred` is true, `ptr` must point to ", $n, " writable words, ", $align,
            "-byte aligned."
        )]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $st<T: B32>(ptr: Ptr<T>, pred: bool, value: [T; $n]) {
            #[cfg(target_arch = "nvptx64")]
            {
                let [$($w),+] = crate::unroll::map(value, T::to_b32);
                predicated_asm!(
                    $st_asm,
                    ptr.addr(),
                    pred,
                    [$($w = in(reg32) $w,)+],
                    nostack
                );
            }
            #[cfg(target_arch = "amdgpu")]
            amd::store_words(ptr.addr(), pred, amd::$words(crate::unroll::map(value, T::to_b32)));
            #[cfg(not(tessera_device))]
            ops::st_global::<$n>(ptr.addr(), pred, crate::unroll::map(value, T::to_b32), $st_ptx);
        }
    };
}

vector_access!(
    2, 8, Words2, [w0, w1],
    /// `@pred ld.global.v2.b32 {d0, d1}, [ptr]`, `other` where `pred` is false.
    ld_global_v2, "ld.global.v2.b32", "@p ld.global.v2.b32 {{{w0}, {w1}}}, [{addr}];",
    /// `@pred st.global.v2.b32 [ptr], {v0, v1}`; nothing where `pred` is false.
    st_global_v2, "st.global.v2.b32", "@p st.global.v2.b32 [{addr}], {{{w0}, {w1}}};"
);
vector_access!(
    4, 16, Words4, [w0, w1, w2, w3],
    /// `@pred ld.global.v4.b32 {d0, d1, d2, d3}, [ptr]`, `other` where `pred` is false.
    ld_global_v4, "ld.global.v4.b32",
    "@p ld.global.v4.b32 {{{w0}, {w1}, {w2}, {w3}}}, [{addr}];",
    /// `@pred st.global.v4.b32 [ptr], {v0, v1, v2, v3}`; nothing where `pred` is false.
    st_global_v4, "st.global.v4.b32",
    "@p st.global.v4.b32 [{addr}], {{{w0}, {w1}, {w2}, {w3}}};"
);

/// Defines the predicated sub-word load `$ld` and store `$st` of `$t` (`$bytes` bytes): the value
/// travels zero-extended in a 32-bit register, as `ld.global.u8/u16` writes it and
/// `st.global.u8/u16` reads its low bits.
macro_rules! sub_word_access {
    ($ld:ident, $st:ident, $t:ty, $atomic:ident, $bytes:literal, $ld_ptx:literal, $st_ptx:literal) => {
        #[doc = concat!("`@pred ", $ld_ptx, " d, [ptr]` (zero-extended), `other` where `pred` is false.")]
        ///
        /// # Safety
        #[doc = concat!("When `pred` is true, `ptr` must point to a readable, ", $bytes, "-byte aligned `", stringify!($t), "`.")]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $ld(ptr: Ptr<$t>, pred: bool, other: u32) -> u32 {
            #[cfg(target_arch = "nvptx64")]
            {
                let mut d = other;
                predicated_asm!(
                    concat!("@p ", $ld_ptx, " {d}, [{addr}];"),
                    ptr.addr(),
                    pred,
                    [d = inout(reg32) d,],
                    nostack, readonly
                );
                d
            }
            #[cfg(target_arch = "amdgpu")]
            {
                if pred {
                    u32::from((ptr.addr() as usize as *const $t).read())
                } else {
                    other
                }
            }
            #[cfg(not(tessera_device))]
            {
                use core::sync::atomic::{$atomic, Ordering};
                if !pred {
                    return other;
                }
                let addr = ptr.addr();
                check_sub_word(addr, $bytes, $ld_ptx);
                $atomic::from_ptr(addr as usize as *mut $t).load(Ordering::Relaxed) as u32
            }
        }

        #[doc = concat!("`@pred ", $st_ptx, " [ptr], v` (the low bits of `value`); nothing where `pred` is false.")]
        ///
        /// # Safety
        #[doc = concat!("When `pred` is true, `ptr` must point to a writable, ", $bytes, "-byte aligned `", stringify!($t), "`.")]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $st(ptr: Ptr<$t>, pred: bool, value: u32) {
            #[cfg(target_arch = "nvptx64")]
            predicated_asm!(
                concat!("@p ", $st_ptx, " [{addr}], {v};"),
                ptr.addr(),
                pred,
                [v = in(reg32) value,],
                nostack
            );
            #[cfg(target_arch = "amdgpu")]
            if pred {
                (ptr.addr() as usize as *mut $t).write(value as $t);
            }
            #[cfg(not(tessera_device))]
            {
                use core::sync::atomic::{$atomic, Ordering};
                if !pred {
                    return;
                }
                let addr = ptr.addr();
                check_sub_word(addr, $bytes, $st_ptx);
                $atomic::from_ptr(addr as usize as *mut $t).store(value as $t, Ordering::Relaxed)
            }
        }
    };
}
sub_word_access!(
    ld_global_u8,
    st_global_u8,
    u8,
    AtomicU8,
    1,
    "ld.global.u8",
    "st.global.u8"
);
sub_word_access!(
    ld_global_u16,
    st_global_u16,
    u16,
    AtomicU16,
    2,
    "ld.global.u16",
    "st.global.u16"
);

/// Host checks of a sub-word global access: not null, aligned (as the emulator does for words).
#[cfg(not(tessera_device))]
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
