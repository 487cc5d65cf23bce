//! Warpgroup tensor-core MMA (sm_90a): `wgmma.mma_async`, D = A·B (+ D) for a warpgroup of 4
//! warps, with A and B read from shared memory through matrix descriptors (or A from
//! registers), asynchronously.
//!
//! ```text
//! wgmma.fence.sync.aligned;                    // before the first wgmma, and between register
//!                                              // accesses and a wgmma on the same registers
//! wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 {d..}, a-desc, b-desc, scale-d, 1, 1, ta, tb;
//! wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 {d..}, {a0, a1, a2, a3}, b-desc, scale-d,
//!     1, 1, tb;
//! wgmma.commit_group.sync.aligned;             // close the group of wgmmas issued since
//! wgmma.wait_group.sync.aligned N;             // wait until at most N groups are pending
//! ```
//!
//! (and `.bf16`; for the 8-bit types `.e4m3`, `.e5m2` and `.s8` the shape is `m64nNk32`, both
//! operands come from shared memory, K-major, and there are no `imm-trans` operands; `.s8`
//! accumulates in `.s32`, without `imm-scale` operands, wrapping). The 128 threads of the
//! warpgroup execute each instruction together, convergently: the emulator makes
//! `wgmma.mma_async` a rendezvous of the 128 threads that reads its operands once, and reports
//! divergent `wgmma`s or a thread that never arrives. The accumulator is a [`WgmmaAccumulator`]
//! of `N / 2` f32 (i32 for `.s8`) registers per thread laid out as the mma-v3 family
//! (`tessera_layout::families::NvidiaMma` version 3, warps `[4, 1]`, instruction `[16, N, 16]`,
//! tile `64 × N`): register `i` of lane `l` in warp `w` holds row `16w + l/4 + 8·(i/2 mod 2)`,
//! column `8·(i/4) + 2·(l mod 4) + i mod 2`. A from registers is the mma-v3 dot-operand layout
//! (`k_width` 2), the `mma.m16n8k16` A fragment per warp. Descriptors
//! ([`tessera_layout::plan::wgmma::MatrixDescriptor`]) name `64 × K` (A) and `N × K` (B)
//! operands (K = 16, or 32 for 8-bit types); `TRANS_A`/`TRANS_B` = 1 reads them M/N-major.
//!
//! The accumulator registers may be read only after a `wgmma_wait_group` has retired the group
//! of the last `wgmma` writing them; the emulator reports an earlier read as an error.
//! `wgmma_wait_group` takes the accumulator so that the compiler keeps its reads after the
//! wait. Shared-memory operands written by threads need [`fence_proxy_async_shared_cta`]
//! (`crate::device`) before the `wgmma` that reads them; TMA writes completed through an
//! `mbarrier` do not.

use super::B32;
#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::wgmma::{self as emu, AccumulatorState, OperandA, WgmmaInput};
#[cfg(not(tessera_device))]
use core::cell::Cell;

/// One thread's accumulator fragment of an `m64nNkK` `wgmma`: `R = N / 2` 32-bit registers of
/// `E` (f32, or i32 for `s8` operands; the `wgmma`s are defined for those two).
pub struct WgmmaAccumulator<const R: usize, E: B32 = f32> {
    regs: [E; R],
    #[cfg(not(tessera_device))]
    state: Cell<AccumulatorState>,
}

impl<const R: usize, E: B32> WgmmaAccumulator<R, E> {
    /// An accumulator of zeros (registers written by the thread: a [`wgmma_fence`] must follow
    /// before a `wgmma` accumulates into it).
    #[inline(always)]
    pub fn zeroed() -> Self {
        WgmmaAccumulator {
            regs: [E::from_b32(0); R],
            #[cfg(not(tessera_device))]
            state: emu::new_accumulator(),
        }
    }

    /// An accumulator holding `regs` (fragment layout: module docs), written by the thread: a
    /// [`wgmma_fence`] must follow before a `wgmma` accumulates into it.
    #[inline(always)]
    pub fn from_registers(regs: [E; R]) -> Self {
        WgmmaAccumulator {
            regs,
            #[cfg(not(tessera_device))]
            state: emu::new_accumulator(),
        }
    }

