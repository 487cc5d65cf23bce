//! The code of the Tessera guide (`docs/guide/`). Each module is one chapter's code; the book
//! pulls it in with `{{#include …:anchor}}`, so the book shows exactly the code that is compiled
//! and tested here. Every kernel runs on the CPU emulator (`Device::emulator()` and its
//! `host_module()`, no PTX) and is checked against a plain-Rust reference by the module's tests:
//! `cargo test -p tessera-guide`.
//!
//! [`vector_add`] is the kernel crate of the first tutorial's user crate (`docs/guide/my-app`,
//! which `scripts/own_crate_test.sh` builds outside the workspace); it is compiled here from the
//! same file.

// The items `#[tile_kernel]` generates are documented: this crate checks it.
#![warn(missing_docs)]

pub mod attention;
pub mod matmul;
pub mod softmax;
pub mod tensors;
pub mod transpose;
pub mod tuning;
/// The first tutorial's kernel crate (`docs/guide/my-app/my-kernels`), compiled from its file.
#[path = "../../my-app/my-kernels/src/lib.rs"]
pub mod vector_add;

/// Values in `[-scale, scale)` from a seeded LCG (the tests' inputs).
pub fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (((s >> 40) as f32 / (1u64 << 23) as f32) - 1.0) * scale
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::vector_add::add_vectors;
    use tessera::launch::Device;

    // ANCHOR: emulator
    /// The first tutorial's kernel on the emulator over lengths around its block size.
    #[test]
    fn vector_add_matches_the_cpu() {
        let device = Device::emulator();
        let module = device.host_module().unwrap();
        for n in [1usize, 1000, 1024, 1025, 5000] {
            let x = crate::values(1, n, 10.0);
            let y = crate::values(2, n, 10.0);
            let (dx, dy) = (device.upload(&x).unwrap(), device.upload(&y).unwrap());
            let out = device.zeros::<f32>(n).unwrap();
            let consts = add_vectors::Consts { BLOCK: 1024 };
            let grid = |c: &add_vectors::Consts| ((n as u32).div_ceil(c.BLOCK as u32),);
            add_vectors::launch(
                &device,
                &module,
                consts,
                grid,
                out.ptr(),
                dx.ptr(),
                dy.ptr(),
                n as i32,
            )
            .unwrap();
            let got = out.download().unwrap();
            for i in 0..n {
                assert_eq!(got[i], x[i] + y[i], "n = {n}, element {i}");
            }
        }
    }
    // ANCHOR_END: emulator
}
