//! AMD matrix cores: `v_mfma` (CDNA: gfx90a, gfx942), `D = A·B + C` for one wave of 64 lanes —
//! two of this layer's warps (`2w` and `2w + 1`; `device/amdgpu.rs`). Every thread of the wave
//! must execute the same `mfma`.
//!
//! Fragments, per the CDNA3 ISA, with `nd` the instruction's M = N and lane `l` the thread's
//! lane in its wave (`32·(warp % 2) + lane_id`):
//! * `a: [u32; 2]`, elements a0..a3 (a0 = low half of `a[0]`): row `l % nd`, K `4·(l / nd) + i`.
//! * `b: [u32; 2]`, elements b0..b3: column `l % nd`, K `4·(l / nd) + i`.
//! * `c`, `d`: column `l % nd`; row `8·(i / 4) + 4·(l / 32) + i % 4` for `32x32x8` (16
//!   registers), `4·(l / 16) + i` for `16x16x16` (4 registers).
//! * i8 (`v_mfma_i32_32x32x16_i8`, `v_mfma_i32_16x16x32_i8`, i32 accumulators): `a`, `b` hold
//!   8 elements (a0 = byte 0 of `a[0]`), K `8·(l / nd) + i`; `c`, `d` as above.
//!
//! **i8 on gfx90a.** gfx942 has only the i8 instructions above and gfx908/gfx90a only
//! `v_mfma_i32_32x32x8i8`/`16x16x16i8` (4 elements a lane). Built for gfx908 or gfx90a
//! (`cfg(tessera_cdna2)`, set by this crate's build script from `-Ctarget-cpu`) an i8 function
//! is two of those, on bytes 0..4 then 4..8 of each lane's fragment: the same sum, since both
//! operands' K are relabelled alike and integer addition is exact (`tessera_layout::plan::mfma`
//! proves it against the ISA's definition).
//!
//! **f8** (`mfma_f32_32x32x16_f8e4m3` and co., f32 accumulators): `a`, `b` hold 8 OCP f8
//! elements (a0 = byte 0 of `a[0]`), K `8·(l / nd) + i`, as i8's. Built for gfx950
//! (`cfg(tessera_ocp_fp8)`, from `-Ctarget-cpu`) a function is gfx950's
//! `v_mfma_f32_32x32x16_fp8_fp8` (e4m3) or `_bf8_bf8` (e5m2), which read the OCP encodings
//! there; elsewhere (gfx942's instructions of those names read FNUZ, gfx90a has none) it is two
//! f16 instructions on the elements 0..4 then 4..8 of each lane widened to f16 (exact), the sum
//! of the same products. The emulator computes the one instruction (products exact, summed and
//! rounded once), so gfx942 and gfx90a may differ from it by the rounding of the first half's
//! sum.
//!
//! On amdgpu each function is the LLVM intrinsic `llvm.amdgcn.mfma.*` (no inline assembly
//! there); on the host the emulator's wave collective (`emulator/mfma.rs`), which raises
//! `EmulatorError::AmdInstruction` when the launch emulates an NVIDIA GPU. The functions do not
//! exist in nvptx64 builds.

#[cfg(target_arch = "amdgpu")]
mod intrinsics {
    //! The LLVM intrinsics and their vector types.
    #![allow(improper_ctypes)]

    /// `<4 x half>`.
    #[repr(simd)]
    #[derive(Clone, Copy)]
    pub(super) struct F16x4([f16; 4]);
    /// `<4 x i16>` (bf16 bits).
    #[repr(simd)]
    #[derive(Clone, Copy)]
    pub(super) struct I16x4([i16; 4]);
    /// `<16 x float>`.
    #[repr(simd)]
    #[derive(Clone, Copy)]
    pub(super) struct F32x16([f32; 16]);
    /// `<4 x float>`.
    #[repr(simd)]
    #[derive(Clone, Copy)]
    pub(super) struct F32x4([f32; 4]);
    /// `<16 x i32>`.
    #[repr(simd)]
    #[derive(Clone, Copy)]
    pub(super) struct I32x16([i32; 16]);
    /// `<4 x i32>`.
    #[repr(simd)]
    #[derive(Clone, Copy)]
    pub(super) struct I32x4([i32; 4]);

