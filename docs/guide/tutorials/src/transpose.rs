//! The conversions and emulator chapters: a tile transpose, whose load and store want different
//! layouts, so layout inference plans a conversion through swizzled shared memory; the emulator
//! counts that conversion's shared-memory wavefronts.

use tessera::{tile_kernel, Ptr};

// ANCHOR: kernel
/// `out = xᵀ` for a row-major `x: [m, n]`, one `BM × BN` tile per program.
#[tile_kernel(num_warps = 4, BM = 32, BN = 32)]
pub fn transpose<const BM: usize, const BN: usize>(x: Ptr<f32>, out: Ptr<f32>, m: i32, n: i32) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let load_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    let tile = load(x + rm.expand_dims(1) * n + rn.expand_dims(0), load_mask, 0.0);
    let store_mask = (rn.expand_dims(1) < n) & (rm.expand_dims(0) < m);
    store(out + rn.expand_dims(1) * m + rm.expand_dims(0), tile.trans(), store_mask);
}
// ANCHOR_END: kernel

#[cfg(test)]
mod tests {
    use super::transpose;
    use tessera::launch::Device;

    // ANCHOR: report
    /// Runs the transpose with `emulate`, which returns the emulator's report, and checks the
    /// output and that the conversion through shared memory had no bank conflicts.
    #[test]
    fn transpose_is_correct_and_conflict_free() {
        let (m, n) = (64usize, 96usize);
        let x: Vec<f32> = (0..m * n).map(|i| i as f32).collect();
        let device = Device::emulator();
        let dx = device.upload(&x).unwrap();
        let out = device.zeros::<f32>(m * n).unwrap();
        let consts = transpose::Consts { BM: 32, BN: 32 };
        let grid = ((m / 32) as u32, (n / 32) as u32);
        let report =
            transpose::emulate(consts, grid, dx.ptr(), out.ptr(), m as i32, n as i32).unwrap();
        println!("{report}");
        let got = out.download().unwrap();
        for i in 0..m {
            for j in 0..n {
                assert_eq!(got[j * m + i], x[i * n + j], "out[{j}, {i}]");
            }
        }
        assert!(report.shared_accesses > 0, "the conversion went through shared memory");
        assert_eq!(report.shared_wavefronts, report.shared_ideal_wavefronts, "{report}");
        assert_eq!(report.bank_conflict_factor(), 1.0);
    }
    // ANCHOR_END: report

    // ANCHOR: explain
    /// `EXPLAIN` is what inference decided, as `TESSERA_EXPLAIN=1` prints it at build time.
    #[test]
    fn explain_shows_the_conversion() {
        let explain = transpose::EXPLAIN;
        println!("{explain}");
        // The aligned variant, then the one for arguments that break its alignment assumptions.
        let (aligned, unaligned) = explain.split_once("entry transpose__unaligned").unwrap();
        for variant in [aligned, unaligned] {
            // One conversion, through shared memory.
            assert!(variant.contains("summary: 1 conversion (1 shared memory)"), "{variant}");
        }
        // Global loads and stores of 128 bits per thread, or of 32 bits when unaligned.
        let accesses = |variant: &str, width: &str| {
            let access = |l: &&str| l.contains("= load ") || l.trim_start().starts_with("store ");
            let mut lines = variant.lines().filter(access);
            lines.all(|l| l.contains(width))
        };
        assert!(accesses(aligned, "[vector 4 × 32 bits = 128 bits"), "{aligned}");
        assert!(accesses(unaligned, "[vector 1 × 32 bits = 32 bits"), "{unaligned}");
    }
    // ANCHOR_END: explain
}
