//! A kernel generic over its element type (`T = [f16, bf16, f32]`) with `Tensor` parameters,
//! through the generated generic `launch_sized` on the emulator: `T` comes from the tensors'
//! element type, each launch runs the specialisation of that type, against the CPU.

use tessera::launch::Device;
use tessera::tensor::Tensor;
use tessera::{f16, tile_kernel};

fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = tessera_test_support::Rng(seed);
    (0..n).map(|_| rng.next_f32() * 8.0 - 4.0).collect()
}

/// `out[i] = x[i] · scale + y[i]` in f32, rounded to `T`: a kernel generic over its element type
/// with `Tensor` parameters (any strides).
#[tile_kernel(T = [f16, bf16, f32], num_warps = 4, BLOCK = [256])]
fn tensor_axpy<T, const BLOCK: usize>(
    x: Tensor<T, 1>,
    y: Tensor<T, 1>,
    out: Tensor<T, 1>,
    scale: f32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    let a = load(x + offs * x.stride(0), mask).to::<f32>();
    let b = load(y + offs * y.stride(0), mask).to::<f32>();
    store(out + offs * out.stride(0), (a * scale + b).to::<T>(), mask);
}

/// `tensor_axpy` of `x`, `y` (as `T`) through the generic `launch` on the emulator, against
/// the CPU: `T` comes from the tensors' element type.
fn axpy_case<T: tessera::launch::DeviceElement + tensor_axpy::Listed_T>(
    x: &[f32],
    y: &[f32],
    from: impl Fn(f32) -> T,
    to: impl Fn(T) -> f32,
) {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let n = x.len();
    let (xs, ys): (Vec<T>, Vec<T>) = (
        x.iter().map(|&v| from(v)).collect(),
        y.iter().map(|&v| from(v)).collect(),
    );
    let tx = Tensor::from_slice(&device, &xs, &[n]).unwrap();
    // `y` read with stride 2 from a tensor twice as long.
    let wide: Vec<T> = ys.iter().flat_map(|&v| [v, from(-7.0)]).collect();
    let ty = Tensor::from_slice(&device, &wide, &[2 * n]).unwrap();
    let y_view = ty.view().as_strided(&[n], &[2], 0).unwrap();
    let mut out = Tensor::<T>::zeros(&device, &[n]).unwrap();
    let consts = tensor_axpy::Consts { BLOCK: 256 };
    tensor_axpy::launch_sized(
        &stream,
        &module,
        consts,
        |c: &tensor_axpy::Consts, s: &tensor_axpy::Sizes| (s.out[0].div_ceil(c.BLOCK) as u32,),
        &tx,
        &y_view,
        &mut out,
        1.5,
    )
    .unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..n {
        let want = from(to(xs[i]) * 1.5 + to(ys[i]));
        assert_eq!(
            to(got[i]).to_bits(),
            to(want).to_bits(),
            "{} i {i}",
            T::DTYPE_NAME
        );
    }
}

#[test]
fn a_generic_kernel_takes_tensors_of_each_listed_type() {
    for n in [1usize, 255, 256, 1000] {
        let (x, y) = (values(21, n), values(22, n));
        axpy_case(&x, &y, f16::from_f32, f16::to_f32);
        axpy_case(&x, &y, tessera::bf16::from_f32, tessera::bf16::to_f32);
        axpy_case(&x, &y, |v| v, |v| v);
    }
}
