//! `#[tile_kernel(requires = […])]`: the launcher checks each condition on the arguments and
//! const values before a launch, through every launcher (`emulate`, the tensor `launch`, a
//! generic one), and refuses a launch that breaks one with `LaunchError::Requirement` naming the
//! condition and the values it read. A launch that keeps them runs as without `requires`.

use tessera::launch::{Device, LaunchError};
use tessera::tensor::Tensor;
use tessera::{tile_kernel, Ptr};

/// `out[r, c] = 2 · x[r, c]` for rows of `n_cols ≤ BLOCK` elements `stride` apart; a longer row
/// would be cut at `BLOCK` columns, which `requires` refuses.
#[tile_kernel(num_warps = 1, BLOCK = [32, 64], requires = [n_cols <= BLOCK, n_cols <= stride])]
fn double_rows<const BLOCK: usize>(x: Ptr<f32>, out: Ptr<f32>, n_cols: i32, stride: i32) {
    let cols = arange(0, BLOCK);
    let at = program_id(0) * stride + cols;
    store(
        out + at,
        load(x + at, cols < n_cols, 0.0) * 2.0,
        cols < n_cols,
    );
}

/// Rows of `x` scaled by `w` (`w` has one element per column of `x`), into `out` of `x`'s
/// shape; `chunk` divides the columns (a condition with `%` and a divisor from the caller).
#[tile_kernel(
    num_warps = 1,
    BLOCK = 64,
    requires = [
        x.size(1) <= BLOCK,
        w.size(0) == x.size(1),
        out.size(0) == x.size(0) && out.size(1) == x.size(1),
        x.size(1) % chunk == 0,
    ]
)]
fn scale_rows<const BLOCK: usize>(
    x: Tensor<f32, 2>,
    w: Tensor<f32, 1>,
    out: Tensor<f32, 2>,
    chunk: i32,
) {
    let row = program_id(0);
    let cols = arange(0, BLOCK);
    let ok = cols < x.size(1);
    let v = load(x + row * x.stride(0) + cols * x.stride(1), ok, 0.0);
    let s = load(w + cols * w.stride(0), ok, 0.0);
    store(out + row * out.stride(0) + cols * out.stride(1), v * s, ok);
}

/// The condition, values and `evaluated` of a requirement error.
fn requirement(err: LaunchError) -> (String, String, bool) {
    match err {
        LaunchError::Requirement {
            condition,
            values,
            evaluated,
            ..
        } => (condition, values, evaluated),
        other => panic!("expected a requirement error, got {other:?}"),
    }
}

#[test]
fn a_plain_kernel_checks_its_requirements_before_running() {
    let device = Device::emulator();
    let rows = 3;
    let x: Vec<f32> = (0..rows * 40).map(|i| i as f32).collect();
    let dx = device.upload(&x).unwrap();
    let out = device.zeros::<f32>(rows * 40).unwrap();
    // 40 columns, 40 apart, at BLOCK = 64: every element doubled.
    double_rows::emulate(
        double_rows::Consts { BLOCK: 64 },
        rows as u32,
        dx.ptr(),
        out.ptr(),
        40,
        40,
    )
    .unwrap();
    let got = out.download().unwrap();
    assert!((0..rows * 40).all(|i| got[i] == 2.0 * x[i]));
    // At BLOCK = 32 the rows would be cut: refused, nothing written.
    let out = device.zeros::<f32>(rows * 40).unwrap();
    let err = double_rows::emulate(
        double_rows::Consts { BLOCK: 32 },
        rows as u32,
        dx.ptr(),
        out.ptr(),
        40,
        40,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot launch kernel `double_rows`: the arguments break its requirement \
         `n_cols <= BLOCK` (n_cols = 40, BLOCK = 32)"
    );
    assert!(out.download().unwrap().iter().all(|&v| v == 0.0));
    // Rows overlapping their neighbours break the second condition.
    let err = double_rows::emulate(
        double_rows::Consts { BLOCK: 64 },
        1,
        dx.ptr(),
        out.ptr(),
        40,
        20,
    )
    .unwrap_err();
    let (condition, values, evaluated) = requirement(err);
    assert_eq!(condition, "n_cols <= stride");
    assert_eq!(values, "n_cols = 40, stride = 20");
    assert!(evaluated);
}

