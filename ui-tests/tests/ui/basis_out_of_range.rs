// A lane's basis points at row 4 of a tile that has only rows 0..4.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const TILE: LinearLayout = expect_layout(LinearLayout::distributed(
    &[(Register, &[&[1, 0]]), (Lane, &[&[2, 0], &[4, 0], &[0, 1]])],
    &[(Dim(0), 4), (Dim(1), 2)],
));

fn main() {
    let _ = TILE;
}
