use tessera::tile_kernel;

#[tile_kernel(num_warps = 4)]
fn matmul(a: Ptr<f32>, b: Ptr<f32>, c: Ptr<f32>) {
    let r = arange(0, 64);
    let a_tile = load(a + r.expand_dims(1) * 64 + r.expand_dims(0));
    let b_tile = load(b + r.expand_dims(1) * 64 + r.expand_dims(0));
    let acc = dot(a_tile, b_tile);
    store(c + r.expand_dims(1) * 64 + r.expand_dims(0), acc);
}

fn main() {}
