use tessera::tile_kernel;

// The key of a kernel with tensor parameters takes their sizes and strides, of dimensions
// they have, and only of tensors.
#[tile_kernel(BLOCK = [128, 256], autotune(key = [x.size(1), n.size(0), x]))]
pub fn scale<const BLOCK: usize>(x: Tensor<f32, 1>, out: Tensor<f32, 1>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(out + offs, load(x + offs, mask, 0.0) * 2.0, mask);
}

fn main() {}
