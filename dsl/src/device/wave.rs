//! Shuffles of an AMD wave (CDNA: 64 lanes, the device layer's warps `2w` and `2w + 1`): what the
//! tile compiler's plans on 64-lane waves (`tessera_layout::plan::wave`) call, amdgpu and host
//! only (nvptx64 has no waves of 64, so a kernel using them fails to compile there).
//!
//! A thread's lane in its wave is `lane_id() | (warp_id() & 1) << 5` (the block's threads form
//! waves in order). On amdgpu [`wave_shfl_idx_b32`] is `ds_bpermute_b32` with the source lane's
//! byte address (the instruction addresses all 64 lanes); on the host the emulator's wave
//! collective (`emulator/wave.rs`), which raises an error unless it emulates amdgpu and the
//! block fills the wave.

use super::word::ShflValue;

/// `ds_bpermute_b32`: `a` of lane `source_lane` (`0..64`) of this thread's wave. Every lane of
/// the wave executes it.
#[inline(always)]
#[track_caller]
pub fn wave_shfl_idx_b32(a: u32, source_lane: u32) -> u32 {
    #[cfg(target_arch = "amdgpu")]
    {
        // SAFETY: `ds_bpermute` reads another lane's register; every lane of the wave executes
        // it (this function's contract).
        unsafe { core::arch::amdgpu::ds_bpermute((source_lane & 63) * 4, a) }
    }
    #[cfg(not(tessera_device))]
    {
        crate::emulator::wave::wave_read(source_lane, a)
    }
}

/// [`wave_shfl_idx_b32`] of any 32- or 64-bit value (64-bit values as two words).
#[inline(always)]
pub fn wave_shfl_idx<T: ShflValue>(value: T, source_lane: u32) -> T {
    value.map_words(|w| wave_shfl_idx_b32(w, source_lane))
}
