//! Autotuned kernels with `Tensor` parameters on the emulator: the generated `launch_tuned` /
//! `launch_tuned_with` take the tensors as `launch_sized` does, derive the key from the tensors'
//! sizes and strides, and give the CPU's results whichever candidate they choose — under the
//! emulator's rule (the first candidate) and with the emulator tuning as a GPU does
//! (`set_time_on_emulator`), where every candidate runs on the caller's tensors and a tensor the
//! kernel updates in place must still hold one launch's result. Mistakes are refused with the
//! plain launcher's errors.

use std::sync::Mutex;
use tessera::launch::autotune::{set_cache_file, set_time_on_emulator, Choice, ChoiceSource};
use tessera::launch::{Device, Module, Stream};
use tessera::tensor::{AsTensorMut, Tensor};
use tessera::{f16, tile_kernel};

/// `out[i] = x[i] · scale` (in f32, rounded to `T`); tuned per size of `x` over two configs.
#[tile_kernel(
    T = [f16, f32],
    BLOCK = [128, 256],
    num_warps = [2, 4],
    autotune(key = [x.size(0)], configs = [(BLOCK = 128, num_warps = 2), (BLOCK = 256, num_warps = 4)])
)]
fn tuned_scale<T, const BLOCK: usize>(x: Tensor<T, 1>, out: Tensor<T, 1>, scale: f32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    let v = load(x + offs * x.stride(0), mask).to::<f32>();
    store(out + offs * out.stride(0), (v * scale).to::<T>(), mask);
}

/// `x[i] += 1`: updates its tensor in place; tuned per size and stride of `x`.
#[tile_kernel(num_warps = 4, BLOCK = [64, 256], autotune(key = [x.size(0), x.stride(0)]))]
fn tuned_add_one<const BLOCK: usize>(x: Tensor<f32, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < x.size(0);
    let at = x + offs * x.stride(0);
    store(at, load(at, mask, 0.0) + 1.0, mask);
}

/// The tests change the process-wide `set_time_on_emulator`: one at a time.
static SETTING: Mutex<()> = Mutex::new(());

fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = tessera_test_support::Rng(seed);
    (0..n).map(|_| rng.next_f32() * 8.0 - 4.0).collect()
}

fn scale_grid(c: &tuned_scale::Consts, s: &tuned_scale::Sizes) -> (u32,) {
    (s.out[0].div_ceil(c.BLOCK) as u32,)
}

fn add_one_grid(c: &tuned_add_one::Consts, s: &tuned_add_one::Sizes) -> (u32,) {
    (s.x[0].div_ceil(c.BLOCK) as u32,)
}

/// `tuned_add_one` of `x` through `launch_tuned_with`, with a reset that only counts its calls:
/// the choice and the number of resets.
fn add_one_counting_resets(
    stream: &Stream<'_>,
    module: &Module,
    x: &mut impl AsTensorMut<f32>,
) -> (Choice, u32) {
    let mut resets = 0;
    let choice = tuned_add_one::launch_tuned_with(
        stream,
        module,
        &mut || {
            resets += 1;
            Ok(())
        },
        add_one_grid,
        x,
    )
    .unwrap();
    (choice, resets)
}

/// `tuned_scale` of `x` as `T` (read with stride 2) through the generic `launch_tuned`, against
/// the CPU; returns the choice's index and source.
fn scale_case<T: tessera::launch::DeviceElement + tuned_scale::Listed_T>(
    x: &[f32],
    from: impl Fn(f32) -> T,
    to: impl Fn(T) -> f32,
) -> (usize, ChoiceSource) {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let n = x.len();
    let wide: Vec<T> = x.iter().flat_map(|&v| [from(v), from(-9.0)]).collect();
    let tx = Tensor::from_slice(&device, &wide, &[2 * n]).unwrap();
    let x_view = tx.view().as_strided(&[n], &[2], 0).unwrap();
    let mut out = Tensor::<T>::zeros(&device, &[n]).unwrap();
    let choice =
        tuned_scale::launch_tuned(&stream, &module, scale_grid, &x_view, &mut out, 1.5).unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..n {
        let want = from(to(wide[2 * i]) * 1.5);
        assert_eq!(
            to(got[i]).to_bits(),
            to(want).to_bits(),
            "{} n {n} i {i} ({})",
            T::DTYPE_NAME,
            choice.candidate
        );
    }
    (choice.index, choice.source)
}

