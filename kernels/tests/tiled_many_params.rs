//! A `#[tile_kernel]` with 16 parameters (more than tuples implement `KernelArgs` for), some
//! named like the launcher's own arguments, against a CPU reference through the generated
//! launcher on the test device (the GPU when present, else the emulator; see `support`).

mod support;

use support::{device, launch_over, Guarded};
use tessera::launch::{KernelArgs, KernelParam};
use tessera::Ptr;
use tessera_kernels::tiled::many_params::tile_weighted_sum16 as kernel;

fn values(seed: u32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 250.0 - 2.0
        })
        .collect()
}

#[test]
fn sixteen_parameters_launch_and_match_cpu() {
    let gpu = device();
    let device = gpu.device();
    for (n, (a_off, b_off, c_off)) in [
        (1usize, (3usize, 5usize, 7usize)),
        (255, (3, 5, 7)),
        (256, (16, 32, 0)),
        (1024, (0, 16, 48)),
    ] {
        let (a, b, c, d) = (
            values(1, n + a_off),
            values(2, n + b_off),
            values(3, n + c_off),
            values(4, n),
        );
        let (da, db, dc, dd) = (
            device.upload(&a).unwrap(),
            device.upload(&b).unwrap(),
            device.upload(&c).unwrap(),
            device.upload(&d).unwrap(),
        );
        let dout = Guarded::new(gpu, n, 7.5f32);
        let (wa, wb, wc, wd, bias) = (0.5f32, -2.0f32, 0.25f32, 3.0f32, 1.5f32);
        let (spec, specialisation) = (9i32, 4i32);
        launch_over!(
            gpu,
            kernel,
            BLOCK = 256,
            n,
            dout.ptr(),
            da.ptr(),
            db.ptr(),
            dc.ptr(),
            dd.ptr(),
            wa,
            wb,
            wc,
            wd,
            bias,
            spec,
            specialisation,
            n as i32,
            a_off as i32,
            b_off as i32,
            c_off as i32,
        )
        .unwrap();
        let out = dout.outputs(&format!("n {n}"));
        for i in 0..n {
            let want = a[i + a_off] * wa
                + b[i + b_off] * wb
                + c[i + c_off] * wc
                + d[i] * wd
                + bias
                + (spec - specialisation) as f32;
            assert!(
                (out[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
                "n {n} i {i}: {} vs {want}",
                out[i]
            );
        }
    }
}

#[test]
fn the_parameters_are_a_struct_passed_in_order() {
    let p = Ptr::<f32>::from_addr(0x1000);
    let args = kernel::Args {
        out: p,
        a: p,
        b: p,
        c: p,
        d: p,
        device: 1.0,
        module: 2.0,
        consts: 3.0,
        grid: 4.0,
        args: 5.0,
        spec: 6,
        specialisation: 7,
        n: 256,
        a_off: 16,
        b_off: 32,
        c_off: 48,
    };
    let params = args.kernel_params();
    assert_eq!(params.len(), 16);
    assert_eq!(params[0], KernelParam::Ptr(0x1000));
    assert_eq!(params[5], KernelParam::F32(1.0));
    assert_eq!(params[11], KernelParam::I32(7));
    assert_eq!(params[15], KernelParam::I32(48));
    // The alignment checks read the struct's fields: `a` one element in breaks the aligned
    // variant's assumption, and the unaligned variant is picked.
    let shifted = kernel::Args {
        a: p.offset(1),
        ..args
    };
    let spec = kernel::specialisation(&kernel::Consts { BLOCK: 256 }, &shifted).unwrap();
    assert!(
        spec.kernel.name.ends_with("unaligned"),
        "{}",
        spec.kernel.name
    );
    let spec = kernel::specialisation(&kernel::Consts { BLOCK: 256 }, &args).unwrap();
    assert!(
        !spec.kernel.name.ends_with("unaligned"),
        "{}",
        spec.kernel.name
    );
}