    unsafe extern "unadjusted" {
        #[link_name = "llvm.amdgcn.mfma.f32.32x32x8f16"]
        pub(super) fn mfma_f32_32x32x8f16(
            a: F16x4,
            b: F16x4,
            c: F32x16,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x16;
        #[link_name = "llvm.amdgcn.mfma.f32.32x32x8bf16.1k"]
        pub(super) fn mfma_f32_32x32x8bf16_1k(
            a: I16x4,
            b: I16x4,
            c: F32x16,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x16;
        #[link_name = "llvm.amdgcn.mfma.f32.16x16x16f16"]
        pub(super) fn mfma_f32_16x16x16f16(
            a: F16x4,
            b: F16x4,
            c: F32x4,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x4;
        #[link_name = "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"]
        pub(super) fn mfma_f32_16x16x16bf16_1k(
            a: I16x4,
            b: I16x4,
            c: F32x4,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x4;
    }

    #[cfg(not(tessera_cdna2))]
    unsafe extern "unadjusted" {
        #[link_name = "llvm.amdgcn.mfma.i32.32x32x16.i8"]
        pub(super) fn mfma_i32_32x32x16_i8(
            a: i64,
            b: i64,
            c: I32x16,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> I32x16;
        #[link_name = "llvm.amdgcn.mfma.i32.16x16x32.i8"]
        pub(super) fn mfma_i32_16x16x32_i8(
            a: i64,
            b: i64,
            c: I32x4,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> I32x4;
    }

    #[cfg(tessera_ocp_fp8)]
    unsafe extern "unadjusted" {
        #[link_name = "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8"]
        pub(super) fn mfma_f32_32x32x16_fp8_fp8(
            a: i64,
            b: i64,
            c: F32x16,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x16;
        #[link_name = "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8"]
        pub(super) fn mfma_f32_16x16x32_fp8_fp8(
            a: i64,
            b: i64,
            c: F32x4,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x4;
        #[link_name = "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8"]
        pub(super) fn mfma_f32_32x32x16_bf8_bf8(
            a: i64,
            b: i64,
            c: F32x16,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x16;
        #[link_name = "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8"]
        pub(super) fn mfma_f32_16x16x32_bf8_bf8(
            a: i64,
            b: i64,
            c: F32x4,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> F32x4;
    }

    #[cfg(tessera_cdna2)]
    unsafe extern "unadjusted" {
        #[link_name = "llvm.amdgcn.mfma.i32.32x32x8i8"]
        pub(super) fn mfma_i32_32x32x8i8(
            a: i32,
            b: i32,
            c: I32x16,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> I32x16;
        #[link_name = "llvm.amdgcn.mfma.i32.16x16x16i8"]
        pub(super) fn mfma_i32_16x16x16i8(
            a: i32,
            b: i32,
            c: I32x4,
            cbsz: i32,
            abid: i32,
            blgp: i32,
        ) -> I32x4;
    }
}

/// The emulator's `mfma` of `input` elements with M = N = `nd` (every function's host body).
#[cfg(not(tessera_device))]
#[inline(always)]
#[track_caller]
fn emulated<const N: usize>(
    input: crate::emulator::mfma::MfmaInput,
    nd: u32,
    a: [u32; 2],
    b: [u32; 2],
    c: [u32; N],
) -> [u32; N] {
    use crate::emulator::mfma::{mfma, MfmaInstr};
    mfma(MfmaInstr { input, nd }, a, b, c)
}

/// An 8-element fragment's two words as the `i64` the 8-bit instructions take (word 0 low).
#[cfg(all(target_arch = "amdgpu", any(not(tessera_cdna2), tessera_ocp_fp8)))]
#[inline(always)]
fn fragment_i64(words: [u32; 2]) -> i64 {
    (words[0] as u64 | (words[1] as u64) << 32) as i64
}

/// `pub fn $name(a, b, c: [f32; $n]) -> [f32; $n]`: on amdgpu the intrinsic `$intrinsic` on
/// operands of vector type `$vec`, on the host the emulator's `$instr`.
macro_rules! mfma_fn {
    ($name:ident, $isa:literal, $n:literal, $intrinsic:ident, $vec:ident, $acc:ident,
     $input:ident, $nd:literal) => {
        #[doc = concat!("`", $isa, "` of this thread's wave: `d = a·b + c` (fragments: module docs).")]
        #[inline(always)]
        #[track_caller]
        pub fn $name(a: [u32; 2], b: [u32; 2], c: [f32; $n]) -> [f32; $n] {
            #[cfg(target_arch = "amdgpu")]
            {
                use intrinsics::*;
                // SAFETY: a register-only instruction; the vectors have the arrays' sizes.
                unsafe {
                    let (a, b) = (
                        core::mem::transmute::<[u32; 2], $vec>(a),
                        core::mem::transmute::<[u32; 2], $vec>(b),
                    );
                    let c = core::mem::transmute::<[f32; $n], $acc>(c);
                    core::mem::transmute::<$acc, [f32; $n]>($intrinsic(a, b, c, 0, 0, 0))
                }
            }
            #[cfg(not(tessera_device))]
            {
                let input = crate::emulator::mfma::MfmaInput::$input;
                emulated(input, $nd, a, b, c.map(f32::to_bits)).map(f32::from_bits)
            }
        }
    };
}

mfma_fn!(
    mfma_f32_32x32x8_f16,
    "v_mfma_f32_32x32x8f16",
    16,
    mfma_f32_32x32x8f16,
    F16x4,
    F32x16,
    F16,
    32
);
mfma_fn!(
    mfma_f32_32x32x8_bf16,
    "v_mfma_f32_32x32x8bf16_1k",
    16,
    mfma_f32_32x32x8bf16_1k,
    I16x4,
    F32x16,
    Bf16,
    32
);
mfma_fn!(
    mfma_f32_16x16x16_f16,
    "v_mfma_f32_16x16x16f16",
    4,
    mfma_f32_16x16x16f16,
    F16x4,
    F32x4,
    F16,
    16
);
mfma_fn!(
    mfma_f32_16x16x16_bf16,
    "v_mfma_f32_16x16x16bf16_1k",
    4,
    mfma_f32_16x16x16bf16_1k,
    I16x4,
    F32x4,
    Bf16,
    16
);

/// `pub fn $name(a, b, c: [i32; $n]) -> [i32; $n]`: on amdgpu gfx942's `$gfx942` (or, built for
/// gfx908/gfx90a, `$cdna2` twice: module docs), on the host the emulator's `$nd` i8 instruction.
macro_rules! mfma_i8_fn {
    ($name:ident, $isa:literal, $n:literal, $gfx942:ident, $cdna2:ident, $acc:ident, $nd:literal) => {
        #[doc = concat!("`", $isa, "` of this thread's wave: `d = a·b + c` on 8 i8 elements of a \
                         lane per operand (fragments: module docs).")]
        #[inline(always)]
        #[track_caller]
        pub fn $name(a: [u32; 2], b: [u32; 2], c: [i32; $n]) -> [i32; $n] {
            #[cfg(all(target_arch = "amdgpu", not(tessera_cdna2)))]
            {
                use intrinsics::*;
                let (a, b) = (fragment_i64(a), fragment_i64(b));
                // SAFETY: a register-only instruction; the vector has the array's size.
                unsafe {
                    let c = core::mem::transmute::<[i32; $n], $acc>(c);
                    core::mem::transmute::<$acc, [i32; $n]>($gfx942(a, b, c, 0, 0, 0))
                }
            }
            #[cfg(all(target_arch = "amdgpu", tessera_cdna2))]
            {
                use intrinsics::*;
                // SAFETY: register-only instructions; the vector has the array's size.
                unsafe {
                    let c = core::mem::transmute::<[i32; $n], $acc>(c);
                    let low = $cdna2(a[0] as i32, b[0] as i32, c, 0, 0, 0);
                    let d = $cdna2(a[1] as i32, b[1] as i32, low, 0, 0, 0);
                    core::mem::transmute::<$acc, [i32; $n]>(d)
                }
            }
            #[cfg(not(tessera_device))]
            {
                let input = crate::emulator::mfma::MfmaInput::I8;
                emulated(input, $nd, a, b, c.map(|x| x as u32)).map(|x| x as i32)
            }
        }
    };
}

mfma_i8_fn!(
    mfma_i32_32x32x16_i8,
    "v_mfma_i32_32x32x16_i8",
    16,
    mfma_i32_32x32x16_i8,
    mfma_i32_32x32x8i8,
    I32x16,
    32
);
mfma_i8_fn!(
    mfma_i32_16x16x32_i8,
    "v_mfma_i32_16x16x32_i8",
    4,
    mfma_i32_16x16x32_i8,
    mfma_i32_16x16x16i8,
    I32x4,
    16
);

/// Four f8 elements (the bytes of `word`, element 0 lowest) widened to f16 (exact), packed two
/// to a word: the f16 fragment of one half of an f8 fragment.
#[cfg(all(target_arch = "amdgpu", not(tessera_ocp_fp8)))]
#[inline(always)]
fn widen_f8_word(word: u32, to_f16: impl Fn(u8) -> u16) -> [u32; 2] {
    let half = |i: u32| u32::from(to_f16((word >> (8 * i)) as u8));
    [half(0) | half(1) << 16, half(2) | half(3) << 16]
}

/// `pub fn $name(a, b, c: [f32; $n]) -> [f32; $n]` on 8 OCP f8 elements of type `$f8` a lane:
/// on gfx950 the intrinsic `$ocp`, elsewhere on amdgpu `$f16` twice on the widened halves, on
/// the host the emulator's `$input` instruction (module docs).
macro_rules! mfma_f8_fn {
    ($name:ident, $isa:literal, $n:literal, $ocp:ident, $f16:ident, $acc:ident, $f8:ident,
     $input:ident, $nd:literal) => {
        #[doc = concat!("`", $isa, "` of this thread's wave (gfx950; elsewhere two f16 \
                         instructions on the elements widened): `d = a·b + c` on 8 f8 elements \
                         of a lane per operand (fragments: module docs).")]
        #[inline(always)]
        #[track_caller]
        pub fn $name(a: [u32; 2], b: [u32; 2], c: [f32; $n]) -> [f32; $n] {
            #[cfg(all(target_arch = "amdgpu", tessera_ocp_fp8))]
            {
                use intrinsics::*;
                let (a, b) = (fragment_i64(a), fragment_i64(b));
                // SAFETY: a register-only instruction; the vector has the array's size.
                unsafe {
                    let c = core::mem::transmute::<[f32; $n], $acc>(c);
                    core::mem::transmute::<$acc, [f32; $n]>($ocp(a, b, c, 0, 0, 0))
                }
            }
            #[cfg(all(target_arch = "amdgpu", not(tessera_ocp_fp8)))]
            {
                let widen = |word: u32| {
                    widen_f8_word(word, |byte| crate::$f8::from_bits(byte).to_f16().to_bits())
                };
                let low = $f16(widen(a[0]), widen(b[0]), c);
                $f16(widen(a[1]), widen(b[1]), low)
            }
            #[cfg(not(tessera_device))]
            {
                let input = crate::emulator::mfma::MfmaInput::$input;
                emulated(input, $nd, a, b, c.map(f32::to_bits)).map(f32::from_bits)
            }
        }
    };
}

mfma_f8_fn!(
    mfma_f32_32x32x16_f8e4m3,
    "v_mfma_f32_32x32x16_fp8_fp8",
    16,
    mfma_f32_32x32x16_fp8_fp8,
    mfma_f32_32x32x8_f16,
    F32x16,
    f8e4m3,
    F8E4m3,
    32
);
mfma_f8_fn!(
    mfma_f32_16x16x32_f8e4m3,
    "v_mfma_f32_16x16x32_fp8_fp8",
    4,
    mfma_f32_16x16x32_fp8_fp8,
    mfma_f32_16x16x16_f16,
    F32x4,
    f8e4m3,
    F8E4m3,
    16
);
mfma_f8_fn!(
    mfma_f32_32x32x16_f8e5m2,
    "v_mfma_f32_32x32x16_bf8_bf8",
    16,
    mfma_f32_32x32x16_bf8_bf8,
    mfma_f32_32x32x8_f16,
    F32x16,
    f8e5m2,
    F8E5m2,
    32
);
mfma_f8_fn!(
    mfma_f32_16x16x32_f8e5m2,
    "v_mfma_f32_16x16x32_bf8_bf8",
    4,
    mfma_f32_16x16x32_bf8_bf8,
    mfma_f32_16x16x16_f16,
    F32x4,
    f8e5m2,
    F8E5m2,
    16
);
