//! Atomics and scalar memory written with `#[tile_kernel]`, on the test device (the GPU when
//! present, else the emulator, where every simulated thread is an OS thread and several
//! programs run at once; see `support`), against CPU references over ragged shapes.

mod support;

use support::{assert_refused, device, draws, launch_tensors, GuardedTensor};
use tessera::f16;
use tessera::tensor::Tensor;
use tessera_kernels::tiled::atomics::{
    bucket_reduce, histogram, histogram_f16, matmul_split_k, row_loss, take_numbers, tickets,
};

/// `n` values in `lo..hi` from the seeded test RNG.
fn ints(seed: u64, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    draws(seed, n, |rng| {
        lo + (rng.next_u64() % (hi - lo) as u64) as i32
    })
}

#[test]
fn histogram_counts_every_value_once() {
    let gpu = device();
    for (n, num_bins) in gpu.cases(
        &[(1, 1), (31, 7), (1000, 64), (4099, 13)],
        &[(1 << 20, 256), (1 << 19, 1024)],
    ) {
        let x = ints(n as u64, n, -2, num_bins as i32 + 2);
        let mut want = vec![0i32; num_bins];
        for &v in &x {
            if (0..num_bins as i32).contains(&v) {
                want[v as usize] += 1;
            }
        }
        let tx = Tensor::from_slice(gpu.device(), &x, &[n]).unwrap();
        for block in [32, 256] {
            let mut bins = GuardedTensor::new(gpu, &[num_bins], 0i32);
            let consts = histogram::Consts { BLOCK: block };
            let grid = (n.div_ceil(block) as u32,);
            launch_tensors!(gpu, histogram, consts, grid, &tx, &mut bins.view()).unwrap();
            assert_eq!(
                bins.outputs(&format!("histogram n={n} BLOCK={block}")),
                want
            );
        }
        // f16 counts are exact only up to 2048 (2048 + 1 rounds back to 2048 in f16), so the f16
        // histogram is checked where every bin stays within that range.
        if num_bins > 1 && want.iter().all(|&c| c <= 2048) {
            let mut bins = GuardedTensor::new(gpu, &[num_bins], f16::ZERO);
            let consts = histogram_f16::Consts { BLOCK: 256 };
            let grid = (n.div_ceil(256) as u32,);
            launch_tensors!(gpu, histogram_f16, consts, grid, &tx, &mut bins.view()).unwrap();
            let got: Vec<f32> = bins
                .outputs("histogram_f16")
                .iter()
                .map(|h| h.to_f32())
                .collect();
            let want_f: Vec<f32> = want.iter().map(|&c| c as f32).collect();
            assert_eq!(got, want_f, "histogram_f16 n={n}");
        }
    }
}

#[test]
fn split_k_matmul_adds_every_partial_tile() {
    let gpu = device();
    let shapes = gpu.cases(
        &[
            (1, 1, 1, 32),
            (37, 45, 100, 32),
            (64, 64, 64, 64),
            (5, 70, 257, 96),
        ],
        &[(1000, 999, 4096, 512)],
    );
    for (m, n, k, k_split) in shapes {
        // Small integers: every product and partial sum is exact in f32, in any order.
        let a = ints(m as u64 * 7 + 1, m * k, -2, 3);
        let b = ints(n as u64 * 11 + 2, k * n, -2, 3);
        let (ah, bh): (Vec<f16>, Vec<f16>) = (
            a.iter().map(|&v| f16::from_f32(v as f32)).collect(),
            b.iter().map(|&v| f16::from_f32(v as f32)).collect(),
        );
        let (ta, tb) = (
            Tensor::from_slice(gpu.device(), &ah, &[m, k]).unwrap(),
            Tensor::from_slice(gpu.device(), &bh, &[k, n]).unwrap(),
        );
        let mut c = GuardedTensor::new(gpu, &[m, n], 0.5f32);
        let splits = k.div_ceil(k_split) as u32;
        let consts = matmul_split_k::Consts {
            BM: 32,
            BN: 32,
            BK: 32,
        };
        let grid =
            |c: &matmul_split_k::Consts| (m.div_ceil(c.BM) as u32, n.div_ceil(c.BN) as u32, splits);
        let k_split = k_split as i32;
        launch_tensors!(
            gpu,
            matmul_split_k,
            consts,
            grid,
            &ta,
            &tb,
            &mut c.view(),
            k_split
        )
        .unwrap();
        let got = c.outputs(&format!("split-K {m}x{n}x{k}/{k_split}"));
        for i in 0..m {
            for j in 0..n {
                let dot: i32 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
                let want = 0.5 + dot as f32;
                assert_eq!(got[i * n + j], want, "{m}x{n}x{k}/{k_split}: ({i}, {j})");
            }
        }
    }
}

