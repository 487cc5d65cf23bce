use tessera::tile_kernel;

#[tile_kernel]
fn copy(out: Ptr<f32>, x: Ptr<f32>) {
    let offsets = arange(0, 128);
    let v = load(x + ofsets);
    let total = v.sum(0);
    total = total * 2.0;
    store(out, total);
}

fn main() {}
