// A rejected kernel gives its errors and nothing else: the imports its signature uses (`Ptr`,
// `f16`, ..) are not reported as unused. One module per class of error, each with its own
// imports.

mod check_error {
    use tessera::{f16, tile_kernel, Ptr};

    // A shape mistake: [128] and [64] do not broadcast.
    #[tile_kernel]
    fn add(out: Ptr<f32>, x: Ptr<f16>) {
        let a = arange(0, 128);
        let b = arange(0, 64);
        store(out + a, load(x + b).to::<f32>() + a.to::<f32>());
    }
}

mod attribute_error {
    use tessera::{tile_kernel, Ptr};

    #[tile_kernel(T = [bf16, f32], num_warp = 4)]
    fn fill<T>(out: Ptr<T>, n: i32) {
        let offs = arange(0, 128);
        store(out + offs, 1.0, offs < n);
    }
}

mod syntax_error {
    use tessera::{tile_kernel, Ptr};

    #[tile_kernel]
    fn listed(out: Ptr<u8>) {
        let v = [1, 2];
        store(out + arange(0, 128), 1);
    }
}

mod reserved_name {
    use tessera::{tile_kernel, Ptr};

    #[tile_kernel]
    fn emulate(out: Ptr<i32>) {
        store(out + arange(0, 128), 1);
    }
}

fn main() {}
