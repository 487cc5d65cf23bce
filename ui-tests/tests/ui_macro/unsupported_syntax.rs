use tessera::tile_kernel;

#[tile_kernel]
fn countdown(out: Ptr<i32>, n: i32) {
    let v = arange(0, 128);
    let first = v[0];
    loop {
        store(out, n);
    }
    println!("done");
}

fn main() {}
