//! The emulator back end of the launcher: buffers are host allocations (so a `Ptr` is a host
//! address, as the emulated kernel expects) and a launch is [`emulator::run_grid`] calling the
//! kernel's host build on every simulated thread.

use super::args::KernelArgs;
use super::config::{LaunchConfig, TimingOptions};
use super::error::LaunchError;
use crate::emulator::{self, EmulatorReport};
use crate::Kernel;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::time::Instant;

/// Alignment of emulator buffers: 256 bytes, as `cuMemAlloc` guarantees, so vectorized accesses
/// that are aligned on the GPU are aligned here too.
pub(super) const ALIGNMENT: usize = 256;

/// A host allocation standing in for device memory. Kernel threads write it through raw
/// pointers while no Rust reference to it exists (launches are synchronous).
pub(crate) struct HostAllocation {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the allocation is plain bytes owned by this value; concurrent access happens only
// inside a launch, through the kernel's raw pointers, as on a GPU.
unsafe impl Send for HostAllocation {}
unsafe impl Sync for HostAllocation {}

impl HostAllocation {
    /// `bytes` (> 0) bytes aligned to [`ALIGNMENT`], zeroed if asked.
    pub(crate) fn new(bytes: usize, zeroed: bool) -> Result<Self, LaunchError> {
        let layout =
            Layout::from_size_align(bytes, ALIGNMENT).map_err(|err| LaunchError::Allocation {
                bytes,
                reason: format!("invalid layout: {err}"),
            })?;
        // SAFETY: `layout` has a non-zero size (callers never ask for 0 bytes).
        let raw = unsafe {
            if zeroed {
                std::alloc::alloc_zeroed(layout)
            } else {
                std::alloc::alloc(layout)
            }
        };
        let ptr = NonNull::new(raw).ok_or_else(|| LaunchError::Allocation {
            bytes,
            reason: "the host allocator returned null (out of memory)".to_string(),
        })?;
        Ok(HostAllocation { ptr, layout })
    }

    pub(crate) fn addr(&self) -> u64 {
        self.ptr.as_ptr() as usize as u64
    }
}

impl Drop for HostAllocation {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Runs one launch on the emulator, emulating the target `launch_target_for(default)` gives
/// (`default`: the module's device's, [`Device::emulator_amd`](super::Device::emulator_amd)'s
/// amdgpu); a kernel of one target only while emulating it, and while emulating amdgpu only a
/// kernel with AMD code.
pub(crate) fn launch<A: KernelArgs>(
    kernel: Kernel<A>,
    config: &LaunchConfig,
    args: A,
    default: Option<emulator::EmulatedTarget>,
) -> Result<EmulatorReport, LaunchError> {
    let emulated = emulator::launch_target_for(default).map_err(|err| LaunchError::Emulator {
        kernel: kernel.name.to_string(),
        message: err.to_string(),
    })?;
    // The PTX target a kernel needs is NVIDIA's: emulating amdgpu, the check below decides.
    if let Some(needs) = kernel.targets.required() {
        if emulated != emulator::EmulatedTarget::Amdgpu && emulated.name() != needs {
            return Err(LaunchError::UnsupportedTarget {
                kernel: kernel.name.to_string(),
                needs: needs.to_string(),
                running: format!("{} on the emulator", emulated.name()),
            });
        }
    }
    // Emulating amdgpu, a kernel without an amdgpu body is refused as an AMD code object
    // refuses it.
    if emulated == emulator::EmulatedTarget::Amdgpu && !kernel.nvidia_only.is_empty() {
        return Err(LaunchError::NvidiaOnly {
            kernel: kernel.name.to_string(),
            processor: "amdgpu on the emulator".to_string(),
            instructions: kernel.nvidia_only.iter().map(|s| s.to_string()).collect(),
        });
    }
    let emulate = kernel.emulate;
    let body = move || emulate(args);
    emulator::with_target(emulated, || {
        emulator::run_grid(
            config.grid,
            config.block,
            config.shared_bytes as usize,
            &body,
        )
    })
    .map_err(|err| LaunchError::Emulator {
        kernel: kernel.name.to_string(),
        message: err.to_string(),
    })
}

/// Wall time of each of `options.repetitions` launches after `options.warmup` untimed ones.
pub(super) fn time<A: KernelArgs>(
    kernel: Kernel<A>,
    config: &LaunchConfig,
    args: A,
    options: TimingOptions,
    default: Option<emulator::EmulatedTarget>,
) -> Result<Vec<f64>, LaunchError> {
    for _ in 0..options.warmup {
        launch(kernel, config, args, default)?;
    }
    let mut samples = Vec::with_capacity(options.repetitions as usize);
    for _ in 0..options.repetitions {
        let start = Instant::now();
        launch(kernel, config, args, default)?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(samples)
}
