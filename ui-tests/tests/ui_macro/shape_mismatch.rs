use tessera::tile_kernel;

#[tile_kernel]
fn interleave(out: Ptr<f32>, a: Ptr<f32>, b: Ptr<f32>) {
    let left = load(a + arange(0, 128));
    let right = load(b + arange(0, 64));
    let both = join(left, right);
    store(out + arange(0, 256), both.reshape([256]));
}

fn main() {}
