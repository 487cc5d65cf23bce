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

macro_rules! sreg {
    ($(#[$doc:meta])* $name:ident, $intrinsic:ident, $host:ident, $idx:expr, amdgpu $amd:expr) => {
        $(#[$doc])*
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
    };
}

sreg!(
    /// `%tid.x`: thread index in the block, x.
    thread_idx_x, _thread_idx_x, thread_idx, 0,
    amdgpu core::arch::amdgpu::workitem_id_x()
);
sreg!(
    /// `%tid.y`: thread index in the block, y.
    thread_idx_y, _thread_idx_y, thread_idx, 1,
    amdgpu core::arch::amdgpu::workitem_id_y()
);
sreg!(
    /// `%tid.z`: thread index in the block, z.
    thread_idx_z, _thread_idx_z, thread_idx, 2,
    amdgpu core::arch::amdgpu::workitem_id_z()
);
sreg!(
    /// `%ctaid.x`: block index in the grid, x.
    block_idx_x, _block_idx_x, block_idx, 0,
    amdgpu core::arch::amdgpu::workgroup_id_x()
);
sreg!(
    /// `%ctaid.y`: block index in the grid, y.
    block_idx_y, _block_idx_y, block_idx, 1,
    amdgpu core::arch::amdgpu::workgroup_id_y()
);
sreg!(
    /// `%ctaid.z`: block index in the grid, z.
    block_idx_z, _block_idx_z, block_idx, 2,
    amdgpu core::arch::amdgpu::workgroup_id_z()
);
sreg!(
    /// `%ntid.x`: threads per block, x.
    block_dim_x, _block_dim_x, block_dim, 0,
    amdgpu super::amdgpu::block_dim(0)
);
sreg!(
    /// `%ntid.y`: threads per block, y.
    block_dim_y, _block_dim_y, block_dim, 1,
    amdgpu super::amdgpu::block_dim(1)
);
sreg!(
    /// `%ntid.z`: threads per block, z.
    block_dim_z, _block_dim_z, block_dim, 2,
    amdgpu super::amdgpu::block_dim(2)
);
sreg!(
    /// `%nctaid.x`: blocks in the grid, x.
    grid_dim_x, _grid_dim_x, grid_dim, 0,
    amdgpu super::amdgpu::grid_dim(0)
);
sreg!(
    /// `%nctaid.y`: blocks in the grid, y.
    grid_dim_y, _grid_dim_y, grid_dim, 1,
    amdgpu super::amdgpu::grid_dim(1)
);
sreg!(
    /// `%nctaid.z`: blocks in the grid, z.
    grid_dim_z, _grid_dim_z, grid_dim, 2,
    amdgpu super::amdgpu::grid_dim(2)
);

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
