//! Which back end runs kernels, and the environment variable that chooses it.

use std::fmt;

/// Environment variable that picks the device: `gpu` (or `cuda`), `hip`, `emulator`,
/// `emulator-amd` or `auto` (the default). See [`Device::new`](super::Device::new).
pub const DEVICE_ENV: &str = "TESSERA_DEVICE";

/// Which back end a [`Device`](super::Device) runs kernels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// A GPU: CUDA through the driver API, or AMD through HIP ([`GpuRuntime`] says which).
    Gpu,
    /// The CPU emulator: one host thread per GPU thread.
    Emulator,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "gpu",
            DeviceKind::Emulator => "emulator",
        })
    }
}

/// The runtime that drives a GPU device ([`Device::gpu_runtime`](super::Device::gpu_runtime)),
/// and with it the code a module of the device is loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuRuntime {
    /// The CUDA driver API (`libcuda`, the `cuda` feature): modules are PTX.
    Cuda,
    /// The HIP runtime (`libamdhip64`, the `hip` feature): modules are AMD code objects
    /// (`amdgcn-amd-amdhsa` ELF). Not yet run on AMD hardware.
    Hip,
}

impl fmt::Display for GpuRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GpuRuntime::Cuda => "CUDA",
            GpuRuntime::Hip => "HIP",
        })
    }
}
