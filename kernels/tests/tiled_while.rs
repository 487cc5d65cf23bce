//! `while` loops written with `#[tile_kernel]` against CPU references on the test device (the
//! GPU when present, else the emulator; see `support`): a binary search per program over ragged
//! sorted arrays (queries below, between, equal to and above the values), and Collatz stopping
//! times over ragged blocks at 1 and 4 warps (a loop carrying tiles until a reduction says every
//! element is done).

mod support;

use support::{device, draws, launch_tensors, GuardedTensor};
use tessera::tensor::Tensor;
use tessera_kernels::tiled::loops::{collatz_steps, search_sorted};

#[test]
fn search_sorted_finds_the_lower_bound() {
    let gpu = device();
    for (n, queries) in gpu.cases(&[(1, 5), (2, 9), (37, 64), (1000, 300)], &[(1 << 20, 4096)]) {
        // Ascending values with repeats: multiples of 1/4.
        let mut sorted: Vec<f32> = draws(n as u64, n, |rng| (rng.next_u64() % 512) as f32 / 4.0);
        sorted.sort_by(f32::total_cmp);
        let mut q: Vec<f32> = draws(n as u64 + 7, queries, |rng| {
            (rng.next_u64() % 520) as f32 / 4.0 - 1.0
        });
        // Exact hits, the ends and beyond.
        q[0] = sorted[0];
        q[queries - 1] = sorted[n - 1] + 1.0;
        q[queries / 2] = sorted[n / 2];
        let want: Vec<i32> = q
            .iter()
            .map(|&v| sorted.partition_point(|&s| s < v) as i32)
            .collect();
        let (ts, tq) = (
            Tensor::from_slice(gpu.device(), &sorted, &[n]).unwrap(),
            Tensor::from_slice(gpu.device(), &q, &[queries]).unwrap(),
        );
        let mut out = GuardedTensor::new(gpu, &[queries], -5i32);
        // Two programs more than queries: they store nothing.
        let grid = (queries as u32 + 2,);
        launch_tensors!(gpu, search_sorted, grid = grid, &ts, &tq, &mut out.view()).unwrap();
        assert_eq!(out.outputs(&format!("search_sorted n={n}")), want);
    }
}

/// Steps of the Collatz map from `v` to 1.
fn stopping_time(mut v: i64) -> i32 {
    let mut steps = 0;
    while v > 1 {
        v = if v % 2 == 1 { 3 * v + 1 } else { v / 2 };
        steps += 1;
    }
    steps
}

#[test]
fn collatz_steps_loop_until_every_element_is_done() {
    let gpu = device();
    for n in gpu.cases(&[1, 127, 128, 300, 1031], &[1 << 18]) {
        let mut x: Vec<i32> = draws(n as u64 + 1, n, |rng| 1 + (rng.next_u64() % 30000) as i32);
        x[0] = 27; // 111 steps
        let want: Vec<i32> = x.iter().map(|&v| stopping_time(v as i64)).collect();
        let blocks = n.div_ceil(128);
        let want_rounds: Vec<i32> = want
            .chunks(128)
            .map(|c| c.iter().copied().max().unwrap_or(0))
            .collect();
        let tx = Tensor::from_slice(gpu.device(), &x, &[n]).unwrap();
        for num_warps in [1u32, 4] {
            let mut steps = GuardedTensor::new(gpu, &[n], -3i32);
            let mut rounds = GuardedTensor::new(gpu, &[blocks], -3i32);
            launch_tensors!(
                gpu,
                collatz_steps,
                collatz_steps::Consts {
                    BLOCK: 128,
                    num_warps,
                },
                (blocks as u32,),
                &tx,
                &mut steps.view(),
                &mut rounds.view(),
            )
            .unwrap();
            let what = format!("collatz_steps n={n} num_warps={num_warps}");
            assert_eq!(steps.outputs(&what), want, "{what}");
            assert_eq!(rounds.outputs(&what), want_rounds, "{what}");
        }
    }
}
