//! The emulator the `tensor_*` cases launch on.

use tessera::launch::{Device, LaunchError, Module, Stream};

/// Runs `case` with the emulator device, its host module and a stream of it.
pub fn on_emulator(
    case: impl FnOnce(&Device, &Module, &Stream<'_>) -> Result<(), LaunchError>,
) -> Result<(), LaunchError> {
    let device = Device::emulator();
    let module = device.host_module()?;
    let stream = device.stream()?;
    case(&device, &module, &stream)
}
