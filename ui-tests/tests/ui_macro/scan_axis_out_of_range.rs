use tessera::{tile_kernel, Ptr};

#[tile_kernel]
fn running_total(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    let row = load(x + offs);
    store(out + offs, row.cumsum(1));
}

fn main() {}
