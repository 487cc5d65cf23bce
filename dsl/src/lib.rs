//! Tessera: tile kernels in Rust.
//!
//! What users import: the kernel parameter types ([`Ptr`]), the device runtime layer
//! ([`device`]: what generated code calls, on nvptx64 as inline PTX and on the host through the
//! emulator), the CPU [`emulator`], the host [`launch`]er and the [`build`] helper for `build.rs`.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, stdarch_nvptx))]
#![warn(missing_docs)]

mod ptr;
pub use ptr::Ptr;

/// The `#[tile_kernel]` attribute: the tile language (see the `tessera-gpu-macros` crate docs).
pub use tessera_macros::tile_kernel;

#[cfg(not(target_arch = "nvptx64"))]
mod kernel;
#[cfg(not(target_arch = "nvptx64"))]
pub use kernel::Kernel;

#[cfg(not(target_arch = "nvptx64"))]
pub mod build;
#[cfg(not(target_arch = "nvptx64"))]
pub mod launch;
#[cfg(not(target_arch = "nvptx64"))]
pub mod tensor;

pub mod device;
pub mod dtype;
pub mod tile;
pub mod tile_move;
pub use dtype::{bf16, f16, f8e4m3, f8e5m2};

#[cfg(not(target_arch = "nvptx64"))]
pub mod emulator;
