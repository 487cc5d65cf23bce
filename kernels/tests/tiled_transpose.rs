//! The `#[tile_kernel]` transposes on the test device (the GPU when present, else the emulator;
//! see `support`): exact against the CPU over ragged shapes, and, on the emulator's counters,
//! the one layout conversion goes through shared memory conflict-free (the wavefront count
//! equals the ideal count at every shared-memory call site), as the planner promised.

mod support;

use support::{device, device_and_module, launch_tensors, leading_view};
use tessera::emulator::SharedAccessKind;
use tessera::f16;
use tessera::tensor::Tensor;
use tessera_kernels::tiled::transpose::{tile_transpose, tile_transpose_warp};

fn matrix(m: usize, n: usize) -> Vec<f32> {
    (0..m * n).map(|i| i as f32 * 0.5 - 3.0).collect()
}

/// `out` (`n × m`) is the transpose of `x` (`m × n`), element for element.
fn assert_transposed<T: PartialEq + std::fmt::Debug>(
    out: &[T],
    x: &[T],
    m: usize,
    n: usize,
    what: &str,
) {
    for i in 0..m {
        for j in 0..n {
            assert_eq!(out[j * m + i], x[i * n + j], "{what}{m}x{n}: ({i}, {j})");
        }
    }
}

/// Runs the transpose `$kernel` (`$consts`, `$grid` programs) of `$x` (an `[$m, $n]` tensor)
/// into the `[$n, $m]` view of the first `$m · $n` elements of a buffer that starts as `$out`;
/// gives the whole buffer and the launch report.
macro_rules! run_transpose {
    ($kernel:ident, $consts:expr, $grid:expr, $x:expr, $out:expr, ($m:expr, $n:expr)) => {{
        let gpu = device();
        let (device, _) = device_and_module();
        let (m, n) = ($m, $n);
        let tx = Tensor::from_slice(device, $x, &[m, n]).unwrap();
        let mut stored = Tensor::from_slice(device, $out, &[$out.len()]).unwrap();
        let run = {
            let mut tout = leading_view(&mut stored, &[n, m]);
            launch_tensors!(gpu, $kernel, $consts, $grid, &tx, &mut tout).unwrap()
        };
        (stored.to_vec().unwrap(), run)
    }};
}

#[test]
fn transpose_matches_cpu_on_ragged_shapes() {
    let gpu = device();
    let shapes = gpu.cases(
        &[(32, 32), (1, 1), (5, 37), (64, 33), (100, 7), (31, 96)],
        &[(1000, 1003), (4096, 4096), (3, 100_001)],
    );
    for (m, n) in shapes {
        let x = matrix(m, n);
        // Guard elements past the end must stay untouched.
        let guarded = vec![9.25f32; m * n + 8];
        let consts = tile_transpose::Consts { BM: 32, BN: 32 };
        let grid = |c: &tile_transpose::Consts| (m.div_ceil(c.BM) as u32, n.div_ceil(c.BN) as u32);
        let (out, report) = run_transpose!(tile_transpose, consts, grid, &x, &guarded, (m, n));
        assert_transposed(&out, &x, m, n, "");
        assert!(
            out[m * n..].iter().all(|&v| v == 9.25),
            "{m}x{n}: wrote past the end"
        );
        let what = "tile_transpose: shared-memory traffic and wavefronts of the conversion";
        let Some(report) = gpu.emulator_only(&report, what) else {
            continue;
        };
        // The conversion between the load and the store layouts: shared memory, conflict-free.
        let stores: Vec<_> = report
            .shared_sites
            .iter()
            .filter(|s| s.kind == SharedAccessKind::Store)
            .collect();
        let loads: Vec<_> = report
            .shared_sites
            .iter()
            .filter(|s| s.kind == SharedAccessKind::Load)
            .collect();
        assert!(!stores.is_empty() && !loads.is_empty(), "{m}x{n}: {report}");
        for site in stores.iter().chain(&loads) {
            assert_eq!(
                site.stats.wavefronts, site.stats.ideal_wavefronts,
                "{m}x{n}: bank conflicts at {}:{} ({:?})\n{report}",
                site.line, site.column, site.kind
            );
        }
        assert_eq!(
            report.shared_wavefronts, report.shared_ideal_wavefronts,
            "{report}"
        );
        // The plan (TESSERA_EXPLAIN=tile_transpose): per warp 8 stores and 8 loads of 32 bits,
        // one wavefront each. A 32×32 f32 tile is 4 KiB: each program moves it once.
        let programs = (m.div_ceil(32) * n.div_ceil(32)) as u64;
        for sites in [&stores, &loads] {
            let accesses: u64 = sites.iter().map(|s| s.stats.accesses).sum();
            let wavefronts: u64 = sites.iter().map(|s| s.stats.wavefronts).sum();
            assert_eq!(accesses, programs * 4 * 8, "{m}x{n}: {report}");
            assert_eq!(wavefronts, accesses, "{m}x{n}: {report}");
        }
    }
}

