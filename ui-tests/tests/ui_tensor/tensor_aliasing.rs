#[path = "support/add.rs"]
mod add_kernel;
#[path = "support/add_tuned.rs"]
mod add_tuned;
#[path = "support/emulator.rs"]
mod emulator;

use tessera::launch::LaunchError;
use tessera::tensor::Tensor;

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let mut t = Tensor::<f32>::zeros(device, &[128])?;
        // The output is the input: the borrow checker refuses the plain and the tuned launch.
        let block = add_kernel::add::Consts { BLOCK: 128 };
        add_kernel::add::launch(stream, module, block, 1, &t, &mut t)?;
        add_tuned::add::launch_tuned(stream, module, add_tuned::grid, &t, &mut t)?;
        Ok(())
    })
}
