//! Warp-level tensor-core MMA: `mma.sync.aligned` (sm_80+), D = A·B + C for one warp.
//!
//! Fragments are arrays of registers exactly as PTX defines them. With `g = lane / 4`
//! (groupID) and `t = lane % 4` (threadID_in_group), per the PTX ISA "Matrix Fragments for
//! mma.m16n8k16 with floating point type" and "... for mma.m16n8k32":
//!
//! **m16n8k16, f16/bf16 → f32** (A 16×16 row-major, B 16×8 column-major, C/D 16×8):
//! * `a: [u32; 4]`, each an `.f16x2`/`.bf16x2` pair, elements a0..a7 (a0 = low half of
//!   `a[0]`): row = `g` for a0, a1, a4, a5 and `g + 8` otherwise; col = `2t + (i & 1)`, `+ 8`
//!   for i ≥ 4.
//! * `b: [u32; 2]`, elements b0..b3: row (k) = `2t + (i & 1)`, `+ 8` for i ≥ 2; col (n) = `g`.
//! * `c`, `d: [f32; 4]`: row = `g` for c0, c1 and `g + 8` for c2, c3; col = `2t + (i & 1)`.
//!
//! **m16n8k32, s8 → s32** (A 16×32, B 32×8, C/D 16×8):
//! * `a: [u32; 4]`, four bytes each, elements a0..a15 (a0 = low byte of `a[0]`): row = `g` for
//!   a0..a3 and a8..a11, `g + 8` otherwise; col = `4t + (i & 3)`, `+ 16` for i ≥ 8.
//! * `b: [u32; 2]`, elements b0..b7: row (k) = `4t + (i & 3)`, `+ 16` for i ≥ 4; col = `g`.
//! * `c`, `d: [i32; 4]`: as the f32 accumulator. Accumulation wraps (no `.satfinite`).
//!
//! Every lane of the warp must execute the same `mma` (`.aligned`).

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(tessera_device))]
use crate::emulator::ops::{self, MmaKind};

#[cfg(target_arch = "nvptx64")]
macro_rules! mma_asm {
    ($ptx:literal, $a:expr, $b:expr, $c:expr, $ty:ty) => {{
        let (d0, d1, d2, d3): ($ty, $ty, $ty, $ty);
        // SAFETY: register-only instruction.
        unsafe {
            asm!(
                concat!(
                    $ptx,
                    " {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, ",
                    "{{{c0}, {c1}, {c2}, {c3}}};"
                ),
                d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                a0 = in(reg32) $a[0], a1 = in(reg32) $a[1], a2 = in(reg32) $a[2],
                a3 = in(reg32) $a[3],
                b0 = in(reg32) $b[0], b1 = in(reg32) $b[1],
                c0 = in(reg32) $c[0], c1 = in(reg32) $c[1], c2 = in(reg32) $c[2],
                c3 = in(reg32) $c[3],
                options(nomem, nostack)
            );
        }
        [d0, d1, d2, d3]
    }};
}

/// `pub fn $name(a, b, c: [$acc; 4]) -> [$acc; 4]`: `$ptx d, a, b, c` on nvptx64; on the host
/// the emulator's `MmaKind::$kind` on the accumulator's bits (`$to`, back by `$from`).
macro_rules! mma_fn {
    ($name:ident, $ptx:literal, $acc:ident, $kind:ident, $to:expr, $from:expr) => {
        #[doc = concat!("`", $ptx, " d, a, b, c` (fragments: module docs).")]
        #[inline(always)]
        #[track_caller]
        pub fn $name(a: [u32; 4], b: [u32; 2], c: [$acc; 4]) -> [$acc; 4] {
            #[cfg(target_arch = "nvptx64")]
            {
                mma_asm!($ptx, a, b, c, $acc)
            }
            #[cfg(not(tessera_device))]
            {
                crate::unroll::map(
                    ops::mma(MmaKind::$kind, a, b, crate::unroll::map(c, $to)),
                    $from,
                )
            }
        }
    };
}

mma_fn!(
    mma_m16n8k16_f16_f32,
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    f32,
    F16F32,
    f32::to_bits,
    f32::from_bits
);
mma_fn!(
    mma_m16n8k16_bf16_f32,
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    f32,
    Bf16F32,
    f32::to_bits,
    f32::from_bits
);
mma_fn!(
    mma_m16n8k32_s8_s32,
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
    i32,
    S8S32,
    |x| x as u32,
    |x| x as i32
);
