//! Kernels with `Tensor` parameters (`tessera_kernels::tiled::tensors`) through their generated
//! `launch` on a stream, against CPU references, on the test device (the GPU when present, else
//! the emulator): contiguous and strided views, and each mistake the launcher rejects.

mod support;

use support::{device, device_and_module, draws, Rng};
use tessera::f16;
use tessera::launch::{Module, Stream};
use tessera::tensor::Tensor;
use tessera_kernels::tiled::matmul::tile_matmul;
use tessera_kernels::tiled::norm::tile_softmax;
use tessera_kernels::tiled::tensors::tensor_vec_add;

fn values(seed: u64, n: usize) -> Vec<f32> {
    draws(seed, n, Rng::next_f32)
}

const VEC: tensor_vec_add::Consts = tensor_vec_add::Consts { BLOCK: 1024 };

/// `tensor_vec_add`'s inputs, `n` values each drawn from two seeds, as tensors on the test
/// device, and its output (zeros).
struct VecAddCase {
    a: Vec<f32>,
    b: Vec<f32>,
    ta: Tensor<f32>,
    tb: Tensor<f32>,
    out: Tensor<f32>,
}

impl VecAddCase {
    fn new([seed_a, seed_b]: [u64; 2], n: usize) -> Self {
        let (device, _) = device_and_module();
        let (a, b) = (values(seed_a, n), values(seed_b, n));
        VecAddCase {
            ta: Tensor::from_slice(device, &a, &[n]).unwrap(),
            tb: Tensor::from_slice(device, &b, &[n]).unwrap(),
            out: Tensor::zeros(device, &[n]).unwrap(),
            a,
            b,
        }
    }
}

/// For each length of `lengths`, a [`VecAddCase`] from `seeds` that `launch` launches on a
/// stream with the kernels' module; the output, once the stream is synchronised, is `a + b`.
fn vec_add_cases<const N: usize>(
    seeds: [u64; 2],
    lengths: [usize; N],
    mut launch: impl FnMut(&Stream, &Module, &mut VecAddCase),
) {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    for n in lengths {
        let mut case = VecAddCase::new(seeds, n);
        launch(&stream, module, &mut case);
        stream.synchronize().unwrap();
        let got = case.out.to_vec().unwrap();
        assert!((0..n).all(|i| got[i] == case.a[i] + case.b[i]), "n {n}");
    }
}

#[test]
fn vec_add_on_contiguous_and_strided_tensors() {
    vec_add_cases([1, 2], [1, 5, 1024, 3000], |stream, module, case| {
        let grid = (case.a.len().div_ceil(1024) as u32,);
        let (ta, tb, out) = (&case.ta, &case.tb, &mut case.out);
        tensor_vec_add::launch(stream, module, VEC, grid, ta, tb, out).unwrap();
    });
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    // Every other element of a, the second column of a [n, 2] tensor as b: strided views.
    let n = 700;
    let a = values(3, 2 * n);
    let ta = Tensor::from_slice(device, &a, &[2 * n]).unwrap();
    let tb = Tensor::from_slice(device, &a, &[n, 2]).unwrap();
    let a_even = ta.view().as_strided(&[n], &[2], 0).unwrap();
    let b_col = tb
        .view()
        .slice(1, 1..2)
        .unwrap()
        .as_strided(&[n], &[2], 1)
        .unwrap();
    let mut out = Tensor::<f32>::zeros(device, &[n]).unwrap();
    tensor_vec_add::launch(&stream, module, VEC, (1,), &a_even, &b_col, &mut out).unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    assert!((0..n).all(|i| got[i] == a[2 * i] + a[2 * i + 1]));
}

