//! Autotuned kernels (`autotune(key = […])`): `launch_tuned` gives the right result whatever it
//! chooses, every candidate is right on its own, the candidates are those `configs` keeps (in
//! the order of the attribute's lists), and
//! the choice follows the documented rule — the first candidate on the emulator; on a GPU, timed
//! on the first launch for a key and remembered for the next. `tuned_matmul` takes
//! tensors: its `launch_tuned` runs on a stream, with the key read from the tensors' sizes.

mod support;

use support::{device, device_and_module, Axpy, Guarded};
use tessera::launch::autotune::{Choice, ChoiceSource};
use tessera::launch::DeviceElement;
use tessera::tensor::Tensor;
use tessera::{bf16, f16};
use tessera_kernels::tiled::autotuned::{tuned_axpy, tuned_matmul};

/// Uniform in [-1, 1) from the seeded test RNG.
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = tessera_test_support::Rng(seed);
    (0..n).map(|_| rng.next_f32()).collect()
}

/// The choice of a first and a second `launch_tuned` with one key follows the device's rule.
fn check_choice_rule(first: &Choice, second: &Choice, what: &str) {
    let gpu = device();
    if gpu.is_gpu() {
        assert!(
            matches!(first.source, ChoiceSource::Timed | ChoiceSource::File),
            "{what}: first launch {first:?}"
        );
        if first.source == ChoiceSource::Timed {
            assert!(first.results.iter().any(|r| r.outcome.is_ok()), "{what}");
        }
        assert_eq!(second.source, ChoiceSource::Memory, "{what}");
        assert_eq!(second.index, first.index, "{what}");
    } else {
        for choice in [first, second] {
            assert_eq!(
                (choice.index, choice.source),
                (0, ChoiceSource::Emulator),
                "{what}"
            );
            assert!(choice.results.is_empty(), "{what}: the emulator timed");
        }
    }
}

#[test]
fn tuned_axpy_candidates_are_the_configs_in_order() {
    let consts: Vec<(usize, u32)> = tuned_axpy::CANDIDATES
        .iter()
        .map(|c| (c.BLOCK, c.num_warps))
        .collect();
    // The kept specialisations in the order of the attribute's lists (not of `configs`).
    assert_eq!(consts, [(256, 2), (1024, 2), (1024, 4)]);
    assert_eq!(tuned_axpy::T_f16::CANDIDATES.len(), 3);
    assert_eq!(tuned_axpy::T_f16::TUNER.kernel(), "tuned_axpy[T = f16]");
    assert_eq!(tuned_axpy::T_f32::TUNER.kernel(), "tuned_axpy[T = f32]");
    assert_eq!(
        tuned_axpy::T_f16::TUNER.candidates(),
        [
            "BLOCK = 256, num_warps = 2",
            "BLOCK = 1024, num_warps = 2",
            "BLOCK = 1024, num_warps = 4"
        ]
    );
    // (BLOCK = 256, num_warps = 4) is not a config: not compiled.
    let names: Vec<&str> = tuned_axpy::T_f16::SPECIALISATIONS
        .iter()
        .map(|s| s.kernel.name)
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("BLOCK_256__num_warps_4")),
        "{names:?}"
    );
    assert_eq!(tuned_matmul::CANDIDATES.len(), 2);
    assert_eq!(
        tuned_matmul::T_bf16::TUNER.candidates(),
        [
            "BM = 64, BN = 128, BK = 64, GROUP = 8, num_warps = 4",
            "BM = 128, BN = 128, BK = 64, GROUP = 8, num_warps = 8"
        ]
    );
}

#[test]
fn tuned_axpy_is_right_whatever_it_chooses() {
    let gpu = device();
    let (device, module) = device_and_module();
    for n in [1usize, 300, 1024, 3001] {
        let case = Axpy::<f16>::new(device, [1, 2], n);
        let grid = |c: &tuned_axpy::Consts| (n.div_ceil(c.BLOCK) as u32,);
        let mut launches = Vec::new();
        for _ in 0..2 {
            let dout = Guarded::new(gpu, n, f16::from_f32(7.5));
            let tuned = case.launch(dout.ptr(), |x, y, out, alpha, len| {
                tuned_axpy::launch_tuned(device, module, grid, x, y, out, alpha, len)
            });
            let out = dout.outputs(&format!("n {n}"));
            assert_eq!(out, case.want, "n {n}, {}", tuned.choice.candidate);
            launches.push(tuned);
        }
        check_choice_rule(
            &launches[0].choice,
            &launches[1].choice,
            &format!("axpy n {n}"),
        );
    }
}

#[test]
fn every_tuned_axpy_candidate_is_right() {
    let gpu = device();
    let case = Axpy::<f32>::new(gpu.device(), [3, 4], 2500);
    let grid = |c: &tuned_axpy::Consts| (case.n.div_ceil(c.BLOCK) as u32,);
    for consts in tuned_axpy::CANDIDATES {
        let dout = gpu.device().zeros::<f32>(case.n).unwrap();
        case.launch(dout.ptr(), |x, y, out, alpha, len| {
            support::launch_tile!(gpu, tuned_axpy, consts, grid, x, y, out, alpha, len)
        });
        assert_eq!(dout.download().unwrap(), case.want, "{consts:?}");
    }
}

