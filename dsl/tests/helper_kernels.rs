//! Kernels that call `#[tile_fn]` helpers, run on the emulator against plain-Rust references:
//! helpers in another module (imported with `use`), a helper with a loop over a `mut` parameter
//! called inside the kernel's own loop, a helper returning a pair, a helper calling a helper with
//! a const generic taken from the kernel, an element-type generic, a helper returning three
//! values, and a helper that stores.

mod helpers {
    use tessera::{tile_fn, Ptr};

    /// `acc + Σ_{i < 4} x · i`, in a loop of the helper's own.
    #[tile_fn]
    pub(crate) fn weighted_sum(mut acc: _, x: _) -> _ {
        for i in 0..4 {
            acc = acc + x * (i as f32);
        }
        acc
    }

    /// `(v / width, v % width)`.
    #[tile_fn]
    pub(crate) fn div_rem(v: _, width: i32) -> (_, _) {
        (v / width, v % width)
    }

    /// `(v / width, v % width, v)`: three results.
    #[tile_fn]
    pub(crate) fn div_rem_keep(v: _, width: i32) -> (_, _, _) {
        let q = v / width;
        (q, v - q * width, v)
    }

    /// The `W` elements of `x` from `start`, masked to `n`, as f32 (`other` past the end).
    #[tile_fn]
    pub(crate) fn chunk<T, const W: usize>(x: Ptr<T>, start: i32, n: i32, other: f32) -> _ {
        let offs = start + arange(0, W);
        load(x + offs, offs < n, other as T).to::<f32>()
    }

    /// The largest of the `W`-wide chunks of `x[..n]`, through [`chunk`].
    #[tile_fn]
    pub(crate) fn max_of<T, const W: usize>(x: Ptr<T>, n: i32) -> f32 {
        let mut best = full::<f32>([W], f32::NEG_INFINITY);
        for start in (0..n).step_by(W) {
            best = maximum(best, chunk::<T, W>(x, start, n, f32::NEG_INFINITY));
        }
        best.max(0)
    }

    /// Stores `v` at `out + offs` where `offs < n`.
    #[tile_fn]
    pub(crate) fn put(out: Ptr<f32>, offs: _, v: _, n: i32) {
        store(out + offs, v, offs < n);
    }
}

use helpers::{chunk, div_rem, div_rem_keep, max_of, put, weighted_sum};
use tessera::launch::{Device, DeviceBuffer, DeviceElement};
use tessera::{f16, tile_kernel, Ptr};

/// `out[i] = Σ_{j < steps} Σ_{k < 4} (x[i] + j) · k` and `rows[i], cols[i] = i / width, i % width`.
#[tile_kernel(BLOCK = 128, uses = [weighted_sum, div_rem, div_rem_keep, put])]
fn loops_and_pairs<const BLOCK: usize>(
    x: Ptr<f32>,
    out: Ptr<f32>,
    rows: Ptr<f32>,
    cols: Ptr<f32>,
    n: i32,
    steps: i32,
    width: i32,
) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let v = load(x + offs, offs < n, 0.0);
    let mut acc = zeros::<f32>([BLOCK]);
    for j in 0..steps {
        acc = weighted_sum(acc, v + (j as f32));
    }
    put(out, offs, acc, n);
    let (r, _) = div_rem(offs, width);
    let (_, c, same) = div_rem_keep(offs, width);
    put(rows, offs, r.to::<f32>(), n);
    put(cols, offs, (c + (same - offs)).to::<f32>(), n);
}

/// `out[0] = max(x[..n])` (as f32) for f32 and f16 `x`, and `first[0]` its first chunk's max.
#[tile_kernel(T = [f32, f16], W = [64], uses = [max_of, chunk])]
fn largest<T, const W: usize>(x: Ptr<T>, out: Ptr<f32>, first: Ptr<f32>, n: i32) {
    let one = arange(0, 1);
    store(out + one, max_of::<T, W>(x, n) + zeros::<f32>([1]));
    let head = chunk::<T, { W / 2 }>(x, 0, n, f32::NEG_INFINITY);
    store(first + one, head.max(0) + zeros::<f32>([1]));
}

fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = tessera_test_support::Rng(seed);
    // Multiples of 1/8 in [-4, 4): sums below stay exact in f32.
    (0..n)
        .map(|_| (rng.next_f32() * 64.0).floor() / 8.0 - 4.0)
        .collect()
}

#[test]
fn helpers_with_loops_pairs_and_stores_match_cpu() {
    let device = Device::emulator();
    for (n, steps, width) in [(1, 0, 3), (130, 3, 7), (300, 5, 16)] {
        let x = values(n as u64, n);
        let dx = device.upload(&x).unwrap();
        let (out, rows, cols) = (
            device.zeros::<f32>(n).unwrap(),
            device.zeros::<f32>(n).unwrap(),
            device.zeros::<f32>(n).unwrap(),
        );
        let consts = loops_and_pairs::Consts { BLOCK: 128 };
        let grid = (n.div_ceil(128) as u32,);
        loops_and_pairs::emulate(
            consts,
            grid,
            dx.ptr(),
            out.ptr(),
            rows.ptr(),
            cols.ptr(),
            n as i32,
            steps,
            width,
        )
        .unwrap();
        let (out, rows, cols) = (
            out.download().unwrap(),
            rows.download().unwrap(),
            cols.download().unwrap(),
        );
        for i in 0..n {
            let want: f32 = (0..steps)
                .map(|j| (0..4).map(|k| (x[i] + j as f32) * k as f32).sum::<f32>())
                .sum();
            assert_eq!(out[i], want, "n = {n}, steps = {steps}: out[{i}]");
            assert_eq!(rows[i], (i as i32 / width) as f32, "rows[{i}]");
            assert_eq!(cols[i], (i as i32 % width) as f32, "cols[{i}]");
        }
    }
}

/// `largest` (`W = 64`, one program) on the emulator over all of `x`, into `out` and `first`.
fn run_largest<T: largest::Listed_T + DeviceElement>(
    device: &Device,
    x: &[T],
    out: &DeviceBuffer<f32>,
    first: &DeviceBuffer<f32>,
) {
    let dx = device.upload(x).unwrap();
    let consts = largest::Consts { W: 64 };
    let n = x.len() as i32;
    largest::emulate(consts, (1,), dx.ptr(), out.ptr(), first.ptr(), n).unwrap();
}

#[test]
fn helpers_with_generics_from_the_kernel_match_cpu() {
    let device = Device::emulator();
    for n in [1usize, 31, 64, 200] {
        let x = values(7 + n as u64, n);
        let (out, first) = (
            device.zeros::<f32>(1).unwrap(),
            device.zeros::<f32>(1).unwrap(),
        );
        let want = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let want_first = x[..n.min(32)]
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        run_largest(&device, &x, &out, &first);
        assert_eq!(out.download().unwrap()[0], want, "f32, n = {n}");
        assert_eq!(
            first.download().unwrap()[0],
            want_first,
            "f32 head, n = {n}"
        );
        let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        run_largest(&device, &xh, &out, &first);
        assert_eq!(out.download().unwrap()[0], want, "f16, n = {n}");
    }
}
