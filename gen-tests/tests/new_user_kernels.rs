//! Hand-written kernels of the kind a new user writes first, none of them a copy of a kernel in
//! `kernels/`: broadcasting with masks over ragged sizes, reductions on every axis of rank-2 and
//! rank-3 tiles, shape operations on size-1 tiles and scalars, casts to integers and narrow
//! floats, `where_`, loops carrying tiles and scalars, `if` on scalars, `dot` at the smallest
//! legal shapes, unusual identifiers and many parameters. Each runs on the emulator and is
//! compared with a CPU reference written out in plain Rust.

use tessera::launch::{Device, DeviceBuffer, DeviceElement};
use tessera::{bf16, f16, tile_kernel, Ptr};
use tessera_test_support::values::{assert_close, eighths};

fn device() -> Device {
    Device::emulator()
}

fn up<T: DeviceElement>(data: &[T]) -> DeviceBuffer<T> {
    device().upload(data).unwrap()
}

/// The f32 output `out` is within `tolerance` of `want` (see [`assert_close`]).
fn assert_output(out: &DeviceBuffer<f32>, want: &[f32], tolerance: f32, what: &str) {
    assert_close(&out.download().unwrap(), want, tolerance, what);
}

/// Multiples of 1/8 in [-8, 8): exact in f16 and in short sums of them.
fn floats(seed: u32, n: usize) -> Vec<f32> {
    eighths(seed, n, 8)
}

// ---------------------------------------------------------------------------------------------
// Broadcasting with masks over ragged sizes.

#[tile_kernel(BM = 8, BN = 32)]
fn bias_rows_masked<const BM: usize, const BN: usize>(
    out: Ptr<f32>,
    x: Ptr<f32>,
    bias: Ptr<f32>,
    m: i32,
    n: i32,
) {
    let rows = program_id(0) * BM + arange(0, BM);
    let cols = arange(0, BN);
    let mask = (rows < m).expand_dims(1) & (cols < n).expand_dims(0);
    let offs = rows.expand_dims(1) * n + cols.expand_dims(0);
    let b = load(bias + cols, cols < n, 0.0);
    store(
        out + offs,
        load(x + offs, mask, 0.0) + b.expand_dims(0),
        mask,
    );
}

