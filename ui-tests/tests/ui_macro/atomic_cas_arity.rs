use tessera::tile_kernel;

#[tile_kernel]
fn too_few(lock: Ptr<i32>) {
    let old = atomic_cas(lock, 0);
    store(lock + 1, old);
}

#[tile_kernel]
fn order_for_value(lock: Ptr<i32>) {
    let old = atomic_cas(lock, 0, "acquire");
    store(lock + 1, old);
}

#[tile_kernel]
fn with_mask(lock: Ptr<i32>) {
    let old = atomic_cas(lock, 0, 1, true);
    store(lock + 1, old);
}

fn main() {}
