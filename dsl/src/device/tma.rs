//! The Tensor Memory Accelerator (sm_90): 2-D tiled copies global → shared described by a
//! tensor map, completing on an `mbarrier`.
//!
//! ```text
//! cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
//!     [dst], [tensor_map, {x, y}], [mbarrier];
//! ```
//!
//! copies the box of `box_dim[1]` rows × `box_dim[0]` elements whose first element is global
//! element (`x`, `y`) (`x` along the contiguous dimension) to shared memory at `dst`: rows of
//! `box_dim[0] × element bytes` one after the other, each 16-byte chunk moved by the swizzle
//! (chunk bits `[4, 4 + b)` of the shared address XOR bits `[7, 7 + b)`, `b = log2(W / 16)`,
//! the pattern of [`DescriptorSwizzle`](tessera_layout::plan::wgmma::DescriptorSwizzle)).
//! Elements outside the tensor (coordinates below 0 or past `global_dim`) are written as
//! zeros. The copy counts the whole box's bytes as transactions on the `mbarrier`, and its
//! data is visible once that barrier's phase completes.
//!
//! # Tensor maps
//!
//! A [`TensorMap`] holds the fields of the driver's `cuTensorMapEncodeTiled` for a 2-D
//! tensor. The kernel receives a `Ptr<TensorMap>`, the global address of the map: on the
//! emulator the `TensorMap` itself, on the GPU the 128-byte `CUtensorMap` that
//! [`TensorMap::encode`] (feature `cuda`) builds from it, copied to device memory (the TMA
//! unit reads maps from the `.param`, `.const` or `.global` space).

use crate::Ptr;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// Element type of a tensor map (`CUtensorMapDataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum TmaElement {
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT16`.
    F16,
    /// `CU_TENSOR_MAP_DATA_TYPE_BFLOAT16`.
    Bf16,
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT32`.
    F32,
    /// `CU_TENSOR_MAP_DATA_TYPE_UINT8`: any 8-bit element (i8, f8) copied as bytes.
    U8,
}

impl TmaElement {
    /// Bytes per element.
    pub const fn bytes(self) -> u32 {
        match self {
            TmaElement::U8 => 1,
            TmaElement::F16 | TmaElement::Bf16 => 2,
            TmaElement::F32 => 4,
        }
    }
}

/// Shared-memory swizzle of a tensor map (`CUtensorMapSwizzle`): the width in bytes of the
/// swizzled rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum TmaSwizzle {
    /// Rows stored as they are.
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle.
    B128,
}

impl TmaSwizzle {
    /// Swizzle width in bytes (0 = none).
    pub const fn width(self) -> u32 {
        match self {
            TmaSwizzle::None => 0,
            TmaSwizzle::B32 => 32,
            TmaSwizzle::B64 => 64,
            TmaSwizzle::B128 => 128,
        }
    }
}

/// The most dimensions of a [`TensorMap`] (the tile language's tensors have at most 4; TMA
/// takes 5).
pub const TMA_MAX_RANK: usize = 4;

/// A tiled tensor map of rank 2 to [`TMA_MAX_RANK`]: what `cuTensorMapEncodeTiled` takes
/// (element strides 1, no interleave, zero out-of-bounds fill). Dimension 0 is the contiguous
/// one; a box spans dimensions 0 and 1 (`box_dim[2..]` are 1), so it lands in shared memory as
/// `box_dim[1]` rows of `box_dim[0]` elements whatever the rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct TensorMap {
    /// Element type.
    pub element: TmaElement,
    /// Dimensions used (2 to [`TMA_MAX_RANK`]).
    pub rank: u32,
    /// Global address of element (0, 0, …), 16-byte aligned.
    pub global_address: u64,
    /// Elements along each dimension, the contiguous one first (1 past `rank`).
    pub global_dim: [u64; TMA_MAX_RANK],
    /// Bytes between consecutive indices of dimensions 1, 2, … (multiples of 16; 0 past
    /// `rank`).
    pub global_stride_bytes: [u64; TMA_MAX_RANK - 1],
    /// The box copied by one instruction, per dimension (each at most 256; `box_dim[0] ×
    /// element bytes` a multiple of 16 and at most the swizzle width; 1 past dimension 1).
    pub box_dim: [u32; TMA_MAX_RANK],
    /// Shared-memory swizzle.
    pub swizzle: TmaSwizzle,
}