/// The one-warp transposes: the planner picks warp shuffles for every `B`. At `B = 8` the
/// lowering keeps them (no shared memory at all); at 16 and 32 each round's send and receive
/// registers depend on the lane, and the register selects that costs make the lowering take
/// the planner's shared-memory alternative (conflict-free). Exact either way.
#[test]
fn warp_transposes_shuffle_or_share() {
    let gpu = device();
    for b in [8usize, 16, 32] {
        for (m, n) in [(b, b), (3, 5), (2 * b + 1, b - 1), (40, 70)] {
            let x = matrix(m, n);
            let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
            let grid = (m.div_ceil(b) as u32, n.div_ceil(b) as u32);
            let (consts, zeros) = (tile_transpose_warp::Consts { B: b }, vec![0.0f32; m * n]);
            let (out, report) =
                run_transpose!(tile_transpose_warp, consts, grid, &x, &zeros, (m, n));
            let consts = tile_transpose_warp::Consts { B: b };
            let zeros = vec![f16::from_f32(0.0); m * n];
            let (outh, report_h) =
                run_transpose!(tile_transpose_warp, consts, grid, &xh, &zeros, (m, n));
            assert_transposed(&out, &x, m, n, &format!("B {b} "));
            let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
            assert_transposed(&bits(&outh), &bits(&xh), m, n, &format!("f16 B {b} "));
            let what = format!("tile_transpose_warp B = {b}: shared-memory traffic");
            let reports = [
                gpu.emulator_only(&report, &what),
                gpu.emulator_only(&report_h, &format!("{what} (f16)")),
            ];
            for r in reports.into_iter().flatten() {
                if b == 8 {
                    assert_eq!(r.shared_accesses, 0, "B {b}: {r}");
                } else {
                    assert!(r.shared_accesses > 0, "B {b}: {r}");
                    assert_eq!(r.shared_wavefronts, r.shared_ideal_wavefronts, "B {b}: {r}");
                }
            }
        }
    }
}

/// Planning per target: the one-warp `f16` transpose's conversion reads shared memory by
/// `ldmatrix` on NVIDIA; its amdgpu body, planned for AMD, by vector loads. On the emulator the
/// launch emulating amdgpu runs that body (no `ldmatrix` access, the same exact result, no
/// conflicts), the one emulating sm_80 the NVIDIA body.
#[test]
fn the_amdgpu_body_reads_shared_memory_by_vector_loads() {
    use tessera::emulator::{with_target, EmulatedTarget};
    let gpu = device();
    let (m, n, b) = (64, 96, 32);
    let x: Vec<f16> = matrix(m, n).iter().map(|&v| f16::from_f32(v)).collect();
    let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
    let grid = (m.div_ceil(b) as u32, n.div_ceil(b) as u32);
    for target in [EmulatedTarget::Sm80, EmulatedTarget::Amdgpu] {
        let consts = tile_transpose_warp::Consts { B: b };
        let zeros = vec![f16::from_f32(0.0); m * n];
        let (out, report) = with_target(target, || {
            run_transpose!(tile_transpose_warp, consts, grid, &x, &zeros, (m, n))
        });
        let what = format!(
            "tile_transpose_warp f16 B = {b} emulating {}",
            target.name()
        );
        assert_transposed(&bits(&out), &bits(&x), m, n, &what);
        let Some(r) = gpu.emulator_only(&report, &what) else {
            continue;
        };
        let reads = |kind| r.shared_sites.iter().filter(|s| s.kind == kind).count();
        let ldmatrix = reads(SharedAccessKind::Ldmatrix);
        if target == EmulatedTarget::Amdgpu {
            assert_eq!(ldmatrix, 0, "{what}: {r}");
            assert!(reads(SharedAccessKind::Load) > 0, "{what}: {r}");
        } else {
            assert!(ldmatrix > 0, "{what}: {r}");
        }
        assert_eq!(
            r.shared_wavefronts, r.shared_ideal_wavefronts,
            "{what}: {r}"
        );
    }
}
