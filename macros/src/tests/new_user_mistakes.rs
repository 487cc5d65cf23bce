//! Mistakes a new user makes, each written out by hand (not generated): typos in the attribute
//! and in operation names, wrong parameter and element types, shape operations that cannot
//! apply, control flow the language lacks. Each goes through the whole expansion in-process and
//! must be rejected with the expected message on the kernel's own tokens: no panic, no internal
//! error, no error in generated code. (The valid kernels of the same sweep are compiled by rustc
//! and run on the emulator in `gen-tests/tests/new_user_kernels.rs`.)

use super::generator::{expand_checked, Outcome};

/// (attribute arguments, function, a string the first error must contain).
const MISTAKES: &[(&str, &str, &str)] = &[
    (
        "num_wraps = 4",
        "fn k(out: Ptr<f32>) { store(out + arange(0, 128), 1.0); }",
        "did you mean `num_warps`",
    ),
    (
        "BLOK = [128]",
        "fn k<const BLOCK: usize>(out: Ptr<f32>) { store(out + arange(0, BLOCK), 1.0); }",
        "`BLOK`",
    ),
    (
        "BLOCK = [100]",
        "fn k<const BLOCK: usize>(out: Ptr<f32>) { store(out + arange(0, BLOCK), 1.0); }",
        "not a power of two",
    ),
    (
        "",
        "fn k(out: &mut [f32]) { store(out + arange(0, 128), 1.0); }",
        "unsupported parameter type",
    ),
    (
        "",
        "fn k(out: Ptr<f32>, x: Ptr<f16>) { let o = arange(0, 64); store(out + o, load(out + o) + load(x + o)); }",
        "mismatched element types",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let o = arange(0, 16).expand_dims(1) * 16 + arange(0, 16).expand_dims(0); store(out + arange(0, 16), load(out + o).sum(2)); }",
        "out of range",
    ),
    (
        "",
        "fn k(a: Ptr<f32>, c: Ptr<f32>) { let o = arange(0, 16).expand_dims(1) * 16 + arange(0, 16).expand_dims(0); let t = load(a + o); store(c + o, dot(t, t)); }",
        "wrong element type for `dot`",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let o = arange(0, 64); let v = load(out + o); if v > 0.0 { store(out + o, v); } }",
        "where_",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let s = program_id(0).to::<f32>(); store(out + arange(0, 1), s.trans()); }",
        "trans",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let o = arange(0, 4).expand_dims(0) + arange(0, 4).expand_dims(1) * 4; let (a, b) = load(out + o).split(); store(out + arange(0, 4), a + b); }",
        "split",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let o = arange(0, 128); store(out + o, load(out + o).reshape([16, 16]).sum(0).sum(0)); }",
        "cannot change the number of elements",
    ),
    (
        "",
        "fn k(out: Ptr<f32>, n: i32) { let o = arange(0, 64); let mut acc = zeros::<f32>([64]); for i in 0..n { acc = load(out + o).to::<f16>(); } store(out + o, acc); }",
        "changes type",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let o: i32 = arange(0, 64); store(out + o, 1.0); }",
        "annotation",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { store(out + arnage(0, 64), 1.0); }",
        "did you mean `arange`",
    ),
    (
        "",
        "fn k(out: Ptr<u8>) { let o = arange(0, 64); store(out + o, load(out + o).to::<bool>()); }",
        "bool",
    ),
    (
        "",
        "fn k(out: Ptr<f32>) { let o = arange(0, 64); store(out, load(out + o)); }",
        "shape",
    ),
    (
        "",
        "fn k(out: Ptr<f32>, n: i32) { let o = arange(0, 64); let mut i = 0; while i < n { i += 1; } loop { } store(out + o, 1.0); }",
        "loop",
    ),
    (
        "",
        "fn k(src: Ptr<f32>, idx: Ptr<i32>) { let o = arange(0, 8).expand_dims(1) * 8 + arange(0, 8).expand_dims(0); let i = load(idx + arange(0, 4).expand_dims(1) * 4 + arange(0, 4).expand_dims(0)); store(src + o, gather(load(src + o), i, 1)); }",
        "gather",
    ),
    (
        "T = [f16, f32]",
        "fn k<T>(out: Ptr<T>) { let o = arange(0, 64); store(out + o, load(out + o) * 2.0f32); }",
        "mismatched element types",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let o = arange(0, 16); store(x + o, load(x + o, mask = o < 4)); }",
        "keyword argument",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let o = arange(0, 16); store(x + arange(0, 1), load(x + o).sum(axis = 0)); }",
        "keyword argument",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let o = arange(0, 16); store(x + arange(0, 1), tl.sum(load(x + o), 0)); }",
        "Triton's spelling",
    ),
    (
        "",
        "fn k(x: Ptr<f16>) { let o = arange(0, 64); store(x + o, full::<f16>([64], 70000.0)); }",
        "out of range for f16",
    ),
    (
        "",
        "fn k(x: Ptr<bf16>) { let o = arange(0, 64); store(x + o, load(x + o) * 3.4e38); }",
        "out of range for bf16",
    ),
    (
        "",
        "fn k(x: Ptr<f8e4m3>) { let o = arange(0, 64); store(x + o, full::<f8e4m3>([64], 500.0)); }",
        "it would be NaN",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { if n > 0 { return; } store(x, 1.0); }",
        "`return` is not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { for i in 0..n { if i > 3 { break; } store(x + i, 1.0); } }",
        "`break` and `continue` are not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { if n > 0 { let y = 1.0; } store(x, y); }",
        "cannot find value `y`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let f = |v| v * 2.0; store(x, f(1.0)); }",
        "closures are not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = arange(0, 32); store(x + a, foo(a)); }",
        "unknown tile operation `foo`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = load(x + arange(0, 32)); store(x, a.mean(0)); }",
        "unknown tile method `mean`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = 2.0; a = 3.0; store(x, a); }",
        "declare it with `let mut a`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = load(x + arange(0, 32)); store(x, a[0]); }",
        "indexing a tile is not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { let v = match n { 0 => 1.0, _ => 2.0 }; store(x, v); }",
        "`match` is not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let s = \"hi\"; store(x, 1.0); }",
        "a string is not a value",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { let (a, b) = (n, n + 1, n + 2); store(x + a + b, 1.0); }",
        "this pattern has 2 names for the 3 values of `(n, n + 1, n + 2)`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { let t = (n, n, n); store(x, 1.0); }",
        "a tuple of 3 values is only destructured right away: `let (x0, x1, x2) = (n, n, n);`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let u = (); store(x, 1.0); }",
        "the empty tuple `()` and one-element tuples are not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let r = arange(0, 512); let o = r.expand_dims(1) * 512 + r.expand_dims(0); store(x + o, load(x + o) * 2.0); }",
        "too large for registers",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let r = arange(0, 16); let o = r.expand_dims(1) * 16 + r.expand_dims(0); store(x + o, load(x + o).trans([0, 0])); }",
        "axis 0 appears twice",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = arange(0, 32); let m = arange(0, 64) < 3; store(x + a, 1.0, m); }",
        "the mask must broadcast",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = arange(5, 3); store(x + a, 1.0); }",
        "is empty",
    ),
    (
        "",
        "async fn k(x: Ptr<f32>) { store(x, 1.0); }",
        "cannot be `async`",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) -> i32 { store(x, 1.0); 0 }",
        "returns nothing",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, y: Ptr<f32>) { store(x + y, 1.0); }",
        "cannot add two pointers",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { store(x + 1.5, 1.0); }",
        "offset must be an integer",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i64, m: i32) { store(x + (n + m), 1.0); }",
        "mismatched element types",
    ),
    (
        "",
        "fn k(x: Ptr<i32>) { let a = arange(0, 32) < 5; store(x + arange(0, 32), a.cumsum(0)); }",
        "needs a tile of numbers",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { fn g() {} store(x, 1.0); }",
        "nested function is not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let v = vec![1.0]; store(x, 1.0); }",
        "macros are not supported",
    ),
    (
        "",
        "fn k(x: Ptr<f32>, n: i32) { let mut acc = zeros::<f32>([32]); for i in 0..n { acc = zeros::<f32>([64]); } store(x + arange(0, 32), acc); }",
        "changes type",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = zeros::<f32>([0]); store(x, 1.0); }",
        "tile size 0",
    ),
    (
        "",
        "fn k<const B: usize>(x: Ptr<f32>) { store(x + arange(0, B), 1.0); }",
        "has no values",
    ),
    (
        "num_warps = 3",
        "fn k(x: Ptr<f32>) { store(x + arange(0, 32), 1.0); }",
        "num_warps = 3 is not allowed",
    ),
    (
        "",
        "fn k(x: Ptr<f32>) { let a = arange(0, 32); store(x + a, where_(a < 3, a, 1.5)); }",
        "float literal",
    ),
    (
        "",
        "fn k(x: Ptr<f16>, n: i32) { let c = arange(0, 64); store(x + c, load(x + c, c < n, f32::NEG_INFINITY)); }",
        "cast it with `.to::<f16>()`",
    ),
];