#[test]
fn the_launcher_rejects_rank_extent_and_unsynchronised_reads() {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let ta = Tensor::from_slice(device, &[1.0f32; 8], &[2, 4]).unwrap();
    let tb = Tensor::from_slice(device, &[1.0f32; 8], &[8]).unwrap();
    let mut out = Tensor::<f32>::zeros(device, &[8]).unwrap();
    // Rank: a [2, 4] tensor where the kernel takes rank 1.
    let err = tensor_vec_add::launch(&stream, module, VEC, (1,), &ta, &tb, &mut out)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "argument `a` of kernel `tensor_vec_add`: the kernel takes a tensor of rank 1, this one \
         has sizes [2, 4] (rank 2)"
    );
    // Shape: inputs of another length than the output (the kernel's `requires`).
    let short = Tensor::from_slice(device, &[1.0f32; 7], &[7]).unwrap();
    let err = tensor_vec_add::launch(&stream, module, VEC, (1,), &tb, &short, &mut out)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "cannot launch kernel `tensor_vec_add`: the arguments break its requirement \
         `b.size(0) == out.size(0)` (b.size(0) = 7, out.size(0) = 8)"
    );
    // Shape: a matmul whose inner dimensions differ.
    let (a, b) = (
        Tensor::<f16>::zeros(device, &[4, 3]).unwrap(),
        Tensor::<f16>::zeros(device, &[2, 4]).unwrap(),
    );
    let mut c = Tensor::<f16>::zeros(device, &[4, 4]).unwrap();
    let consts = tile_matmul::Consts {
        BM: 64,
        BN: 64,
        BK: 32,
        num_stages: 1,
    };
    let err = tile_matmul::launch(&stream, module, consts, (1, 1), &a, &b, &mut c)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`b.size(0) == a.size(1)` (b.size(0) = 2, a.size(1) = 3)"),
        "{err}"
    );
    // Extent: a view reaching past its allocation cannot even be made.
    let err = tb.view().as_strided(&[8], &[2], 0).unwrap_err().to_string();
    assert!(
        err.contains("reach element 14 of an allocation of 8 elements"),
        "{err}"
    );
    // An unsynchronised host read of the output is an error on both back ends.
    tensor_vec_add::launch(&stream, module, VEC, (1,), &tb, &tb, &mut out).unwrap();
    assert!(out
        .to_vec()
        .unwrap_err()
        .to_string()
        .contains("without synchronisation"));
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), [2.0; 8]);
}

#[test]
fn softmax_of_a_transposed_view() {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let (rows, cols) = (37, 300);
    let x = values(4, rows * cols);
    // The input stored column-major: a [cols, rows] tensor viewed transposed.
    let mut stored = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            stored[c * rows + r] = x[r * cols + c];
        }
    }
    let t = Tensor::from_slice(device, &stored, &[cols, rows]).unwrap();
    let inp = t.view().transpose(0, 1).unwrap();
    let mut out = Tensor::<f32>::zeros(device, &[rows, cols]).unwrap();
    let consts = tile_softmax::Consts { BLOCK: 1024 };
    tile_softmax::launch(&stream, module, consts, (rows as u32,), &mut out, &inp).unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let sum: f64 = row.iter().map(|v| ((v - max) as f64).exp()).sum();
        for c in 0..cols {
            let want = ((row[c] - max) as f64).exp() / sum;
            let diff = (got[r * cols + c] as f64 - want).abs();
            assert!(
                diff < 1e-6,
                "row {r} col {c}: {} vs {want}",
                got[r * cols + c]
            );
        }
    }
}

