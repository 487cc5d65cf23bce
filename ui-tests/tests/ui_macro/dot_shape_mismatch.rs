use tessera::{f16, tile_kernel};

#[tile_kernel(num_warps = 4)]
fn matmul(a: Ptr<f16>, b: Ptr<f16>, c: Ptr<f32>) {
    let a_tile = load(a + arange(0, 64).expand_dims(1) * 32 + arange(0, 32).expand_dims(0));
    let b_tile = load(b + arange(0, 16).expand_dims(1) * 64 + arange(0, 64).expand_dims(0));
    let acc = dot(a_tile, b_tile);
    store(c + arange(0, 64).expand_dims(1) * 64 + arange(0, 64).expand_dims(0), acc);
}

fn main() {}
