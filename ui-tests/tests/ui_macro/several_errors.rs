use tessera::tile_kernel;

// Independent mistakes are all reported in one build; the uses of a failed value are not.
#[tile_kernel]
fn several(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 100);
    let v = load(x + offs);
    let w = softplus(v);
    let s = zeros::<f32>([128]).sum(1);
    store(out + offs, v + w + s);
}

fn main() {}
