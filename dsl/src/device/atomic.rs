//! Atomic read-modify-write on global memory: `atom{.sem}{.scope}.global.<op>.<type>`.
//!
//! [`atom`] performs one predicated atomic and returns the value memory held before it (`0`
//! where the predicate is false: no memory access then):
//!
//! ```text
//! { .reg .pred p; setp.ne.b32 p, pred, 0;
//!   @p atom.acq_rel.gpu.global.add.f32 d, [addr], v; }
//! ```
//!
//! The operation, memory order and scope are const parameters ([`ATOM_ADD`] …, [`SEM_RELAXED`]
//! …, [`SCOPE_CTA`] …), so each call is one instruction. Which element types take which
//! operation ([`AtomicElem`]):
//!
//! | type | operations |
//! |---|---|
//! | `i32`, `u32`, `i64`, `u64` | add, max, min (signed for `i32`/`i64`), and, or, xor, xchg, cas |
//! | `f32`, `f64` | add (`f32`: subnormals flushed to zero, as `atom.add.f32`), xchg, cas |
//! | `f16` | add (`atom.add.noftz.f16`, sm_70+) |
//!
//! `.sem` and `.scope` need sm_70 and PTX 6.0. On amdgpu the same calls are
//! `core::sync::atomic` operations at system scope (the float additions compare-and-swap loops
//! that keep subnormals; module `amd`). On the host the
//! [emulator](crate::emulator) performs the read-modify-write as one sequentially consistent
//! step over all simulated threads and programs.

use crate::{f16, Ptr};

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// `atom.add`.
pub const ATOM_ADD: u32 = 0;
/// `atom.max`.
pub const ATOM_MAX: u32 = 1;
/// `atom.min`.
pub const ATOM_MIN: u32 = 2;
/// `atom.and`.
pub const ATOM_AND: u32 = 3;
/// `atom.or`.
pub const ATOM_OR: u32 = 4;
/// `atom.xor`.
pub const ATOM_XOR: u32 = 5;
/// `atom.exch`: stores the value, returns the old one.
pub const ATOM_XCHG: u32 = 6;
/// `atom.cas`: stores the value where memory equals `compare`, returns the old value.
pub const ATOM_CAS: u32 = 7;

/// `.relaxed`.
pub const SEM_RELAXED: u32 = 0;
/// `.acquire`.
pub const SEM_ACQUIRE: u32 = 1;
/// `.release`.
pub const SEM_RELEASE: u32 = 2;
/// `.acq_rel`.
pub const SEM_ACQ_REL: u32 = 3;

/// `.cta`.
pub const SCOPE_CTA: u32 = 0;
/// `.gpu`.
pub const SCOPE_GPU: u32 = 1;
/// `.sys`.
pub const SCOPE_SYS: u32 = 2;

/// An element type with atomics (see the module table).
pub trait AtomicElem: Copy {
    /// The atomic `OP` with order `SEM` and scope `SCOPE` (see [`atom`]).
    ///
    /// # Safety
    /// As [`atom`].
    unsafe fn atom<const OP: u32, const SEM: u32, const SCOPE: u32>(
        ptr: Ptr<Self>,
        value: Self,
        compare: Self,
        pred: bool,
    ) -> Self;
}

/// `@pred atom{SEM}{SCOPE}.global.{OP}.{type} d, [ptr], value` (`cas`: `…, compare, value`):
/// the old value at `ptr`, `0` where `pred` is false. An operation the type does not have
/// (module table) panics.
///
/// # Safety
/// When `pred` is true, `ptr` must point to a writable global element aligned to its size.
#[inline(always)]
#[track_caller]
pub unsafe fn atom<T: AtomicElem, const OP: u32, const SEM: u32, const SCOPE: u32>(
    ptr: Ptr<T>,
    value: T,
    compare: T,
    pred: bool,
) -> T {
    unsafe { T::atom::<OP, SEM, SCOPE>(ptr, value, compare, pred) }
}

