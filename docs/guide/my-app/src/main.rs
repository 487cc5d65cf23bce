use my_kernels::add_vectors;
use tessera::launch::Device;

const PTX: tessera::build::PtxSet = tessera::include_ptx!("my_kernels");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The GPU when a driver and a device are present, else the emulator
    // (TESSERA_DEVICE=gpu|emulator chooses).
    let device = Device::new()?;
    let module = device.load_ptx_set(&PTX)?; // the best PTX of the set for the device
    let n = 5000; // not a multiple of BLOCK: the last program is masked
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (3 * i) as f32 + 0.5).collect();
    let (dx, dy) = (device.upload(&x)?, device.upload(&y)?);
    let out = device.zeros::<f32>(n)?;
    let consts = add_vectors::Consts { BLOCK: 1024 };
    let grid = |c: &add_vectors::Consts| ((n as u32).div_ceil(c.BLOCK as u32),);
    add_vectors::launch(&device, &module, consts, grid, out.ptr(), dx.ptr(), dy.ptr(), n as i32)?;
    let got = out.download()?;
    let wrong = (0..n).filter(|&i| got[i] != x[i] + y[i]).count();
    println!("add_vectors on {}: {n} elements, {wrong} wrong", device.name());
    if wrong > 0 {
        return Err(format!("{wrong} of {n} sums are wrong").into());
    }
    Ok(())
}
