//! The device code of one kernel crate for every back end: its PTX ([`PtxSet`], CUDA GPUs) and
//! its AMD code objects ([`CodeObjectSet`], HIP GPUs), as one value a device loads from
//! ([`Device::load_code`](crate::launch::Device::load_code)).
//!
//! The AMD code objects are embedded as the PTX is: `include_bytes!` of each
//! `amdgcn-amd-amdhsa` build (one per processor, `gfx942`, `gfx90a`, …) in a `&'static` list of
//! `(processor, bytes)` pairs, which [`CodeObjectBuild`](super::CodeObjectBuild) writes and
//! [`include_code_objects!`](crate::include_code_objects) embeds (or by hand, from code objects
//! built with `cargo rustc --target amdgcn-amd-amdhsa --crate-type cdylib`).

use super::ptx_set::PtxSet;

/// The HSA code objects of one kernel crate, one per AMD processor (`gfx942`, …), in the order
/// a HIP device tries them: a code object runs only on its processor, so a HIP device loads the
/// first one its runtime accepts. List processor-specific code objects before generic ones
/// (`gfx9-4-generic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeObjectSet {
    targets: &'static [(&'static str, &'static [u8])],
}

impl CodeObjectSet {
    /// The set of these `(processor, code object)` pairs.
    pub const fn new(targets: &'static [(&'static str, &'static [u8])]) -> CodeObjectSet {
        CodeObjectSet { targets }
    }

    /// No code object (a kernel crate built only for CUDA).
    pub const fn empty() -> CodeObjectSet {
        CodeObjectSet { targets: &[] }
    }

    /// Every `(processor, code object)` pair, in the order tried.
    pub fn targets(&self) -> &'static [(&'static str, &'static [u8])] {
        self.targets
    }

    /// The processors, in the order tried.
    pub fn processors(&self) -> Vec<&'static str> {
        self.targets.iter().map(|(name, _)| *name).collect()
    }

    /// Whether the set holds no code object.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

/// A kernel crate's device code for every back end: a CUDA device loads from `ptx`, a HIP
/// device from `amdgpu`, the emulator the entries of either (PTX first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCode {
    /// The PTX, one module per SM target.
    pub ptx: PtxSet,
    /// The AMD code objects, one per processor.
    pub amdgpu: CodeObjectSet,
}

impl DeviceCode {
    /// PTX only (no AMD code object).
    pub const fn ptx(ptx: PtxSet) -> DeviceCode {
        DeviceCode {
            ptx,
            amdgpu: CodeObjectSet::empty(),
        }
    }
}
