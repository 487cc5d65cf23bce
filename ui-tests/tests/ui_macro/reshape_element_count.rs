use tessera::tile_kernel;

#[tile_kernel]
fn square(out: Ptr<f32>, x: Ptr<f32>) {
    let v = load(x + arange(0, 128));
    let grid = v.reshape([16, 16]);
    store(out + arange(0, 256), grid.reshape([256]));
}

fn main() {}