/// Literals just inside each narrow type's range (they round to its largest finite value) are
/// accepted.
const WITHIN_RANGE: &[(&str, &str)] = &[
    ("f16", "65519.0"),
    ("bf16", "3.39e38"),
    ("f8e5m2", "61439.0"),
    ("f8e4m3", "463.0"),
    ("f32", "3.4028235e38"),
];

#[test]
fn literals_that_round_to_the_largest_finite_value_are_accepted() {
    for (ty, literal) in WITHIN_RANGE {
        let item = format!(
            "fn k(x: Ptr<{ty}>) {{ let o = arange(0, 64); store(x + o, full::<{ty}>([64], {literal})); }}"
        );
        match expand_checked("", &item) {
            Outcome::Expanded => {}
            Outcome::Rejected(errors) => panic!("{item} rejected: {errors:#?}"),
            Outcome::Unlexable => panic!("{item} does not lex"),
            Outcome::Failure(f) => panic!("{item}: {}", f.describe()),
        }
    }
}

#[test]
fn new_user_mistakes_get_clear_errors_at_their_code() {
    let mut failures = Vec::new();
    for (attr, item, needle) in MISTAKES {
        let described = format!("#[tile_kernel({attr})]\n{item}");
        match expand_checked(attr, item) {
            Outcome::Rejected(errors) => {
                if !errors[0].contains(needle) {
                    failures.push(format!(
                        "first error lacks {needle:?}: {errors:#?}\n{described}"
                    ));
                }
            }
            Outcome::Expanded => failures.push(format!("accepted:\n{described}")),
            Outcome::Unlexable => failures.push(format!("does not lex:\n{described}")),
            Outcome::Failure(f) => failures.push(format!("{}\n{described}", f.describe())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} mistakes mishandled:\n\n{}",
        failures.len(),
        MISTAKES.len(),
        failures.join("\n\n")
    );
}
