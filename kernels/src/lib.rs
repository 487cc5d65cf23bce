//! The repository's kernels: those written in the tile language ([`tiled`], one crate per
//! family) and those written against the Tessera device runtime layer ([`tessera::device`])
//! only, defined with [`tessera::device_kernel!`]. Every kernel is built for
//! `nvptx64-nvidia-cuda` as a PTX entry point of the same name and for the host as a function
//! the emulator runs, with a `Kernel` handle (`VEC_ADD`, `COPY`, `ROW_SUM`, ...). The PTX of all
//! of them, one module per target, is built by `tessera::build::PtxBuild` (the crate
//! `tessera-kernels-ptx`, `kernels/ptx`), which merges this crate's PTX with its families'.
//!
//! * [`tiled`]: the `#[tile_kernel]` kernels, one crate per family in `kernels/tiled/<family>`
//!   (`tessera-kernels-norm`, …), re-exported here as `tiled::<family>`.
//! * [`vec_add`]: `out = a + b` over f32, 128-bit loads/stores, masked tail.
//! * [`copy`]: `out = x` over f32, 128-bit loads/stores, masked tail (bandwidth baseline).
//! * [`thread_quad`]: the walk of `vec_add` and `copy`, four elements per thread (one 128-bit
//!   vector, or predicated 32-bit accesses for the last partial one).
//! * [`row_sum`]: one warp per row of an M×N f32 matrix, `shfl.sync.bfly` tree reduction.
//! * [`transpose32`]: an `n`×`n` transpose through a 32 × 32 shared tile, padded or not (the
//!   bank-conflict example of the emulator's report).
//! * [`hopper`]: a 128 × 128 × 64 f16 matmul on TMA, `mbarrier` and `wgmma` (sm_90a).
//! * [`probes`]: small kernels that exercise the rest of the runtime layer (conversions,
//!   shuffles, the thread geometry; NVIDIA's `cp.async` + `ldmatrix` + `mma` in
//!   [`probes::nvidia`], AMD's `v_mfma` in [`probes::amd`]) so that every wrapper is compiled
//!   for its targets in CI and checked against CPU references on the emulator (and, through the
//!   same handles, on a GPU).
//!
//! For `amdgcn-amd-amdhsa` (AMD GPUs, `-Ctarget-cpu=gfx942` or `gfx90a`) the crate builds
//! [`vec_add`], [`copy`], [`row_sum`], [`transpose32`], the probes but NVIDIA's
//! ([`probes::nvidia`]) and every tile kernel variant (a variant whose NVIDIA bodies use an
//! NVIDIA-only instruction, `mma.sync`, `wgmma`, `ldmatrix`, `cp.async`, has a body planned for
//! AMD: dots by `v_mfma`) as `gpu-kernel`s of one HSA code object (`scripts/check_amdgcn.sh`
//! builds it and checks the ISA). [`hopper`], a hand-written kernel of Hopper's `wgmma` and TMA,
//! and [`probes::nvidia`] are NVIDIA's by what they are: the device layer has no such
//! instructions for amdgpu.
#![cfg_attr(any(target_arch = "nvptx64", target_arch = "amdgpu"), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel))]

pub mod copy;
// wgmma needs sm_90a: on nvptx64 only in builds with `-C target-cpu=sm_90a`.
#[cfg(any(
    all(not(target_arch = "nvptx64"), not(target_arch = "amdgpu")),
    target_feature = "sm_90a"
))]
pub mod hopper;
pub mod probes;
pub mod row_sum;
pub mod thread_quad;
pub mod tiled;
pub mod transpose32;
pub mod vec_add;

pub use copy::*;
pub use row_sum::*;
pub use transpose32::*;
pub use vec_add::*;
