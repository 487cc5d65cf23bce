//! `tessera-candle-custom-op`: a Tessera kernel as a Candle `CustomOp1` on Candle's CUDA tensors.
//!
//! [`TesseraSoftmax`] is a softmax over the last dimension whose `cuda_fwd` borrows the input's
//! `CudaSlice<f32>` (Candle's `CudaStorage`) and a freshly allocated output slice as Tessera
//! tensors without copying, and launches `tessera_kernels::tiled::norm::tile_softmax` on
//! Candle's own CUDA stream. The binary runs it on Candle tensors on GPU 0 and compares the result
//! with Candle's `candle_nn::ops::softmax_last_dim` (on the GPU) and with the op's `cpu_fwd` (on the
//! host); it prints the largest differences and fails when one exceeds the tolerance, or when there
//! is no GPU.
//!
//! Built outside the workspace by `scripts/build_candle_example.sh` (Candle's `cuda` feature needs
//! nvcc and the CUDA libraries at build time).

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CudaStorage, CustomOp1, Layout, Shape, Tensor};
use std::process::ExitCode;
use tessera::launch::{Device, Module, PtxSet, Stream};
use tessera_kernels::tiled::norm::tile_softmax;

/// The kernels' PTX for every target of the build, oldest first.
const PTX: PtxSet = tessera::include_ptx!("tessera_kernels");

/// The `BLOCK` specialisation launched: one program covers a row of up to this many columns.
const BLOCK: usize = 1024;

/// Largest difference accepted from either reference.
const TOLERANCE: f32 = 1e-5;

/// Softmax over the last dimension of an f32 tensor, run by a Tessera kernel on Candle's GPU.
struct TesseraSoftmax {
    /// Candle's CUDA context as a Tessera device.
    device: Device,
    /// The kernels' PTX, loaded on that device.
    module: Module,
}

impl TesseraSoftmax {
    /// The op for tensors of Candle's CUDA device `cuda` (its context; the stream is taken from
    /// each input's storage).
    fn new(cuda: &candle_core::CudaDevice) -> candle_core::Result<Self> {
        let device = Device::from_cudarc(cuda.cuda_stream().context()).map_err(tessera_error)?;
        let module = device.load_ptx_set(&PTX).map_err(tessera_error)?;
        Ok(TesseraSoftmax { device, module })
    }
}

/// A Tessera launcher error as a Candle error.
fn tessera_error(err: tessera::launch::LaunchError) -> candle_core::Error {
    candle_core::Error::Msg(format!("tessera: {err}"))
}

/// The rows and columns of a contiguous input of `layout` (the last dimension is a row), with the
/// element range it occupies in its storage; an error for layouts the kernel does not take.
fn rows_cols(layout: &Layout) -> candle_core::Result<(usize, usize, std::ops::Range<usize>)> {
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("tessera softmax: the input must be contiguous");
    };
    let Some(&cols) = layout.dims().last() else {
        candle_core::bail!("tessera softmax: the input must have at least one dimension");
    };
    if cols == 0 || cols > BLOCK {
        candle_core::bail!(
            "tessera softmax: rows of {cols} elements; the kernel takes 1 to {BLOCK} per row"
        );
    }
    Ok(((end - start) / cols, cols, start..end))
}

