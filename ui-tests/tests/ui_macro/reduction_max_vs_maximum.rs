use tessera::tile_kernel;

#[tile_kernel]
fn relu(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    let v = load(x + offs);
    store(out + offs, v.max(0.0));
}

fn main() {}
