//! `#[tile_kernel]` elementwise kernels on the emulator against CPU references, over sizes with
//! ragged tails, through the generated launcher.

use tessera::launch::Device;
use tessera_kernels::tiled::elementwise::tile_vec_add;

/// splitmix64 → uniform in [-1, 1).
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
fn vec_add_matches_cpu_on_ragged_sizes() {
    let device = Device::emulator();
    for n in [1usize, 3, 4, 5, 127, 1024, 1025, 2048 + 7, 5000] {
        let a = values(1, n);
        let b = values(2, n);
        let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        // 8 guard elements past the end must stay untouched.
        let dout = device.upload(&vec![7.5f32; n + 8]).unwrap();
        tile_vec_add::emulate(
            tile_vec_add::Consts { BLOCK: 1024 },
            |c: &tile_vec_add::Consts| (n.div_ceil(c.BLOCK) as u32,),
            da.ptr(),
            db.ptr(),
            dout.ptr(),
            n as i32,
        )
        .unwrap();
        let out = dout.download().unwrap();
        for i in 0..n {
            assert_eq!(out[i], a[i] + b[i], "n {n} i {i}");
        }
        assert!(
            out[n..].iter().all(|&v| v == 7.5),
            "n {n}: wrote past the end"
        );
    }
}

#[test]
fn vec_add_checks_alignment_and_specialisation() {
    let device = Device::emulator();
    let a = device.upload(&values(3, 64)).unwrap();
    let out = device.zeros::<f32>(64).unwrap();
    // A pointer one element in breaks the 16-byte assumption of the vectorized variant: the
    // launcher picks the unaligned variant, which still computes the right thing.
    let spec = tile_vec_add::specialisation(
        &tile_vec_add::Consts { BLOCK: 1024 },
        &(a.ptr().offset(1), a.ptr(), out.ptr(), 63),
    )
    .unwrap();
    assert!(spec.kernel.name.ends_with("unaligned"), "{spec:?}");
    tile_vec_add::emulate(
        tile_vec_add::Consts { BLOCK: 1024 },
        1,
        a.ptr().offset(1),
        a.ptr(),
        out.ptr(),
        63,
    )
    .unwrap();
    let (av, got) = (a.download().unwrap(), out.download().unwrap());
    for i in 0..63 {
        assert_eq!(got[i], av[i + 1] + av[i]);
    }
    // A block size that was not compiled is a clear error.
    let err = tile_vec_add::emulate(
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

/// The typed `launch` through a `Device` (here the emulator): the module only needs the PTX
/// entry declarations, which the launcher checks the arguments against (written out here as
/// rustc emits them; the GPU run loads the real PTX of the crate).
#[test]
fn vec_add_launches_through_a_device_and_module() {
    const PTX: &str = "
.version 7.0
.target sm_80
.address_size 64
.visible .entry tile_vec_add(.param .u64 a, .param .u64 b, .param .u64 out, .param .u32 n) { ret; }
.visible .entry tile_vec_add__unaligned(.param .u64 a, .param .u64 b, .param .u64 out, .param .u32 n) { ret; }
";
    let device = Device::emulator();
    let module = device.load_ptx(PTX).unwrap();
    let n = 3000;
    let (a, b) = (values(4, n), values(5, n));
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let dout = device.zeros::<f32>(n).unwrap();
    let report = tile_vec_add::launch(
        &device,
        &module,
        tile_vec_add::Consts { BLOCK: 1024 },
        |c: &tile_vec_add::Consts| (n.div_ceil(c.BLOCK) as u32,),
        da.ptr(),
        db.ptr(),
        dout.ptr(),
        n as i32,
    )
    .unwrap();
    assert!(report.emulator_report().is_some());
    let out = dout.download().unwrap();
    assert!((0..n).all(|i| out[i] == a[i] + b[i]));
    // A pointer that is not a buffer of this device is refused before launching.
    let foreign = tessera::Ptr::<f32>::from_addr(0x1000_0000);
    let err = tile_vec_add::launch(
        &device,
        &module,
        tile_vec_add::Consts { BLOCK: 1024 },
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
