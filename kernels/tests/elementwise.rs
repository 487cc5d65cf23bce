//! `vec_add` and `copy` against CPU references, ragged sizes included, on the test device (the
//! GPU when present, else the emulator; see `support`), and the emulator's own diagnostics of
//! these kernels (misaligned and out-of-bounds accesses), which run on the emulator.

mod support;

use support::{device, run_in_buffers, Buffer, Rng};
use tessera::launch::{Device, LaunchConfig};
use tessera::Ptr;
use tessera_kernels::{COPY, VEC_ADD};

const SENTINEL: u32 = 0xdead_beef;

/// Sizes around every boundary: vector (4), warp (128 elements), block (4 * block), plus 0.
const SIZES: [u32; 16] = [
    0, 1, 2, 3, 4, 5, 7, 8, 127, 128, 129, 511, 1023, 1024, 1025, 10_003,
];

/// On the GPU also sizes of many blocks (and a grid past 65535 blocks of 32 threads).
const GPU_SIZES: [u32; 3] = [1 << 20, (1 << 22) + 5, 9_000_001];

fn sizes() -> Vec<u32> {
    device().cases(&SIZES, &GPU_SIZES)
}

fn grid_for(n: u32, block: u32) -> u32 {
    n.div_ceil(4 * block).max(1)
}

#[test]
fn vec_add_matches_cpu_for_ragged_sizes() {
    let gpu = device();
    let mut rng = Rng(1);
    for block in [32u32, 128, 256] {
        for n in sizes() {
            let a: Vec<f32> = (0..n).map(|_| rng.next_f32() * 100.0).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.next_f32() * 100.0).collect();
            let da = Buffer::from_f32(gpu.device(), &a);
            let db = Buffer::from_f32(gpu.device(), &b);
            // 8 extra words of sentinel past the end: the masked tail must not write them.
            let dout = Buffer::filled(gpu.device(), n as usize + 8, SENTINEL);
            gpu.launch(
                VEC_ADD,
                LaunchConfig::linear(grid_for(n, block), block),
                (da.ptr(), db.ptr(), dout.ptr(), n),
            )
            .unwrap();
            let out = dout.to_u32();
            for i in 0..n as usize {
                assert_eq!(
                    f32::from_bits(out[i]),
                    a[i] + b[i],
                    "n {n} block {block} i {i}"
                );
            }
            assert!(
                out[n as usize..].iter().all(|&w| w == SENTINEL),
                "n {n}: wrote past the end"
            );
        }
    }
}

#[test]
fn vec_add_with_more_threads_than_elements() {
    // Grid far larger than needed: extra threads must do nothing.
    let gpu = device();
    let n = 37;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let (da, db) = (
        Buffer::from_f32(gpu.device(), &a),
        Buffer::from_f32(gpu.device(), &b),
    );
    let dout = Buffer::filled(gpu.device(), n + 4, SENTINEL);
    gpu.launch(
        VEC_ADD,
        LaunchConfig::linear(5, 64),
        (da.ptr(), db.ptr(), dout.ptr(), n as u32),
    )
    .unwrap();
    let out = dout.to_f32();
    for (i, &v) in out[..n].iter().enumerate() {
        assert_eq!(v, 1.5 * i as f32);
    }
    assert!(dout.to_u32()[n..].iter().all(|&w| w == SENTINEL));
}

#[test]
fn copy_matches_cpu_for_ragged_sizes() {
    let gpu = device();
    let mut rng = Rng(2);
    for block in [32u32, 256] {
        for n in sizes() {
            let x: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let dx = Buffer::from_u32(gpu.device(), &x);
            let dout = Buffer::filled(gpu.device(), n as usize + 8, SENTINEL);
            gpu.launch(
                COPY,
                LaunchConfig::linear(grid_for(n, block), block),
                (dx.ptr(), dout.ptr(), n),
            )
            .unwrap();
            let out = dout.to_u32();
            assert_eq!(&out[..n as usize], &x[..], "n {n} block {block}");
            assert!(
                out[n as usize..].iter().all(|&w| w == SENTINEL),
                "n {n}: wrote past the end"
            );
        }
    }
}

