#[path = "support/add.rs"]
mod add_kernel;
#[path = "support/emulator.rs"]
mod emulator;

use add_kernel::add;
use tessera::launch::LaunchError;
use tessera::tensor::Tensor;
use tessera::f16;

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let a = Tensor::<f16>::zeros(device, &[128])?;
        let mut out = Tensor::<f32>::zeros(device, &[128])?;
        // An f16 tensor where the kernel takes f32.
        add::launch(stream, module, add::Consts { BLOCK: 128 }, 1, &a, &mut out)
    })
}
