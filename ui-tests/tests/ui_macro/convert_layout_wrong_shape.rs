use tessera::tile::{expect_layout, Label, LinearLayout};
use tessera::{tile_kernel, Ptr};

// A valid layout of a [16, 64] tile of 4 warps: the value is [32, 64].
const HALF_HEIGHT: LinearLayout = expect_layout(LinearLayout::distributed(
    &[
        (Label::Register, &[&[0, 1], &[1, 0], &[2, 0]]),
        (Label::Lane, &[&[0, 2], &[0, 4], &[0, 8], &[0, 16], &[0, 32]]),
        (Label::Warp, &[&[4, 0], &[8, 0]]),
    ],
    &[(Label::Dim(0), 16), (Label::Dim(1), 64)],
));

#[tile_kernel(num_warps = 4)]
fn copy(x: Ptr<f32>, out: Ptr<f32>) {
    let offs = arange(0, 32).expand_dims(1) * 64 + arange(0, 64).expand_dims(0);
    let tile = load(x + offs).convert_layout(HALF_HEIGHT);
    store(out + offs, tile);
}

fn main() {}
