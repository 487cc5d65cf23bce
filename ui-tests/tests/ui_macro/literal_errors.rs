use tessera::tile_kernel;

#[tile_kernel]
fn literals(out: Ptr<f32>, n: i32) {
    let offs = arange(0, 128);
    store(out + offs, full([128], 1e400));
    store(out + offs, load(out + offs) * 1e39);
    let blocks = cdiv(n, 0);
    let q = offs / 0;
    let r = n % 0;
    // Variables are not literals: the message names the variable.
    let e1 = 2;
    let (a, b) = split(e1);
}

fn main() {}
