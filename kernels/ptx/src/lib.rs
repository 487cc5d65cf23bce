//! The PTX of `tessera-kernels` for each target (`sm_80` and `sm_90a`; `TESSERA_SM` replaces
//! the list), built by this crate's `build.rs` with [`tessera::build::PtxBuild`], for the
//! kernels' tests and the example binaries to embed and load on a GPU; and its AMD code objects
//! for the processors `TESSERA_AMDGPU` names (none by default), built with
//! [`tessera::build::CodeObjectBuild`].

#![warn(missing_docs)]

use tessera::build::{CodeObjectSet, DeviceCode, PtxSet};

/// The kernels' PTX for each target (empty when built with `TESSERA_NO_PTX=1`).
pub const PTX: PtxSet = tessera::include_ptx!("tessera_kernels");

/// The kernels' AMD code objects, one per processor `TESSERA_AMDGPU` named at build time
/// (empty by default).
pub const CODE_OBJECTS: CodeObjectSet = tessera::include_code_objects!("tessera_kernels");

/// Both: what `Device::load_code` takes (a CUDA GPU loads the PTX, a HIP GPU a code object).
pub const CODE: DeviceCode = DeviceCode {
    ptx: PTX,
    amdgpu: CODE_OBJECTS,
};

/// Why the PTX was not built (`TESSERA_NO_PTX=…`), when it was not.
pub const PTX_SKIPPED: Option<&str> = option_env!("TESSERA_KERNELS_PTX_SKIPPED");
