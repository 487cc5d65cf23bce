//! A second batch of kernels of the kind a new user writes, none of them a copy of a kernel in
//! `kernels/` or `new_user_kernels.rs`: f16 softmax over ragged rows with fully masked rows,
//! reverse scans under masks, `a · bᵀ` in bf16 over a ragged K loop, two chained dots, integer
//! division and shifts with negative operands, atomics into one address from many programs,
//! rank-3 reshapes, scalar stores of reductions, gathers with indices read from memory. Each
//! runs on the emulator and is compared with a CPU reference written out in plain Rust.
//!
//! On a GPU: `scripts/probe_kernels_gpu.sh` builds this file's kernels to PTX (a scratch crate
//! holding them) and runs these tests with `TESSERA_PROBE_PTX` naming that PTX; the same
//! references then check the GPU's results.

use std::sync::OnceLock;
use tessera::launch::{Device, DeviceBuffer, DeviceElement, Module};
use tessera::{bf16, f16, tile_kernel, Ptr};
use tessera_test_support::values::{assert_close, eighths};

/// The PTX of this file's kernels, for a run on the GPU (unset: the emulator).
const PTX_ENV: &str = "TESSERA_PROBE_PTX";

/// The device the tests run on, with the kernels' module on a GPU.
fn target() -> &'static (Device, Option<Module>) {
    static TARGET: OnceLock<(Device, Option<Module>)> = OnceLock::new();
    TARGET.get_or_init(|| match std::env::var_os(PTX_ENV) {
        None => (Device::emulator(), None),
        Some(path) => {
            let ptx = std::fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("{PTX_ENV}={path:?}: {err}"));
            let device = Device::gpu(0).expect("a GPU, since TESSERA_PROBE_PTX is set");
            let module = device.load_ptx(&ptx).expect("the probe kernels' PTX");
            (device, Some(module))
        }
    })
}

fn device() -> &'static Device {
    &target().0
}

/// `kernel::launch` on the GPU, `kernel::emulate` on the emulator, with the same arguments.
macro_rules! run {
    ($kernel:ident($($arg:expr),* $(,)?)) => {
        match &target().1 {
            Some(module) => {
                $kernel::launch(device(), module, $($arg),*).unwrap();
            }
            None => {
                $kernel::emulate($($arg),*).unwrap();
            }
        }
    };
}

fn up<T: DeviceElement>(data: &[T]) -> DeviceBuffer<T> {
    device().upload(data).unwrap()
}

/// Multiples of 1/8 in [-4, 4): exact in f16 and in short sums of them.
fn floats(seed: u32, n: usize) -> Vec<f32> {
    eighths(seed, n, 4)
}

/// `values` rounded to f16.
fn to_f16(values: &[f32]) -> Vec<f16> {
    values.iter().map(|&v| f16::from_f32(v)).collect()
}

