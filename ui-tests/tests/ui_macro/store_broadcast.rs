use tessera::tile_kernel;

// A store writes one element per pointer: the value and the mask broadcast to the pointers'
// shape, never the other way (that would drop all elements but one per pointer).
#[tile_kernel]
fn stores(out: Ptr<f32>, x: Ptr<f32>, n: i32) {
    let rows = arange(0, 8).expand_dims(1);
    let cols = arange(0, 16).expand_dims(0);
    let tile = load(x + rows * 16 + cols);
    store(out, tile);
    store(out + cols, tile);
    store(out + arange(0, 16), 1.0, rows + cols < n);
}

fn main() {}
