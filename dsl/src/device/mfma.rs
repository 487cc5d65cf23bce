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
                use crate::emulator::mfma::{mfma, MfmaInput, MfmaInstr};
                let instr = MfmaInstr {
                    input: MfmaInput::$input,
                    nd: $nd,
                };
                mfma(instr, a, b, c.map(f32::to_bits)).map(f32::from_bits)
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
