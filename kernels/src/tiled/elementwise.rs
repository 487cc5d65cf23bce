//! Elementwise tile kernels.

use tessera::{tile_kernel, Ptr};

/// `out[i] = a[i] + b[i]` for `i < n`, `BLOCK` elements per program.
#[tile_kernel(num_warps = 4, BLOCK = [1024])]
pub fn tile_vec_add<const BLOCK: usize>(a: Ptr<f32>, b: Ptr<f32>, out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    let x = load(a + offs, mask, 0.0);
    let y = load(b + offs, mask, 0.0);
    store(out + offs, x + y, mask);
}
