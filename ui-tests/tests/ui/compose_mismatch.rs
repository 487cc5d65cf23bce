// The algebra runs at compile time too: composing a layout onto `dim0` with one that reads
// `dim1` is an error, reported when the constant is evaluated.
use tessera_layout::{expect_layout, Label::*, LinearLayout};

const THREADS: LinearLayout = expect_layout(LinearLayout::distributed(
    &[(Lane, &[&[1], &[2]])],
    &[(Dim(0), 4)],
));

const SWIZZLE: LinearLayout = expect_layout(LinearLayout::memory(
    &[(Dim(1), &[&[1], &[2]])],
    &[(Offset, 4)],
));

const COMPOSED: LinearLayout = expect_layout(THREADS.compose(&SWIZZLE));

fn main() {
    let _ = COMPOSED;
}
