//! The kernel of the untuned `tensor_*` cases: `out = a + 1`.

use tessera::tile_kernel;

#[tile_kernel(num_warps = 4, BLOCK = 128)]
pub fn add<const BLOCK: usize>(a: Tensor<f32, 1>, out: Tensor<f32, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    store(out + offs, load(a + offs, mask, 0.0) + 1.0, mask);
}
