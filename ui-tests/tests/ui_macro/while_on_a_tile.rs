use tessera::tile_kernel;

#[tile_kernel]
fn halve(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    let mut v = load(x + offs);
    while v > 1.0 {
        v = v * 0.5;
    }
    store(out + offs, v);
}

fn main() {}
