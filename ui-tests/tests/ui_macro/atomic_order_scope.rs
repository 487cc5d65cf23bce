use tessera::tile_kernel;

#[tile_kernel]
fn misspelt_order(counter: Ptr<i32>) {
    atomic_add(counter, 1, "seq_cst");
}

#[tile_kernel]
fn two_scopes(counter: Ptr<i32>) {
    atomic_add(counter, 1, "cta", "gpu");
}

#[tile_kernel]
fn order_before_mask(counter: Ptr<i32>) {
    atomic_add(counter, 1, "relaxed", true);
}

#[tile_kernel]
fn string_as_value(out: Ptr<i32>) {
    store(out, "one");
}

fn main() {}