impl TensorMap {
    /// The map of a row-major `rows × cols` matrix at `base` with `row_stride_bytes` between
    /// rows, copied in boxes of `box_rows × box_cols`, checked as the driver checks it.
    #[cfg(not(tessera_device))]
    pub fn tiled_2d<T>(
        element: TmaElement,
        base: Ptr<T>,
        [rows, cols]: [u64; 2],
        row_stride_bytes: u64,
        [box_rows, box_cols]: [u32; 2],
        swizzle: TmaSwizzle,
    ) -> Result<TensorMap, String> {
        let map = TensorMap {
            element,
            rank: 2,
            global_address: base.addr(),
            global_dim: [cols, rows, 1, 1],
            global_stride_bytes: [row_stride_bytes, 0, 0],
            box_dim: [box_cols, box_rows, 1, 1],
            swizzle,
        };
        map.check().map(|()| map)
    }

    /// The map of a tensor at `base` of `sizes` and element `strides` (outermost first, as a
    /// tensor's; the last stride 1), copied in boxes of `box_rows × box_cols` over its last two
    /// dimensions, checked as the driver checks it.
    #[cfg(not(tessera_device))]
    pub fn tiled<T>(
        element: TmaElement,
        base: Ptr<T>,
        sizes: &[u64],
        strides: &[u64],
        [box_rows, box_cols]: [u32; 2],
        swizzle: TmaSwizzle,
    ) -> Result<TensorMap, String> {
        let rank = sizes.len();
        if !(2..=TMA_MAX_RANK).contains(&rank) || strides.len() != rank {
            return Err(format!(
                "invalid tensor map: {rank} sizes and {} strides (2 to {TMA_MAX_RANK} of each)",
                strides.len()
            ));
        }
        if strides[rank - 1] != 1 {
            return Err(format!(
                "invalid tensor map: the innermost stride is {}, not 1",
                strides[rank - 1]
            ));
        }
        let bytes = u64::from(element.bytes());
        let mut map = TensorMap {
            element,
            rank: rank as u32,
            global_address: base.addr(),
            global_dim: [1; TMA_MAX_RANK],
            global_stride_bytes: [0; TMA_MAX_RANK - 1],
            box_dim: [1; TMA_MAX_RANK],
            swizzle,
        };
        for d in 0..rank {
            map.global_dim[d] = sizes[rank - 1 - d];
            if d > 0 {
                map.global_stride_bytes[d - 1] = strides[rank - 1 - d].saturating_mul(bytes);
            }
        }
        map.box_dim[0] = box_cols;
        map.box_dim[1] = box_rows;
        map.check().map(|()| map)
    }

    /// Bytes of one box (what a copy counts on its `mbarrier`).
    pub const fn box_bytes(&self) -> u32 {
        self.box_dim[0] * self.box_dim[1] * self.element.bytes()
    }

    /// Ok if `cuTensorMapEncodeTiled` accepts the map.
    #[cfg(not(tessera_device))]
    pub fn check(&self) -> Result<(), String> {
        let bytes = self.element.bytes() as u64;
        let rank = self.rank as usize;
        let dims = &self.global_dim[..rank.min(TMA_MAX_RANK)];
        let strides = &self.global_stride_bytes[..rank.saturating_sub(1).min(TMA_MAX_RANK - 1)];
        let [box_cols, box_rows, ..] = self.box_dim;
        let row_bytes = box_cols as u64 * bytes;
        let width = self.swizzle.width() as u64;
        let problem = if !(2..=TMA_MAX_RANK).contains(&rank) {
            format!("rank {rank} is not 2 to {TMA_MAX_RANK}")
        } else if !self.global_address.is_multiple_of(16) || self.global_address == 0 {
            format!(
                "global address {:#x} is not 16-byte aligned",
                self.global_address
            )
        } else if dims.iter().any(|d| !(1..=1 << 32).contains(d)) {
            format!("global dimensions {dims:?} must be in 1..=2^32")
        } else if strides
            .iter()
            .any(|&s| !s.is_multiple_of(16) || s >= 1 << 40)
            || strides[0] < dims[0] * bytes
        {
            format!(
                "each of the strides {strides:?} (bytes) must be a multiple of 16 below 2^40, \
                 the row stride covering a row of {} bytes",
                dims[0] * bytes
            )
        } else if !(1..=256).contains(&box_cols) || !(1..=256).contains(&box_rows) {
            format!(
                "box {:?} must be 1..=256 in each dimension",
                &self.box_dim[..2]
            )
        } else if self.box_dim[2..].iter().any(|&b| b != 1) {
            format!("box {:?} spans more than two dimensions", self.box_dim)
        } else if !row_bytes.is_multiple_of(16) {
            format!("a box row of {row_bytes} bytes is not a multiple of 16")
        } else if width != 0 && row_bytes > width {
            format!("a box row of {row_bytes} bytes is wider than the {width}-byte swizzle")
        } else {
            return Ok(());
        };
        Err(format!("invalid tensor map: {problem}"))
    }

