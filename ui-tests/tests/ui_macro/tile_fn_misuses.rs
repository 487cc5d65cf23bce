// A helper called with too few arguments, and helpers that call each other.
use tessera::{tile_fn, tile_kernel};

#[tile_fn]
fn axpy(a: f32, x: _, y: _) -> _ {
    a * x + y
}

#[tile_fn]
fn ping(x: _) -> _ {
    pong(x)
}

#[tile_fn]
fn pong(x: _) -> _ {
    ping(x)
}

#[tile_kernel(BLOCK = 128, uses = [axpy, ping, pong])]
fn k<const BLOCK: usize>(x: Ptr<f32>) {
    let offs = arange(0, BLOCK);
    let v = load(x + offs);
    store(x + offs, axpy(2.0, v));
    store(x + offs, ping(v));
}

fn main() {}
