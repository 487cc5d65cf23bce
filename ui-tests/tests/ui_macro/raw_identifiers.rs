use tessera::tile_kernel;

// Signature names become items of the generated module, spelt without `r#`: refused. Raw
// identifiers of locals are plain names (`r#offs` is `offs`) and work.
#[tile_kernel]
fn r#match(out: Ptr<f32>, r#type: Ptr<f32>) {
    let r#offs = arange(0, 128);
    store(out + offs, load(r#type + r#offs));
}

fn main() {}
