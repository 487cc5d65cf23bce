// A helper is usable within its crate only.
use tessera::tile_fn;

#[tile_fn]
pub fn twice(x: _) -> _ {
    x + x
}

fn main() {}
