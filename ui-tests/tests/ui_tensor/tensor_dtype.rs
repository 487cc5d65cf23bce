#[path = "support/add.rs"]
mod add_kernel;
#[path = "support/add_tuned.rs"]
mod add_tuned;
#[path = "support/emulator.rs"]
mod emulator;

use tessera::f16;
use tessera::launch::LaunchError;
use tessera::tensor::Tensor;

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let a = Tensor::<f16>::zeros(device, &[128])?;
        let mut out = Tensor::<f32>::zeros(device, &[128])?;
        // An f16 tensor where the kernel takes f32: the plain and the tuned launcher refuse it.
        let block = add_kernel::add::Consts { BLOCK: 128 };
        add_kernel::add::launch(stream, module, block, 1, &a, &mut out)?;
        add_tuned::add::launch_tuned(stream, module, add_tuned::grid, &a, &mut out)?;
        Ok(())
    })
}
