//! `tessera-examples --autotune-demo`: the autotuned matmul
//! (`tessera_kernels::tiled::autotuned::tuned_matmul`, candidates Triton's `(64, 128, 64, 4)` and
//! `(128, 128, 64, 8)`) launched twice per shape and element type through its generated
//! `launch_tuned`. On a GPU the first launch for a shape times both candidates (CUDA events,
//! median; the timings are printed) and the second reuses the choice from memory; with
//! `TESSERA_AUTOTUNE_CACHE=PATH` a second run of the program reads the choices from the file and
//! times nothing. On the emulator the first candidate is taken and nothing is timed. Every
//! output is checked against an f64 CPU reference (a 64 × 64 grid of rows × columns spread
//! evenly), `|c − ref| ≤ u·|ref| + 2⁻¹⁶·Σₖ|a·b|` with `u = 2⁻¹⁰` (f16) or `2⁻⁷` (bf16).

use crate::data::{float_vec, spread, Float};
use tessera::launch::autotune::{Choice, ChoiceSource};
use tessera::launch::{Device, DeviceElement, DeviceKind, Module};
use tessera::tensor::Tensor;
use tessera::{bf16, f16};
use tessera_kernels::tiled::autotuned::tuned_matmul;

/// The shapes run when none are given: GPU sizes, or one small ragged shape on the emulator.
pub fn default_shapes(device: &Device) -> Vec<[usize; 3]> {
    match device.kind() {
        DeviceKind::Gpu => vec![
            [512, 512, 512],
            [2048, 2048, 2048],
            [4096, 4096, 4096],
            [8192, 8192, 8192],
        ],
        DeviceKind::Emulator => vec![[96, 200, 72]],
    }
}

/// One line for a choice: the candidate, where it came from, and each candidate's time.
fn describe(choice: &Choice) -> String {
    let mut line = format!("{} ({:?})", choice.candidate, choice.source);
    for r in &choice.results {
        match &r.outcome {
            Ok(ms) => line.push_str(&format!("; [{}] {ms:.4} ms", r.candidate)),
            Err(e) => line.push_str(&format!("; [{}] skipped: {e}", r.candidate)),
        }
    }
    line
}

/// Runs the demo on `shapes` (`[m, n, k]`); `Ok(false)` when an output is wrong.
pub fn run(device: &Device, module: &Module, shapes: &[[usize; 3]]) -> Result<bool, String> {
    let mut ok = true;
    for &shape in shapes {
        ok &= matmul::<f16>(device, module, shape)?;
        ok &= matmul::<bf16>(device, module, shape)?;
    }
    Ok(ok)
}

/// Two `launch_tuned` of `c = a · b` on `T` tensors (on a stream, the key read from their
/// sizes), each output checked.
fn matmul<T: Float + tuned_matmul::Listed_T>(
    device: &Device,
    module: &Module,
    [m, n, k]: [usize; 3],
) -> Result<bool, String> {
    let err = |e: tessera::launch::LaunchError| e.to_string();
    let a: Vec<T> = float_vec(241, m * k, 1.0);
    let b: Vec<T> = float_vec(242, k * n, 1.0);
    let ta = Tensor::from_slice(device, &a, &[m, k]).map_err(err)?;
    let tb = Tensor::from_slice(device, &b, &[k, n]).map_err(err)?;
    let (rows, cols) = (spread(m, 64), spread(n, 64));
    let unit = if T::DTYPE_NAME == bf16::DTYPE_NAME {
        2f64.powi(-7)
    } else {
        2f64.powi(-10)
    };
    // One program per `BM × BN` tile of `c`, for the candidate's `Consts`.
    let grid = |c: &tuned_matmul::Consts, s: &tuned_matmul::Sizes| {
        ((s.c[0].div_ceil(c.BM) * s.c[1].div_ceil(c.BN)) as u32,)
    };
    let stream = device.stream().map_err(err)?;
    let mut ok = true;
    for launch in ["first", "second"] {
        let mut tc = Tensor::<T>::zeros(device, &[m, n]).map_err(err)?;
        let start = std::time::Instant::now();
        let choice =
            tuned_matmul::launch_tuned(&stream, module, grid, &ta, &tb, &mut tc).map_err(err)?;
        stream.synchronize().map_err(err)?;
        let wall = start.elapsed().as_secs_f64() * 1e3;
        let c = tc.to_vec().map_err(err)?;
        let mut worst = 0f64;
        let mut failure = None;
        for &i in &rows {
            for &j in &cols {
                let (mut want, mut magnitude) = (0f64, 0f64);
                for p in 0..k {
                    let product = a[i * k + p].wide() as f64 * b[p * n + j].wide() as f64;
                    want += product;
                    magnitude += product.abs();
                }
                let tol = unit * want.abs() + 2f64.powi(-16) * magnitude;
                let got = c[i * n + j].wide() as f64;
                let ratio = (got - want).abs() / tol.max(f64::MIN_POSITIVE);
                if ratio > 1.0 && failure.is_none() {
                    failure = Some(format!("c[{i}, {j}] = {got}, want {want}"));
                }
                worst = worst.max(ratio);
            }
        }
        let verdict = match &failure {
            Some(f) => format!("FAILED at {f}"),
            None => format!("ok, worst |err|/tol {worst:.2}"),
        };
        ok &= failure.is_none();
        println!(
            "autotune matmul {m}x{n}x{k} {} {launch} launch ({wall:.1} ms wall): {}; {verdict}",
            T::DTYPE_NAME,
            describe(&choice)
        );
        if launch == "second"
            && device.kind() == DeviceKind::Gpu
            && choice.source != ChoiceSource::Memory
        {
            println!("  unexpected: the second launch did not reuse the choice from memory");
            ok = false;
        }
    }
    Ok(ok)
}
