use tessera::tile_kernel;

#[tile_kernel]
fn clamp(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    let v = load(x + offs);
    if v > 0.0 {
        store(out + offs, v);
    }
}

fn main() {}
