//! `vec_add` and `copy` on the emulator against CPU references, ragged sizes included.

mod support;

use support::{launch, Buffer, Rng};
use tessera_kernels::{COPY, VEC_ADD};

const SENTINEL: u32 = 0xdead_beef;

/// Sizes around every boundary: vector (4), warp (128 elements), block (4 * block), plus 0.
const SIZES: [u32; 16] = [
    0, 1, 2, 3, 4, 5, 7, 8, 127, 128, 129, 511, 1023, 1024, 1025, 10_003,
];

fn grid_for(n: u32, block: u32) -> u32 {
    n.div_ceil(4 * block).max(1)
}

#[test]
fn vec_add_matches_cpu_for_ragged_sizes() {
    let mut rng = Rng(1);
    for block in [32u32, 128, 256] {
        for &n in &SIZES {
            let a: Vec<f32> = (0..n).map(|_| rng.next_f32() * 100.0).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.next_f32() * 100.0).collect();
            let mut da = Buffer::from_f32(&a);
            let mut db = Buffer::from_f32(&b);
            // 8 extra words of sentinel past the end: the masked tail must not write them.
            let mut dout = Buffer::filled(n as usize + 8, SENTINEL);
            launch(
                VEC_ADD,
                [grid_for(n, block), 1, 1],
                [block, 1, 1],
                0,
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
    let n = 37;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let (mut da, mut db) = (Buffer::from_f32(&a), Buffer::from_f32(&b));
    let mut dout = Buffer::filled(n + 4, SENTINEL);
    launch(
        VEC_ADD,
        [5, 1, 1],
        [64, 1, 1],
        0,
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
    let mut rng = Rng(2);
    for block in [32u32, 256] {
        for &n in &SIZES {
            let x: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let mut dx = Buffer::from_u32(&x);
            let mut dout = Buffer::filled(n as usize + 8, SENTINEL);
            launch(
                COPY,
                [grid_for(n, block), 1, 1],
                [block, 1, 1],
                0,
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

#[test]
fn misaligned_vector_access_is_reported() {
    // The kernels need 16-byte aligned pointers; the emulator reports a violation.
    let mut dx = Buffer::from_u32(&[0; 16]);
    let mut dout = Buffer::from_u32(&[0; 16]);
    let err = launch(
        COPY,
        [1, 1, 1],
        [32, 1, 1],
        0,
        (dx.ptr::<f32>().offset(1), dout.ptr(), 8),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not 16-byte aligned"), "{err}");
}

#[test]
fn accesses_past_the_buffers_are_reported_not_performed() {
    // n larger than the buffers: the launch must fail with the first out-of-range access,
    // and nothing past the buffers may be written.
    let mut da = Buffer::from_f32(&[1.0; 8]);
    let mut db = Buffer::from_f32(&[2.0; 8]);
    let mut dout = Buffer::from_f32(&[0.0; 8]);
    let err = launch(
        VEC_ADD,
        [1, 1, 1],
        [32, 1, 1],
        0,
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
}
