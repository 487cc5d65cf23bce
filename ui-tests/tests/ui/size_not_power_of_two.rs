// Output dimensions must have power-of-two sizes: a 6-row tile is not a linear layout.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const TILE: LinearLayout = expect_layout(LinearLayout::distributed(
    &[(Lane, &[&[1], &[2], &[4]])],
    &[(Dim(0), 6)],
));

fn main() {
    let _ = TILE;
}
