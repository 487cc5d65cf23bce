//! Which back end runs kernels, and the environment variable that chooses it.

use std::fmt;

/// Environment variable that picks the device: `gpu`, `emulator` or `auto` (the default).
pub const DEVICE_ENV: &str = "TESSERA_DEVICE";

/// Which back end a [`Device`](super::Device) runs kernels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// A CUDA GPU through the driver API.
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
