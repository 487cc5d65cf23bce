#[path = "support/emulator.rs"]
mod emulator;

use tessera::launch::LaunchError;
use tessera::tensor::Tensor;
use tessera::tile_kernel;

#[tile_kernel(T = [f16, f32], num_warps = 4, BLOCK = 128)]
pub fn scale<T, const BLOCK: usize>(x: Tensor<T, 1>, out: Tensor<T, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    store(out + offs, (load(x + offs, mask).to::<f32>() * 2.0).to::<T>(), mask);
}

fn main() -> Result<(), LaunchError> {
    emulator::on_emulator(|device, module, stream| {
        let x = Tensor::<i32>::zeros(device, &[128])?;
        let mut out = Tensor::<i32>::zeros(device, &[128])?;
        // i32 tensors where the kernel is compiled for f16 and f32.
        scale::launch(stream, module, scale::Consts { BLOCK: 128 }, 1, &x, &mut out)
    })
}
