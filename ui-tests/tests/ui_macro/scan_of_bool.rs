use tessera::{tile_kernel, Ptr};

#[tile_kernel]
fn count(out: Ptr<i32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    let positive = load(x + offs) > 0.0;
    store(out + offs, positive.cumsum(0));
}

fn main() {}