/// `n` integers in `[-bound, bound]` (cycling through them with the index, offset by `seed`).
fn small_ints(seed: usize, n: usize, bound: usize) -> Vec<f32> {
    let levels = 2 * bound + 1;
    (0..n)
        .map(|i| ((i * 3 + seed * 7) % levels) as f32 - bound as f32)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// f16 softmax over ragged rows; rows past `m` are not written, columns past `n` read -inf.

#[tile_kernel(BN = 64, num_warps = 2)]
fn softmax_f16_rows<const BN: usize>(x: Ptr<f16>, out: Ptr<f16>, m: i32, n: i32) {
    let row = program_id(0);
    let cols = arange(0, BN);
    let ok = (cols < n) & (row < m);
    let v = load(x + row * n + cols, ok, f32::NEG_INFINITY.to::<f16>()).to::<f32>();
    let e = exp(v - v.max(0));
    let p = e / e.sum(0);
    store(out + row * n + cols, p.to::<f16>(), ok);
}

#[test]
fn f16_softmax_over_ragged_rows() {
    for (m, n) in [(1usize, 1usize), (3, 5), (2, 64), (5, 33)] {
        let x = floats(3, m * n);
        let xh = to_f16(&x);
        let out = up(&vec![f16::from_f32(-7.0); m * n]);
        // One program more than there are rows: it must write nothing.
        run!(softmax_f16_rows(
            softmax_f16_rows::Consts { BN: 64 },
            (m as u32 + 1,),
            up(&xh).ptr(),
            out.ptr(),
            m as i32,
            n as i32,
        ));
        let got: Vec<f32> = out.download().unwrap().iter().map(|v| v.to_f32()).collect();
        let mut want = Vec::new();
        for r in 0..m {
            let row = &x[r * n..(r + 1) * n];
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = row.iter().map(|v| (v - max).exp()).collect();
            let s: f32 = e.iter().sum();
            want.extend(e.iter().map(|v| f16::from_f32(v / s).to_f32()));
        }
        assert_close(&got, &want, 2e-3, &format!("softmax {m}x{n}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Reverse cumulative sums along the rows of a [4, 32] i32 tile, masked columns read 0.

#[tile_kernel(num_warps = 1)]
fn suffix_sums(x: Ptr<i32>, out: Ptr<i32>, n: i32) {
    let rows = arange(0, 4);
    let cols = arange(0, 32);
    let ok = (cols < n).expand_dims(0) & (rows < 4).expand_dims(1);
    let offs = rows.expand_dims(1) * 32 + cols.expand_dims(0);
    let v = load(x + offs, ok, 0);
    store(out + offs, v.cumsum(1, true), ok);
}

#[test]
fn reverse_scans_under_a_mask() {
    for n in [1usize, 7, 31, 32] {
        let x: Vec<i32> = (0..128).map(|i| (i * 37 % 23) - 11).collect();
        let out = up(&vec![i32::MIN; 128]);
        run!(suffix_sums((1,), up(&x).ptr(), out.ptr(), n as i32));
        let got = out.download().unwrap();
        let mut want = vec![i32::MIN; 128];
        for r in 0..4 {
            let mut acc = 0;
            for c in (0..n).rev() {
                acc += x[r * 32 + c];
                want[r * 32 + c] = acc;
            }
        }
        assert_eq!(got, want, "suffix sums with n = {n}");
    }
}

// ---------------------------------------------------------------------------------------------
// c = a · bᵀ in bf16 with f32 accumulation, b stored [N, K] row-major, K looped in ragged steps.

#[tile_kernel(BM = 32, BN = 32, BK = 16, num_warps = 4)]
fn matmul_abt_bf16<const BM: usize, const BN: usize, const BK: usize>(
    a: Ptr<bf16>,
    b: Ptr<bf16>,
    c: Ptr<f32>,
    m: i32,
    n: i32,
    k: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let mut acc = zeros::<f32>([BM, BN]);
    for k0 in 0..cdiv(k, BK) {
        let rk = k0 * BK + arange(0, BK);
        let a_ok = (rm < m).expand_dims(1) & (rk < k).expand_dims(0);
        let b_ok = (rn < n).expand_dims(1) & (rk < k).expand_dims(0);
        let at = load(a + rm.expand_dims(1) * k + rk.expand_dims(0), a_ok, 0.0);
        let bt = load(b + rn.expand_dims(1) * k + rk.expand_dims(0), b_ok, 0.0);
        acc = dot(at, bt.trans(), acc);
    }
    let ok = (rm < m).expand_dims(1) & (rn < n).expand_dims(0);
    store(c + rm.expand_dims(1) * n + rn.expand_dims(0), acc, ok);
}

#[test]
fn bf16_a_times_b_transposed_over_a_ragged_k() {
    for (m, n, k) in [
        (32usize, 32usize, 16usize),
        (5, 40, 37),
        (33, 7, 1),
        (64, 64, 48),
    ] {
        let a = floats(5, m * k);
        let b = floats(6, n * k);
        let ab: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
        let bb: Vec<bf16> = b.iter().map(|&v| bf16::from_f32(v)).collect();
        let c = up(&vec![0.0f32; m * n]);
        run!(matmul_abt_bf16(
            matmul_abt_bf16::Consts {
                BM: 32,
                BN: 32,
                BK: 16,
            },
            (m.div_ceil(32) as u32, n.div_ceil(32) as u32),
            up(&ab).ptr(),
            up(&bb).ptr(),
            c.ptr(),
            m as i32,
            n as i32,
            k as i32,
        ));
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|l| a[i * k + l] * b[j * k + l]).sum();
            }
        }
        assert_close(
            &c.download().unwrap(),
            &want,
            1e-6,
            &format!("a·bᵀ {m}x{n}x{k}"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Two chained dots: (a · b) rounded to f16, times c.

#[tile_kernel(num_warps = 4)]
fn chained_dots(a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f16>, out: Ptr<f32>) {
    let r = arange(0, 64);
    let s = arange(0, 32);
    let at = load(a + r.expand_dims(1) * 32 + s.expand_dims(0));
    let bt = load(b + s.expand_dims(1) * 32 + s.expand_dims(0));
    let ct = load(c + s.expand_dims(1) * 32 + s.expand_dims(0));
    let ab = dot(at, bt).to::<f16>();
    let abc = dot(ab, ct);
    store(out + r.expand_dims(1) * 32 + s.expand_dims(0), abc);
}

#[test]
fn two_chained_dots() {
    // Integers in [-2, 2]: every product and sum is exact in f16 and f32.
    let (a, b, c) = (
        small_ints(1, 64 * 32, 2),
        small_ints(2, 32 * 32, 2),
        small_ints(3, 32 * 32, 2),
    );
    let out = up(&vec![0.0f32; 64 * 32]);
    run!(chained_dots(
        (1,),
        up(&to_f16(&a)).ptr(),
        up(&to_f16(&b)).ptr(),
        up(&to_f16(&c)).ptr(),
        out.ptr(),
    ));
    let mut ab = vec![0.0f32; 64 * 32];
    for i in 0..64 {
        for j in 0..32 {
            ab[i * 32 + j] = (0..32).map(|l| a[i * 32 + l] * b[l * 32 + j]).sum();
        }
    }
    let mut want = vec![0.0f32; 64 * 32];
    for i in 0..64 {
        for j in 0..32 {
            want[i * 32 + j] = (0..32).map(|l| ab[i * 32 + l] * c[l * 32 + j]).sum();
        }
    }
    assert_close(&out.download().unwrap(), &want, 0.0, "(a·b)·c");
}

// ---------------------------------------------------------------------------------------------
// Integer division, remainder and shifts with negative operands (Rust semantics).

#[tile_kernel(num_warps = 1)]
fn int_ops(x: Ptr<i32>, d: i32, out: Ptr<i32>) {
    let i = arange(0, 64);
    let v = load(x + i);
    store(out + i, v / d, i >= 0);
    store(out + 64 + i, v % d);
    store(out + 128 + i, v >> 3);
    store(out + 192 + i, (v << 2) ^ (i & 5));
}

#[test]
fn integer_division_remainder_and_shifts() {
    let x: Vec<i32> = (0..64).map(|i| (i * 97 % 61) - 30).collect();
    for d in [-7i32, 3, 1, -1] {
        let out = up(&vec![0i32; 256]);
        run!(int_ops((1,), up(&x).ptr(), d, out.ptr()));
        let got = out.download().unwrap();
        let mut want = Vec::new();
        want.extend(x.iter().map(|v| v / d));
        want.extend(x.iter().map(|v| v % d));
        want.extend(x.iter().map(|v| v >> 3));
        want.extend(x.iter().enumerate().map(|(i, v)| (v << 2) ^ (i as i32 & 5)));
        assert_eq!(got, want, "d = {d}");
    }
}

// ---------------------------------------------------------------------------------------------
// Every program adds its masked block sum into one address; counts with integer atomics.

#[tile_kernel(BLOCK = 128)]
fn total_and_count<const BLOCK: usize>(x: Ptr<f32>, total: Ptr<f32>, positives: Ptr<i32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let ok = offs < n;
    let v = load(x + offs, ok, 0.0);
    atomic_add(total, v.sum(0));
    let pos = where_(v > 0.0, 1, 0);
    atomic_add(positives + zeros::<i32>([BLOCK]), pos, ok);
}

#[test]
fn atomics_into_one_address_from_many_programs() {
    for n in [1usize, 127, 128, 1000] {
        // Multiples of 1/4 in [-8, 8): the sums are exact in any order.
        let x: Vec<f32> = (0..n).map(|i| ((i * 29) % 64) as f32 / 4.0 - 8.0).collect();
        let total = up(&[0.5f32]);
        let positives = up(&[3i32]);
        run!(total_and_count(
            total_and_count::Consts { BLOCK: 128 },
            (n.div_ceil(128) as u32,),
            up(&x).ptr(),
            total.ptr(),
            positives.ptr(),
            n as i32,
        ));
        let want_total = 0.5 + x.iter().sum::<f32>();
        let want_pos = 3 + x.iter().filter(|&&v| v > 0.0).count() as i32;
        assert_eq!(total.download().unwrap(), [want_total], "total, n = {n}");
        assert_eq!(positives.download().unwrap(), [want_pos], "count, n = {n}");
    }
}

// ---------------------------------------------------------------------------------------------
// Rank-3 reshapes, a middle-axis reduction, and a scalar store of a full reduction.

#[tile_kernel(num_warps = 2)]
fn cube_sums(x: Ptr<f32>, out: Ptr<f32>, total: Ptr<f32>) {
    let i = arange(0, 64);
    let cube = load(x + i).reshape([4, 4, 4]);
    let mid = cube.sum(1).reshape([16]);
    store(out + arange(0, 16), mid);
    store(total, mid.sum(0));
}

#[test]
fn rank3_reshape_middle_sum_and_a_scalar_store() {
    let x = floats(9, 64);
    let out = up(&[0.0f32; 16]);
    let total = up(&[0.0f32]);
    run!(cube_sums((1,), up(&x).ptr(), out.ptr(), total.ptr()));
    let mut want = vec![0.0f32; 16];
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                want[a * 4 + c] += x[a * 16 + b * 4 + c];
            }
        }
    }
    assert_close(&out.download().unwrap(), &want, 0.0, "middle sums");
    assert_close(
        &total.download().unwrap(),
        &[want.iter().sum()],
        0.0,
        "total",
    );
}

// ---------------------------------------------------------------------------------------------
// A gather whose indices come from memory, and clamp/sigmoid on f16 with scalar bounds.

#[tile_kernel(num_warps = 1)]
fn permute_and_squash(x: Ptr<f16>, idx: Ptr<i32>, out: Ptr<f16>, lo: f32, hi: f32) {
    let i = arange(0, 32);
    let v = load(x + i).to::<f32>();
    let picked = gather(v, load(idx + i), 0);
    store(out + i, sigmoid(clamp(picked, lo, hi)).to::<f16>());
}

#[test]
fn gather_from_loaded_indices_then_clamp_and_sigmoid() {
    let x = floats(11, 32);
    let xh = to_f16(&x);
    let idx: Vec<i32> = (0..32).map(|i| (i * 13 + 5) % 32).collect();
    let out = up(&[f16::from_f32(0.0); 32]);
    run!(permute_and_squash(
        (1,),
        up(&xh).ptr(),
        up(&idx).ptr(),
        out.ptr(),
        -1.5,
        2.25
    ));
    let got: Vec<f32> = out.download().unwrap().iter().map(|v| v.to_f32()).collect();
    let want: Vec<f32> = idx
        .iter()
        .map(|&j| {
            let c = x[j as usize].clamp(-1.5, 2.25);
            f16::from_f32(1.0 / (1.0 + (-c).exp())).to_f32()
        })
        .collect();
    assert_close(&got, &want, 1e-3, "sigmoid(clamp(gather))");
}

// ---------------------------------------------------------------------------------------------
// A grid-stride loop over `num_programs`, a `while` on a scalar, nested loops, and a dot with
// N = 8 inside a loop whose trip count depends on the program (a causal-style bound).

#[tile_kernel(BLOCK = 64, num_warps = 2)]
fn grid_stride_max<const BLOCK: usize>(x: Ptr<i32>, out: Ptr<i32>, n: i32) {
    let mut best = full::<i32>([BLOCK], i32::MIN);
    let mut start = program_id(0) * BLOCK;
    while start < n {
        let offs = start + arange(0, BLOCK);
        best = maximum(best, load(x + offs, offs < n, i32::MIN));
        start = start + num_programs(0) * BLOCK;
    }
    atomic_max(out, best.max(0));
}

#[test]
fn a_grid_stride_while_loop() {
    for (n, programs) in [(1usize, 1u32), (200, 2), (1000, 3), (64, 5)] {
        let x: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 1009 - 600).collect();
        let out = up(&[i32::MIN]);
        run!(grid_stride_max(
            grid_stride_max::Consts { BLOCK: 64 },
            (programs,),
            up(&x).ptr(),
            out.ptr(),
            n as i32,
        ));
        assert_eq!(
            out.download().unwrap(),
            [*x.iter().max().unwrap()],
            "n = {n}"
        );
    }
}

#[tile_kernel(num_warps = 1)]
fn lower_triangle_products(a: Ptr<f16>, b: Ptr<f16>, out: Ptr<f32>) {
    // Row block p of out = sum over q <= p of a[p, q] · b[q] (16 × 16 blocks times 16 × 16),
    // two 16-column halves of out per block, in nested loops.
    let p = program_id(0);
    let r = arange(0, 16);
    let k = arange(0, 16);
    for half in 0..2 {
        let c = half * 16 + arange(0, 16);
        let mut acc = zeros::<f32>([16, 16]);
        for q in 0..p + 1 {
            let at = load(a + (p * 16 + r).expand_dims(1) * 64 + (q * 16 + k).expand_dims(0));
            let bt = load(b + (q * 16 + k).expand_dims(1) * 32 + c.expand_dims(0));
            acc = dot(at, bt, acc);
        }
        store(
            out + (p * 16 + r).expand_dims(1) * 32 + c.expand_dims(0),
            acc,
        );
    }
}

#[test]
fn nested_loops_with_a_program_dependent_trip_count_around_a_dot() {
    let (a, b) = (small_ints(1, 64 * 64, 3), small_ints(2, 64 * 32, 3));
    let out = up(&vec![0.0f32; 64 * 32]);
    run!(lower_triangle_products(
        (4,),
        up(&to_f16(&a)).ptr(),
        up(&to_f16(&b)).ptr(),
        out.ptr()
    ));
    let mut want = vec![0.0f32; 64 * 32];
    for i in 0..64 {
        for j in 0..32 {
            let kmax = (i / 16 + 1) * 16;
            want[i * 32 + j] = (0..kmax).map(|l| a[i * 64 + l] * b[l * 32 + j]).sum();
        }
    }
    assert_close(
        &out.download().unwrap(),
        &want,
        0.0,
        "lower-triangle products",
    );
}

// ---------------------------------------------------------------------------------------------
// Reductions over size-1 axes, argmax ties, float-to-int casts that saturate (Rust `as`), and a
// column scan of a [64, 2] tile.

#[tile_kernel(num_warps = 2)]
fn odd_shapes(x: Ptr<f32>, sums: Ptr<f32>, arg: Ptr<i32>, bytes: Ptr<i8>, scan: Ptr<f32>) {
    let i = arange(0, 64);
    let v = load(x + i);
    let col = v.expand_dims(1);
    store(sums + i, col.sum(1));
    let ties = (v * 0.0 + 1.0).reshape([8, 8]);
    store(arg + arange(0, 8), ties.argmax(1));
    store(bytes + i, (v * 40.0) as i8);
    let two = join(v, v * 2.0);
    let s = two.cumsum(0);
    store(scan + i.expand_dims(1) * 2 + arange(0, 2).expand_dims(0), s);
}

#[test]
fn size_one_axes_ties_saturating_casts_and_a_narrow_scan() {
    let x = floats(13, 64);
    let sums = up(&vec![0.0f32; 64]);
    let arg = up(&[-1i32; 8]);
    let bytes = up(&[0i8; 64]);
    let scan = up(&vec![0.0f32; 128]);
    run!(odd_shapes(
        (1,),
        up(&x).ptr(),
        sums.ptr(),
        arg.ptr(),
        bytes.ptr(),
        scan.ptr(),
    ));
    assert_close(&sums.download().unwrap(), &x, 0.0, "sum over a size-1 axis");
    assert_eq!(
        arg.download().unwrap(),
        vec![0; 8],
        "argmax of equal values"
    );
    let want_bytes: Vec<i8> = x.iter().map(|&v| (v * 40.0) as i8).collect();
    assert_eq!(bytes.download().unwrap(), want_bytes, "saturating casts");
    let mut want_scan = vec![0.0f32; 128];
    let (mut s0, mut s1) = (0.0f32, 0.0f32);
    for (r, &v) in x.iter().enumerate() {
        s0 += v;
        s1 += v * 2.0;
        want_scan[r * 2] = s0;
        want_scan[r * 2 + 1] = s1;
    }
    assert_close(
        &scan.download().unwrap(),
        &want_scan,
        0.0,
        "column scan of [64, 2]",
    );
}
