use tessera::tile_kernel;

// A tensor parameter needs its rank.
#[tile_kernel(num_warps = 4, BLOCK = 128)]
pub fn no_rank<const BLOCK: usize>(x: Tensor<f32>) {
    let offs = arange(0, BLOCK);
    store(x + offs, zeros::<f32>([BLOCK]), offs < 4);
}

// `x.size(d)` for a dimension the tensor does not have, and a dimension that is no literal.
#[tile_kernel(num_warps = 4, BLOCK = 128)]
pub fn bad_dims<const BLOCK: usize>(x: Tensor<f32, 2>, d: i32) {
    let offs = arange(0, BLOCK);
    store(x + offs, zeros::<f32>([BLOCK]), offs < x.size(2));
    store(x + offs, zeros::<f32>([BLOCK]), offs < x.stride(d));
}

fn main() {}
