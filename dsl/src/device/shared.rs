//! Shared memory: the dynamic shared-memory base address, vectorized `ld/st.shared` of 32-bit
//! words, and the warp-collective matrix loads/stores `ldmatrix`/`stmatrix`.
//!
//! Shared memory is addressed by 32-bit **shared-window addresses** (`u32`), as PTX does with
//! `.shared` state-space operands. [`dynamic_shared_base`] is the address of the first byte of
//! the launch's dynamic shared memory.
//!
//! # Declaring dynamic shared memory in PTX
//!
//! PTX wants `.extern .shared .align 16 .b8 tessera_dynamic_shared[];` at **module scope**
//! (ptxas rejects `.extern` inside a `{ }` block of inline asm, checked with ptxas 13). Rust
//! cannot place a variable in the shared state space, so the declaration is emitted with
//! `global_asm!` into each kernel crate: [`crate::device_kernel!`] does it next to every kernel,
//! hand-written kernels call [`crate::declare_dynamic_shared!`] once. ptxas accepts the same
//! `.extern` declaration repeated, so several kernels in one module are fine, and every kernel of
//! the module then sees the same symbol at the start of its dynamic shared memory. (On sm_90
//! ptxas resolves it to `0x400` plus the CTA's cluster window, after the 1 KiB that sm_90
//! reserves; the emulator uses the same `0x400`.)
//!
//! On amdgpu the address is an offset into the launch's dynamic LDS (`dynamic_shared_base` is 0)
//! and each access goes through the pointer rustc gives for it
//! (`gpu_launch_sized_workgroup_mem`): LLVM selects `ds_read_b32/b64/b128` and
//! `ds_write_*`. `ldmatrix` and `stmatrix` do not exist there.

use super::word::B32;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::ops;

#[cfg(target_arch = "amdgpu")]
use super::amdgpu::{lds, Words1, Words2, Words4};

/// Name of the module-scope `.extern .shared` array that [`dynamic_shared_base`] refers to.
pub const DYNAMIC_SHARED_SYMBOL: &str = "tessera_dynamic_shared";

/// Emits the module-scope PTX declaration of the dynamic shared-memory array
/// (`.extern .shared .align 16 .b8 tessera_dynamic_shared[];`) on nvptx64; nothing on the host.
/// [`crate::device_kernel!`] emits it for you; call it once in a kernel crate whose hand-written
/// `extern "ptx-kernel"` functions use [`dynamic_shared_base`].
#[macro_export]
macro_rules! declare_dynamic_shared {
    () => {
        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(".extern .shared .align 16 .b8 tessera_dynamic_shared[];");
    };
}

/// `mov.u32 %r, tessera_dynamic_shared;`: shared-window address of the first byte of dynamic
/// shared memory (16-byte aligned).
#[inline(always)]
pub fn dynamic_shared_base() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // SAFETY: takes the address of the module's dynamic shared array.
        unsafe {
            asm!(
                "mov.u32 {0}, tessera_dynamic_shared;",
                out(reg32) r,
                options(pure, nomem, nostack)
            );
        }
        r
    }
    #[cfg(target_arch = "amdgpu")]
    {
        0
    }
    #[cfg(not(tessera_device))]
    {
        ops::dynamic_shared_base()
    }
}

/// The emulator's `ld.shared` of `N` words at `addr`, as elements (`ptx` names the instruction
/// in diagnostics).
#[cfg(not(tessera_device))]
#[inline(always)]
#[track_caller]
fn ld_shared_words<T: B32, const N: usize>(addr: u32, ptx: &'static str) -> [T; N] {
    crate::unroll::map(ops::ld_shared::<N>(addr, ptx), T::from_b32)
}

/// The emulator's `st.shared` of the `N` elements `value` at `addr` (`ptx` names the instruction
/// in diagnostics).
#[cfg(not(tessera_device))]
#[inline(always)]
#[track_caller]
fn st_shared_words<T: B32, const N: usize>(addr: u32, value: [T; N], ptx: &'static str) {
    ops::st_shared::<N>(addr, crate::unroll::map(value, T::to_b32), ptx);
}