#[test]
fn bucket_max_min_and_bits() {
    let gpu = device();
    for (n, buckets) in gpu.cases(&[(1, 1), (130, 5), (1000, 64), (257, 300)], &[(1 << 20, 7)]) {
        let x = ints(n as u64 + 5, n, -1000, 1000);
        let mut want_max = vec![i32::MIN; buckets];
        let mut want_min = vec![i32::MAX; buckets];
        let mut want_or = vec![0u32; buckets];
        let mut want_and = vec![u32::MAX; buckets];
        let mut want_xor = vec![0u32; buckets];
        for (i, &v) in x.iter().enumerate() {
            let b = i % buckets;
            let bit = 1u32 << (v & 31);
            want_max[b] = want_max[b].max(v);
            want_min[b] = want_min[b].min(v);
            want_or[b] |= bit;
            want_and[b] &= !bit;
            want_xor[b] ^= v as u32;
        }
        let tx = Tensor::from_slice(gpu.device(), &x, &[n]).unwrap();
        let mut maxes = GuardedTensor::new(gpu, &[buckets], i32::MIN);
        let mut mins = GuardedTensor::new(gpu, &[buckets], i32::MAX);
        let mut ors = GuardedTensor::new(gpu, &[buckets], 0u32);
        let mut ands = GuardedTensor::new(gpu, &[buckets], u32::MAX);
        let mut xors = GuardedTensor::new(gpu, &[buckets], 0u32);
        let consts = bucket_reduce::Consts { BLOCK: 128 };
        let grid = (n.div_ceil(128) as u32,);
        launch_tensors!(
            gpu,
            bucket_reduce,
            consts,
            grid,
            &tx,
            &mut maxes.view(),
            &mut mins.view(),
            &mut ors.view(),
            &mut ands.view(),
            &mut xors.view()
        )
        .unwrap();
        let what = format!("n={n} buckets={buckets}");
        assert_eq!(maxes.outputs(&what), want_max, "max {what}");
        assert_eq!(mins.outputs(&what), want_min, "min {what}");
        assert_eq!(ors.outputs(&what), want_or, "or {what}");
        assert_eq!(ands.outputs(&what), want_and, "and {what}");
        assert_eq!(xors.outputs(&what), want_xor, "xor {what}");
    }
}

#[test]
fn tile_atomic_old_values_are_each_taken_once() {
    let gpu = device();
    for n in gpu.cases(&[1, 31, 32, 100, 1000], &[1 << 20]) {
        for block in [32, 256] {
            let mut counter = GuardedTensor::new(gpu, &[1], 0i32);
            let mut out = GuardedTensor::new(gpu, &[n], -1i32);
            let consts = take_numbers::Consts { BLOCK: block };
            let grid = (n.div_ceil(block) as u32,);
            let (mut c, mut o) = (counter.view(), out.view());
            launch_tensors!(gpu, take_numbers, consts, grid, &mut c, &mut o).unwrap();
            let what = format!("take_numbers n={n} BLOCK={block}");
            assert_eq!(
                counter.outputs(&what),
                vec![n as i32],
                "{what}: the counter"
            );
            let mut got = out.outputs(&what);
            got.sort_unstable();
            assert_eq!(
                got,
                (0..n as i32).collect::<Vec<_>>(),
                "{what}: the old values"
            );
        }
    }
}

#[test]
fn scalar_tickets_cas_and_xchg() {
    let gpu = device();
    for programs in gpu.cases(&[1usize, 5, 37], &[5000]) {
        let mut counter = GuardedTensor::new(gpu, &[1], 0i32);
        let mut slots = GuardedTensor::new(gpu, &[4], 0i32);
        let mut last = GuardedTensor::new(gpu, &[1], -1i32);
        let mut out = GuardedTensor::new(gpu, &[programs, 3], -7i32);
        launch_tensors!(
            gpu,
            tickets,
            grid = (programs as u32,),
            &mut counter.view(),
            &mut slots.view(),
            &mut last.view(),
            &mut out.view()
        )
        .unwrap();
        let what = format!("tickets programs={programs}");
        let out = out.outputs(&what);
        assert_eq!(counter.outputs(&what), vec![programs as i32]);
        let mut taken: Vec<i32> = (0..programs).map(|p| out[3 * p]).collect();
        taken.sort_unstable();
        assert_eq!(
            taken,
            (0..programs as i32).collect::<Vec<_>>(),
            "{what}: tickets"
        );
        let slots = slots.outputs(&what);
        for (s, &slot) in slots.iter().enumerate() {
            let members: Vec<usize> = (0..programs).filter(|p| p % 4 == s).collect();
            if members.is_empty() {
                assert_eq!(slot, 0, "{what}: slot {s} untouched");
                continue;
            }
            let winner = (slot - 1) as usize;
            assert!(members.contains(&winner), "{what}: slot {s} = {slot}");
            for &p in &members {
                let want = if p == winner { 0 } else { slot };
                assert_eq!(out[3 * p + 1], want, "{what}: cas of program {p}");
            }
        }
        let mut chain: Vec<i32> = (0..programs).map(|p| out[3 * p + 2]).collect();
        chain.push(last.outputs(&what)[0]);
        chain.sort_unstable();
        assert_eq!(
            chain,
            (-1..programs as i32).collect::<Vec<_>>(),
            "{what}: xchg chain"
        );
    }
}

