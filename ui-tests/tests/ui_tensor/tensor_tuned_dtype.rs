#[path = "support/add_tuned.rs"]
mod add_tuned;
#[path = "support/emulator.rs"]
mod emulator;

use add_tuned::{add, grid};
use tessera::launch::LaunchError;
use tessera::tensor::Tensor;
use tessera::f16;

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let a = Tensor::<f16>::zeros(device, &[128])?;
        let mut out = Tensor::<f32>::zeros(device, &[128])?;
        // An f16 tensor where the tuned kernel takes f32.
        add::launch_tuned(stream, module, grid, &a, &mut out)?;
        Ok(())
    })
}