/// `$m!(".sem", ".scope", args…)` for the compile-time-constant order `$sem` and scope `$scope`.
#[cfg(target_arch = "nvptx64")]
macro_rules! with_sem_scope {
    ($sem:expr, $scope:expr, $m:ident!($($a:tt)*)) => {
        match $sem {
            SEM_RELAXED => with_scope!($scope, ".relaxed", $m!($($a)*)),
            SEM_ACQUIRE => with_scope!($scope, ".acquire", $m!($($a)*)),
            SEM_RELEASE => with_scope!($scope, ".release", $m!($($a)*)),
            SEM_ACQ_REL => with_scope!($scope, ".acq_rel", $m!($($a)*)),
            _ => panic!("atom: unknown memory order or scope"),
        }
    };
}

/// `$m!($sem, ".scope", args…)` for the compile-time-constant scope `$scope`.
#[cfg(target_arch = "nvptx64")]
macro_rules! with_scope {
    ($scope:expr, $sem:literal, $m:ident!($($a:tt)*)) => {
        match $scope {
            SCOPE_CTA => $m!($sem, ".cta", $($a)*),
            SCOPE_GPU => $m!($sem, ".gpu", $($a)*),
            SCOPE_SYS => $m!($sem, ".sys", $($a)*),
            _ => panic!("atom: unknown memory order or scope"),
        }
    };
}

/// One predicated `atom{$sem}{$scope}.global.$op.$ty` of two operands (`rmw`) or three (`cas`)
/// on registers of class `$reg` (`@one`: the instruction, with the value operands `$operands`
/// bound by `$values`).
#[cfg(target_arch = "nvptx64")]
macro_rules! atom_asm {
    ($sem:literal, $scope:literal, rmw, $op:literal $ty:literal, $reg:ident, $addr:expr, $v:expr,
     $c:expr, $pred:expr) => {
        atom_asm!(@one $sem, $scope, $op, $ty, "{v}", $reg, $addr, $pred, v = in($reg) $v)
    };
    ($sem:literal, $scope:literal, cas, $op:literal $ty:literal, $reg:ident, $addr:expr, $v:expr,
     $c:expr, $pred:expr) => {
        atom_asm!(@one $sem, $scope, $op, $ty, "{c}, {v}", $reg, $addr, $pred,
                  c = in($reg) $c, v = in($reg) $v)
    };
    (@one $sem:literal, $scope:literal, $op:literal, $ty:literal, $operands:literal, $reg:ident,
     $addr:expr, $pred:expr, $($values:tt)*) => {{
        let mut d = 0;
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {pred}, 0;",
            concat!(
                "@p atom", $sem, $scope, ".global.", $op, ".", $ty, " {d}, [{addr}], ", $operands,
                ";"
            ),
            "}}",
            d = inout($reg) d,
            addr = in(reg64) $addr,
            $($values)*,
            pred = in(reg32) $pred as u32,
            options(nostack)
        );
        d
    }};
}