#[test]
fn row_loss_with_scalar_load_and_store() {
    let gpu = device();
    for (rows, n_cols) in gpu.cases(&[(1, 1), (19, 77), (8, 128)], &[(4096, 100)]) {
        let logits: Vec<f32> = draws(rows as u64 * 3 + n_cols as u64, rows * n_cols, |rng| {
            ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 8.0 - 4.0
        });
        let target = ints(rows as u64 + 99, rows, -1, n_cols as i32);
        let (tl, tt) = (
            Tensor::from_slice(gpu.device(), &logits, &[rows, n_cols]).unwrap(),
            Tensor::from_slice(gpu.device(), &target, &[rows]).unwrap(),
        );
        let mut loss = GuardedTensor::new(gpu, &[rows], 9.0f32);
        let consts = row_loss::Consts { BLOCK: 128 };
        let grid = (rows as u32,);
        launch_tensors!(gpu, row_loss, consts, grid, &tl, &tt, &mut loss.view()).unwrap();
        let got = loss.outputs(&format!("row_loss {rows}x{n_cols}"));
        for r in 0..rows {
            let row = &logits[r * n_cols..(r + 1) * n_cols];
            let want = if target[r] < 0 {
                9.0
            } else {
                let top = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
                let lse = row
                    .iter()
                    .map(|&v| (v as f64 - top).exp())
                    .sum::<f64>()
                    .ln()
                    + top;
                lse - row[target[r] as usize] as f64
            };
            let err = (got[r] as f64 - want).abs();
            assert!(
                err <= 1e-4 * (1.0 + want.abs()),
                "{rows}x{n_cols} row {r}: {} vs {want}",
                got[r]
            );
        }
    }
}

/// Mismatched tensors are refused at launch, before anything runs, naming the requirement: a
/// target of another length than the logits' rows, a split-K `c` of the wrong shape, slots
/// that are not four.
#[test]
fn mismatched_tensors_are_refused() {
    let gpu = device();
    let zeros_f32 = |sizes: &[usize]| Tensor::<f32>::zeros(gpu.device(), sizes).unwrap();
    let zeros_i32 = |sizes: &[usize]| Tensor::<i32>::zeros(gpu.device(), sizes).unwrap();
    let zeros_f16 = |sizes: &[usize]| Tensor::<f16>::zeros(gpu.device(), sizes).unwrap();
    let (logits, target, mut loss) = (zeros_f32(&[4, 10]), zeros_i32(&[3]), zeros_f32(&[4]));
    let (a, b, mut c) = (zeros_f16(&[8, 16]), zeros_f16(&[16, 8]), zeros_f32(&[8, 9]));
    let (mut counter, mut slots, mut last, mut out) = (
        zeros_i32(&[1]),
        zeros_i32(&[3]),
        zeros_i32(&[1]),
        zeros_i32(&[2, 3]),
    );
    let split = matmul_split_k::Consts {
        BM: 32,
        BN: 32,
        BK: 32,
    };
    let launches = [
        launch_tensors!(
            gpu,
            row_loss,
            row_loss::Consts { BLOCK: 128 },
            4,
            &logits,
            &target,
            &mut loss
        ),
        launch_tensors!(gpu, matmul_split_k, split, (1, 1, 1), &a, &b, &mut c, 16),
        launch_tensors!(
            gpu,
            tickets,
            grid = 2,
            &mut counter,
            &mut slots,
            &mut last,
            &mut out
        ),
    ];
    let wanted = [
        "requirement `target.size(0) == logits.size(0) && loss.size(0) == logits.size(0)`",
        "requirement `c.size(1) == b.size(1)` (c.size(1) = 9, b.size(1) = 8)",
        "requirement `slots.size(0) == 4` (slots.size(0) = 3)",
    ];
    assert_refused(launches, wanted);
}
