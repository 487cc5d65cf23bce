//! Autotuned kernels (`autotune(key = […])`): `launch_tuned` gives the right result whatever it
//! chooses, every candidate is right on its own, the candidates are those `configs` keeps (in
//! the order of the attribute's lists), and
//! the choice follows the documented rule — the first candidate on the emulator; on a GPU, timed
//! on the first launch for a key and remembered for the next.

mod support;

use support::device;
use tessera::f16;
use tessera::launch::autotune::{ChoiceSource, TunedLaunch};
use tessera_kernels::tiled::autotuned::{tuned_axpy, tuned_matmul};

/// Uniform in [-1, 1) from the seeded test RNG.
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = tessera_test_support::Rng(seed);
    (0..n).map(|_| rng.next_f32()).collect()
}

/// The choice of a first and a second `launch_tuned` with one key follows the device's rule.
fn check_choice_rule(first: &TunedLaunch, second: &TunedLaunch, what: &str) {
    let gpu = device();
    if gpu.is_gpu() {
        assert!(
            matches!(
                first.choice.source,
                ChoiceSource::Timed | ChoiceSource::File
            ),
            "{what}: first launch {:?}",
            first.choice
        );
        if first.choice.source == ChoiceSource::Timed {
            assert!(
                first.choice.results.iter().any(|r| r.outcome.is_ok()),
                "{what}"
            );
        }
        assert_eq!(second.choice.source, ChoiceSource::Memory, "{what}");
        assert_eq!(second.choice.index, first.choice.index, "{what}");
    } else {
        for choice in [&first.choice, &second.choice] {
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
    let module = gpu
        .module()
        .expect("launch_tuned needs the kernels' PTX module (build without TESSERA_NO_PTX)");
    let device = gpu.device();
    for n in [1usize, 300, 1024, 3001] {
        let (x, y) = (values(1, n), values(2, n));
        let (xs, ys): (Vec<f16>, Vec<f16>) = (
            x.iter().map(|&v| f16::from_f32(v)).collect(),
            y.iter().map(|&v| f16::from_f32(v)).collect(),
        );
        let want: Vec<f16> = (0..n)
            .map(|i| f16::from_f32(2.0 * xs[i].to_f32() + ys[i].to_f32()))
            .collect();
        let (dx, dy) = (device.upload(&xs).unwrap(), device.upload(&ys).unwrap());
        let guard = f16::from_f32(7.5);
        let mut launches = Vec::new();
        for _ in 0..2 {
            let dout = device.upload(&vec![guard; n + 8]).unwrap();
            let tuned = tuned_axpy::launch_tuned(
                device,
                module,
                |c: &tuned_axpy::Consts| (n.div_ceil(c.BLOCK) as u32,),
                dx.ptr(),
                dy.ptr(),
                dout.ptr(),
                2.0,
                n as i32,
            )
            .unwrap();
            let out = dout.download().unwrap();
            assert_eq!(out[..n], want[..], "n {n}, {}", tuned.choice.candidate);
            assert!(
                out[n..].iter().all(|&v| v == guard),
                "n {n}: wrote past the end"
            );
            launches.push(tuned);
        }
        check_choice_rule(&launches[0], &launches[1], &format!("axpy n {n}"));
    }
}

#[test]
fn every_tuned_axpy_candidate_is_right() {
    let gpu = device();
    let device = gpu.device();
    let n = 2500;
    let (x, y) = (values(3, n), values(4, n));
    let want: Vec<f32> = (0..n).map(|i| 2.0 * x[i] + y[i]).collect();
    let (dx, dy) = (device.upload(&x).unwrap(), device.upload(&y).unwrap());
    for consts in tuned_axpy::CANDIDATES {
        let dout = device.zeros::<f32>(n).unwrap();
        support::launch_tile!(
            gpu,
            tuned_axpy,
            consts,
            |c: &tuned_axpy::Consts| (n.div_ceil(c.BLOCK) as u32,),
            dx.ptr(),
            dy.ptr(),
            dout.ptr(),
            2.0,
            n as i32,
        )
        .unwrap();
        assert_eq!(dout.download().unwrap(), want, "{consts:?}");
    }
}

/// `a · b` in f64 from the f16 inputs, and the sum of the products' magnitudes.
fn matmul_reference(a: &[f16], b: &[f16], [m, n, k]: [usize; 3]) -> (Vec<f64>, Vec<f64>) {
    let (mut want, mut magnitude) = (vec![0f64; m * n], vec![0f64; m * n]);
    for i in 0..m {
        for p in 0..k {
            let a_ip = a[i * k + p].to_f32() as f64;
            for j in 0..n {
                let product = a_ip * b[p * n + j].to_f32() as f64;
                want[i * n + j] += product;
                magnitude[i * n + j] += product.abs();
            }
        }
    }
    (want, magnitude)
}

#[test]
fn tuned_matmul_is_right_whatever_it_chooses() {
    let gpu = device();
    let module = gpu
        .module()
        .expect("launch_tuned needs the kernels' PTX module (build without TESSERA_NO_PTX)");
    let device = gpu.device();
    let [m, n, k] = [70usize, 130, 72];
    let a: Vec<f16> = values(5, m * k).iter().map(|&v| f16::from_f32(v)).collect();
    let b: Vec<f16> = values(6, k * n).iter().map(|&v| f16::from_f32(v)).collect();
    let (want, magnitude) = matmul_reference(&a, &b, [m, n, k]);
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let grid = |c: &tuned_matmul::Consts| ((m.div_ceil(c.BM) * n.div_ceil(c.BN)) as u32,);
    let check = |c: &[f16], what: &str| {
        for i in 0..m * n {
            // f16 output: half an ulp of the result, plus the tensor cores' sum error.
            let tol = 2f64.powi(-11) * want[i].abs() + gpu.mma_slack(magnitude[i]) + 1e-6;
            let got = c[i].to_f32() as f64;
            assert!(
                (got - want[i]).abs() <= tol,
                "{what}: c[{i}] = {got}, want {}",
                want[i]
            );
        }
    };
    let mut launches = Vec::new();
    for _ in 0..2 {
        let dc = device.zeros::<f16>(m * n).unwrap();
        let tuned = tuned_matmul::launch_tuned(
            device,
            module,
            grid,
            da.ptr(),
            db.ptr(),
            dc.ptr(),
            m as i32,
            n as i32,
            k as i32,
        )
        .unwrap();
        check(&dc.download().unwrap(), tuned.choice.candidate);
        launches.push(tuned);
    }
    check_choice_rule(&launches[0], &launches[1], "matmul");
    for consts in tuned_matmul::CANDIDATES {
        let dc = device.zeros::<f16>(m * n).unwrap();
        support::launch_tile!(
            gpu,
            tuned_matmul,
            consts,
            grid,
            da.ptr(),
            db.ptr(),
            dc.ptr(),
            m as i32,
            n as i32,
            k as i32,
        )
        .unwrap();
        check(&dc.download().unwrap(), &format!("{consts:?}"));
    }
}