    /// The 128-byte `CUtensorMap` of this map, from the driver's `cuTensorMapEncodeTiled`.
    #[cfg(all(not(tessera_device), feature = "cuda"))]
    pub fn encode(&self) -> Result<[u64; 16], String> {
        use cudarc::driver::sys;
        self.check()?;
        let data_type = match self.element {
            TmaElement::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaElement::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaElement::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TmaElement::U8 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        };
        let swizzle = match self.swizzle {
            TmaSwizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        let element_strides = [1u32; TMA_MAX_RANK];
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: every pointer names a live array of at least the `rank` (strides: `rank - 1`)
        // elements the driver reads (`check` bounds the rank).
        let result = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                data_type,
                self.rank,
                self.global_address as *mut core::ffi::c_void,
                self.global_dim.as_ptr(),
                self.global_stride_bytes.as_ptr(),
                self.box_dim.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        if result == sys::CUresult::CUDA_SUCCESS {
            Ok(map.opaque)
        } else {
            Err(format!("cuTensorMapEncodeTiled failed: {result:?}"))
        }
    }
}

/// `cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
/// [dst], [tensor_map, {x, y}], [mbarrier]`: copies the box at global element (`x`, `y`)
/// (module docs) to `dst` and counts its bytes on the `mbarrier` at `mbarrier`.
///
/// # Safety
/// `tensor_map` must point to a valid map whose tensor stays valid until the copy completes;
/// `dst` must be 128-byte aligned (1024 for the 128-byte swizzle pattern to match the NVMMA
/// layout) with a box of shared memory behind it; `mbarrier` must be an initialised barrier.
#[inline(always)]
#[track_caller]
pub unsafe fn tma_load_2d(dst: u32, tensor_map: Ptr<TensorMap>, x: i32, y: i32, mbarrier: u32) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes \
         [{dst}], [{map}, {{{x}, {y}}}], [{bar}];",
        dst = in(reg32) dst,
        map = in(reg64) tensor_map.addr(),
        x = in(reg32) x,
        y = in(reg32) y,
        bar = in(reg32) mbarrier,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    crate::emulator::tma::load(dst, tensor_map.addr(), [x, y, 0, 0], mbarrier);
}

/// `cp.async.bulk.tensor.3d…`: [`tma_load_2d`] of a rank-3 map, the box at element
/// (`x`, `y`, `z`) (`x` along the contiguous dimension).
///
/// # Safety
/// As [`tma_load_2d`].
#[inline(always)]
#[track_caller]
pub unsafe fn tma_load_3d(
    dst: u32,
    tensor_map: Ptr<TensorMap>,
    [x, y, z]: [i32; 3],
    mbarrier: u32,
) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes \
         [{dst}], [{map}, {{{x}, {y}, {z}}}], [{bar}];",
        dst = in(reg32) dst,
        map = in(reg64) tensor_map.addr(),
        x = in(reg32) x,
        y = in(reg32) y,
        z = in(reg32) z,
        bar = in(reg32) mbarrier,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    crate::emulator::tma::load(dst, tensor_map.addr(), [x, y, z, 0], mbarrier);
}

/// `cp.async.bulk.tensor.4d…`: [`tma_load_2d`] of a rank-4 map, the box at element
/// (`x`, `y`, `z`, `w`) (`x` along the contiguous dimension).
///
/// # Safety
/// As [`tma_load_2d`].
#[inline(always)]
#[track_caller]
pub unsafe fn tma_load_4d(
    dst: u32,
    tensor_map: Ptr<TensorMap>,
    [x, y, z, w]: [i32; 4],
    mbarrier: u32,
) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes \
         [{dst}], [{map}, {{{x}, {y}, {z}, {w}}}], [{bar}];",
        dst = in(reg32) dst,
        map = in(reg64) tensor_map.addr(),
        x = in(reg32) x,
        y = in(reg32) y,
        z = in(reg32) z,
        w = in(reg32) w,
        bar = in(reg32) mbarrier,
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    crate::emulator::tma::load(dst, tensor_map.addr(), [x, y, z, w], mbarrier);
}

/// `prefetch.tensormap [tensor_map]`: brings the map into the TMA unit's cache.
///
/// # Safety
/// `tensor_map` must point to a valid map.
#[inline(always)]
pub unsafe fn prefetch_tensormap(tensor_map: Ptr<TensorMap>) {
    #[cfg(target_arch = "nvptx64")]
    asm!(
        "prefetch.tensormap [{map}];",
        map = in(reg64) tensor_map.addr(),
        options(nostack)
    );
    #[cfg(not(tessera_device))]
    let _ = tensor_map;
}