    /// The registers (fragment layout: module docs). Only after the `wgmma` writing them is
    /// retired by [`wgmma_wait_group`]; a [`wgmma_fence`] must follow before the next `wgmma`.
    #[inline(always)]
    #[track_caller]
    pub fn registers(&self) -> [E; R] {
        #[cfg(not(tessera_device))]
        emu::access_accumulator(&self.state);
        self.regs
    }
}

operandless_op!(
    /// `wgmma.fence.sync.aligned`: orders this thread's register accesses before later `wgmma`s.
    wgmma_fence, "wgmma.fence.sync.aligned;", host { emu::fence() }
);

operandless_op!(
    /// `wgmma.commit_group.sync.aligned`: closes the group of `wgmma`s issued since the last one.
    wgmma_commit_group, "wgmma.commit_group.sync.aligned;", host { emu::commit_group() }
);

/// `base + UNITS`: a matrix descriptor whose start address lies `UNITS` 16-byte units past
/// `base`'s (a later K step of the same tile; the 14-bit field does not carry, shared-window
/// addresses being below 2¹⁸). An `asm!` with side effects on the device, so that the compiler
/// adds beside each `wgmma` rather than keeping one 64-bit descriptor per step live across a
/// loop (which ptxas would keep in vector registers and move to uniform ones per `wgmma`).
#[inline(always)]
pub fn wgmma_descriptor_offset<const UNITS: u64>(base: u64) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let descriptor: u64;
        // SAFETY: an add of registers.
        unsafe {
            asm!("add.s64 {d}, {b}, {u};", d = out(reg64) descriptor, b = in(reg64) base,
                u = const UNITS, options(nostack, nomem));
        }
        descriptor
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        base + UNITS
    }
}

/// Bit `0` of an immediate `imm-trans` operand.
struct Trans<const T: u32>;
impl<const T: u32> Trans<T> {
    const OK: () = assert!(T <= 1, "imm-trans is 0 (K-major) or 1 (M/N-major)");
}

