use tessera::tile_kernel;

// The macro cannot evaluate `cfg`, and ignoring it would compile switched-off code: refused.
#[tile_kernel]
fn scale(out: Ptr<f32>, x: Ptr<f32>) {
    let offs = arange(0, 128);
    #[cfg(any())]
    store(out + offs, load(x + offs) * 2.0);
    let v = #[allow(unused_parens)] (load(x + offs));
    store(out + offs, v);
}

fn main() {}
