//! `tessera-cudarc-softmax`: a Tessera kernel on memory and a stream owned by `cudarc`, as an
//! engine built on `cudarc` (Candle's CUDA back end is one) would run it: row softmax
//! (`tessera_kernels::tiled::norm::tile_softmax`) of a `cudarc::driver::CudaSlice<f32>`
//! into another, both borrowed as tensors without copies, launched on the `cudarc` stream, and
//! checked against a CPU softmax. Needs a GPU (and this crate's default `cuda` feature); without
//! one it says so and fails.

use std::process::ExitCode;
use tessera::launch::{Device, LaunchError, PtxSet, Stream};
use tessera::tensor::Tensor;
use tessera_kernels::tiled::norm::tile_softmax;

/// The kernels' PTX for every target of the build, oldest first.
const PTX: PtxSet = tessera_kernels_ptx::PTX;

const ROWS: usize = 300;
const COLS: usize = 1000;

fn input() -> Vec<f32> {
    (0..ROWS * COLS)
        .map(|i| ((i * 7919 % 1013) as f32 / 1013.0 - 0.5) * 8.0)
        .collect()
}

fn reference(x: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; x.len()];
    for (row, target) in x.chunks(COLS).zip(out.chunks_mut(COLS)) {
        let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let sum: f64 = row.iter().map(|&v| ((v - max) as f64).exp()).sum();
        for (t, &v) in target.iter_mut().zip(row) {
            *t = (((v - max) as f64).exp() / sum) as f32;
        }
    }
    out
}

/// A cudarc error of step `what` as a message.
#[cfg(feature = "cuda")]
fn fail(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |err| format!("cudarc: {what}: {err}")
}

#[cfg(feature = "cuda")]
fn run() -> Result<f32, String> {
    use cudarc::driver::CudaContext;
    let lerr = |err: LaunchError| err.to_string();
    let context = CudaContext::new(0).map_err(fail("opening GPU 0"))?;
    let cuda_stream = context.new_stream().map_err(fail("creating a stream"))?;
    let x = input();
    // The engine's memory: cudarc allocations, filled on its stream.
    let mut inp = cuda_stream
        .clone_htod(&x)
        .map_err(fail("copying the input"))?;
    let mut out = cuda_stream
        .alloc_zeros::<f32>(ROWS * COLS)
        .map_err(fail("allocating the output"))?;
    let device = Device::from_cudarc(&context).map_err(lerr)?;
    let module = device.load_ptx_set(&PTX).map_err(lerr)?;
    let stream = Stream::from_cudarc(&device, &cuda_stream).map_err(lerr)?;
    {
        let inp = Tensor::from_cuda_slice(&device, &mut inp, &[ROWS, COLS]).map_err(lerr)?;
        let mut out = Tensor::from_cuda_slice(&device, &mut out, &[ROWS, COLS]).map_err(lerr)?;
        let consts = tile_softmax::Consts { BLOCK: 1024 };
        tile_softmax::launch(&stream, &module, consts, (ROWS as u32,), &mut out, &inp)
            .map_err(lerr)?;
        stream.synchronize().map_err(lerr)?;
    }
    let got = cuda_stream
        .clone_dtoh(&out)
        .map_err(fail("copying the output back"))?;
    let want = reference(&x);
    let worst = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f32, f32::max);
    Ok(worst)
}

#[cfg(not(feature = "cuda"))]
fn run() -> Result<f32, String> {
    Err("built without the `cuda` feature".to_string())
}

fn main() -> ExitCode {
    match run() {
        Ok(worst) if worst <= 1e-5 => {
            println!(
                "tile_softmax on cudarc memory [{ROWS}, {COLS}]: ok (largest difference from \
                 the CPU softmax {worst:e})"
            );
            ExitCode::SUCCESS
        }
        Ok(worst) => {
            eprintln!("error: largest difference from the CPU softmax is {worst:e} (> 1e-5)");
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("error: {err} (this example needs a GPU)");
            ExitCode::FAILURE
        }
    }
}
