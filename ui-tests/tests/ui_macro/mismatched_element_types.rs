use tessera::{f16, tile_kernel};

#[tile_kernel]
fn add(out: Ptr<f32>, a: Ptr<f32>, b: Ptr<f16>) {
    let offs = arange(0, 128);
    let sum = load(a + offs) + load(b + offs);
    store(out + offs, sum);
}

fn main() {}
