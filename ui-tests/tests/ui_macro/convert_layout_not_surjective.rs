use tessera::tile::{expect_layout, Label, LinearLayout};

// Built with `from_bases` (no checks): two register bases map to the same column, so row 16 of
// the [32, 64] tile belongs to no thread.
const LAYOUT: LinearLayout = expect_layout(LinearLayout::from_bases(
    &[
        (Label::Register, &[&[0, 1], &[1, 0], &[2, 0], &[4, 0], &[0, 1]]),
        (Label::Lane, &[&[0, 2], &[0, 4], &[0, 8], &[0, 16], &[0, 32]]),
        (Label::Warp, &[&[8, 0], &[8, 0]]),
    ],
    &[(Label::Dim(0), 32), (Label::Dim(1), 64)],
));

#[path = "support/copy_through_layout.rs"]
mod copy_through_layout;

fn main() {}