#[test]
fn bias_rows_masked_over_ragged_sizes() {
    for (m, n) in [(1usize, 1usize), (5, 17), (8, 32), (13, 31), (20, 3)] {
        let x = floats(1, m * n);
        let bias = floats(2, n);
        let sentinel = -999.0f32;
        let out = up(&vec![sentinel; m * n + 8]);
        bias_rows_masked::emulate(
            bias_rows_masked::Consts { BM: 8, BN: 32 },
            (m.div_ceil(8) as u32,),
            out.ptr(),
            up(&x).ptr(),
            up(&bias).ptr(),
            m as i32,
            n as i32,
        )
        .unwrap();
        let mut want = vec![sentinel; m * n + 8];
        for r in 0..m {
            for c in 0..n {
                want[r * n + c] = x[r * n + c] + bias[c];
            }
        }
        assert_output(&out, &want, 0.0, &format!("m {m} n {n}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Reductions on every axis of a rank-3 tile, and argmax/argmin with a ragged mask.

#[tile_kernel]
fn reduce_every_axis(x: Ptr<f32>, s0: Ptr<f32>, m1: Ptr<f32>, n2: Ptr<f32>) {
    let i = arange(0, 2).expand_dims(1).expand_dims(2);
    let j = arange(0, 4).expand_dims(0).expand_dims(2);
    let k = arange(0, 8).expand_dims(0).expand_dims(0);
    let v = load(x + i * 32 + j * 8 + k);
    let a = arange(0, 4).expand_dims(1) * 8 + arange(0, 8).expand_dims(0);
    store(s0 + a, v.sum(0));
    let b = arange(0, 2).expand_dims(1) * 8 + arange(0, 8).expand_dims(0);
    store(m1 + b, v.max(1));
    let c = arange(0, 2).expand_dims(1) * 4 + arange(0, 4).expand_dims(0);
    store(n2 + c, v.min(2));
}

#[test]
fn reduce_every_axis_of_rank3() {
    let x = floats(3, 64);
    let at = |i: usize, j: usize, k: usize| x[i * 32 + j * 8 + k];
    let (s0, m1, n2) = (up(&[0f32; 32]), up(&[0f32; 16]), up(&[0f32; 8]));
    reduce_every_axis::emulate(1u32, up(&x).ptr(), s0.ptr(), m1.ptr(), n2.ptr()).unwrap();
    let mut want0 = vec![0f32; 32];
    let mut want1 = vec![f32::NEG_INFINITY; 16];
    let mut want2 = vec![f32::INFINITY; 8];
    for i in 0..2 {
        for j in 0..4 {
            for k in 0..8 {
                want0[j * 8 + k] += at(i, j, k);
                want1[i * 8 + k] = want1[i * 8 + k].max(at(i, j, k));
                want2[i * 4 + j] = want2[i * 4 + j].min(at(i, j, k));
            }
        }
    }
    assert_output(&s0, &want0, 0.0, "sum(0)");
    assert_output(&m1, &want1, 0.0, "max(1)");
    assert_output(&n2, &want2, 0.0, "min(2)");
}

#[tile_kernel]
fn arg_extremes_ragged(x: Ptr<i32>, amax: Ptr<i32>, amin: Ptr<i32>, n: i32) {
    let rows = arange(0, 4);
    let cols = arange(0, 16);
    let mask = cols.expand_dims(0) < n;
    let offs = rows.expand_dims(1) * 16 + cols.expand_dims(0);
    let hi = load(x + offs, mask, i32::MIN);
    let lo = load(x + offs, mask, i32::MAX);
    store(amax + rows, hi.argmax(1));
    store(amin + arange(0, 16), lo.argmin(0), cols < n);
}

#[test]
fn argmax_and_argmin_over_a_ragged_axis() {
    // A permutation of 0..64 (no ties), with large magnitudes of both signs.
    let x: Vec<i32> = (0..64)
        .map(|i: i32| ((i * 37) % 64 - 32) * 1_000_003)
        .collect();
    for n in [1usize, 7, 16] {
        let (amax, amin) = (up(&[-1i32; 4]), up(&[-1i32; 16]));
        arg_extremes_ragged::emulate(1u32, up(&x).ptr(), amax.ptr(), amin.ptr(), n as i32).unwrap();
        let want_max: Vec<i32> = (0..4)
            .map(|r| (0..n).max_by_key(|&c| x[r * 16 + c]).unwrap() as i32)
            .collect();
        let want_min: Vec<i32> = (0..16)
            .map(|c| {
                if c < n {
                    (0..4).min_by_key(|&r| x[r * 16 + c]).unwrap() as i32
                } else {
                    -1
                }
            })
            .collect();
        assert_eq!(amax.download().unwrap(), want_max, "argmax, n {n}");
        assert_eq!(amin.download().unwrap(), want_min, "argmin, n {n}");
    }
}

// ---------------------------------------------------------------------------------------------
// Shape operations on size-1 tiles and scalars.

#[tile_kernel(num_warps = 1)]
fn size_one_shapes(x: Ptr<f32>, out: Ptr<f32>) {
    let one = load(x + arange(0, 1));
    let square = one.expand_dims(0).trans();
    let flat = square.reshape([1]);
    let total = flat.sum(0);
    let back = total.expand_dims(0) * 3.0;
    let pair = join(back, flat).reshape([2]);
    store(out + arange(0, 2), pair);
}

#[test]
fn size_one_tiles_through_every_shape_op() {
    let out = up(&[0f32; 2]);
    size_one_shapes::emulate(1u32, up(&[2.5f32]).ptr(), out.ptr()).unwrap();
    assert_eq!(out.download().unwrap(), vec![7.5, 2.5]);
}

#[tile_kernel(num_warps = 2)]
fn scalar_to_tiles(out: Ptr<f32>, idx: Ptr<i32>) {
    let pid = program_id(0);
    let s = pid.to::<f32>() * 10.0;
    let row = s.expand_dims(0).broadcast_to([16]) + arange(0, 16).to::<f32>();
    let same = s.reshape([1]) + row;
    store(out + pid * 16 + arange(0, 16), same);
    let r = row.sum(0).expand_dims(0).expand_dims(1);
    store(idx + pid + arange(0, 1).expand_dims(0), r.to::<i32>());
}

#[test]
fn scalars_become_tiles() {
    let (out, idx) = (up(&[0f32; 48]), up(&[0i32; 3]));
    scalar_to_tiles::emulate(3u32, out.ptr(), idx.ptr()).unwrap();
    let want: Vec<f32> = (0..48)
        .map(|i| {
            let p = (i / 16) as f32 * 10.0;
            p + p + (i % 16) as f32
        })
        .collect();
    assert_output(&out, &want, 0.0, "out");
    let sums: Vec<i32> = (0..3).map(|p| p * 160 + 120).collect();
    assert_eq!(idx.download().unwrap(), sums);
}

#[tile_kernel(num_warps = 1)]
fn join_split_interleave(a: Ptr<f32>, b: Ptr<f32>, mixed: Ptr<f32>, diff: Ptr<f32>) {
    let offs = arange(0, 16);
    let pairs = join(load(a + offs), load(b + offs));
    store(mixed + arange(0, 32), pairs.reshape([32]));
    let (first, second) = pairs.trans().trans().split();
    store(diff + offs, first - second);
}

#[test]
fn join_split_interleave_and_undo() {
    let (a, b) = (floats(4, 16), floats(5, 16));
    let (mixed, diff) = (up(&[0f32; 32]), up(&[0f32; 16]));
    join_split_interleave::emulate(1u32, up(&a).ptr(), up(&b).ptr(), mixed.ptr(), diff.ptr())
        .unwrap();
    let want: Vec<f32> = (0..32)
        .map(|i| if i % 2 == 0 { a[i / 2] } else { b[i / 2] })
        .collect();
    assert_output(&mixed, &want, 0.0, "mixed");
    let want: Vec<f32> = (0..16).map(|i| a[i] - b[i]).collect();
    assert_output(&diff, &want, 0.0, "diff");
}

/// Tuples of three and four values destructured by `let`, as in Rust: every value is taken
/// before any name is bound, so `let (a, b, c) = (b, c, a)` rotates (tiles and scalars mixed).
#[tile_kernel(num_warps = 1)]
fn tuple_rotation(x: Ptr<f32>, out: Ptr<f32>, n: i32) {
    let offs = arange(0, 16);
    let (a, b, c) = (load(x + offs), load(x + 16 + offs), load(x + 32 + offs));
    let (a, b, c) = (b, c, a);
    let (first, second, third, count) = (a, b * 2.0, c * 3.0, n);
    store(out + offs, first, offs < count);
    store(out + 16 + offs, second, offs < count);
    store(out + 32 + offs, third, offs < count);
}

#[test]
fn tuples_destructure_all_values_first() {
    let x = floats(9, 48);
    for n in [16usize, 5] {
        let out = up(&[0f32; 48]);
        tuple_rotation::emulate(1u32, up(&x).ptr(), out.ptr(), n as i32).unwrap();
        let want: Vec<f32> = (0..48)
            .map(|i| {
                let (part, j) = (i / 16, i % 16);
                if j >= n {
                    return 0.0;
                }
                // (a, b, c) became (b, c, a): part 0 is x's second part, 1 its third (×2), 2
                // its first (×3).
                [x[16 + j], 2.0 * x[32 + j], 3.0 * x[j]][part]
            })
            .collect();
        assert_output(&out, &want, 0.0, &format!("rotated tuples, n = {n}"));
    }
}

#[tile_kernel]
fn rank3_permute(x: Ptr<f32>, out: Ptr<f32>) {
    let i = arange(0, 2).expand_dims(1).expand_dims(2);
    let j = arange(0, 4).expand_dims(0).expand_dims(2);
    let k = arange(0, 8).expand_dims(0).expand_dims(0);
    let v = load(x + i * 32 + j * 8 + k).trans([2, 0, 1]);
    let kk = arange(0, 8).expand_dims(1).expand_dims(2);
    let ii = arange(0, 2).expand_dims(0).expand_dims(2);
    let jj = arange(0, 4).expand_dims(0).expand_dims(0);
    store(out + kk * 8 + ii * 4 + jj, v);
}

#[test]
fn rank3_trans_with_a_permutation() {
    let x = floats(6, 64);
    let out = up(&[0f32; 64]);
    rank3_permute::emulate(1u32, up(&x).ptr(), out.ptr()).unwrap();
    let mut want = vec![0f32; 64];
    for i in 0..2 {
        for j in 0..4 {
            for k in 0..8 {
                want[k * 8 + i * 4 + j] = x[i * 32 + j * 8 + k];
            }
        }
    }
    assert_output(&out, &want, 0.0, "trans([2, 0, 1])");
}

#[tile_kernel]
fn gather_both_axes(src: Ptr<f32>, index: Ptr<i32>, along1: Ptr<f32>, along0: Ptr<f32>) {
    let rows = arange(0, 8);
    let s = load(src + rows.expand_dims(1) * 16 + arange(0, 16).expand_dims(0));
    let i1 = load(index + rows.expand_dims(1) * 4 + arange(0, 4).expand_dims(0));
    store(
        along1 + rows.expand_dims(1) * 4 + arange(0, 4).expand_dims(0),
        gather(s, i1, 1),
    );
    let i0 = load(index + arange(0, 2).expand_dims(1) * 16 + arange(0, 16).expand_dims(0)) % 8;
    store(
        along0 + arange(0, 2).expand_dims(1) * 16 + arange(0, 16).expand_dims(0),
        s.gather(i0, 0),
    );
}

#[test]
fn gather_along_each_axis() {
    let src = floats(7, 128);
    let index: Vec<i32> = (0..32).map(|i| (i * 7 + 3) % 16).collect();
    let (along1, along0) = (up(&[0f32; 32]), up(&[0f32; 32]));
    gather_both_axes::emulate(
        1u32,
        up(&src).ptr(),
        up(&index).ptr(),
        along1.ptr(),
        along0.ptr(),
    )
    .unwrap();
    let want1: Vec<f32> = (0..32)
        .map(|e| src[(e / 4) * 16 + index[e] as usize])
        .collect();
    let want0: Vec<f32> = (0..32)
        .map(|e| src[(index[e] % 8) as usize * 16 + e % 16])
        .collect();
    assert_output(&along1, &want1, 0.0, "gather axis 1");
    assert_output(&along0, &want0, 0.0, "gather axis 0");
}

#[tile_kernel]
fn reduce_then_expand(x: Ptr<f32>, out: Ptr<f32>) {
    let offs = arange(0, 8).expand_dims(1) * 16 + arange(0, 16).expand_dims(0);
    let v = load(x + offs);
    let centred = v - v.sum(0).expand_dims(0) / 8.0;
    let row = arange(0, 16).to::<f32>();
    store(
        out + offs,
        centred + row.expand_dims(0).sum(0).expand_dims(0),
    );
}

#[test]
fn reductions_expanded_back() {
    let x = floats(8, 128);
    let out = up(&[0f32; 128]);
    reduce_then_expand::emulate(1u32, up(&x).ptr(), out.ptr()).unwrap();
    let want: Vec<f32> = (0..128)
        .map(|e| {
            let c = e % 16;
            let mean: f32 = (0..8).map(|r| x[r * 16 + c]).sum::<f32>() / 8.0;
            x[e] - mean + c as f32
        })
        .collect();
    assert_output(&out, &want, 1e-6, "centred");
}

// ---------------------------------------------------------------------------------------------
// Casts to integers and narrow floats; where_.

#[tile_kernel(num_warps = 1)]
fn casts(
    x: Ptr<f32>,
    as_i32: Ptr<i32>,
    as_u8: Ptr<u8>,
    as_i8: Ptr<i8>,
    as_f16: Ptr<f16>,
    as_bf16: Ptr<bf16>,
    n: i32,
) {
    let offs = arange(0, 32);
    let mask = offs < n;
    let v = load(x + offs, mask, 0.0);
    store(as_i32 + offs, v.to::<i32>(), mask);
    store(as_u8 + offs, v as u8, mask);
    store(as_i8 + offs, (v * 40.0).to::<i32>() as i8, mask);
    store(as_f16 + offs, v.to::<f16>(), mask);
    store(as_bf16 + offs, (v / 3.0).to::<bf16>(), mask);
}

#[test]
fn casts_follow_rust_as() {
    let mut x = floats(9, 32);
    x[0] = 300.5;
    x[1] = -1.5;
    x[2] = f32::NAN;
    x[3] = 255.9;
    x[4] = -2.0e9;
    x[5] = 1.0e10;
    for n in [32usize, 19] {
        let a = up(&[7i32; 32]);
        let b = up(&[7u8; 32]);
        let c = up(&[7i8; 32]);
        let d = up(&[f16::from_f32(7.0); 32]);
        let e = up(&[bf16::from_f32(7.0); 32]);
        casts::emulate(
            1u32,
            up(&x).ptr(),
            a.ptr(),
            b.ptr(),
            c.ptr(),
            d.ptr(),
            e.ptr(),
            n as i32,
        )
        .unwrap();
        let keep = |i: usize| i >= n;
        let want_a: Vec<i32> = (0..32)
            .map(|i| if keep(i) { 7 } else { x[i] as i32 })
            .collect();
        let want_b: Vec<u8> = (0..32)
            .map(|i| if keep(i) { 7 } else { x[i] as u8 })
            .collect();
        let want_c: Vec<i8> = (0..32)
            .map(|i| {
                if keep(i) {
                    7
                } else {
                    ((x[i] * 40.0) as i32) as i8
                }
            })
            .collect();
        let want_d: Vec<f32> = (0..32)
            .map(|i| f16::from_f32(if keep(i) { 7.0 } else { x[i] }).to_f32())
            .collect();
        let want_e: Vec<f32> = (0..32)
            .map(|i| bf16::from_f32(if keep(i) { 7.0 } else { x[i] / 3.0 }).to_f32())
            .collect();
        assert_eq!(a.download().unwrap(), want_a, "to::<i32>, n {n}");
        assert_eq!(b.download().unwrap(), want_b, "as u8, n {n}");
        assert_eq!(c.download().unwrap(), want_c, "as i8, n {n}");
        let got_d: Vec<f32> = d.download().unwrap().iter().map(|h| h.to_f32()).collect();
        let got_e: Vec<f32> = e.download().unwrap().iter().map(|h| h.to_f32()).collect();
        assert_close(&got_d, &want_d, 0.0, &format!("to::<f16>, n {n}"));
        assert_close(&got_e, &want_e, 0.0, &format!("to::<bf16>, n {n}"));
    }
}

#[tile_kernel(BLOCK = [64, 128])]
fn leaky_where<const BLOCK: usize>(x: Ptr<f32>, out: Ptr<f32>, n: i32, cap: f32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let v = load(x + offs, mask, f32::NAN);
    let leaky = where_(v > 0.0, v, v * 0.125);
    store(out + offs, where_(leaky > cap, cap, leaky), mask);
}

#[test]
fn where_with_scalar_branches() {
    let n = 200usize;
    let x = floats(10, n);
    for block in [64usize, 128] {
        let out = up(&vec![0f32; n]);
        leaky_where::emulate(
            leaky_where::Consts { BLOCK: block },
            (n.div_ceil(block) as u32,),
            up(&x).ptr(),
            out.ptr(),
            n as i32,
            3.0,
        )
        .unwrap();
        let want: Vec<f32> = x
            .iter()
            .map(|&v| {
                let l = if v > 0.0 { v } else { v * 0.125 };
                if l > 3.0 {
                    3.0
                } else {
                    l
                }
            })
            .collect();
        assert_output(&out, &want, 0.0, &format!("BLOCK {block}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Loops carrying tiles and scalars; `if` on scalars.

#[tile_kernel(BLOCK = 32)]
fn running_mean<const BLOCK: usize>(x: Ptr<f32>, out: Ptr<f32>, chunks: i32, n: i32) {
    let offs = arange(0, BLOCK);
    let mut acc = zeros::<f32>([BLOCK]);
    let mut count = 0;
    let mut peak = f32::NEG_INFINITY;
    for c in 0..chunks {
        let at = c * BLOCK + offs;
        let v = load(x + at, at < n, 0.0);
        acc += v;
        count += 1;
        peak = maximum(peak, v.max(0));
    }
    let mean = acc / maximum(count, 1).to::<f32>();
    store(out + offs, mean + peak);
}

#[test]
fn loops_carry_tiles_and_scalars() {
    let x = floats(11, 100);
    for (chunks, n) in [(0i32, 100usize), (1, 100), (3, 70), (4, 100)] {
        let out = up(&[0f32; 32]);
        running_mean::emulate(
            running_mean::Consts { BLOCK: 32 },
            1u32,
            up(&x).ptr(),
            out.ptr(),
            chunks,
            n as i32,
        )
        .unwrap();
        let mut acc = [0f32; 32];
        let mut peak = f32::NEG_INFINITY;
        for c in 0..chunks as usize {
            let mut chunk_max = f32::NEG_INFINITY;
            for (i, a) in acc.iter_mut().enumerate() {
                let at = c * 32 + i;
                let v = if at < n { x[at] } else { 0.0 };
                *a += v;
                chunk_max = chunk_max.max(v);
            }
            peak = peak.max(chunk_max);
        }
        let count = chunks.max(1) as f32;
        let want: Vec<f32> = acc.iter().map(|a| a / count + peak).collect();
        assert_output(&out, &want, 1e-6, &format!("chunks {chunks} n {n}"));
    }
}

#[tile_kernel]
fn branchy(x: Ptr<f32>, out: Ptr<f32>, mode: i32, steps: i32) {
    let offs = arange(0, 64);
    let mut v = load(x + offs);
    let sign = if mode % 2 == 0 { 1.0 } else { -1.0 };
    for i in (0..steps).step_by(2) {
        if i > 2 {
            v = v * 0.5;
        } else {
            v = v + sign;
        }
        for _inner in 0..2 {
            v += 1.0;
        }
    }
    if mode > 10 {
        v = -v;
    }
    store(out + offs, v);
}

#[test]
fn if_on_scalars_inside_and_around_loops() {
    let x = floats(12, 64);
    for (mode, steps) in [(0, 0), (1, 1), (2, 5), (13, 8), (11, 3)] {
        let out = up(&[0f32; 64]);
        branchy::emulate(1u32, up(&x).ptr(), out.ptr(), mode, steps).unwrap();
        let sign = if mode % 2 == 0 { 1.0 } else { -1.0 };
        let want: Vec<f32> = x
            .iter()
            .map(|&x0| {
                let mut v = x0;
                for i in (0..steps).step_by(2) {
                    if i > 2 {
                        v *= 0.5;
                    } else {
                        v += sign;
                    }
                    v += 2.0;
                }
                if mode > 10 {
                    -v
                } else {
                    v
                }
            })
            .collect();
        assert_output(&out, &want, 0.0, &format!("mode {mode} steps {steps}"));
    }
}

#[tile_kernel(BLOCK = 16)]
fn strided_total<const BLOCK: usize>(x: Ptr<i32>, total: Ptr<i32>, n: i32) {
    let mut sum = 0;
    for start in (0..n).step_by(BLOCK) {
        let at = start + arange(0, BLOCK);
        sum += load(x + at, at < n, 0).sum(0);
    }
    store(total + arange(0, 1), sum);
}

#[test]
fn a_scalar_total_over_a_strided_loop() {
    let x: Vec<i32> = (0..50).map(|i| i * i - 300).collect();
    for n in [0usize, 1, 16, 37, 50] {
        let total = up(&[99i32]);
        strided_total::emulate(
            strided_total::Consts { BLOCK: 16 },
            1u32,
            up(&x).ptr(),
            total.ptr(),
            n as i32,
        )
        .unwrap();
        assert_eq!(
            total.download().unwrap()[0],
            x[..n].iter().sum::<i32>(),
            "n {n}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// `dot` at the smallest legal shapes.

#[tile_kernel(num_warps = 1)]
fn dot_16x32x16(a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>, k_valid: i32) {
    let m = arange(0, 16);
    let n = arange(0, 32);
    let k = arange(0, 16);
    let ta = load(
        a + m.expand_dims(1) * 16 + k.expand_dims(0),
        k.expand_dims(0) < k_valid,
        0.0,
    );
    let tb = load(
        b + k.expand_dims(1) * 32 + n.expand_dims(0),
        k.expand_dims(1) < k_valid,
        0.0,
    );
    let bias = full::<f32>([16, 32], 0.5);
    store(
        c + m.expand_dims(1) * 32 + n.expand_dims(0),
        dot(ta, tb, bias),
    );
}

#[test]
fn dot_at_the_smallest_f16_shape_with_a_ragged_k() {
    let a = floats(13, 256);
    let b = floats(14, 512);
    let ah: Vec<f16> = a.iter().map(|&v| f16::from_f32(v)).collect();
    let bh: Vec<f16> = b.iter().map(|&v| f16::from_f32(v)).collect();
    for k_valid in [16usize, 5] {
        let c = up(&[0f32; 512]);
        dot_16x32x16::emulate(1u32, up(&ah).ptr(), up(&bh).ptr(), c.ptr(), k_valid as i32).unwrap();
        let want: Vec<f32> = (0..512)
            .map(|e| {
                let (i, j) = (e / 32, e % 32);
                0.5 + (0..k_valid)
                    .map(|k| a[i * 16 + k] * b[k * 32 + j])
                    .sum::<f32>()
            })
            .collect();
        assert_output(&c, &want, 1e-6, &format!("k_valid {k_valid}"));
    }
}

#[tile_kernel(num_warps = 2)]
fn dot_i8_exact(a: Ptr<i8>, b: Ptr<i8>, c: Ptr<i32>) {
    let m = arange(0, 16);
    let k = arange(0, 32);
    let n = arange(0, 16);
    let ta = load(a + m.expand_dims(1) * 32 + k.expand_dims(0));
    let tb = load(b + k.expand_dims(1) * 16 + n.expand_dims(0));
    store(c + m.expand_dims(1) * 16 + n.expand_dims(0), dot(ta, tb));
}

#[test]
fn dot_of_i8_is_exact() {
    let a: Vec<i8> = (0..512)
        .map(|i: i32| ((i * 37 + 11) % 256 - 128) as i8)
        .collect();
    let b: Vec<i8> = (0..512)
        .map(|i: i32| ((i * 91 + 5) % 256 - 128) as i8)
        .collect();
    let c = up(&[0i32; 256]);
    dot_i8_exact::emulate(1u32, up(&a).ptr(), up(&b).ptr(), c.ptr()).unwrap();
    let want: Vec<i32> = (0..256)
        .map(|e| {
            let (i, j) = (e / 16, e % 16);
            (0..32)
                .map(|k| i32::from(a[i * 32 + k]) * i32::from(b[k * 16 + j]))
                .sum()
        })
        .collect();
    assert_eq!(c.download().unwrap(), want);
}

// ---------------------------------------------------------------------------------------------
// Unusual identifiers, many parameters of many types, integer arithmetic.

#[tile_kernel(ÉCHELLE = 4)]
fn données_étranges<const ÉCHELLE: usize>(
    sortie: Ptr<i64>,
    _entrée: Ptr<u32>,
    décalage: u32,
    __: i64,
    grand: u64,
    facteur: f32,
    device: i32,
    module: i32,
    consts: i32,
    grid: i32,
    args: i32,
    spec: i32,
    Args: i32,
    n: i32,
) {
    let r#type = arange(0, 32);
    let masque = r#type < n;
    let v = load(_entrée + r#type, masque, 0u32);
    let mélange = ((v << 3) ^ (v >> 2)) % 1000u32 + décalage;
    let hi = umulhi(v, 0x9e3779b9u32);
    let base = (mélange + hi).to::<i64>() + grand.to::<i64>() * ÉCHELLE;
    let petit = (device + module + consts + grid + args + spec + Args).to::<f32>() * facteur;
    store(sortie + r#type, base + petit.to::<i64>() + __, masque);
}

#[test]
fn unusual_names_and_fourteen_parameters() {
    let input: Vec<u32> = (0..32u32)
        .map(|i| i.wrapping_mul(0x0101_0F0F) ^ 0xdead)
        .collect();
    for n in [32usize, 9] {
        let out = up(&[-5i64; 32]);
        données_étranges::emulate(
            données_étranges::Consts { ÉCHELLE: 4 },
            1u32,
            out.ptr(),
            up(&input).ptr(),
            17,
            -1_000_000_007,
            3_000_000_000,
            0.5,
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            n as i32,
        )
        .unwrap();
        let want: Vec<i64> = (0..32)
            .map(|i| {
                if i >= n {
                    return -5;
                }
                let v = input[i];
                let mixed = ((v << 3) ^ (v >> 2)) % 1000 + 17;
                let hi = ((u64::from(v) * 0x9e37_79b9) >> 32) as u32;
                i64::from(mixed.wrapping_add(hi)) + 3_000_000_000 * 4 + 14 - 1_000_000_007
            })
            .collect();
        assert_eq!(out.download().unwrap(), want, "n {n}");
    }
}

// ---------------------------------------------------------------------------------------------
// Integer reductions on both axes under a ragged 2-D mask; reshape to rank 3 and reduce there.

#[tile_kernel(R = 8, C = 16)]
fn int_sums<const R: usize, const C: usize>(
    x: Ptr<i32>,
    by_col: Ptr<i32>,
    by_row: Ptr<i32>,
    by_half: Ptr<i32>,
    rows: i32,
    cols: i32,
) {
    let r = arange(0, R);
    let c = arange(0, C);
    let mask = (r.expand_dims(1) < rows) & (c.expand_dims(0) < cols);
    let v = load(x + r.expand_dims(1) * C + c.expand_dims(0), mask, 0);
    store(by_col + c, v.sum(0));
    store(by_row + r, v.sum(1));
    let halves = v.reshape([R, 2, C / 2]).sum(2);
    store(
        by_half + r.expand_dims(1) * 2 + arange(0, 2).expand_dims(0),
        halves,
    );
}

#[test]
fn integer_sums_on_both_axes_and_after_reshape() {
    let x: Vec<i32> = (0..128).map(|i| (i * 7919) % 2001 - 1000).collect();
    for (rows, cols) in [(8usize, 16usize), (3, 11), (0, 16), (8, 1)] {
        let (a, b, h) = (up(&[0i32; 16]), up(&[0i32; 8]), up(&[0i32; 16]));
        int_sums::emulate(
            int_sums::Consts { R: 8, C: 16 },
            1u32,
            up(&x).ptr(),
            a.ptr(),
            b.ptr(),
            h.ptr(),
            rows as i32,
            cols as i32,
        )
        .unwrap();
        let at = |i: usize, j: usize| {
            if i < rows && j < cols {
                x[i * 16 + j]
            } else {
                0
            }
        };
        let want_a: Vec<i32> = (0..16).map(|j| (0..8).map(|i| at(i, j)).sum()).collect();
        let want_b: Vec<i32> = (0..8).map(|i| (0..16).map(|j| at(i, j)).sum()).collect();
        let want_h: Vec<i32> = (0..16)
            .map(|e| (0..8).map(|j| at(e / 2, (e % 2) * 8 + j)).sum())
            .collect();
        assert_eq!(a.download().unwrap(), want_a, "sum(0), {rows}x{cols}");
        assert_eq!(b.download().unwrap(), want_b, "sum(1), {rows}x{cols}");
        assert_eq!(
            h.download().unwrap(),
            want_h,
            "reshape + sum(2), {rows}x{cols}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Masked row maxima where whole rows are masked off (-inf), full and broadcast_to, cdiv on consts.

#[tile_kernel(N = 64)]
fn row_max_or_floor<const N: usize>(x: Ptr<f32>, out: Ptr<f32>, rows: i32, floor: f32) {
    let r = arange(0, 4);
    let c = arange(0, cdiv(N, 4));
    let mask = (r < rows).expand_dims(1).broadcast_to([4, N / 4]);
    let v = load(
        x + r.expand_dims(1) * (N / 4) + c.expand_dims(0),
        mask,
        f32::NEG_INFINITY,
    );
    let best = v.max(1);
    let floors = full::<f32>([4], floor);
    store(out + r, maximum(best, floors) + zeros::<f32>([4]));
}

#[test]
fn masked_rows_reduce_to_negative_infinity() {
    let x = floats(15, 64);
    for rows in [0i32, 2, 4] {
        let out = up(&[0f32; 4]);
        row_max_or_floor::emulate(
            row_max_or_floor::Consts { N: 64 },
            1u32,
            up(&x).ptr(),
            out.ptr(),
            rows,
            -7.5,
        )
        .unwrap();
        let want: Vec<f32> = (0..4)
            .map(|r| {
                let best = if r < rows as usize {
                    (0..16)
                        .map(|c| x[r * 16 + c])
                        .fold(f32::NEG_INFINITY, f32::max)
                } else {
                    f32::NEG_INFINITY
                };
                best.max(-7.5)
            })
            .collect();
        assert_output(&out, &want, 0.0, &format!("rows {rows}"));
    }
}
