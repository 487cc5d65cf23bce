//! Tutorial 3: matrix multiplication on tensor cores, `c = a · b` with f16 inputs, an f32
//! accumulator and an f16 result, for any `m`, `n`, `k` (masked loads give zeros past the edges).

use std::error::Error;
use tessera::launch::{Device, Module};
use tessera::{f16, tile_kernel, Ptr};

// ANCHOR: kernel
/// `c = a · b` for row-major `a: [m, k]`, `b: [k, n]`, `c: [m, n]`; each program computes one
/// `BM × BN` tile of `c`, walking K in steps of `BK`.
#[tile_kernel(num_warps = 4, BM = 64, BN = 64, BK = 32)]
pub fn matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: Ptr<f16>,
    b: Ptr<f16>,
    c: Ptr<f16>,
    m: i32,
    n: i32,
    k: i32,
) {
    let rm = program_id(0) * BM + arange(0, BM); // the rows of c this program computes
    let rn = program_id(1) * BN + arange(0, BN); // and its columns
    let rk = arange(0, BK);
    let mut a_ptrs = a + rm.expand_dims(1) * k + rk.expand_dims(0); // Ptr<f16>[BM, BK]
    let mut b_ptrs = b + rk.expand_dims(1) * n + rn.expand_dims(0); // Ptr<f16>[BK, BN]
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k, BK) {
        let k_left = k - kk * BK;
        let a_mask = (rm.expand_dims(1) < m) & (rk.expand_dims(0) < k_left);
        let b_mask = (rk.expand_dims(1) < k_left) & (rn.expand_dims(0) < n);
        let a_tile = load(a_ptrs, a_mask, 0.0);
        let b_tile = load(b_ptrs, b_mask, 0.0);
        acc = dot(a_tile, b_tile, acc); // tensor cores, f32 accumulation
        a_ptrs += BK;
        b_ptrs += BK * n;
    }
    let c_mask = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    store(c + rm.expand_dims(1) * n + rn.expand_dims(0), acc.to::<f16>(), c_mask);
}
// ANCHOR_END: kernel

// ANCHOR: host
/// `a · b` on `device` for row-major `a: [m, k]` and `b: [k, n]`.
pub fn matmul_f16(
    device: &Device,
    module: &Module,
    a: &[f16],
    b: &[f16],
    (m, n, k): (usize, usize, usize),
) -> Result<Vec<f16>, Box<dyn Error>> {
    assert_eq!((a.len(), b.len()), (m * k, k * n), "operand sizes");
    let (da, db) = (device.upload(a)?, device.upload(b)?);
    let dc = device.zeros::<f16>(m * n)?;
    let consts = matmul::Consts { BM: 64, BN: 64, BK: 32 };
    // A 2-D grid of programs: ⌈m / BM⌉ × ⌈n / BN⌉.
    let grid = |c: &matmul::Consts| (m.div_ceil(c.BM) as u32, n.div_ceil(c.BN) as u32);
    let (m, n, k) = (m as i32, n as i32, k as i32);
    matmul::launch(device, module, consts, grid, da.ptr(), db.ptr(), dc.ptr(), m, n, k)?;
    Ok(dc.download()?)
}
// ANCHOR_END: host

#[cfg(test)]
mod tests {
    use super::matmul_f16;
    use tessera::emulator::{with_target, EmulatedTarget};
    use tessera::f16;
    use tessera::launch::Device;

    /// `a · b` in f64 from the f16 inputs, and each element's `Σ |a · b|` (the error's scale).
    fn reference(a: &[f16], b: &[f16], (m, n, k): (usize, usize, usize)) -> Vec<(f64, f64)> {
        let mut c = vec![(0.0, 0.0); m * n];
        for i in 0..m {
            for j in 0..n {
                for x in 0..k {
                    let p = a[i * k + x].to_f32() as f64 * b[x * n + j].to_f32() as f64;
                    c[i * n + j].0 += p;
                    c[i * n + j].1 += p.abs();
                }
            }
        }
        c
    }

    // ANCHOR: test
    #[test]
    fn matmul_matches_the_cpu_on_both_targets() {
        let device = Device::emulator();
        let module = device.host_module().unwrap();
        for (m, n, k) in [(64, 64, 32), (70, 33, 45), (1, 1, 1)] {
            let a: Vec<f16> = crate::values(3, m * k, 1.0).into_iter().map(f16::from_f32).collect();
            let b: Vec<f16> = crate::values(4, k * n, 1.0).into_iter().map(f16::from_f32).collect();
            let want = reference(&a, &b, (m, n, k));
            // The emulator runs the mma.sync body (sm_80) or the wgmma body (sm_90a).
            for target in [EmulatedTarget::Sm80, EmulatedTarget::Sm90a] {
                let got = with_target(target, || matmul_f16(&device, &module, &a, &b, (m, n, k)))
                    .unwrap();
                for (i, (g, &(w, spread))) in got.iter().zip(&want).enumerate() {
                    // f16 rounding of the result, plus the accumulation's rounding.
                    let tol = w.abs() / 1024.0 + spread * 1e-6 + 1e-6;
                    let g = g.to_f32() as f64;
                    assert!((g - w).abs() <= tol, "{target:?} {m}x{n}x{k} [{i}]: {g} vs {w}");
                }
            }
        }
    }
    // ANCHOR_END: test
}
