//! The kernel of the `tensor_tuned_*` cases: `out = a + 1`, autotuned over `BLOCK`.

use tessera::tile_kernel;

#[tile_kernel(BLOCK = [128, 256], autotune(key = [a.size(0)]))]
pub fn add<const BLOCK: usize>(a: Tensor<f32, 1>, out: Tensor<f32, 1>) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < out.size(0);
    store(out + offs, load(a + offs, mask, 0.0) + 1.0, mask);
}

/// One program per `BLOCK` elements of `out`.
pub fn grid(c: &add::Consts, s: &add::Sizes) -> (u32,) {
    (s.out[0].div_ceil(c.BLOCK) as u32,)
}
