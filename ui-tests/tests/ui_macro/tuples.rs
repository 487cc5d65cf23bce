use tessera::tile_kernel;

#[tile_kernel]
fn tuples(out: Ptr<i32>, n: i32) {
    let (a, b) = (n, n + 1, n + 2);
    let t = (n, n, n);
    let u = ();
    store(out, a + b);
}

fn main() {}