/// `a · b` in f64 from the f16 (or bf16) inputs, and the sum of the products' magnitudes.
fn matmul_reference<T: Copy>(
    a: &[T],
    b: &[T],
    [m, n, k]: [usize; 3],
    to: impl Fn(T) -> f32,
) -> (Vec<f64>, Vec<f64>) {
    let (mut want, mut magnitude) = (vec![0f64; m * n], vec![0f64; m * n]);
    for i in 0..m {
        for p in 0..k {
            let a_ip = to(a[i * k + p]) as f64;
            for j in 0..n {
                let product = a_ip * to(b[p * n + j]) as f64;
                want[i * n + j] += product;
                magnitude[i * n + j] += product.abs();
            }
        }
    }
    (want, magnitude)
}

/// `tuned_matmul` of `a: [m, k]` and `b` given transposed (stored `[n, k]`, viewed
/// `[k, n]`) as `T`, through the generic `launch_tuned` on a stream, twice (the choice rule),
/// and every candidate through `launch_sized`, against the f64 reference (`T`'s half ulp of
/// the result, plus the tensor cores' sum error on the GPU).
fn matmul_case<T: DeviceElement + tuned_matmul::Listed_T>(
    [m, n, k]: [usize; 3],
    from: impl Fn(f32) -> T,
    to: impl Fn(T) -> f32 + Copy,
    ulp: f64,
) {
    let gpu = device();
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let a: Vec<T> = values(7, m * k).into_iter().map(&from).collect();
    let bt: Vec<T> = values(8, n * k).into_iter().map(&from).collect();
    let b: Vec<T> = (0..k * n).map(|i| bt[(i % n) * k + i / n]).collect();
    let (want, magnitude) = matmul_reference(&a, &b, [m, n, k], to);
    let ta = Tensor::from_slice(device, &a, &[m, k]).unwrap();
    let tbt = Tensor::from_slice(device, &bt, &[n, k]).unwrap();
    let tb = tbt.view().transpose(0, 1).unwrap();
    let grid = |c: &tuned_matmul::Consts, s: &tuned_matmul::Sizes| {
        ((s.c[0].div_ceil(c.BM) * s.c[1].div_ceil(c.BN)) as u32,)
    };
    let check = |c: &Tensor<T>, what: &str| {
        let got = c.to_vec().unwrap();
        for i in 0..m * n {
            let tol = ulp / 2.0 * want[i].abs() + gpu.mma_slack(magnitude[i]) + 1e-6;
            let value = to(got[i]) as f64;
            assert!(
                (value - want[i]).abs() <= tol,
                "{} {what}: c[{i}] = {value}, want {}",
                T::DTYPE_NAME,
                want[i]
            );
        }
    };
    let mut choices = Vec::new();
    for _ in 0..2 {
        let mut c = Tensor::<T>::zeros(device, &[m, n]).unwrap();
        let choice = tuned_matmul::launch_tuned(&stream, module, grid, &ta, &tb, &mut c).unwrap();
        stream.synchronize().unwrap();
        check(&c, choice.candidate);
        choices.push(choice);
    }
    check_choice_rule(&choices[0], &choices[1], "matmul");
    for consts in tuned_matmul::CANDIDATES {
        let mut c = Tensor::<T>::zeros(device, &[m, n]).unwrap();
        tuned_matmul::launch_sized(&stream, module, consts, grid, &ta, &tb, &mut c).unwrap();
        stream.synchronize().unwrap();
        check(&c, &format!("{consts:?}"));
    }
}

#[test]
fn tuned_matmul_is_right_whatever_it_chooses() {
    matmul_case([70, 130, 72], f16::from_f32, f16::to_f32, 2f64.powi(-10));
    matmul_case([33, 129, 40], bf16::from_f32, bf16::to_f32, 2f64.powi(-7));
}

#[test]
fn tuned_matmul_is_keyed_by_the_tensors_and_refuses_a_wrong_rank() {
    assert_eq!(
        tuned_matmul::T_f16::TUNER.key_text(&["64".into(), "32".into(), "16".into()]),
        "a.size(0)=64 b.size(1)=32 a.size(1)=16"
    );
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let a = Tensor::<f16>::zeros(device, &[4, 8]).unwrap();
    let b = Tensor::<f16>::zeros(device, &[8, 4]).unwrap();
    let mut flat = Tensor::<f16>::zeros(device, &[16]).unwrap();
    let grid = |_: &tuned_matmul::Consts, _: &tuned_matmul::Sizes| (1u32,);
    let err = tuned_matmul::launch_tuned(&stream, module, grid, &a, &b, &mut flat)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "argument `c` of kernel `tuned_matmul`: the kernel takes a tensor of rank 2, this \
         one has sizes [16] (rank 1)"
    );
}
