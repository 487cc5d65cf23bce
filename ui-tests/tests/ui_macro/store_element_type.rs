use tessera::{f16, tile_kernel};

#[tile_kernel]
fn downcast(out: Ptr<f16>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    store(out + offs, load(x + offs) * 0.5);
}

fn main() {}