#[test]
fn a_tensor_kernel_checks_shapes_across_its_tensors() {
    let device = Device::emulator();
    let module = device.host_module().unwrap();
    let stream = device.stream().unwrap();
    let (rows, cols) = (5, 48);
    let x: Vec<f32> = (0..rows * cols).map(|i| (i % 13) as f32).collect();
    let w: Vec<f32> = (0..cols).map(|i| 0.5 * i as f32).collect();
    let tx = Tensor::from_slice(&device, &x, &[rows, cols]).unwrap();
    let tw = Tensor::from_slice(&device, &w, &[cols]).unwrap();
    let mut out = Tensor::<f32>::zeros(&device, &[rows, cols]).unwrap();
    let (consts, grid) = (scale_rows::Consts { BLOCK: 64 }, rows as u32);
    scale_rows::launch(&stream, &module, consts, grid, &tx, &tw, &mut out, 16).unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(got[r * cols + c], x[r * cols + c] * w[c], "[{r}, {c}]");
        }
    }
    // `w` one element short: refused before anything is enqueued.
    let short = Tensor::from_slice(&device, &w[..cols - 1], &[cols - 1]).unwrap();
    let err = scale_rows::launch(&stream, &module, consts, 1, &tx, &short, &mut out, 16);
    let (condition, values, _) = requirement(err.unwrap_err());
    assert_eq!(condition, "w.size(0) == x.size(1)");
    assert_eq!(values, "w.size(0) = 47, x.size(1) = 48");
    // An output of another shape (a view of the right one: 4 rows).
    let mut fewer = out.view_mut().slice(0, 0..4).unwrap();
    let err = scale_rows::launch(&stream, &module, consts, 1, &tx, &tw, &mut fewer, 16);
    let (condition, values, _) = requirement(err.unwrap_err());
    assert_eq!(
        condition,
        "out.size(0) == x.size(0) && out.size(1) == x.size(1)"
    );
    assert_eq!(
        values,
        "out.size(0) = 4, x.size(0) = 5, out.size(1) = 48, x.size(1) = 48"
    );
    // A chunk that does not divide the columns, and a zero chunk (a division by zero).
    let err = scale_rows::launch(&stream, &module, consts, 1, &tx, &tw, &mut out, 10);
    let (condition, values, evaluated) = requirement(err.unwrap_err());
    assert_eq!(
        (condition.as_str(), values.as_str(), evaluated),
        ("x.size(1) % chunk == 0", "x.size(1) = 48, chunk = 10", true)
    );
    let err = scale_rows::launch(&stream, &module, consts, 1, &tx, &tw, &mut out, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot launch kernel `scale_rows`: its requirement `x.size(1) % chunk == 0` cannot be \
         evaluated on the arguments (x.size(1) = 48, chunk = 0): a division by zero or an \
         overflow"
    );
    stream.synchronize().unwrap();
}

/// `out = max(x^(1/p), floor)`: `p` must be positive, and `floor` at most the caller's bound `ceil`
/// (float comparisons, in `f64`).
#[tile_kernel(num_warps = 1, BLOCK = 32, requires = [p > 0.0, floor <= ceil, n > 0])]
fn clamped_root<const BLOCK: usize>(
    x: Ptr<f32>,
    out: Ptr<f32>,
    n: i32,
    p: f32,
    floor: f32,
    ceil: f32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let v = load(x + offs, offs < n, 0.0);
    let r = exp2(log2(v) / p);
    store(out + offs, maximum(r, floor), offs < n);
}

#[test]
fn float_parameters_are_compared_in_f64_and_a_nan_breaks_the_comparison() {
    let device = Device::emulator();
    let x: Vec<f32> = (1..=32).map(|i| i as f32).collect();
    let dx = device.upload(&x).unwrap();
    let out = device.zeros::<f32>(32).unwrap();
    let consts = clamped_root::Consts { BLOCK: 32 };
    let run = |p: f32, floor: f32, ceil: f32| {
        clamped_root::emulate(consts, 1, dx.ptr(), out.ptr(), 32, p, floor, ceil)
    };
    run(2.0, 1.5, 10.0).unwrap();
    let got = out.download().unwrap();
    for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
        let want = v.sqrt().max(1.5);
        assert!((g - want).abs() <= 1e-5 * want, "[{i}] {g} vs {want}");
    }
    let err = run(-2.0, 1.5, 10.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot launch kernel `clamped_root`: the arguments break its requirement `p > 0.0` \
         (p = -2)"
    );
    let (condition, values, evaluated) = requirement(run(f32::NAN, 1.5, 10.0).unwrap_err());
    assert_eq!(
        (condition.as_str(), values.as_str(), evaluated),
        ("p > 0.0", "p = NaN", true)
    );
    let (condition, values, _) = requirement(run(2.0, 11.5, 10.0).unwrap_err());
    assert_eq!(
        (condition.as_str(), values.as_str()),
        ("floor <= ceil", "floor = 11.5, ceil = 10")
    );
}
