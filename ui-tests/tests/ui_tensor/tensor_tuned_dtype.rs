use tessera::launch::{Device, LaunchError};
use tessera::tensor::Tensor;
use tessera::{f16, tile_kernel};

#[tile_kernel(BLOCK = [128, 256], autotune(key = [a.size(0)]))]
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
    let grid = |c: &add::Consts, s: &add::Sizes| (s.out[0].div_ceil(c.BLOCK) as u32,);
    // An f16 tensor where the tuned kernel takes f32.
    add::launch_tuned(&stream, &module, grid, &a, &mut out)?;
    Ok(())
}