/// `ld.shared.b32 d, [addr]`.
///
/// # Safety
/// `addr` must be a 4-byte aligned address inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn ld_shared_v1<T: B32>(addr: u32) -> T {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: u32;
        asm!("ld.shared.b32 {d}, [{a}];", d = out(reg32) d, a = in(reg32) addr,
             options(nostack, readonly));
        T::from_b32(d)
    }
    #[cfg(target_arch = "amdgpu")]
    {
        T::from_b32(lds::<Words1>(addr).read().0[0])
    }
    #[cfg(not(tessera_device))]
    {
        T::from_b32(ops::ld_shared::<1>(addr, "ld.shared.b32")[0])
    }
}

/// `ld.shared.v2.b32 {d0, d1}, [addr]`.
///
/// # Safety
/// `addr` must be an 8-byte aligned address with 8 bytes inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn ld_shared_v2<T: B32>(addr: u32) -> [T; 2] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (d0, d1): (u32, u32);
        asm!("ld.shared.v2.b32 {{{d0}, {d1}}}, [{a}];", d0 = out(reg32) d0, d1 = out(reg32) d1,
             a = in(reg32) addr, options(nostack, readonly));
        [T::from_b32(d0), T::from_b32(d1)]
    }
    #[cfg(target_arch = "amdgpu")]
    {
        crate::unroll::map(lds::<Words2>(addr).read().0, T::from_b32)
    }
    #[cfg(not(tessera_device))]
    {
        ld_shared_words(addr, "ld.shared.v2.b32")
    }
}

/// `ld.shared.v4.b32 {d0, d1, d2, d3}, [addr]`.
///
/// # Safety
/// `addr` must be a 16-byte aligned address with 16 bytes inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn ld_shared_v4<T: B32>(addr: u32) -> [T; 4] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (d0, d1, d2, d3): (u32, u32, u32, u32);
        asm!("ld.shared.v4.b32 {{{d0}, {d1}, {d2}, {d3}}}, [{a}];", d0 = out(reg32) d0,
             d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3, a = in(reg32) addr,
             options(nostack, readonly));
        [
            T::from_b32(d0),
            T::from_b32(d1),
            T::from_b32(d2),
            T::from_b32(d3),
        ]
    }
    #[cfg(target_arch = "amdgpu")]
    {
        crate::unroll::map(lds::<Words4>(addr).read().0, T::from_b32)
    }
    #[cfg(not(tessera_device))]
    {
        ld_shared_words(addr, "ld.shared.v4.b32")
    }
}

/// `st.shared.b32 [addr], v`.
///
/// # Safety
/// `addr` must be a 4-byte aligned address inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_v1<T: B32>(addr: u32, value: T) {
    #[cfg(target_arch = "nvptx64")]
    asm!("st.shared.b32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) value.to_b32(),
         options(nostack));
    #[cfg(target_arch = "amdgpu")]
    lds::<Words1>(addr).write(Words1([value.to_b32()]));
    #[cfg(not(tessera_device))]
    ops::st_shared::<1>(addr, [value.to_b32()], "st.shared.b32");
}

/// `st.shared.b16 [addr], v`: one 16-bit element (the other half of its word is kept).
///
/// # Safety
/// `addr` must be a 2-byte aligned address inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_b16(addr: u32, value: u16) {
    #[cfg(target_arch = "nvptx64")]
    asm!("st.shared.b16 [{a}], {v};", a = in(reg32) addr, v = in(reg16) value,
         options(nostack));
    #[cfg(target_arch = "amdgpu")]
    lds::<u16>(addr).write(value);
    #[cfg(not(tessera_device))]
    ops::st_shared_part::<2>(addr, value.into());
}

