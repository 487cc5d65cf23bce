//! The interop chapter: tensor parameters, streams, events and graphs.

use tessera::launch::{Device, LaunchError};
use tessera::tensor::Tensor;
use tessera::tile_kernel;

// ANCHOR: kernel
/// `out = a + b` over rank-1 tensors of any stride.
#[tile_kernel(num_warps = 4, BLOCK = 1024)]
pub fn add<const BLOCK: usize>(a: Tensor<f32, 1>, b: Tensor<f32, 1>, out: Tensor<f32, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    let x = load(a + offs * a.stride(0), mask, 0.0) + load(b + offs * b.stride(0), mask, 0.0);
    store(out + offs * out.stride(0), x, mask);
}
// ANCHOR_END: kernel

// ANCHOR: streams
/// Adds the even elements of `x` to its odd ones on one stream, doubles the sum on a second
/// stream after an event, and replays the doubling as a captured graph.
pub fn streams_and_graphs(device: &Device, x: &[f32]) -> Result<Vec<f32>, LaunchError> {
    let module = device.host_module()?; // on a GPU: device.load_ptx_set(&PTX)?
    let (first, second) = (device.stream()?, device.stream()?);
    let n = x.len() / 2;
    let x = Tensor::from_slice(device, x, &[2 * n])?;
    // Views without copies: sizes, strides and offset in elements.
    let even = x.view().as_strided(&[n], &[2], 0)?;
    let odd = x.view().as_strided(&[n], &[2], 1)?;
    let mut sum = Tensor::<f32>::zeros(device, &[n])?;
    let grid = (n as u32).div_ceil(1024);
    add::launch(&first, &module, add::Consts { BLOCK: 1024 }, grid, &even, &odd, &mut sum)?;
    // The second stream must not read `sum` before the first has written it.
    let written = first.record_event()?;
    second.wait_event(&written)?;
    let mut twice = Tensor::<f32>::zeros(device, &[n])?;
    second.begin_capture()?;
    add::launch(&second, &module, add::Consts { BLOCK: 1024 }, grid, &sum, &sum, &mut twice)?;
    let graph = second.end_capture()?;
    graph.launch(&second)?; // runs the captured launch
    second.synchronize()?; // a host read of memory that pending work writes is refused
    twice.to_vec()
}
// ANCHOR_END: streams

#[cfg(test)]
mod tests {
    use tessera::launch::Device;

    #[test]
    fn strided_views_streams_and_a_graph() {
        let device = Device::emulator();
        let x = crate::values(9, 2 * 1500, 3.0);
        let got = super::streams_and_graphs(&device, &x).unwrap();
        assert_eq!(got.len(), 1500);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, 2.0 * (x[2 * i] + x[2 * i + 1]), "element {i}");
        }
    }
}
