//! Kernels resolved once against a module: the entry's index, so a launch neither looks the
//! kernel up by name nor allocates.
//!
//! [`Module::resolve`] checks that the kernel is an entry of the module and gives a
//! [`ResolvedKernel`] (the user may keep it); [`EntryCache`] is the same resolution cached in a
//! `static` (every `#[tile_kernel]` specialisation holds one), valid for the last module it was
//! resolved against. On the GPU the entry's `CUfunction` and attributes are read at its first
//! launch and kept by the module, by entry index.

use super::{LaunchError, Module};
use crate::Kernel;
use std::sync::atomic::{AtomicU64, Ordering};

/// Entry index of a host-build module (no PTX entries to index).
pub(crate) const HOST_BUILD_ENTRY: u32 = u32::MAX;

/// A kernel checked to be entry `index` of the module with id `module_id`.
pub struct ResolvedKernel<A> {
    pub(crate) kernel: Kernel<A>,
    pub(crate) module_id: u64,
    pub(crate) index: u32,
}

impl<A> Clone for ResolvedKernel<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for ResolvedKernel<A> {}

impl<A> std::fmt::Debug for ResolvedKernel<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ResolvedKernel({} = entry {} of module {})",
            self.kernel.name, self.index, self.module_id
        )
    }
}

impl<A> ResolvedKernel<A> {
    /// The kernel handle.
    pub fn kernel(&self) -> Kernel<A> {
        self.kernel
    }

    /// A launch of this entry of the back end's `module` with `config` and `params`.
    #[cfg(any(feature = "cuda", feature = "hip"))]
    pub(super) fn entry_launch<'a, M>(
        &self,
        module: &'a M,
        config: &'a super::LaunchConfig,
        params: &'a [super::KernelParam],
    ) -> super::config::EntryLaunch<'a, M> {
        super::config::EntryLaunch {
            module,
            name: self.kernel.name,
            index: self.index,
            config,
            params,
        }
    }
}

impl Module {
    /// `kernel` as an entry of this module (an error names the module's entries if it is not
    /// one). Launching the result skips the name lookup.
    pub fn resolve<A>(&self, kernel: Kernel<A>) -> Result<ResolvedKernel<A>, LaunchError> {
        let emulated = matches!(self.backend, super::ModuleBackend::Emulator);
        let needs = kernel.targets.required();
        // A kernel of one target is not in the PTX of the others; the emulator, which runs
        // host builds, checks the target it emulates at each launch instead, and a code object
        // has the kernel when it has AMD code (below).
        if let (Some(needs), false) = (needs, emulated || self.is_code_object()) {
            if self.target_name() != Some(needs) {
                return Err(LaunchError::UnsupportedTarget {
                    kernel: kernel.name.to_string(),
                    needs: needs.to_string(),
                    running: format!("the {} module", self.target_name().unwrap_or("unknown")),
                });
            }
        }
        // In a code object, a variant sharing another's amdgpu body runs that one's kernel.
        let wanted = if self.is_code_object() {
            kernel.amdgpu_name()
        } else {
            kernel.name
        };
        let entry = self.entries.iter().position(|e| e.name == wanted);
        let index = match entry {
            _ if self.host_only => HOST_BUILD_ENTRY,
            Some(index) => index as u32,
            // A code object (the emulator's too) has no kernel for a variant without AMD code,
            // whatever its PTX targets.
            None if self.is_code_object() && !kernel.nvidia_only.is_empty() => {
                return Err(LaunchError::NvidiaOnly {
                    kernel: kernel.name.to_string(),
                    processor: self.target_name().unwrap_or("unknown").to_string(),
                    instructions: kernel.nvidia_only.iter().map(|s| s.to_string()).collect(),
                })
            }
            // The emulator's module holds one target's PTX: a kernel built for another target
            // runs its host build, its parameters unchecked against a PTX entry.
            None if emulated && needs.is_some() => HOST_BUILD_ENTRY,
            None => {
                return Err(LaunchError::KernelNotFound {
                    kernel: kernel.name.to_string(),
                    entries: self.entry_names(),
                })
            }
        };
        Ok(ResolvedKernel {
            kernel,
            module_id: self.id,
            index,
        })
    }
}

/// A kernel's resolution against the last module it was resolved in, cached without locks:
/// module id and entry index packed in one atomic word (0: none yet). One cache serves one
/// kernel (a `static` next to it): the entry index it holds is that kernel's.
#[derive(Debug)]
pub struct EntryCache {
    packed: AtomicU64,
}

/// Bits of the packed word holding the entry index (plus one); the module id is above.
const INDEX_BITS: u32 = 32;

impl EntryCache {
    /// An empty cache (for a `static`).
    pub const fn new() -> EntryCache {
        EntryCache {
            packed: AtomicU64::new(0),
        }
    }

    /// `kernel` resolved in `module`: from the cache when it was last resolved there, else by
    /// [`Module::resolve`] (and cached).
    pub fn resolve<A>(
        &self,
        module: &Module,
        kernel: Kernel<A>,
    ) -> Result<ResolvedKernel<A>, LaunchError> {
        let packed = self.packed.load(Ordering::Relaxed);
        if packed != 0 && packed >> INDEX_BITS == module.id {
            let index = ((packed & ((1 << INDEX_BITS) - 1)) as u32).wrapping_sub(1);
            return Ok(ResolvedKernel {
                kernel,
                module_id: module.id,
                index,
            });
        }
        let resolved = module.resolve(kernel)?;
        // Module ids stay below 2^32 (one per loaded module); a larger one is not cached.
        if module.id < 1 << (64 - INDEX_BITS) {
            let word = (module.id << INDEX_BITS) | u64::from(resolved.index.wrapping_add(1));
            self.packed.store(word, Ordering::Relaxed);
        }
        Ok(resolved)
    }
}

impl Default for EntryCache {
    fn default() -> Self {
        EntryCache::new()
    }
}
