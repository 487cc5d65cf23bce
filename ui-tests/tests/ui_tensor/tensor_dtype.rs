use tessera::launch::{Device, LaunchError};
use tessera::tensor::Tensor;
use tessera::{f16, tile_kernel};

#[tile_kernel(num_warps = 4, BLOCK = 128)]
pub fn add<const BLOCK: usize>(a: Tensor<f32, 1>, out: Tensor<f32, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    store(out + offs, load(a + offs, mask, 0.0) + 1.0, mask);
}

fn main() -> Result<(), LaunchError> {
    let device = Device::emulator();
    let module = device.host_module()?;
    let stream = device.stream()?;
    let a = Tensor::<f16>::zeros(&device, &[128])?;
    let mut out = Tensor::<f32>::zeros(&device, &[128])?;
    // An f16 tensor where the kernel takes f32.
    add::launch(&stream, &module, add::Consts { BLOCK: 128 }, 1, &a, &mut out)?;
    Ok(())
}
