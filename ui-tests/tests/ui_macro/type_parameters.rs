use tessera::tile_kernel;

// A type parameter without a list of element types.
#[tile_kernel(BLOCK = [128])]
fn unlisted<T, const BLOCK: usize>(x: Ptr<T>) {
    store(x + arange(0, BLOCK), load(x + arange(0, BLOCK)) * 2.0);
}

// A listed name that is not an element type, at its span.
#[tile_kernel(T = [f16, float])]
fn not_an_element<T>(x: Ptr<T>) {
    store(x + arange(0, 128), load(x + arange(0, 128)));
}

// Integers for a type parameter, types for a const parameter, a bound on a type parameter.
#[tile_kernel(T = [4], BLOCK = [f32])]
fn swapped<T: Copy, const BLOCK: usize>(x: Ptr<T>) {
    store(x + arange(0, BLOCK), load(x + arange(0, BLOCK)));
}

// An operation that holds for one listed type only: the error names the specialisation.
#[tile_kernel(T = [f32, i32])]
fn only_float<T>(x: Ptr<T>) {
    let offs = arange(0, 128);
    store(x + offs, exp(load(x + offs)));
}

fn main() {}
