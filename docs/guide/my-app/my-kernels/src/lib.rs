// Device builds are no_std and use two nightly features; host builds use neither.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use tessera::{tile_kernel, Ptr};

/// `out[i] = x[i] + y[i]` for `i < n`, `BLOCK` elements per program.
#[tile_kernel(num_warps = 4, BLOCK = [1024])]
pub fn add_vectors<const BLOCK: usize>(out: Ptr<f32>, x: Ptr<f32>, y: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(out + offs, load(x + offs, mask, 0.0) + load(y + offs, mask, 0.0), mask);
}