/// `st.shared.b8 [addr], v`: one byte (the rest of its word is kept).
///
/// # Safety
/// `addr` must be an address inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_b8(addr: u32, value: u8) {
    // `st.shared.b8` takes a 16-bit register (PTX has no 8-bit registers).
    #[cfg(target_arch = "nvptx64")]
    asm!("st.shared.b8 [{a}], {v};", a = in(reg32) addr, v = in(reg16) u16::from(value),
         options(nostack));
    #[cfg(target_arch = "amdgpu")]
    lds::<u8>(addr).write(value);
    #[cfg(not(tessera_device))]
    ops::st_shared_part::<1>(addr, value.into());
}

/// `st.shared.v2.b32 [addr], {v0, v1}`.
///
/// # Safety
/// `addr` must be an 8-byte aligned address with 8 bytes inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_v2<T: B32>(addr: u32, value: [T; 2]) {
    #[cfg(target_arch = "nvptx64")]
    asm!("st.shared.v2.b32 [{a}], {{{v0}, {v1}}};", a = in(reg32) addr,
         v0 = in(reg32) value[0].to_b32(), v1 = in(reg32) value[1].to_b32(), options(nostack));
    #[cfg(target_arch = "amdgpu")]
    lds::<Words2>(addr).write(Words2(crate::unroll::map(value, T::to_b32)));
    #[cfg(not(tessera_device))]
    st_shared_words(addr, value, "st.shared.v2.b32");
}

/// `st.shared.v4.b32 [addr], {v0, v1, v2, v3}`.
///
/// # Safety
/// `addr` must be a 16-byte aligned address with 16 bytes inside the block's shared memory.
#[inline(always)]
#[track_caller]
pub unsafe fn st_shared_v4<T: B32>(addr: u32, value: [T; 4]) {
    #[cfg(target_arch = "nvptx64")]
    asm!("st.shared.v4.b32 [{a}], {{{v0}, {v1}, {v2}, {v3}}};", a = in(reg32) addr,
         v0 = in(reg32) value[0].to_b32(), v1 = in(reg32) value[1].to_b32(),
         v2 = in(reg32) value[2].to_b32(), v3 = in(reg32) value[3].to_b32(), options(nostack));
    #[cfg(target_arch = "amdgpu")]
    lds::<Words4>(addr).write(Words4(crate::unroll::map(value, T::to_b32)));
    #[cfg(not(tessera_device))]
    st_shared_words(addr, value, "st.shared.v4.b32");
}

// ---------------------------------------------------------------------------------------------
// ldmatrix / stmatrix
// ---------------------------------------------------------------------------------------------