#[test]
fn matmul_with_a_transposed_operand_on_two_streams_and_a_graph() {
    let gpu = device();
    let (device, module) = device_and_module();
    let (m, n, k) = (70, 50, 40);
    let a: Vec<f16> = values(5, m * k).into_iter().map(f16::from_f32).collect();
    let bt: Vec<f16> = values(6, n * k).into_iter().map(f16::from_f32).collect(); // b stored [n, k]
    let ta = Tensor::from_slice(device, &a, &[m, k]).unwrap();
    let tbt = Tensor::from_slice(device, &bt, &[n, k]).unwrap();
    let b = tbt.view().transpose(0, 1).unwrap(); // [k, n], strides [1, k]
    let mut c = Tensor::<f16>::zeros(device, &[m, n]).unwrap();
    let mut c2 = Tensor::<f16>::zeros(device, &[m, n]).unwrap();
    let consts = tile_matmul::Consts {
        BM: 64,
        BN: 64,
        BK: 32,
        num_stages: 1,
    };
    let grid = (m.div_ceil(64) as u32, n.div_ceil(64) as u32);
    let (first, second) = (device.stream().unwrap(), device.stream().unwrap());
    // c on the first stream; c2 = c · I-like reuse: the second stream computes c2 from `a` and
    // `b` too, after waiting for the first (it reads nothing the first writes, but the event
    // orders the two for the host read of c below).
    tile_matmul::launch(&first, module, consts, grid, &ta, &b, &mut c).unwrap();
    let done = first.record_event().unwrap();
    second.wait_event(&done).unwrap();
    // A graph of the same launch, captured on the second stream and replayed twice.
    second.begin_capture().unwrap();
    tile_matmul::launch(&second, module, consts, grid, &ta, &b, &mut c2).unwrap();
    let graph = second.end_capture().unwrap();
    graph.launch(&second).unwrap();
    graph.launch(&second).unwrap();
    second.synchronize().unwrap();
    let c2v = c2.to_vec().unwrap();
    // c was written by the first stream: the second's synchronisation does not cover it.
    assert!(c.to_vec().is_err());
    done.synchronize().unwrap();
    let cv = c.to_vec().unwrap();
    assert_eq!(cv, c2v);
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0f64;
            let mut magnitude = 0f64;
            for kk in 0..k {
                let term = a[i * k + kk].to_f32() as f64 * bt[j * k + kk].to_f32() as f64;
                sum += term;
                magnitude += term.abs();
            }
            let got = cv[i * n + j].to_f32() as f64;
            let tol = sum.abs() * 1e-3 + 1e-3 + gpu.mma_slack(magnitude);
            assert!((got - sum).abs() <= tol, "c[{i}, {j}] = {got}, want {sum}");
        }
    }
}

#[test]
fn launch_sized_takes_the_grid_from_the_tensor_sizes() {
    vec_add_cases([6, 7], [1, 1024, 1025, 5000], |stream, module, case| {
        let n = case.a.len();
        let mut seen = None;
        let grid = |c: &tensor_vec_add::Consts, s: &tensor_vec_add::Sizes| {
            seen = Some(*s);
            (s.out[0].div_ceil(c.BLOCK) as u32,)
        };
        let (ta, tb, out) = (&case.ta, &case.tb, &mut case.out);
        tensor_vec_add::launch_sized(stream, module, VEC, grid, ta, tb, out).unwrap();
        let sizes = tensor_vec_add::Sizes {
            a: [n],
            b: [n],
            out: [n],
        };
        assert_eq!(seen, Some(sizes));
    });
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    // A view's sizes, not its allocation's: the second half of a [2, n] tensor's rows.
    let n = 3000;
    let data = values(8, 2 * n);
    let t = Tensor::from_slice(device, &data, &[2, n]).unwrap();
    let row = t.view().slice(0, 1..2).unwrap().reshape(&[n]).unwrap();
    let mut out = Tensor::<f32>::zeros(device, &[n]).unwrap();
    tensor_vec_add::launch_sized(
        &stream,
        module,
        VEC,
        |c: &tensor_vec_add::Consts, s: &tensor_vec_add::Sizes| {
            assert_eq!(s.a, [n]);
            [s.out[0].div_ceil(c.BLOCK) as u32, 1, 1]
        },
        &row,
        &row,
        &mut out,
    )
    .unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    assert!((0..n).all(|i| got[i] == 2.0 * data[n + i]));
}
