#[path = "support/add.rs"]
mod add_kernel;
#[path = "support/emulator.rs"]
mod emulator;

use add_kernel::add;
use tessera::launch::LaunchError;
use tessera::tensor::Tensor;

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let mut t = Tensor::<f32>::zeros(device, &[128])?;
        // The output is the input: the borrow checker refuses.
        add::launch(stream, module, add::Consts { BLOCK: 128 }, 1, &t, &mut t)
    })
}