/// The emulator's check of the kernels' 16-byte alignment assumption. A test of the emulator's
/// diagnostics: it runs on the emulator whatever the test device is (on a GPU the same launch
/// is a sticky `CUDA_ERROR_MISALIGNED_ADDRESS` that would end every later test of the binary).
#[test]
fn emulator_reports_misaligned_vector_access() {
    let emulator = Device::emulator();
    let dx = Buffer::from_u32(&emulator, &[0; 16]);
    let dout = Buffer::from_u32(&emulator, &[0; 16]);
    let err = run_in_buffers(
        COPY,
        LaunchConfig::linear(1, 32),
        (dx.ptr::<f32>().offset(1), dout.ptr(), 8),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not 16-byte aligned"), "{err}");
}

/// The emulator's memory map: with `n` larger than the buffers the launch must fail with the
/// first out-of-range access, and nothing past the buffers may be written. On the emulator
/// whatever the test device is (on a GPU this is `compute-sanitizer`'s job).
#[test]
fn emulator_reports_accesses_past_the_buffers_and_does_not_perform_them() {
    let emulator = Device::emulator();
    let da = Buffer::from_f32(&emulator, &[1.0; 8]);
    let db = Buffer::from_f32(&emulator, &[2.0; 8]);
    let dout = Buffer::from_f32(&emulator, &[0.0; 8]);
    let err = run_in_buffers(
        VEC_ADD,
        LaunchConfig::linear(1, 32),
        (da.ptr(), db.ptr(), dout.ptr(), 12),
    )
    .unwrap_err();
    match &err {
        tessera::emulator::EmulatorError::GlobalOutOfBounds {
            thread, op, bytes, ..
        } => {
            assert_eq!(thread.thread, [2, 0, 0]);
            assert_eq!((*op, *bytes), ("ld.global.v4.b32", 16));
        }
        other => panic!("expected an out-of-bounds error, got {other}"),
    }
    assert!(
        err.to_string().contains("outside every allocation"),
        "{err}"
    );
}

#[test]
fn handles_name_their_ptx_entry_points() {
    assert_eq!(VEC_ADD.name, "vec_add");
    assert_eq!(COPY.name, "copy");
    assert_eq!(tessera_kernels::ROW_SUM.name, "row_sum");
    // …and the embedded PTX has those entries.
    for name in [VEC_ADD.name, COPY.name, tessera_kernels::ROW_SUM.name] {
        match device().has_entry(name) {
            Some(present) => assert!(present, "`{name}` is not an entry of the embedded PTX"),
            None => device().skip("the handles' names are entries of the PTX (no PTX built)"),
        }
    }
}

#[repr(C, align(16))]
struct Aligned([f32; 8]);

/// NaN sums are the GPU's canonical `0x7fffffff` on the emulator too, in the 128-bit path
/// (elements 0..4) and the predicated tail (4..7), whatever the operands' NaN payloads.
#[test]
fn nan_sums_are_canonical_on_the_emulator() {
    let nan = |bits: u32| f32::from_bits(bits);
    let inf = f32::INFINITY;
    let a = Aligned([
        nan(0x7f80_0001),
        nan(0xffc0_0000),
        inf,
        1.0,
        nan(0x7fd0_0001),
        inf,
        -0.0,
        0.0,
    ]);
    let b = Aligned([1.0, nan(0x7fc1_2345), -inf, 2.0, 3.0, -inf, -0.0, 0.0]);
    let mut out = Aligned([f32::from_bits(0xdead_beef); 8]); // element 7: not written
    let (ap, bp) = (
        Ptr::from_raw(a.0.as_ptr() as *mut f32),
        Ptr::from_raw(b.0.as_ptr() as *mut f32),
    );
    let op = Ptr::from_raw(out.0.as_mut_ptr());
    tessera::emulator::run_grid([1, 1, 1], [2, 1, 1], 0, &|| {
        (VEC_ADD.emulate)((ap, bp, op, 7))
    })
    .unwrap();
    let got: Vec<u32> = out.0.iter().map(|x| x.to_bits()).collect();
    let c = 0x7fff_ffff;
    assert_eq!(
        got,
        [c, c, c, 3.0f32.to_bits(), c, c, 0x8000_0000, 0xdead_beef],
        "{got:#010x?}"
    );
}
