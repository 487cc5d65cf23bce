use tessera::tile_kernel;

// A mistake found after the checks (here in code generation) is found once per specialisation
// and per alignment variant: it is reported once.
#[tile_kernel(BLOCK = [128, 256])]
fn growth<const BLOCK: usize>(out: Ptr<f64>, x: Ptr<f64>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let mask = offs < n;
    store(out + offs, load(x + offs, mask, 0.0).exp(), mask);
}

fn main() {}
