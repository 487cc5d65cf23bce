use tessera::tile_kernel;

// The key names a parameter the kernel does not have.
#[tile_kernel(BLOCK = [256, 1024], autotune(key = [len]))]
fn unknown_key<const BLOCK: usize>(out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, 1.0, offs < n);
}

// The key names a pointer: its value cannot select a tuning.
#[tile_kernel(BLOCK = [256, 1024], autotune(key = [out]))]
fn pointer_key<const BLOCK: usize>(out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, 1.0, offs < n);
}

// One specialisation: nothing to tune.
#[tile_kernel(BLOCK = 256, autotune(key = [n]))]
fn nothing_to_tune<const BLOCK: usize>(out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, 1.0, offs < n);
}

// A config with a value the attribute does not list, and one naming no parameter.
#[tile_kernel(BLOCK = [256, 1024], autotune(key = [n], configs = [(BLOCK = 512), (BLOK = 256)]))]
fn bad_configs<const BLOCK: usize>(out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, 1.0, offs < n);
}

// No key.
#[tile_kernel(BLOCK = [256, 1024], autotune(configs = [(BLOCK = 256)]))]
fn no_key<const BLOCK: usize>(out: Ptr<f32>, n: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, 1.0, offs < n);
}

fn main() {}
