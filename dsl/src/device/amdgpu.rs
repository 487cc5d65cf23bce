//! The amdgpu (`amdgcn-amd-amdhsa`) side of the device layer: what its functions' amdgpu bodies
//! share.
//!
//! rustc has no inline assembly for amdgpu, so these bodies are `core::arch::amdgpu`
//! intrinsics, rustc's `amdgpu_dispatch_ptr` and plain Rust memory accesses, which LLVM
//! selects as `global_load_dword{,x2,x4}` and so on.
//!
//! Here: thread and block indices and sizes, lanes and warps, `sync_threads`, global loads and
//! stores, shared memory (the launch's dynamic LDS, [`lds`]), shuffles ([`warp_read`] by
//! `ds_bpermute`; [`warp_xor`] by DPP or `ds_swizzle` for butterflies of known masks), f32
//! arithmetic, conversions, float math, atomics (`core::sync::atomic`, in `device/atomic.rs`)
//! and `v_mfma` (`device/mfma.rs`); nothing NVIDIA-only (`mma`, `wgmma`, `cp.async`, TMA,
//! mbarriers, `ldmatrix`).
//!
//! **Warps of 32 lanes on waves of 64.** The device layer's contract is PTX's: a warp is 32
//! consecutive threads, `lane_id() < 32`, shuffles move values within a warp. CDNA waves
//! (gfx90a, gfx942) hold 64 threads, so here a warp is half a wave: lanes `0..32` and `32..64`
//! of a wave are two warps, a shuffle reads within its own half (`ds_bpermute` with the half's
//! base added), and every kernel written against the PTX contract computes the same values.
//! Layouts that use all 64 lanes of a wave (six lane bits) are the tile compiler's to plan; they
//! are not this layer's.

use core::arch::amdgpu;

/// The HSA kernel dispatch packet (`hsa_kernel_dispatch_packet_t`) field at byte `offset`.
#[inline(always)]
fn dispatch_field<T: Copy>(offset: usize) -> T {
    let packet = core::intrinsics::gpu::amdgpu_dispatch_ptr() as *const u8;
    // SAFETY: the dispatch packet is valid for the whole kernel; the fields read here
    // (workgroup_size_{x,y,z}: u16 at 4, 6, 8; grid_size_{x,y,z}: u32 at 12, 16, 20) are aligned.
    unsafe { packet.add(offset).cast::<T>().read() }
}

/// Threads per block along axis `axis` (0, 1, 2): the packet's `workgroup_size`.
#[inline(always)]
pub(crate) fn block_dim(axis: usize) -> u32 {
    u32::from(dispatch_field::<u16>(4 + 2 * axis))
}

/// Blocks in the grid along `axis`: the packet's `grid_size` (work-items) over the block size
/// (the launcher's grid is always a whole number of blocks).
#[inline(always)]
pub(crate) fn grid_dim(axis: usize) -> u32 {
    dispatch_field::<u32>(12 + 4 * axis) / block_dim(axis)
}

/// This thread's lane in its wave (`0..64`): `v_mbcnt_lo/hi` of all ones.
#[inline(always)]
pub(crate) fn wave_lane() -> u32 {
    amdgpu::mbcnt_hi(u32::MAX, amdgpu::mbcnt_lo(u32::MAX, 0))
}

/// The value of `a` in lane `lane` (`0..32`) of this thread's warp (half-wave):
/// `ds_bpermute_b32` with the byte address of that lane in the wave.
#[inline(always)]
pub(crate) fn warp_read(lane: u32, a: u32) -> u32 {
    let wave_lane = (wave_lane() & 32) | (lane & 31);
    // SAFETY: `ds_bpermute` reads another lane's register; every lane of the warp executes it
    // (the device layer's shuffle contract).
    unsafe { amdgpu::ds_bpermute(wave_lane * 4, a) }
}

