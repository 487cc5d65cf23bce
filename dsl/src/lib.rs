//! Tessera: tile kernels in Rust.
//!
//! What users import: the kernel parameter types ([`Ptr`]), the device runtime layer
//! ([`device`]: what generated code calls, on nvptx64 as inline PTX and on the host through the
//! emulator), the CPU [`emulator`], the host [`launch`]er and the [`build`] helper for `build.rs`.
#![cfg_attr(tessera_device, no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, stdarch_nvptx))]
#![cfg_attr(
    target_arch = "amdgpu",
    feature(
        stdarch_amdgpu,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics,
        repr_simd,
        abi_unadjusted,
        f16,
        simd_ffi
    )
)]
#![cfg_attr(target_arch = "amdgpu", allow(internal_features))]
#![warn(missing_docs)]

mod ptr;
pub use ptr::Ptr;

/// The `#[tile_kernel]` attribute: the tile language (see the `tessera-gpu-macros` crate docs).
pub use tessera_macros::tile_kernel;

/// The `#[tile_fn]` attribute: a helper function of the tile language, inlined into the kernels
/// that list it (`#[tile_kernel(uses = [name])]`).
pub use tessera_macros::tile_fn;

/// Called by the macro a `#[tile_fn]` helper defines, to expand a kernel with its helpers.
#[doc(hidden)]
pub use tessera_macros::tile_kernel_resume as __tile_kernel_resume;

/// Hands its tokens back as items. `#[tile_kernel]` puts each target's build of a kernel (its
/// PTX entry for sm_80, the one for sm_90a, the host function the emulator runs) in one call of
/// it, under that target's `#[cfg]`: a build drops the calls of the other targets before
/// expanding them, so it never parses their bodies.
#[doc(hidden)]
#[macro_export]
macro_rules! __tile_kernel_items {
    ($($item:tt)*) => {
        $($item)*
    };
}

/// `__tile_kernel_entry! { #[attr]* fn name(params) { body } }`: a kernel's device entry with
/// its body written once: `pub unsafe extern "ptx-kernel" fn` in nvptx64 builds,
/// `pub unsafe extern "gpu-kernel" fn` in amdgpu builds. `#[tile_kernel]` puts the call under
/// `cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))`, so a host build drops it before
/// expanding it and parses its body only in its own host function.
#[doc(hidden)]
#[macro_export]
macro_rules! __tile_kernel_entry {
    ($(#[$attr:meta])* fn $name:ident($($param:tt)*) $body:block) => {
        #[cfg(target_arch = "nvptx64")]
        $(#[$attr])*
        pub unsafe extern "ptx-kernel" fn $name($($param)*) $body

        #[cfg(target_arch = "amdgpu")]
        $(#[$attr])*
        // `Ptr<T>` is `#[repr(transparent)]` over `*mut T`, which the lint accepts.
        #[allow(improper_gpu_kernel_arg)]
        pub unsafe extern "gpu-kernel" fn $name($($param)*) $body
    };
}

/// `__device_or_host!({device} {host})`: the first block in device builds, the second on the
/// host. `#[tile_kernel]` writes per-register code out in full for the device (nvptx64 and
/// amdgpu; constant indices
/// keep every register array in registers) and, for the same values, one loop over the
/// registers for the host, where the emulator runs it: rustc type-checks and LLVM compiles the
/// operation once instead of once per register (the flash-attention kernels hold about 80,000
/// such per-register blocks).
#[doc(hidden)]
#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
#[macro_export]
macro_rules! __device_or_host {
    ($device:block $host:block) => {
        $device
    };
}

/// See the device build's definition.
#[doc(hidden)]
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
#[macro_export]
macro_rules! __device_or_host {
    ($device:block $host:block) => {
        $host
    };
}

#[cfg(not(tessera_device))]
mod kernel;
#[cfg(not(tessera_device))]
pub use kernel::{Kernel, KernelTargets, TensorMapParam};

#[cfg(not(tessera_device))]
pub mod build;
#[cfg(not(tessera_device))]
pub mod launch;
#[cfg(not(tessera_device))]
pub mod tensor;

pub mod device;
pub mod dtype;
pub mod tile;
pub mod tile_move;
pub mod unroll;
pub use dtype::{bf16, f16, f8e4m3, f8e5m2};

#[cfg(not(tessera_device))]
pub mod emulator;