/// Defines, for one matrix count (`$shape`: `x1`, `x2`, `x4`; registers `$d`), `ldmatrix` as
/// `$ld` and `$ld_trans` (`.trans`), and their inverses `stmatrix` as `$st` and `$st_trans`
/// (sm_90), which store from each lane what the load gives it.
macro_rules! matrix_shape {
    ($(#[$doc:meta])* $ld:ident, $st:ident,
     $(#[$trans_doc:meta])* $ld_trans:ident, $st_trans:ident,
     $n:literal, $shape:literal, ($($d:ident),+)) => {
        matrix_shape!(@pair $(#[$doc])* $ld, $st, $n, false, $shape, ($($d),+));
        matrix_shape!(@pair $(#[$trans_doc])* $ld_trans, $st_trans, $n, true,
            concat!($shape, ".trans"), ($($d),+));
    };
    (@pair $(#[$doc:meta])* $ld:ident, $st:ident, $n:literal, $trans:literal, $shape:expr,
     ($($d:ident),+)) => {
        ldmatrix_fn!(
            $(#[$doc])*
            $ld, $n, $trans, concat!("ldmatrix.sync.aligned.m8n8.", $shape, ".shared.b16"),
            ($($d),+)
        );
        stmatrix_fn!(
            #[doc = concat!(
                "`stmatrix.sync.aligned.m8n8.", $shape, ".shared.b16 [addr], {r..}`: the inverse ",
                "of [`", stringify!($ld), "`]: each lane stores the registers [`", stringify!($ld),
                "`] gives it, to the rows at the addresses the lanes give as for [`",
                stringify!($ld), "`]."
            )]
            $st, $n, $trans, concat!("stmatrix.sync.aligned.m8n8.", $shape, ".shared.b16"),
            ($($d),+)
        );
    };
}

macro_rules! ldmatrix_fn {
    ($(#[$doc:meta])* $name:ident, $n:literal, $trans:literal, $ptx:expr, ($($d:ident),+)) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// Every lane of the warp must execute it (`.aligned`); the row addresses must be
        /// 16-byte aligned and inside the block's shared memory.
        #[cfg(not(target_arch = "amdgpu"))]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(addr: u32) -> [u32; $n] {
            #[cfg(target_arch = "nvptx64")]
            {
                $(let $d: u32;)+
                asm!(
                    concat!($ptx, " {{", ldmatrix_fn!(@list $($d),+), "}}, [{a}];"),
                    $($d = out(reg32) $d,)+
                    a = in(reg32) addr,
                    options(nostack, readonly)
                );
                [$($d),+]
            }
            #[cfg(not(tessera_device))]
            {
                ops::ldmatrix::<$n>(addr, $trans)
            }
        }
    };
    (@list $first:ident $(, $rest:ident)*) => {
        concat!("{", stringify!($first), "}" $(, ", {", stringify!($rest), "}")*)
    };
}

macro_rules! stmatrix_fn {
    ($(#[$doc:meta])* $name:ident, $n:literal, $trans:literal, $ptx:expr, ($($r:ident),+)) => {
        $(#[$doc])*
        ///
        /// Requires sm_90 on the GPU: compiled for nvptx64 only when the target CPU is sm_90 or
        /// newer (`#[cfg(target_feature = "sm_90")]`); always available on the host.
        ///
        /// # Safety
        /// Every lane of the warp must execute it (`.aligned`); the row addresses must be
        /// 16-byte aligned and inside the block's shared memory.
        #[cfg(any(not(tessera_device), target_feature = "sm_90"))]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(addr: u32, regs: [u32; $n]) {
            #[cfg(target_arch = "nvptx64")]
            {
                let [$($r),+] = regs;
                asm!(
                    concat!($ptx, " [{a}], {{", ldmatrix_fn!(@list $($r),+), "}};"),
                    a = in(reg32) addr,
                    $($r = in(reg32) $r,)+
                    options(nostack)
                );
            }
            #[cfg(not(tessera_device))]
            {
                ops::stmatrix::<$n>(addr, regs, $trans)
            }
        }
    };
}

matrix_shape!(
    /// `ldmatrix.sync.aligned.m8n8.x1.shared.b16 {d}, [addr]`: one 8×8 matrix of 16-bit
    /// elements whose row `r` starts at the address of lane `r` (lanes 0..8). Lane `l` receives
    /// row `l / 4`, columns `2 (l % 4)` (low half) and `2 (l % 4) + 1` (high half).
    ldmatrix_x1, stmatrix_x1,
    /// `ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16`: as [`ldmatrix_x1`] but transposed:
    /// lane `l` receives elements (row `2 (l % 4)`, column `l / 4`) and (row `2 (l % 4) + 1`,
    /// column `l / 4`) of the stored matrix.
    ldmatrix_x1_trans, stmatrix_x1_trans,
    1, "x1", (d0)
);
matrix_shape!(
    /// `ldmatrix.sync.aligned.m8n8.x2.shared.b16`: two matrices, rows from lanes 0..8 and 8..16;
    /// register `m` holds matrix `m` (layout as [`ldmatrix_x1`]).
    ldmatrix_x2, stmatrix_x2,
    /// `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16`: two transposed matrices.
    ldmatrix_x2_trans, stmatrix_x2_trans,
    2, "x2", (d0, d1)
);
matrix_shape!(
    /// `ldmatrix.sync.aligned.m8n8.x4.shared.b16`: four matrices, rows from lanes 8m..8m+8;
    /// register `m` holds matrix `m` (layout as [`ldmatrix_x1`]).
    ldmatrix_x4, stmatrix_x4,
    /// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`: four transposed matrices.
    ldmatrix_x4_trans, stmatrix_x4_trans,
    4, "x4", (d0, d1, d2, d3)
);
