use tessera::{tile_kernel, Ptr};

#[tile_kernel]
fn running_product(out: Ptr<i32>, n: i32) {
    let offs = arange(0, 128);
    store(out + offs, cumprod(n, 0) + offs);
}

fn main() {}
