use tessera::{f16, tile_kernel, Ptr};

// What a Triton author writes first: keyword arguments, the `tl.` module, and a literal that
// does not fit the narrow type it takes (silently infinity before).
#[tile_kernel]
fn habits(x: Ptr<f32>, y: Ptr<f16>, n: i32) {
    let offs = arange(0, 128);
    let v = load(x + offs, mask = offs < n);
    let total = tl.sum(load(x + offs), 0);
    store(y + offs, full::<f16>([128], 70000.0));
    store(x + offs, load(x + offs) * 1e39);
}

fn main() {}