/// `a` of lane `lane ^ lane_mask` (`lane_mask < 32`) of this thread's warp (half-wave), read
/// without an address register: `v_mov_b32` with DPP `quad_perm` for masks 1 and 2 (lanes
/// `[1, 0, 3, 2]`, `[2, 3, 0, 1]` of each four, on the VALU; LLVM folds the move into the
/// instruction that uses it where it can), `ds_swizzle_b32` in its bit-mask mode for the others
/// (within each 32 lanes: and-mask 31, or-mask 0, xor-mask `lane_mask`). Both take the pattern as
/// an immediate of the instruction, so each mask is an arm of its own; [`super::shfl`] calls
/// this for a mask LLVM knows, and one arm remains.
#[inline(always)]
pub(crate) fn warp_xor(lane_mask: u32, a: u32) -> u32 {
    /// `ds_swizzle_b32`'s bit-mask offset for `lane ^ mask` within 32 lanes.
    const fn xor_pattern(mask: u32) -> u32 {
        0x1f | (mask << 10)
    }
    unsafe extern "unadjusted" {
        #[link_name = "llvm.amdgcn.ds.swizzle"]
        fn ds_swizzle(value: u32, pattern: u32) -> u32;
    }
    macro_rules! swizzles {
        ($($mask:literal)*) => {
            match lane_mask & 31 {
                0 => a,
                // SAFETY (both arms): a cross-lane read of a register, executed by every lane of
                // the warp (the device layer's shuffle contract).
                1 => unsafe { amdgpu::update_dpp::<0xb1, 0xf, 0xf, false>(a, a) },
                2 => unsafe { amdgpu::update_dpp::<0x4e, 0xf, 0xf, false>(a, a) },
                $($mask => unsafe { ds_swizzle(a, const { xor_pattern($mask) }) },)*
                _ => unsafe { ds_swizzle(a, const { xor_pattern(31) }) },
            }
        };
    }
    swizzles!(3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30)
}

/// `__syncthreads()`: the block's threads wait for each other, and the memory accesses of each
/// before the barrier are visible to all after it (release fence, `s_barrier`, acquire fence).
///
/// The fences are Rust's, which have no scope: LLVM would emit them at system scope, which on
/// gfx90a and gfx942 also writes back and invalidates the L2 (`buffer_wbl2`, `buffer_inv`). The
/// build helper gives these two, directly around the barrier, workgroup scope in the crate's
/// final LLVM module, as HIP's `__syncthreads` has (`build::barrier_scope`); a code object
/// built without `llc` keeps the system's.
#[inline(always)]
pub(crate) fn block_barrier() {
    use core::sync::atomic::{fence, Ordering};
    fence(Ordering::Release);
    amdgpu::s_barrier();
    fence(Ordering::Acquire);
}

/// A pointer to byte `offset` of the launch's dynamic LDS (the block's shared memory, sized at
/// launch; 16-byte aligned at offset 0). LLVM sees the LDS address space through it and selects
/// `ds_read`/`ds_write`.
#[inline(always)]
pub(crate) fn lds<V>(offset: u32) -> *mut V {
    let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Words4>();
    base.cast::<u8>().wrapping_add(offset as usize).cast()
}

/// 32-bit words loaded and stored together: `N` words at the alignment of `N` words.
macro_rules! word_vector {
    ($name:ident, $n:literal, $align:literal) => {
        #[doc = concat!($n, " 32-bit words, ", $align, "-byte aligned.")]
        #[derive(Clone, Copy)]
        #[repr(C, align($align))]
        pub(crate) struct $name(pub(crate) [u32; $n]);
    };
}
word_vector!(Words1, 1, 4);
word_vector!(Words2, 2, 8);
word_vector!(Words4, 4, 16);

/// `N` words from `addr` if `pred`, else `other` (`global_load_dword`, `_dwordx2`, `_dwordx4`).
///
/// # Safety
/// When `pred` is true, `addr` points to readable memory aligned as `V`.
#[inline(always)]
pub(crate) unsafe fn load_words<V: Copy>(addr: u64, pred: bool, other: V) -> V {
    if pred {
        (addr as usize as *const V).read()
    } else {
        other
    }
}

/// Stores `value` at `addr` if `pred`.
///
/// # Safety
/// When `pred` is true, `addr` points to writable memory aligned as `V`.
#[inline(always)]
pub(crate) unsafe fn store_words<V: Copy>(addr: u64, pred: bool, value: V) {
    if pred {
        (addr as usize as *mut V).write(value);
    }
}
