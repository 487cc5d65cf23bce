use tessera::tile_kernel;

#[tile_kernel]
fn copy(x: Ptr<f32>, y: Ptr<f32>) {
    let offs = arange(0, 128);
    let v = load(x + offs, offs < 100, 0.0, 1.0);
    store(y + offs, v);
}

fn main() {}
