//! The tuning chapter: specialisation lists, `num_warps` as an axis, and autotuning.

use std::error::Error;
use tessera::launch::{Device, Module};
use tessera::{tile_kernel, Ptr};

// ANCHOR: kernel
/// `out = x · alpha` with `BLOCK` elements per program; the autotuner picks `BLOCK` and
/// `num_warps` per value of `n` among the listed specialisations (2 × 2 = 4 candidates).
#[tile_kernel(num_warps = [4, 8], BLOCK = [256, 1024], autotune(key = [n]))]
pub fn scale<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>, alpha: f32, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(out + offs, load(x + offs, mask, 0.0) * alpha, mask);
}
// ANCHOR_END: kernel

// ANCHOR: host
/// `x · alpha` on `device`, with the autotuner's choice; returns the result and the chosen
/// candidate (e.g. `BLOCK = 256, num_warps = 4`).
pub fn scale_tuned(
    device: &Device,
    module: &Module,
    x: &[f32],
    alpha: f32,
) -> Result<(Vec<f32>, String), Box<dyn Error>> {
    let n = x.len();
    let (dx, out) = (device.upload(x)?, device.zeros::<f32>(n)?);
    // The grid is a function of the candidate's constants (Triton's `lambda meta: …`).
    let grid = |c: &scale::Consts| ((n as u32).div_ceil(c.BLOCK as u32),);
    let tuned = scale::launch_tuned(device, module, grid, out.ptr(), dx.ptr(), alpha, n as i32)?;
    Ok((out.download()?, tuned.choice.candidate.to_string()))
}
// ANCHOR_END: host

// ANCHOR: fixed
/// The same kernel at fixed constants: `Consts` names every varying axis, `num_warps` too.
pub fn scale_fixed(
    device: &Device,
    module: &Module,
    x: &[f32],
) -> Result<Vec<f32>, Box<dyn Error>> {
    let n = x.len();
    let (dx, out) = (device.upload(x)?, device.zeros::<f32>(n)?);
    let consts = scale::Consts { BLOCK: 1024, num_warps: 8 };
    let grid = ((n as u32).div_ceil(1024),);
    scale::launch(device, module, consts, grid, out.ptr(), dx.ptr(), 2.0, n as i32)?;
    Ok(out.download()?)
}
// ANCHOR_END: fixed

#[cfg(test)]
mod tests {
    use tessera::launch::Device;

    #[test]
    fn tuned_and_fixed_launches_match_the_cpu() {
        let device = Device::emulator();
        let module = device.host_module().unwrap();
        let x = crate::values(5, 3000, 4.0);
        let (got, choice) = super::scale_tuned(&device, &module, &x, 0.5).unwrap();
        // On the emulator nothing is timed: the first candidate is taken.
        assert_eq!(choice, "BLOCK = 256, num_warps = 4");
        for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
            assert_eq!(g, v * 0.5, "tuned, element {i}");
        }
        let got = super::scale_fixed(&device, &module, &x).unwrap();
        for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
            assert_eq!(g, v * 2.0, "fixed, element {i}");
        }
    }
}