/// Defines, for one N, the `wgmma` wrappers (f16 and bf16 with A from shared memory or
/// registers; e4m3, e5m2 and s8 from shared memory) and the `wait_group` fences of its f32 and
/// i32 accumulators. `$first $rest` are the register indices `0 .. N/2`.
macro_rules! wgmma_n {
    ($n:literal, $r:literal, $ss_f16:ident, $ss_bf16:ident, $rs_f16:ident, $rs_bf16:ident,
     $ss_e4m3:ident, $ss_e5m2:ident, $ss_s8:ident, [$first:tt $($rest:tt)*]) => {
        wgmma_n!(@ss $n, $r, $ss_f16, "f16", F16, [$first $($rest)*]);
        wgmma_n!(@ss $n, $r, $ss_bf16, "bf16", Bf16, [$first $($rest)*]);
        wgmma_n!(@rs $n, $r, $rs_f16, "f16", F16, [$first $($rest)*]);
        wgmma_n!(@rs $n, $r, $rs_bf16, "bf16", Bf16, [$first $($rest)*]);
        wgmma_n!(@ss8 $n, $r, $ss_e4m3, "e4m3", E4m3, f32, "f32", ", 1, 1", [$first $($rest)*]);
        wgmma_n!(@ss8 $n, $r, $ss_e5m2, "e5m2", E5m2, f32, "f32", ", 1, 1", [$first $($rest)*]);
        wgmma_n!(@ss8 $n, $r, $ss_s8, "s8", S8, i32, "s32", "", [$first $($rest)*]);
        wgmma_n!(@fence $r, f32, [$first $($rest)*]);
        wgmma_n!(@fence $r, i32, [$first $($rest)*]);
    };
    (@fence $r:literal, $acc:ty, [$first:tt $($rest:tt)*]) => {
        impl WaitGroupFence for WgmmaAccumulator<$r, $acc> {
            #[inline(always)]
            fn wait_group<const N: u32>(&mut self) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: waits for this thread's wgmmas.
                unsafe {
                    asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack));
                }
                // The registers are tied to a point after the wait, so their reads stay after it.
                self.pin();
                #[cfg(not(tessera_device))]
                emu::wait_group(N);
            }

            #[inline(always)]
            fn pin(&mut self) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: an empty instruction sequence (a comment) with the registers as
                // operands: it changes nothing.
                unsafe {
                    let regs = &mut self.regs;
                    asm!(
                        concat!(
                            "// wgmma accumulator {", stringify!($first), "}",
                            $(" {", stringify!($rest), "}",)*
                        ),
                        inout(reg32) regs[$first], $(inout(reg32) regs[$rest],)*
                        options(nostack)
                    );
                }
            }
        }
    };
    (@ss $n:literal, $r:literal, $name:ident, $ty:literal, $input:ident, $regs:tt) => {
        wgmma_n!(@mma $n, 16, $r, $name, $ty, $input, f32, "f32", ", 1, 1", $regs,
            <TRANS_A, TRANS_B>, a_desc: u64, "{a}", ", {TRANS_A}, {TRANS_B}", (a = in(reg64) a_desc,),
            OperandA::Shared { descriptor: a_desc, trans: TRANS_A == 1 }, TRANS_B == 1,
            #[doc = concat!(
                "`wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k16.f32.", $ty, ".", $ty,
                " d, a-desc, b-desc, scale-d, 1, 1, TRANS_A, TRANS_B`: `acc = A·B (+ acc when ",
                "scale_d)`, A and B from shared memory (module docs)."
            )]
            ///
            /// # Safety
            /// Executed by all 128 threads of the warpgroup with the same descriptors, which must
            /// name initialised shared memory that stays unchanged until the `wgmma` is retired.
        );
    };
    (@ss8 $n:literal, $r:literal, $name:ident, $ty:literal, $input:ident, $acc:ty,
     $dtype:literal, $scale_ab:literal, $regs:tt) => {
        wgmma_n!(@mma $n, 32, $r, $name, $ty, $input, $acc, $dtype, $scale_ab, $regs,
            <>, a_desc: u64, "{a}", "", (a = in(reg64) a_desc,),
            OperandA::Shared { descriptor: a_desc, trans: false }, false,
            #[doc = concat!(
                "`wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k32.", $dtype, ".", $ty,
                ".", $ty, " d, a-desc, b-desc, scale-d", $scale_ab, "`: `acc = A·B (+ acc when ",
                "scale_d)`, A and B K-major in shared memory (module docs; 8-bit types have no ",
                "`imm-trans`, integer ones no `imm-scale`; an s32 sum wraps)."
            )]
            ///
            /// # Safety
            /// Executed by all 128 threads of the warpgroup with the same descriptors, which must
            /// name initialised shared memory that stays unchanged until the `wgmma` is retired.
        );
    };
    (@rs $n:literal, $r:literal, $name:ident, $ty:literal, $input:ident, $regs:tt) => {
        wgmma_n!(@mma $n, 16, $r, $name, $ty, $input, f32, "f32", ", 1, 1", $regs,
            <TRANS_B>, a: [u32; 4], "{{{a0}, {a1}, {a2}, {a3}}}", ", {TRANS_B}",
            (a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],),
            OperandA::Registers(a), TRANS_B == 1,
            #[doc = concat!(
                "`wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k16.f32.", $ty, ".", $ty,
                " d, {a0, a1, a2, a3}, b-desc, scale-d, 1, 1, TRANS_B`: `acc = A·B (+ acc when ",
                "scale_d)`, A from this thread's fragment registers (`", $ty, "x2` pairs), B from ",
                "shared memory (module docs)."
            )]
            ///
            /// # Safety
            /// As the shared-memory form; `a` must not be changed before the `wgmma` is retired.
        );
    };
    // One `wgmma` form, `m64n$n k$k`: `$acc` accumulator registers (PTX type `$dtype`, with the
    // `imm-scale` immediates `$scale_ab`, none for integers); A is the parameter `$a` (asm text
    // `$a_text`, operands `$a_operands`, the emulator's `$operand_a`), with the `imm-trans`
    // immediates `$trans` (asm text `$trans_text`; none for 8-bit types), B M/N-major when
    // `$trans_b`.
    (@mma $n:literal, $k:literal, $r:literal, $name:ident, $ty:literal, $input:ident, $acc:ty,
     $dtype:literal, $scale_ab:literal, [$first:tt $($rest:tt)*], <$($trans:ident),*>,
     $a:ident: $a_ty:ty, $a_text:literal, $trans_text:literal, ($($a_operands:tt)*),
     $operand_a:expr, $trans_b:expr, $(#[$doc:meta])*) => {
        $(#[$doc])*
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name<$(const $trans: u32),*>(
            acc: &mut WgmmaAccumulator<$r, $acc>,
            $a: $a_ty,
            b_desc: u64,
            scale_d: bool,
        ) {
            $(
                #[allow(clippy::let_unit_value)]
                let () = Trans::<$trans>::OK;
            )*
            #[cfg(target_arch = "nvptx64")]
            {
                let regs = &mut acc.regs;
                asm!(
                    concat!(
                        "{{ .reg .pred p; setp.ne.b32 p, {sd}, 0; wgmma.mma_async.sync.aligned.m64n",
                        stringify!($n), "k", stringify!($k), ".", $dtype, ".", $ty, ".", $ty, " {{{",
                        stringify!($first), "}", $(", {", stringify!($rest), "}",)*
                        "}}, ", $a_text, ", {b}, p", $scale_ab, $trans_text, "; }}"
                    ),
                    inout(reg32) regs[$first], $(inout(reg32) regs[$rest],)*
                    $($a_operands)*
                    b = in(reg64) b_desc,
                    sd = in(reg32) scale_d as u32,
                    $($trans = const $trans,)*
                    options(nostack)
                );
            }
            #[cfg(not(tessera_device))]
            {
                let mut bits = acc.regs.map(B32::to_b32);
                emu::mma(
                    WgmmaInput::$input,
                    &mut bits,
                    &acc.state,
                    $operand_a,
                    b_desc,
                    $trans_b,
                    scale_d,
                );
                acc.regs = bits.map(B32::from_b32);
            }
        }
    };
}

/// `wgmma.wait_group` for one accumulator type (implemented for N = 64, 128, 256).
pub trait WaitGroupFence {
    /// `wgmma.wait_group.sync.aligned N`, then the registers tied to that point (`pin`).
    fn wait_group<const N: u32>(&mut self);

    /// Ties the registers to this point of the program (see [`wgmma_pin`]).
    fn pin(&mut self);
}

/// Every write to `acc`'s registers happens before this point: an empty `asm!` with the
/// registers as operands. Placed before [`wgmma_fence`], it keeps the compiler from moving an
/// accumulator's initialisation (a zero, a rescaled value) between the fence and the `wgmma`s,
/// or between the `wgmma`s of another accumulator, where ptxas would have to wait for the
/// `wgmma`s in flight (its warning C7517, "wgmma.wait_group is injected").
#[inline(always)]
pub fn wgmma_pin<A: WaitGroupFence>(acc: &mut A) {
    acc.pin();
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most the `N` most recent committed groups
/// are pending; `acc`'s registers are tied to the wait, so their reads stay after it.
#[inline(always)]
pub fn wgmma_wait_group<const N: u32, A: WaitGroupFence>(acc: &mut A) {
    acc.wait_group::<N>();
}

wgmma_n!(
    64, 32,
    wgmma_m64n64k16_f16,
    wgmma_m64n64k16_bf16,
    wgmma_m64n64k16_f16_rs,
    wgmma_m64n64k16_bf16_rs,
    wgmma_m64n64k32_e4m3,
    wgmma_m64n64k32_e5m2,
    wgmma_m64n64k32_s8,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);
wgmma_n!(
    128, 64,
    wgmma_m64n128k16_f16,
    wgmma_m64n128k16_bf16,
    wgmma_m64n128k16_f16_rs,
    wgmma_m64n128k16_bf16_rs,
    wgmma_m64n128k32_e4m3,
    wgmma_m64n128k32_e5m2,
    wgmma_m64n128k32_s8,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33
    34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);
wgmma_n!(
    256, 128,
    wgmma_m64n256k16_f16,
    wgmma_m64n256k16_bf16,
    wgmma_m64n256k16_f16_rs,
    wgmma_m64n256k16_bf16_rs,
    wgmma_m64n256k32_e4m3,
    wgmma_m64n256k32_e5m2,
    wgmma_m64n256k32_s8,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33
    34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64
    65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
    96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119
    120 121 122 123 124 125 126 127]
);
