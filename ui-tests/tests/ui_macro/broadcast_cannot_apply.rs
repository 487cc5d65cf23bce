use tessera::tile_kernel;

#[tile_kernel]
fn add(out: Ptr<f32>, a: Ptr<f32>, b: Ptr<f32>) {
    let x = load(a + arange(0, 128));
    let y = load(b + arange(0, 64));
    store(out + arange(0, 128), x + y);
}

fn main() {}
