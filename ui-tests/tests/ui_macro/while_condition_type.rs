use tessera::tile_kernel;

#[tile_kernel]
fn countdown(out: Ptr<i32>, n: i32) {
    let mut left = n;
    while left {
        left = left - 1;
    }
    store(out, left);
}

fn main() {}
