//! `for k in (a..b).num_stages(S)`: one loop's pipelining depth, in a kernel without the
//! attribute. A matmul whose K loop is pipelined over 3 stages and an unpipelined second pass
//! (`num_stages(1)`) run on the emulator in both bodies (sm_80: `cp.async` rings read by
//! `ldmatrix`; sm_90a: rings in the NVMMA layouts read by `wgmma`) against a CPU product.

use tessera::emulator::{with_target, EmulatedTarget, SharedAccessKind};
use tessera::launch::Device;
use tessera::{f16, tile_fn, tile_kernel, Ptr};

/// `acc + a_tile · b_tile` for the `[64, 32]` tile of `a` at rows `rm`, columns `ka` and the
/// `[32, 64]` tile of `b` at rows `ka`, columns `rn` (masked to `m × k` and `k × n`).
#[tile_fn]
fn k_step(acc: _, a: Ptr<f16>, b: Ptr<f16>, rm: _, rn: _, ka: _, m: i32, n: i32, k: i32) -> _ {
    let a_ok = (rm.expand_dims(1) < m) & (ka.expand_dims(0) < k);
    let b_ok = (ka.expand_dims(1) < k) & (rn.expand_dims(0) < n);
    let a_tile = load(a + rm.expand_dims(1) * k + ka.expand_dims(0), a_ok, 0.0);
    let b_tile = load(b + ka.expand_dims(1) * n + rn.expand_dims(0), b_ok, 0.0);
    dot(a_tile, b_tile, acc)
}

/// `c = a · b + a · b` for row-major `a` (`m × k`) and `b` (`k × n`) in 64 × 64 tiles: the
/// first product over a loop pipelined by its own `num_stages(3)`, the second over a loop that
/// keeps `num_stages(1)`.
#[tile_kernel(num_warps = 4, uses = [k_step])]
fn twice(a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>, m: i32, n: i32, k: i32) {
    let rm = program_id(0) * 64 + arange(0, 64);
    let rn = program_id(1) * 64 + arange(0, 64);
    let rk = arange(0, 32);
    let mut acc = zeros::<f32>([64, 64]);
    for kk in (0..cdiv(k, 32)).num_stages(3) {
        acc = k_step(acc, a, b, rm, rn, kk * 32 + rk, m, n, k);
    }
    for kk in (0..cdiv(k, 32)).num_stages(1) {
        acc = k_step(acc, a, b, rm, rn, kk * 32 + rk, m, n, k);
    }
    let c_ok = (rm.expand_dims(1) < m) & (rn.expand_dims(0) < n);
    store(c + rm.expand_dims(1) * n + rn.expand_dims(0), acc, c_ok);
}

/// Small integers (exact in f16 and in the f32 sums).
fn ints(seed: u64, len: usize) -> Vec<f16> {
    (0..len as u64)
        .map(|i| f16::from_f32(((i * 7 + seed * 13) % 9) as f32 - 4.0))
        .collect()
}

fn check(target: EmulatedTarget) {
    let device = Device::emulator();
    for (m, n, k) in [(64, 64, 32), (70, 48, 96), (17, 128, 160), (33, 33, 40)] {
        let (a, b) = (ints(1, m * k), ints(2, k * n));
        let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let dc = device.zeros::<f32>(m * n).unwrap();
        let grid = (m.div_ceil(64) as u32, n.div_ceil(64) as u32);
        let (mi, ni, ki) = (m as i32, n as i32, k as i32);
        let run = || twice::emulate(grid, da.ptr(), db.ptr(), dc.ptr(), mi, ni, ki);
        let report = with_target(target, run).unwrap();
        // The aligned variant (`n`, `k` multiples of 16) is the pipelined one; the unaligned
        // one's scalar accesses run unpipelined.
        let aligned = n % 16 == 0 && k % 16 == 0;
        let copied = report
            .shared_sites
            .iter()
            .any(|s| s.kind == SharedAccessKind::CpAsync);
        assert_eq!(copied, aligned, "{target:?} {m}x{n}x{k}: cp.async copies");
        let c = dc.download().unwrap();
        for i in 0..m {
            for j in 0..n {
                let dot: f32 = (0..k)
                    .map(|l| a[i * k + l].to_f32() * b[l * n + j].to_f32())
                    .sum();
                assert_eq!(
                    c[i * n + j],
                    2.0 * dot,
                    "{target:?} {m}x{n}x{k}: c[{i}, {j}]"
                );
            }
        }
    }
}

#[test]
fn a_loop_pipelined_by_its_own_num_stages_matches_cpu_on_sm80() {
    check(EmulatedTarget::Sm80);
}

#[test]
fn a_loop_pipelined_by_its_own_num_stages_matches_cpu_on_sm90a() {
    check(EmulatedTarget::Sm90a);
}
