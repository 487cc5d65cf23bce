use tessera::{f16, tile_kernel};

#[tile_kernel(num_warps = 4, BM = 64, BK = 32)]
fn from_a_pointer<const BM: usize, const BK: usize>(p: Ptr<f16>, out: Tensor<f16, 2>) {
    let x = load_block(p, [0, 0], [BM, BK]);
    store(out + arange(0, BM).expand_dims(1) * BK + arange(0, BK).expand_dims(0), x);
}

#[tile_kernel(num_warps = 4, BM = 64, BK = 32)]
fn from_a_vector<const BM: usize, const BK: usize>(v: Tensor<f16, 1>, out: Tensor<f16, 2>) {
    let x = load_block(v, [0, 0], [BM, BK]);
    store(out + arange(0, BM).expand_dims(1) * BK + arange(0, BK).expand_dims(0), x);
}

#[tile_kernel(num_warps = 4, BM = 64, BK = 32)]
fn unsigned_origin<const BM: usize, const BK: usize>(t: Tensor<f16, 2>, r: u32, out: Tensor<f16, 2>) {
    let x = load_block(t, [r, 0], [BM, BK]);
    store(out + arange(0, BM).expand_dims(1) * BK + arange(0, BK).expand_dims(0), x);
}

#[tile_kernel(num_warps = 4, BM = 64, BK = 32)]
fn one_dimension<const BM: usize, const BK: usize>(t: Tensor<f16, 2>, out: Tensor<f16, 2>) {
    let x = load_block(t, [0, 0], [BM]);
    store(out + arange(0, BM).expand_dims(1) * BK + arange(0, BK).expand_dims(0), x);
}

fn main() {}
