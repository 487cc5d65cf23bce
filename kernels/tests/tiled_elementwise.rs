//! `#[tile_kernel]` elementwise kernels against CPU references, over sizes with ragged tails,
//! through the generated launcher on the test device (the GPU when present, else the emulator;
//! see `support`).

mod support;

use support::{device, draws, launch_tile, Guarded, Rng, TestDevice};
use tessera::launch::{LaunchError, LaunchReport};
use tessera::Ptr;
use tessera_kernels::tiled::elementwise::tile_vec_add;

/// Uniform in [-1, 1) from the seeded test RNG.
fn values(seed: u64, n: usize) -> Vec<f32> {
    draws(seed, n, Rng::next_f32)
}

/// The block `tile_vec_add` is compiled for.
const COMPILED: tile_vec_add::Consts = tile_vec_add::Consts { BLOCK: 1024 };

/// The grid over `n` elements: one program per block.
fn programs(n: usize) -> impl Fn(&tile_vec_add::Consts) -> (u32,) {
    move |c| (n.div_ceil(c.BLOCK) as u32,)
}

/// `out = a + b` over `n` elements through `tile_vec_add` at the compiled block.
fn vec_add(
    gpu: &TestDevice,
    a: Ptr<f32>,
    b: Ptr<f32>,
    out: Ptr<f32>,
    n: usize,
) -> Result<LaunchReport, LaunchError> {
    launch_tile!(
        gpu,
        tile_vec_add,
        COMPILED,
        programs(n),
        a,
        b,
        out,
        n as i32
    )
}

#[test]
fn vec_add_matches_cpu_on_ragged_sizes() {
    let gpu = device();
    let device = gpu.device();
    let sizes = gpu.cases(
        &[1usize, 3, 4, 5, 127, 1024, 1025, 2048 + 7, 5000],
        &[(1 << 24) + 3, 10_000_019],
    );
    for n in sizes {
        let a = values(1, n);
        let b = values(2, n);
        let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let dout = Guarded::new(gpu, n, 7.5f32);
        vec_add(gpu, da.ptr(), db.ptr(), dout.ptr(), n).unwrap();
        let out = dout.outputs(&format!("n {n}"));
        for i in 0..n {
            assert_eq!(out[i], a[i] + b[i], "n {n} i {i}");
        }
    }
}

#[test]
fn vec_add_checks_alignment_and_specialisation() {
    let gpu = device();
    let device = gpu.device();
    let a = device.upload(&values(3, 64)).unwrap();
    let out = device.zeros::<f32>(64).unwrap();
    // A pointer one element in breaks the 16-byte assumption of the vectorized variant: the
    // launcher picks the unaligned variant, which still computes the right thing.
    let spec =
        tile_vec_add::specialisation(&COMPILED, &(a.ptr().offset(1), a.ptr(), out.ptr(), 63))
            .unwrap();
    assert!(spec.kernel.name.ends_with("unaligned"), "{spec:?}");
    vec_add(gpu, a.ptr().offset(1), a.ptr(), out.ptr(), 63).unwrap();
    let (av, got) = (a.download().unwrap(), out.download().unwrap());
    for i in 0..63 {
        assert_eq!(got[i], av[i + 1] + av[i]);
    }
    // A block size that was not compiled is a clear error.
    let err = launch_tile!(
        gpu,
        tile_vec_add,
        tile_vec_add::Consts { BLOCK: 512 },
        1,
        a.ptr(),
        a.ptr(),
        out.ptr(),
        64,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("no specialisation with BLOCK = 512"),
        "{err}"
    );
}

/// The typed `launch` on the test device with the embedded module: the launcher checks the
/// arguments against the PTX entry, and a pointer that is no buffer of the device is refused
/// before anything runs (on the GPU too).
#[test]
fn vec_add_launches_through_a_device_and_module() {
    let gpu = device();
    let Some(module) = gpu.module() else {
        gpu.skip("the typed launch with a module (the crate was built without PTX)");
        return;
    };
    let device = gpu.device();
    let n = 3000;
    let (a, b) = (values(4, n), values(5, n));
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let dout = device.zeros::<f32>(n).unwrap();
    let report = tile_vec_add::launch(
        device,
        module,
        COMPILED,
        programs(n),
        da.ptr(),
        db.ptr(),
        dout.ptr(),
        n as i32,
    )
    .unwrap();
    assert_eq!(report.emulator_report().is_some(), !gpu.is_gpu());
    let out = dout.download().unwrap();
    assert!((0..n).all(|i| out[i] == a[i] + b[i]));
    // A pointer that is not a buffer of this device is refused before launching.
    let foreign = tessera::Ptr::<f32>::from_addr(0x1000_0000);
    let err = tile_vec_add::launch(
        device,
        module,
        COMPILED,
        1,
        foreign,
        db.ptr(),
        dout.ptr(),
        16,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("neither null nor inside a live buffer"),
        "{err}"
    );
}
