use tessera::tile_kernel;

// Shape operations need tiles; `expand_dims` and `reshape` of a scalar give its one-element
// splat and are fine.
#[tile_kernel]
fn scalars(out: Ptr<f32>, x: Ptr<f32>) {
    let total = load(x + arange(0, 128)).sum(0);
    let t = total.trans();
    let j = join(program_id(0), program_id(1));
    let (a, b) = join(arange(0, 1), arange(0, 1)).reshape([2]).split();
    let s = arange(0, 1).reshape([]);
    store(out + arange(0, 1), total.expand_dims(0));
}

fn main() {}
