//! Special registers: thread, block and grid indices and sizes, lane and warp ids.
//!
//! On nvptx64 the index/size readers are the `core::arch::nvptx` intrinsics (`mov.u32 %r, %tid.x`
//! and friends, which LLVM knows the ranges of); `%laneid` is read with inline PTX. On amdgpu the
//! indices are `core::arch::amdgpu`'s `workitem_id_*`/`workgroup_id_*`, the sizes come from the
//! HSA dispatch packet, and a warp is half a wave (`lane_id()` is the lane in the wave mod 32).

#[cfg(target_arch = "nvptx64")]
use core::arch::{asm, nvptx};

#[cfg(not(tessera_device))]
use crate::emulator::ops;

/// The readers of one special register's three axes: `$name() -> u32` reads `$ptx.$axis` (the
/// `core::arch::nvptx` intrinsic `$intrinsic`; on amdgpu `$amd`; on the host the emulator's
/// `$host()[$idx]`).
macro_rules! sreg {
    ($host:ident, $ptx:literal, $what:literal,
     $([$name:ident, $intrinsic:ident, $idx:literal, $axis:literal, $amd:expr]),+) => {$(
        #[doc = concat!("`", $ptx, ".", $axis, "`: ", $what, ", ", $axis, ".")]
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: reading a special register has no preconditions.
                unsafe { nvptx::$intrinsic() as u32 }
            }
            #[cfg(target_arch = "amdgpu")]
            {
                $amd
            }
            #[cfg(not(tessera_device))]
            {
                ops::$host()[$idx]
            }
        }
    )+};
}

sreg! {
    thread_idx, "%tid", "thread index in the block",
    [thread_idx_x, _thread_idx_x, 0, "x", core::arch::amdgpu::workitem_id_x()],
    [thread_idx_y, _thread_idx_y, 1, "y", core::arch::amdgpu::workitem_id_y()],
    [thread_idx_z, _thread_idx_z, 2, "z", core::arch::amdgpu::workitem_id_z()]
}
sreg! {
    block_idx, "%ctaid", "block index in the grid",
    [block_idx_x, _block_idx_x, 0, "x", core::arch::amdgpu::workgroup_id_x()],
    [block_idx_y, _block_idx_y, 1, "y", core::arch::amdgpu::workgroup_id_y()],
    [block_idx_z, _block_idx_z, 2, "z", core::arch::amdgpu::workgroup_id_z()]
}
sreg! {
    block_dim, "%ntid", "threads per block",
    [block_dim_x, _block_dim_x, 0, "x", super::amdgpu::block_dim(0)],
    [block_dim_y, _block_dim_y, 1, "y", super::amdgpu::block_dim(1)],
    [block_dim_z, _block_dim_z, 2, "z", super::amdgpu::block_dim(2)]
}
sreg! {
    grid_dim, "%nctaid", "blocks in the grid",
    [grid_dim_x, _grid_dim_x, 0, "x", super::amdgpu::grid_dim(0)],
    [grid_dim_y, _grid_dim_y, 1, "y", super::amdgpu::grid_dim(1)],
    [grid_dim_z, _grid_dim_z, 2, "z", super::amdgpu::grid_dim(2)]
}

/// `mov.u32 %r, %laneid;`: the lane of this thread in its warp (0..32).
#[inline(always)]
pub fn lane_id() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!("mov.u32 {0}, %laneid;", out(reg32) r, options(pure, nomem, nostack));
        }
        r
    }
    #[cfg(target_arch = "amdgpu")]
    {
        super::amdgpu::wave_lane() & 31
    }
    #[cfg(not(tessera_device))]
    {
        ops::lane_id()
    }
}

/// Linear thread index in the block: `tid.x + tid.y * ntid.x + tid.z * ntid.x * ntid.y`
/// (the order in which threads are grouped into warps).
#[inline(always)]
pub fn linear_thread_id() -> u32 {
    thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z())
}

/// The warp of this thread within its block: `linear_thread_id() / 32`.
///
/// (Not PTX `%warpid`, which names a hardware warp slot and may change during execution.)
#[inline(always)]
pub fn warp_id() -> u32 {
    #[cfg(tessera_device)]
    {
        linear_thread_id() / 32
    }
    #[cfg(not(tessera_device))]
    {
        ops::warp_id()
    }
}