#[test]
fn tuned_tensor_kernels_follow_the_emulator_rule() {
    let _one = SETTING.lock().unwrap_or_else(|p| p.into_inner());
    set_time_on_emulator(false);
    for n in [1usize, 200, 1000] {
        let x = values(31, n);
        let first = (0, ChoiceSource::Emulator);
        assert_eq!(scale_case(&x, f16::from_f32, f16::to_f32), first);
        assert_eq!(scale_case(&x, |v| v, |v| v), first);
    }
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let start = values(32, 300);
    let mut x = Tensor::from_slice(&device, &start, &[300]).unwrap();
    let (choice, resets) = add_one_counting_resets(&stream, &module, &mut x);
    assert_eq!((choice.index, choice.source), (0, ChoiceSource::Emulator));
    assert_eq!(resets, 1, "reset runs once, before the launch");
    stream.synchronize().unwrap();
    let want: Vec<f32> = start.iter().map(|v| v + 1.0).collect();
    assert_eq!(x.to_vec().unwrap(), want);
}

#[test]
fn tuning_on_the_emulator_times_every_candidate_and_restores_updated_tensors() {
    let _one = SETTING.lock().unwrap_or_else(|p| p.into_inner());
    set_cache_file(None);
    set_time_on_emulator(true);
    // The key is the size of `x`: a new size tunes, the same size reuses the choice.
    let x = values(33, 700);
    let (_, first) = scale_case(&x, |v| v, |v| v);
    let (_, again) = scale_case(&x, |v| v, |v| v);
    let (_, other) = scale_case(&x[..699], |v| v, |v| v);
    assert_eq!(
        [first, again, other],
        [
            ChoiceSource::Timed,
            ChoiceSource::Memory,
            ChoiceSource::Timed
        ]
    );
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    // `x` is every other element of a tensor: the kernel adds one to those, once, whatever the
    // tuning ran before (each candidate 13 times); the elements between stay.
    let n = 500;
    let start = values(34, 2 * n);
    let mut t = Tensor::from_slice(&device, &start, &[2 * n]).unwrap();
    let (choice, resets) = {
        let mut x = t.view_mut().as_strided(&[n], &[2], 0).unwrap();
        add_one_counting_resets(&stream, &module, &mut x)
    };
    assert_eq!(choice.source, ChoiceSource::Timed);
    let outcomes: Vec<bool> = choice.results.iter().map(|r| r.outcome.is_ok()).collect();
    assert_eq!(outcomes, [true, true], "{:?}", choice.results);
    assert_eq!(
        resets, 3,
        "reset before each of the 2 timings and the launch"
    );
    stream.synchronize().unwrap();
    let got = t.to_vec().unwrap();
    for i in 0..2 * n {
        let want = if i % 2 == 0 { start[i] + 1.0 } else { start[i] };
        assert_eq!(got[i], want, "element {i} ({})", choice.candidate);
    }
    // The same size with another stride is another key.
    let mut contiguous = Tensor::from_slice(&device, &start[..n], &[n]).unwrap();
    let choice =
        tuned_add_one::launch_tuned(&stream, &module, add_one_grid, &mut contiguous).unwrap();
    assert_eq!(choice.source, ChoiceSource::Timed);
    stream.synchronize().unwrap();
    let want: Vec<f32> = start[..n].iter().map(|v| v + 1.0).collect();
    assert_eq!(contiguous.to_vec().unwrap(), want);
    set_time_on_emulator(false);
}

#[test]
fn tuned_launches_refuse_a_wrong_rank_and_unsynchronised_tensors() {
    let _one = SETTING.lock().unwrap_or_else(|p| p.into_inner());
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    // Rank: a [2, 4] tensor where the kernel takes rank 1 (the plain launcher's error).
    let square = Tensor::from_slice(&device, &[1.0f32; 8], &[2, 4]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[8]).unwrap();
    let err = tuned_scale::launch_tuned(&stream, &module, scale_grid, &square, &mut out, 2.0)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "argument `x` of kernel `tuned_scale`: the kernel takes a tensor of rank 1, this one has \
         sizes [2, 4] (rank 2)"
    );
    // The input is the output of work pending on another stream: refused until that stream
    // is synchronised (an output aliasing an input in one launch does not compile:
    // ui-tests/tests/ui_tensor/tensor_aliasing.rs).
    let other = device.stream().unwrap();
    let mut x = Tensor::from_slice(&device, &[1.0f32; 8], &[8]).unwrap();
    tuned_add_one::launch_tuned(&other, &module, add_one_grid, &mut x).unwrap();
    let err = tuned_scale::launch_tuned(&stream, &module, scale_grid, &x, &mut out, 2.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("without synchronisation"), "{err}");
    other.synchronize().unwrap();
    tuned_scale::launch_tuned(&stream, &module, scale_grid, &x, &mut out, 2.0).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), [4.0; 8]);
}