impl CustomOp1 for TesseraSoftmax {
    fn name(&self) -> &'static str {
        "tessera-softmax-last-dim"
    }

    /// The host reference: each row's softmax, with sums in f64.
    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (_, cols, range) = rows_cols(layout)?;
        let CpuStorage::F32(data) = storage else {
            candle_core::bail!("tessera softmax: f32 only, got {:?}", storage.dtype());
        };
        let mut out = vec![0.0f32; range.len()];
        for (row, target) in data[range].chunks(cols).zip(out.chunks_mut(cols)) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let sum: f64 = row.iter().map(|&v| ((v - max) as f64).exp()).sum();
            for (t, &v) in target.iter_mut().zip(row) {
                *t = (((v - max) as f64).exp() / sum) as f32;
            }
        }
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }

    /// The Tessera kernel on Candle's memory and stream, without copies.
    fn cuda_fwd(
        &self,
        storage: &CudaStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let (rows, cols, range) = rows_cols(layout)?;
        let candle_device = storage.device();
        let cuda_stream = candle_device.cuda_stream();
        // Candle's stream as a Tessera stream (an error if it is not the op's device's context).
        let stream = Stream::from_cudarc(&self.device, &cuda_stream).map_err(tessera_error)?;
        let src = storage.as_cuda_slice::<f32>()?;
        let mut dst = candle_device.alloc_zeros::<f32>(rows * cols)?;
        {
            // The input's whole slice, borrowed for reading, narrowed to the layout's range.
            let inp = tessera::tensor::Tensor::from_cuda_slice_ref(&self.device, src, &[src.len()])
                .and_then(|all| all.narrow(0, range.start, range.len()))
                .and_then(|span| span.reshape(&[rows, cols]))
                .map_err(tessera_error)?;
            let mut out =
                tessera::tensor::Tensor::from_cuda_slice(&self.device, &mut dst, &[rows, cols])
                    .map_err(tessera_error)?;
            let consts = tile_softmax::Consts { BLOCK };
            tile_softmax::launch(
                &stream,
                &self.module,
                consts,
                (rows as u32,),
                &mut out,
                &inp,
            )
            .map_err(tessera_error)?;
            // The kernel runs on Candle's stream, so Candle's later work on these buffers is
            // ordered after it; waiting here ends Tessera's borrows of the two slices as its
            // interop contract asks (one wait per call, the price of this simple form).
            stream.synchronize().map_err(tessera_error)?;
        }
        let dst = CudaStorage::wrap_cuda_slice(dst, candle_device.clone());
        Ok((dst, layout.shape().clone()))
    }
}

/// A deterministic input of `n` values in [-4, 4).
fn input(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919 % 1013) as f32 / 1013.0 - 0.5) * 8.0)
        .collect()
}

/// Largest absolute difference of two tensors of one shape, computed where they live.
fn max_difference(a: &Tensor, b: &Tensor) -> candle_core::Result<f32> {
    (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()
}

/// One case: the op on `x` (a GPU tensor) against Candle's softmax and the op's host reference.
/// Returns the largest difference from each.
fn check(op: &TesseraSoftmax, x: &Tensor) -> candle_core::Result<(f32, f32)> {
    let ours = x.apply_op1_no_bwd(op)?;
    let candle = candle_nn::ops::softmax_last_dim(x)?;
    let host = x
        .to_device(&candle_core::Device::Cpu)?
        .apply_op1_no_bwd(op)?;
    let from_candle = max_difference(&ours, &candle)?;
    let from_host = max_difference(&ours.to_device(&candle_core::Device::Cpu)?, &host)?;
    Ok((from_candle, from_host))
}

fn run() -> Result<bool, String> {
    let gpu = candle_core::Device::new_cuda(0)
        .map_err(|err| format!("no CUDA GPU: Candle could not open GPU 0 ({err})"))?;
    let candle_err = |err: candle_core::Error| format!("{err}");
    let op = TesseraSoftmax::new(gpu.as_cuda_device().map_err(candle_err)?).map_err(candle_err)?;
    println!(
        "device: {}; kernels: {}",
        op.device.name(),
        op.module.selection().unwrap_or("PTX")
    );
    let mut ok = true;
    // [rows, cols] inputs, a rank-3 one, and a view starting inside its storage (offset rows).
    let full = Tensor::from_vec(input(301 * 1000), (301, 1000), &gpu).map_err(candle_err)?;
    let cases: Vec<(&str, Tensor)> = vec![
        ("[300, 1000]", full.narrow(0, 0, 300).map_err(candle_err)?),
        (
            "[300, 1000] at row 1",
            full.narrow(0, 1, 300).map_err(candle_err)?,
        ),
        (
            "[4, 33, 256]",
            Tensor::from_vec(input(4 * 33 * 256), (4, 33, 256), &gpu).map_err(candle_err)?,
        ),
        (
            "[7, 1024]",
            Tensor::from_vec(input(7 * 1024), (7, 1024), &gpu).map_err(candle_err)?,
        ),
    ];
    for (name, x) in &cases {
        let (from_candle, from_host) = check(&op, x).map_err(candle_err)?;
        let pass = from_candle <= TOLERANCE && from_host <= TOLERANCE;
        ok &= pass;
        println!(
            "{name}: largest difference from candle_nn::ops::softmax_last_dim {from_candle:e}, \
             from the host softmax {from_host:e}: {}",
            if pass { "ok" } else { "MISMATCH" }
        );
    }
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: a difference exceeds {TOLERANCE:e}");
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("error: {err} (this example needs a CUDA GPU)");
            ExitCode::FAILURE
        }
    }
}
