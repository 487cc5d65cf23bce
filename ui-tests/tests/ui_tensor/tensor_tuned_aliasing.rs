#[path = "support/add_tuned.rs"]
mod add_tuned;
#[path = "support/emulator.rs"]
mod emulator;

use add_tuned::{add, grid};
use tessera::launch::LaunchError;
use tessera::tensor::Tensor;

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let mut t = Tensor::<f32>::zeros(device, &[128])?;
        // The output is the input: the borrow checker refuses the tuned launch too.
        add::launch_tuned(stream, module, grid, &t, &mut t)?;
        Ok(())
    })
}
