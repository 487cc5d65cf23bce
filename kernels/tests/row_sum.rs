//! `row_sum` against a CPU reference, ragged shapes included, on the test device (the GPU when
//! present, else the emulator; see `support`).

mod support;

use support::{device, Buffer, Rng};
use tessera::launch::LaunchConfig;
use tessera_kernels::ROW_SUM;

fn run(m: u32, n: u32, block: u32, x: &[f32]) -> Vec<f32> {
    let gpu = device();
    let rows_per_block = block / 32;
    let dx = Buffer::from_f32(gpu.device(), x);
    let dout = Buffer::filled(gpu.device(), m as usize + 4, 0xdead_beef);
    let grid = m.div_ceil(rows_per_block).max(1);
    gpu.launch(
        ROW_SUM,
        LaunchConfig::linear(grid, block),
        (dx.ptr(), dout.ptr(), m, n),
    )
    .unwrap();
    let out = dout.to_u32();
    assert!(
        out[m as usize..].iter().all(|&w| w == 0xdead_beef),
        "wrote past row {m}"
    );
    out[..m as usize]
        .iter()
        .map(|&w| f32::from_bits(w))
        .collect()
}

const SHAPES: [(u32, u32); 12] = [
    (1, 1),
    (1, 31),
    (1, 32),
    (3, 33),
    (4, 64),
    (5, 100),
    (7, 1),
    (9, 255),
    (13, 1000),
    (64, 96),
    (65, 129),
    (2, 4099),
];

/// On the GPU also many rows and long rows (100 · 160001 < 2^24: integer sums stay exact).
const GPU_SHAPES: [(u32, u32); 3] = [(20_000, 33), (1000, 1000), (3, 160_001)];

fn shapes() -> Vec<(u32, u32)> {
    device().cases(&SHAPES, &GPU_SHAPES)
}

#[test]
fn row_sums_are_exact_on_integer_data() {
    // Small integers: every partial sum is exact in f32, so any summation order gives the
    // exact result and the comparison can be exact.
    let mut rng = Rng(3);
    for block in [32, 128, 256] {
        for (m, n) in shapes() {
            let x: Vec<f32> = (0..m * n)
                .map(|_| (rng.next_u32() % 201) as f32 - 100.0)
                .collect();
            let got = run(m, n, block, &x);
            for r in 0..m as usize {
                let want: f32 = x[r * n as usize..(r + 1) * n as usize].iter().sum();
                assert_eq!(got[r], want, "m {m} n {n} block {block} row {r}");
            }
        }
    }
}

#[test]
fn row_sums_match_f64_reference_on_random_data() {
    let mut rng = Rng(4);
    for (m, n) in shapes() {
        let x: Vec<f32> = (0..m * n).map(|_| rng.next_f32()).collect();
        let got = run(m, n, 128, &x);
        for r in 0..m as usize {
            let row = &x[r * n as usize..(r + 1) * n as usize];
            let want: f64 = row.iter().map(|&v| v as f64).sum();
            let scale: f64 = row.iter().map(|&v| v.abs() as f64).sum();
            assert!(
                (got[r] as f64 - want).abs() <= 1e-6 * scale + 1e-6,
                "m {m} n {n} row {r}: {} vs {want}",
                got[r]
            );
        }
    }
}
