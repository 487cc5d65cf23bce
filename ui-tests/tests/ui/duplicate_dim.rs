// `lane` is listed twice among the input dimensions.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const TILE: LinearLayout = expect_layout(LinearLayout::distributed(
    &[(Lane, &[&[1]]), (Lane, &[&[2]])],
    &[(Dim(0), 4)],
));

fn main() {
    let _ = TILE;
}
