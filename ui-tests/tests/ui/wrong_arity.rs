// The tile has two output dimensions, but the second lane basis gives only one coordinate.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const TILE: LinearLayout = expect_layout(LinearLayout::distributed(
    &[(Lane, &[&[1, 0], &[2], &[0, 1]])],
    &[(Dim(0), 4), (Dim(1), 2)],
));

fn main() {
    let _ = TILE;
}