/// `impl AtomicElem for $t`: on nvptx64 one `atom` per `OP` listed (`$kind` `rmw` or `cas`, the
/// PTX `op` and `type` `$instr $ty`) on its bits (`$bits`, register class `$reg`); on amdgpu
/// `$amd(op, ptr, value, compare, order)` (module `amd`); on the host the emulator's atomic
/// step with `$host(op, old, value, compare) -> new`.
macro_rules! atomic_elem {
    ($t:ty, $bits:ty, $reg:ident, $to:expr, $from:expr, $host:expr, $amd:path,
     [$($op:ident $kind:ident $instr:literal $ty:literal),* $(,)?]) => {
        impl AtomicElem for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn atom<const OP: u32, const SEM: u32, const SCOPE: u32>(
                ptr: Ptr<Self>,
                value: Self,
                compare: Self,
                pred: bool,
            ) -> Self {
                let to: fn($t) -> $bits = $to;
                let from: fn($bits) -> $t = $from;
                #[cfg(target_arch = "nvptx64")]
                {
                    // `c` is unused by element types without a compare-and-swap (f16).
                    #[allow(unused_variables)]
                    let (v, c) = (to(value), to(compare));
                    let addr = ptr.addr();
                    let d: $bits = match OP {
                        $($op => unsafe {
                            with_sem_scope!(SEM, SCOPE, atom_asm!($kind, $instr $ty, $reg, addr, v, c, pred))
                        },)*
                        _ => panic!("atom: an operation this element type does not have"),
                    };
                    from(d)
                }
                #[cfg(target_arch = "amdgpu")]
                {
                    let _ = (to, SCOPE);
                    if !matches!(OP, $($op)|*) {
                        panic!("atom: an operation this element type does not have");
                    }
                    if !pred {
                        return from(0);
                    }
                    let ptr = ptr.addr() as usize as *mut $t;
                    // SAFETY: the caller's (`pred` is true).
                    unsafe { $amd(OP, ptr, value, compare, amd::order(SEM)) }
                }
                #[cfg(not(tessera_device))]
                {
                    let _ = (SEM, SCOPE);
                    if !matches!(OP, $($op)|*) {
                        panic!("atom: an operation this element type does not have");
                    }
                    let host: fn(u32, $t, $t, $t) -> $t = $host;
                    let bytes = core::mem::size_of::<$bits>() as u32;
                    let update = |old: u64| {
                        to(host(OP, from(old as $bits), value, compare)) as u64
                    };
                    let old = unsafe {
                        crate::emulator::ops::atom_global(ptr.addr(), bytes, pred, update, "atom.global")
                    };
                    from(old as $bits)
                }
            }
        }
    };
}

