//! The PTX of `tessera-kernels` for each target (`sm_80` and `sm_90a`; `TESSERA_SM` replaces
//! the list), built by this crate's `build.rs` with [`tessera::build::PtxBuild`], for the
//! kernels' tests and the example binaries to embed and load on a GPU.

#![warn(missing_docs)]

use tessera::build::PtxSet;

/// The kernels' PTX for each target (empty when built with `TESSERA_NO_PTX=1`).
pub const PTX: PtxSet = tessera::include_ptx!("tessera_kernels");

/// Why the PTX was not built (`TESSERA_NO_PTX=…`), when it was not.
pub const PTX_SKIPPED: Option<&str> = option_env!("TESSERA_KERNELS_PTX_SKIPPED");
