use tessera::tile_kernel;

#[tile_kernel]
fn noise(out: Ptr<f32>, seed: f32) {
    let offs = arange(0, 128);
    store(out + offs, rand(seed, offs));
}

#[tile_kernel]
fn noise_literal(out: Ptr<u32>) {
    let offs = arange(0, 128);
    store(out + offs, randint(1.5, offs));
}

#[tile_kernel]
fn noise_float_offsets(out: Ptr<f32>, seed: i32) {
    let offs = arange(0, 128);
    store(out + offs, randn(seed, offs.to::<f32>()));
}

fn main() {}