/// The new value of integer atomic `op` on `old` (host model).
#[cfg(not(tessera_device))]
macro_rules! int_update {
    ($t:ty) => {
        |op: u32, old: $t, v: $t, c: $t| -> $t {
            match op {
                ATOM_ADD => old.wrapping_add(v),
                ATOM_MAX => old.max(v),
                ATOM_MIN => old.min(v),
                ATOM_AND => old & v,
                ATOM_OR => old | v,
                ATOM_XOR => old ^ v,
                ATOM_XCHG => v,
                _ => {
                    if old == c {
                        v
                    } else {
                        old
                    }
                }
            }
        }
    };
}
/// `x` with a subnormal flushed to zero of its sign (`atom.add.f32`).
#[cfg(not(tessera_device))]
fn flush_subnormal(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

#[cfg(not(tessera_device))]
fn f32_update(op: u32, old: f32, v: f32, c: f32) -> f32 {
    match op {
        ATOM_ADD => {
            let sum = flush_subnormal(flush_subnormal(old) + flush_subnormal(v));
            if sum.is_nan() {
                f32::from_bits(0x7fff_ffff)
            } else {
                sum
            }
        }
        ATOM_XCHG => v,
        _ if old.to_bits() == c.to_bits() => v,
        _ => old,
    }
}

#[cfg(not(tessera_device))]
fn f64_update(op: u32, old: f64, v: f64, c: f64) -> f64 {
    match op {
        ATOM_ADD => old + v,
        ATOM_XCHG => v,
        _ if old.to_bits() == c.to_bits() => v,
        _ => old,
    }
}

#[cfg(not(tessera_device))]
fn f16_update(_: u32, old: f16, v: f16, _: f16) -> f16 {
    // The f32 sum of two f16 rounds once more to f16 without double-rounding error (24 ≥ 2·11 + 2).
    f16::from_f32(old.to_f32() + v.to_f32())
}

/// The amdgpu atomics: `core::sync::atomic` on the element (LLVM's `atomicrmw` and `cmpxchg`,
/// `global_atomic_*`/`flat_atomic_*` in the ISA) at system scope, whatever `SCOPE` asks (a
/// stronger scope than asked: correct, perhaps slower); the float additions are
/// compare-and-swap loops (Rust has no atomic float add), rounded as the ISA's `v_add_f32`
/// (subnormals kept, where `atom.add.f32` flushes them).
#[cfg(target_arch = "amdgpu")]
mod amd {
    use super::{
        ATOM_ADD, ATOM_AND, ATOM_MAX, ATOM_MIN, ATOM_OR, ATOM_XCHG, ATOM_XOR, SEM_ACQUIRE,
        SEM_RELAXED, SEM_RELEASE,
    };
    use crate::f16;
    use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

    /// The order of `.sem`.
    #[inline(always)]
    pub fn order(sem: u32) -> Ordering {
        match sem {
            SEM_RELAXED => Ordering::Relaxed,
            SEM_ACQUIRE => Ordering::Acquire,
            SEM_RELEASE => Ordering::Release,
            _ => Ordering::AcqRel,
        }
    }

    /// The order of a failed compare-and-swap of order `o` (no release part).
    #[inline(always)]
    fn on_failure(o: Ordering) -> Ordering {
        match o {
            Ordering::Relaxed | Ordering::Release => Ordering::Relaxed,
            _ => Ordering::Acquire,
        }
    }

    /// `fn $name(op, ptr, v, c, o)`: integer atomic `op` on `*ptr` through `$atomic`.
    macro_rules! int_rmw {
        ($name:ident, $atomic:ty, $t:ty) => {
            /// # Safety
            /// `ptr` points to a writable global element aligned to its size.
            #[inline(always)]
            pub unsafe fn $name(op: u32, ptr: *mut $t, v: $t, c: $t, o: Ordering) -> $t {
                // SAFETY: the caller's; device memory is only accessed atomically here.
                let a = unsafe { <$atomic>::from_ptr(ptr) };
                match op {
                    ATOM_ADD => a.fetch_add(v, o),
                    ATOM_MAX => a.fetch_max(v, o),
                    ATOM_MIN => a.fetch_min(v, o),
                    ATOM_AND => a.fetch_and(v, o),
                    ATOM_OR => a.fetch_or(v, o),
                    ATOM_XOR => a.fetch_xor(v, o),
                    ATOM_XCHG => a.swap(v, o),
                    _ => match a.compare_exchange(c, v, o, on_failure(o)) {
                        Ok(old) | Err(old) => old,
                    },
                }
            }
        };
    }
    int_rmw!(rmw_u32, AtomicU32, u32);
    int_rmw!(rmw_i32, AtomicI32, i32);
    int_rmw!(rmw_u64, AtomicU64, u64);
    int_rmw!(rmw_i64, AtomicI64, i64);

    /// `fn $name(op, ptr, v, c, o)`: float atomic `op` (add, exchange, compare-and-swap on the
    /// bits) on `*ptr` through `$atomic`, the atomic integer of its bits.
    macro_rules! float_rmw {
        ($name:ident, $atomic:ty, $t:ty) => {
            /// # Safety
            /// `ptr` points to a writable global element aligned to its size.
            #[inline(always)]
            pub unsafe fn $name(op: u32, ptr: *mut $t, v: $t, c: $t, o: Ordering) -> $t {
                // SAFETY: the caller's; `$t` and its bits have one size and alignment.
                let a = unsafe { <$atomic>::from_ptr(ptr.cast()) };
                <$t>::from_bits(match op {
                    ATOM_ADD => {
                        let mut old = a.load(Ordering::Relaxed);
                        loop {
                            let new = (<$t>::from_bits(old) + v).to_bits();
                            match a.compare_exchange_weak(old, new, o, on_failure(o)) {
                                Ok(_) => break old,
                                Err(now) => old = now,
                            }
                        }
                    }
                    ATOM_XCHG => a.swap(v.to_bits(), o),
                    _ => match a.compare_exchange(c.to_bits(), v.to_bits(), o, on_failure(o)) {
                        Ok(old) | Err(old) => old,
                    },
                })
            }
        };
    }
    float_rmw!(rmw_f32, AtomicU32, f32);
    float_rmw!(rmw_f64, AtomicU64, f64);

    /// `f16` add: a compare-and-swap loop on the aligned 32-bit word holding the element (the
    /// sum rounded once, through f32, as the host model).
    ///
    /// # Safety
    /// `ptr` points to a writable global `f16`, 2-byte aligned, inside a 4-byte aligned word
    /// of device memory.
    #[inline(always)]
    pub unsafe fn rmw_f16(_: u32, ptr: *mut f16, v: f16, _: f16, o: Ordering) -> f16 {
        let addr = ptr as usize;
        let shift = ((addr & 2) * 8) as u32;
        // SAFETY: the caller's: the word holding the element is device memory.
        let word = unsafe { AtomicU32::from_ptr((addr & !3) as *mut u32) };
        let mut old = word.load(Ordering::Relaxed);
        loop {
            let x = f16::from_bits((old >> shift) as u16);
            let sum = f16::from_f32(x.to_f32() + v.to_f32()).to_bits();
            let new = (old & !(0xffff << shift)) | (u32::from(sum) << shift);
            match word.compare_exchange_weak(old, new, o, on_failure(o)) {
                Ok(_) => return x,
                Err(now) => old = now,
            }
        }
    }
}

/// [`atomic_elem!`] of an integer type: every operation, `add` on the type `$add`, `max`/`min`
/// on `$ordered` (signed for a signed type), the bitwise ones, `exch` and `cas` on the bits
/// `$bitwise`.
macro_rules! int_atomic_elem {
    ($t:ty, $bits:ty, $reg:ident, $to:expr, $from:expr, $amd:path, $add:literal,
     $ordered:literal, $bitwise:literal) => {
        atomic_elem!($t, $bits, $reg, $to, $from, int_update!($t), $amd, [
            ATOM_ADD rmw "add" $add, ATOM_MAX rmw "max" $ordered, ATOM_MIN rmw "min" $ordered,
            ATOM_AND rmw "and" $bitwise, ATOM_OR rmw "or" $bitwise, ATOM_XOR rmw "xor" $bitwise,
            ATOM_XCHG rmw "exch" $bitwise, ATOM_CAS cas "cas" $bitwise,
        ]);
    };
}

int_atomic_elem!(
    u32,
    u32,
    reg32,
    |x| x,
    |b| b,
    amd::rmw_u32,
    "u32",
    "u32",
    "b32"
);
int_atomic_elem!(
    i32,
    u32,
    reg32,
    |x| x as u32,
    |b| b as i32,
    amd::rmw_i32,
    "s32",
    "s32",
    "b32"
);
int_atomic_elem!(
    u64,
    u64,
    reg64,
    |x| x,
    |b| b,
    amd::rmw_u64,
    "u64",
    "u64",
    "b64"
);
// PTX has no `atom.add.s64`: the two's-complement sum is `add.u64`'s.
int_atomic_elem!(
    i64,
    u64,
    reg64,
    |x| x as u64,
    |b| b as i64,
    amd::rmw_i64,
    "u64",
    "s64",
    "b64"
);
atomic_elem!(f32, u32, reg32, f32::to_bits, f32::from_bits, f32_update, amd::rmw_f32, [
    ATOM_ADD rmw "add" "f32", ATOM_XCHG rmw "exch" "b32", ATOM_CAS cas "cas" "b32",
]);
atomic_elem!(f64, u64, reg64, f64::to_bits, f64::from_bits, f64_update, amd::rmw_f64, [
    ATOM_ADD rmw "add" "f64", ATOM_XCHG rmw "exch" "b64", ATOM_CAS cas "cas" "b64",
]);
atomic_elem!(f16, u16, reg16, f16::to_bits, f16::from_bits, f16_update, amd::rmw_f16, [
    ATOM_ADD rmw "add.noftz" "f16",
]);
