//! One test per diagnostic: the message, and the code it underlines. (Underlined text is shown as
//! `quote!` prints tokens, e.g. `join (a , b)`.)

use super::{errors, one_error, run};
use proc_macro2::TokenStream;
use quote::quote;

/// A kernel with the usual parameters around `body`; `BLOCK` is 128, `num_warps` 4.
fn kernel(body: TokenStream) -> (TokenStream, TokenStream) {
    (
        quote!(num_warps = 4, BLOCK = 128),
        quote! {
            fn k<const BLOCK: usize>(x: Ptr<f32>, h: Ptr<f16>, idx: Ptr<i32>, n: i32, s: f32) {
                #body
            }
        },
    )
}

#[track_caller]
fn body_error(body: TokenStream, needle: &str, underlined: &str) -> String {
    let (attr, item) = kernel(body);
    one_error(attr, item, needle, underlined)
}

#[test]
fn unknown_operation() {
    let m = body_error(
        quote!(let y = frobnicate(x);),
        "unknown tile operation `frobnicate`",
        "frobnicate",
    );
    assert!(m.contains(
        "the operations of the tile language are listed in the docs of tessera::tile_kernel"
    ));
    let m = body_error(
        quote!(let r = arnage(0, 128);),
        "unknown tile operation `arnage`",
        "arnage",
    );
    assert!(m.contains("did you mean `arange`?"), "{m}");
    let m = body_error(
        quote!(let v = load(x + arange(0, 128)); let l = v.ln();),
        "unknown tile method `ln`",
        "ln",
    );
    assert!(m.contains("did you mean `log`?"), "{m}");
    assert!(m.starts_with("unknown tile method `ln`"));
}

#[test]
fn wrong_argument_count() {
    body_error(
        quote!(let v = load(x, 1, 2, 3);),
        "`load` takes 1 to 3 arguments, but 4 were given: write `load(ptrs) / load(ptrs, mask) / load(ptrs, mask, other)`",
        "load (x , 1 , 2 , 3)",
    );
    body_error(
        quote!(let v = arange(0, 128).sum();),
        "`sum` takes 2 arguments, counting the tile it is called on, but 1 was given",
        "arange (0 , 128) . sum ()",
    );
    body_error(
        quote!(let v = arange(0, 128).program_id(0);),
        "`program_id` is a free function, not a method",
        "program_id",
    );
}

#[test]
fn shape_mismatch_shows_both_shapes() {
    body_error(
        quote!(let a = arange(0, 128); let b = arange(0, 64); let j = join(a, b);),
        "shape mismatch: `join` needs two tiles of the same shape, but the first is [128] and the second [64]",
        "join (a , b)",
    );
}

#[test]
fn broadcasting_that_cannot_apply() {
    body_error(
        quote!(let z = arange(0, 128) + arange(0, 64);),
        "cannot broadcast the left operand of `+` of shape [128] with the right operand of `+` of shape [64]",
        "arange (0 , 128) + arange (0 , 64)",
    );
    body_error(
        quote!(let z = arange(0, 128).broadcast_to([128, 64]);),
        "cannot broadcast shape [128] to [128, 64]",
        "arange (0 , 128) . broadcast_to ([128 , 64])",
    );
    body_error(
        quote!(let v = load(x + arange(0, 128), arange(0, 64) < n);),
        "cannot broadcast the pointers of shape [128] with the mask of shape [64]",
        "load (x + arange (0 , 128) , arange (0 , 64) < n)",
    );
}

#[test]
fn wrong_dtype_for_dot() {
    let m = body_error(
        quote! {
            let r = arange(0, 64);
            let p = x + r.expand_dims(1) * 64 + r.expand_dims(0);
            let a = load(p);
            let c = dot(a, a);
        },
        "wrong element type for `dot`: the operands are f32",
        "dot (a , a)",
    );
    assert!(m.contains("f16, bf16, f8e4m3, f8e5m2 or i8"));
    body_error(
        quote! {
            let r = arange(0, 64);
            let a = load(h + r.expand_dims(1) * 64 + r.expand_dims(0));
            let acc = zeros::<f16>([64, 64]);
            let c = dot(a, a, acc);
        },
        "the accumulator of `dot` on f16 operands must be f32, found f16",
        "acc",
    );
}

#[test]
fn dot_shapes() {
    body_error(
        quote! {
            let a = load(h + arange(0, 64).expand_dims(1) * 32 + arange(0, 32).expand_dims(0));
            let c = dot(a, a);
        },
        "shape mismatch in `dot`: `a` is [M, K] = [64, 32] and `b` is [K, N] = [64, 32], so their inner sizes 32 and 64 must be equal",
        "dot (a , a)",
    );
    body_error(
        quote! {
            let a = load(h + arange(0, 8).expand_dims(1) * 32 + arange(0, 32).expand_dims(0));
            let b = a.trans();
            let c = dot(a, b);
        },
        "`dot` on f16 tensor cores needs M ≥ 16, N ≥ 16 and K ≥ 16, but here M = 8, N = 8, K = 32",
        "dot (a , b)",
    );
    body_error(
        quote!(let c = dot(load(h + arange(0, 64)), load(h + arange(0, 64)));),
        "`dot(a, b)` multiplies 2-D tiles, but `a` has shape [64]",
        "load (h + arange (0 , 64))",
    );
}

#[test]
fn axis_out_of_range() {
    body_error(
        quote!(let t = arange(0, 128); let r = t.sum(1);),
        "axis 1 is out of range for `sum` on a tile of rank 1 (shape [128]): the only axis is 0",
        "1",
    );
    body_error(
        quote!(let t = arange(0, 128).expand_dims(3);),
        "axis 3 is out of range for `expand_dims` on a tile of rank 1 (shape [128]): the axes are 0 to 1",
        "3",
    );
    body_error(
        quote!(let p = program_id(3);),
        "grid axis 3 is out of range: the grid has axes 0, 1 and 2",
        "3",
    );
}

#[test]
fn reshape_changes_element_count() {
    body_error(
        quote!(let t = arange(0, 128).reshape([16, 16]);),
        "`reshape` cannot change the number of elements: [128] has 128 but [16, 16] has 256",
        "arange (0 , 128) . reshape ([16 , 16])",
    );
}

#[test]
fn gather_index_shape() {
    body_error(
        quote! {
            let src = load(x + arange(0, 32).expand_dims(1) * 64 + arange(0, 64).expand_dims(0));
            let i = load(idx + arange(0, 16).expand_dims(1) * 8 + arange(0, 8).expand_dims(0));
            let g = gather(src, i, 1);
        },
        "shape mismatch in `gather` along axis 1: the index [16, 8] must equal the source [32, 64] on every other axis, but they differ on axis 0 (16 vs 32)",
        "gather (src , i , 1)",
    );
    body_error(
        quote! {
            let src = load(x + arange(0, 64));
            let g = gather(src, src, 0);
        },
        "the index of `gather` must be an integer tile, found f32[64]",
        "src",
    );
}

#[test]
fn non_power_of_two_names_the_expression() {
    body_error(
        quote!(let t = arange(0, 100);),
        "`arange(0, 100)` has 100 elements, not a power of two",
        "arange (0 , 100)",
    );
    body_error(
        quote!(let t = full([BLOCK, 3], 0.0);),
        "tile size 3 is not a power of two: every tile dimension must be a power of two (use 4",
        "3",
    );
    body_error(
        quote!(let t = zeros::<f32>([BLOCK * 3]);),
        "tile size `BLOCK * 3` = 384 is not a power of two",
        "BLOCK * 3",
    );
    // A const parameter's listed value: the message says which specialisation.
    let m = one_error(
        quote!(BLOCK = [128, 100]),
        quote!(
            fn k<const BLOCK: usize>(x: Ptr<f32>) {
                let t = arange(0, BLOCK);
            }
        ),
        "`arange(0, BLOCK)` has 100 elements, not a power of two",
        "arange (0 , BLOCK)",
    );
    assert!(m.ends_with("(in the specialisation BLOCK = 100)"), "{m}");
}

#[test]
fn register_budget() {
    let m = body_error(
        quote!(let t = zeros::<f32>([256, 256]);),
        "this tile is too large for registers: f32[256, 256] has 65536 elements, so each of the 128 threads (num_warps = 4) would hold 512 of them in 512 32-bit registers",
        "zeros :: < f32 > ([256 , 256])",
    );
    assert!(m.contains("at most 128 registers per thread (16384 f32 elements at num_warps = 4)"));
    // The budget scales with the warps: the same tile fits with 32 warps.
    super::ok(
        quote!(num_warps = 32),
        quote!(
            fn k() {
                let t = zeros::<f32>([256, 256]);
            }
        ),
    );
}

/// A broadcast can make a tile too large too.
#[test]
fn register_budget_of_broadcast() {
    let (attr, item) = kernel(quote!(
        let t = arange(0, 1024).expand_dims(1) + arange(0, 1024).expand_dims(0);
    ));
    let all = errors(attr, item);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(
        all[0].0.contains("i32[1024, 1024] has 1048576 elements"),
        "{}",
        all[0].0
    );
    assert_eq!(
        all[0].1,
        "arange (0 , 1024) . expand_dims (1) + arange (0 , 1024) . expand_dims (0)"
    );
}

#[test]
fn loop_carried_tile_must_keep_its_type() {
    body_error(
        quote! {
            let mut acc = zeros::<f32>([128]);
            for i in 0..n {
                acc = acc.to::<f16>();
            }
        },
        "loop-carried variable `acc` changes type in the loop body: it enters the loop as f32[128] but is assigned f16[128] here",
        "acc = acc . to :: < f16 > ()",
    );
    body_error(
        quote! {
            let mut acc = zeros::<f32>([128]);
            for i in 0..n {
                acc = acc.expand_dims(0);
            }
        },
        "it enters the loop as f32[128] but is assigned f32[1, 128] here",
        "acc = acc . expand_dims (0)",
    );
    // Outside loops, a variable keeps its type too (with a different message).
    body_error(
        quote!(let mut t = zeros::<f32>([128]); t = zeros::<f32>([64]);),
        "`t` has type f32[128] and cannot be assigned f32[64]",
        "t = zeros :: < f32 > ([64])",
    );
}

#[test]
fn mismatched_element_types() {
    body_error(
        quote!(let a = load(x + arange(0, 128)); let b = load(h + arange(0, 128)); let c = a + b;),
        "mismatched element types: the left operand of `+` is f32 but the right operand of `+` is f16",
        "a + b",
    );
    body_error(
        quote!(store(h + arange(0, 128), load(x + arange(0, 128)));),
        "`store` writes f32 values through pointers to f16: cast them first, e.g. `value.to::<f16>()`",
        "load (x + arange (0 , 128))",
    );
    body_error(
        quote!(let v = load(x + arange(0, 128), arange(0, 128) < n, 0.0f16);),
        "`other` is f16 but the pointers load f32",
        "0.0f16",
    );
    body_error(
        quote!(let v = arange(0, 128) * 0.5;),
        "the right operand of `*` is a float literal, but the other operand is i32",
        "arange (0 , 128) * 0.5",
    );
}

#[test]
fn operator_needs_other_types() {
    body_error(
        quote!(let v = load(x + arange(0, 128)) << 2;),
        "`<<` needs integer operands, but these are f32",
        "load (x + arange (0 , 128)) << 2",
    );
    body_error(
        quote!(let v = exp(arange(0, 128));),
        "`exp` needs a float operand, found i32[128] (cast it first, e.g. `x.to::<f32>()`)",
        "exp",
    );
    body_error(
        quote!(let v = x * 2;),
        "`*` does not apply to pointers",
        "x * 2",
    );
    body_error(
        quote!(let v = load(arange(0, 128));),
        "`load` reads through pointers: its first argument must be a `Ptr<T>` or a tile of them (`ptr + offsets`), found i32[128]",
        "arange (0 , 128)",
    );
    body_error(
        quote!(let v = load(x + arange(0, 128), arange(0, 128));),
        "the mask of `load` must be bool (e.g. `offsets < n`), found i32[128]",
        "arange (0 , 128)",
    );
}

#[test]
fn reduction_max_is_not_elementwise_max() {
    let m = body_error(
        quote!(let v = load(x + arange(0, 128)); let r = v.max(0.0);),
        "`max(x, axis)` reduces along an axis",
        "0.0",
    );
    assert!(m.contains("write `maximum(a, b)`"), "{m}");
}

#[test]
fn shapes_must_be_known_at_expansion_time() {
    body_error(
        quote!(let t = arange(0, n);),
        "the end of `arange` must be known at expansion time, but `n` is a run-time value",
        "n",
    );
    body_error(
        quote!(let t = zeros::<f32>(BLOCK);),
        "the shape of `zeros` is an array of sizes, e.g. `[BLOCK_M, BLOCK_N]`",
        "BLOCK",
    );
}

#[test]
fn rank_limit() {
    body_error(
        quote!(let t = zeros::<f32>([1, 1, 1, 1, 1, 1, 1]);),
        "tiles have at most 6 dimensions, but this one would have 7 ([1, 1, 1, 1, 1, 1, 1])",
        "zeros :: < f32 > ([1 , 1 , 1 , 1 , 1 , 1 , 1])",
    );
}

#[test]
fn trans_needs_a_permutation() {
    body_error(
        quote!(let t = zeros::<f32>([8, 16]).trans([0, 0]);),
        "axis 0 appears twice: `trans` needs a permutation of the axes",
        "0",
    );
    body_error(
        quote!(let t = zeros::<f32>([8, 16]).trans([1, 0, 2]);),
        "`trans` on a tile of rank 2 (shape [8, 16]) needs a permutation of 2 axes, found 3",
        "[1 , 0 , 2]",
    );
}

#[test]
fn split_and_join() {
    body_error(
        quote!(let (a, b) = zeros::<f32>([8, 4]).split();),
        "`split` halves a last dimension of size 2 (the inverse of `join`), but this tile has shape [8, 4]",
        "zeros :: < f32 > ([8 , 4]) . split ()",
    );
    body_error(
        quote!(let t = zeros::<f32>([8, 2]).split();),
        "`split` returns two tiles: destructure them, `let (a, b) = x.split();`",
        "zeros :: < f32 > ([8 , 2]) . split ()",
    );
}

#[test]
fn variables() {
    let m = body_error(
        quote!(let offsets = arange(0, 128); let v = load(x + ofsets);),
        "cannot find value `ofsets` in this kernel",
        "ofsets",
    );
    assert!(m.contains("did you mean `offsets`?"));
    // The loop variable is immutable (and not confused with an outer `i`).
    body_error(
        quote!(let mut i = 0; for i in 0..n { i = i + 1; }),
        "cannot assign twice to immutable variable `i`",
        "i",
    );
    body_error(
        quote!(let t = arange(0, 128); t = t + 1;),
        "cannot assign twice to immutable variable `t`: declare it with `let mut t`",
        "t",
    );
}

#[test]
fn control_flow() {
    body_error(
        quote!(let c = arange(0, 128) < n; if c { store(x + arange(0, 1), 1.0); }),
        "the condition of `if` must be a scalar bool, found a tile bool[128] (an `if` branches the whole program; for per-element choice use `where_(condition, a, b)`)",
        "c",
    );
    body_error(
        quote!(let v = if n > 0 { zeros::<f32>([128]) } else { zeros::<f16>([128]) };),
        "the branches of this `if` have different types: f32[128] and f16[128]",
        "if n > 0 { zeros :: < f32 > ([128]) } else { zeros :: < f16 > ([128]) }",
    );
    body_error(
        quote!(for i in 0..load(x + arange(0, 4)) {}),
        "the bounds and step of a `for` loop are integer scalars, found f32",
        "for i in 0 .. load (x + arange (0 , 4)) { }",
    );
    body_error(
        quote!(for i in (0..n).step_by(0) {}),
        "`step_by` needs a positive step, found 0",
        "0",
    );
    body_error(
        quote!(let mut v = load(x + arange(0, 128)); while v > 0.0 { v = v - 1.0; }),
        "the condition of `while` must be a scalar bool, found a tile",
        "v > 0.0",
    );
    body_error(
        quote!(let mut m = n; while m { m = m - 1; }),
        "the condition of `while` must be a scalar bool, found a scalar i32",
        "m",
    );
    body_error(
        quote!(let mut m = n; while m > 0 { m = m - 1; m }),
        "the body of a `while` loop has no value",
        "m",
    );
    body_error(
        quote!(let mut m = n; while m > 0 { if m > 4 { break; } m = m - 1; }),
        "`break` and `continue` are not supported in a tile kernel",
        "break",
    );
    body_error(
        quote!(let mut m = n; while m > 0 { m = load(x + arange(0, 128)); }),
        "loop-carried variable `m` changes type in the loop body",
        "m = load (x + arange (0 , 128))",
    );
}

#[test]
fn unsupported_syntax() {
    body_error(
        quote!(loop {}),
        "`loop` is not supported in a tile kernel: use `while condition { … }` or `for i in \
         start..end`",
        "loop { }",
    );
    body_error(
        quote!(let v = load(x + arange(0, 128)); let e = v[3];),
        "indexing a tile is not supported in a tile kernel",
        "v [3]",
    );
    body_error(
        quote!(println!("hi");),
        "macros are not supported inside a tile kernel",
        "println ! (\"hi\") ;",
    );
    body_error(
        quote!(let v: f32 = s;),
        "type annotations on `let` are not supported",
        "f32",
    );
}

#[test]
fn attribute_and_signature() {
    one_error(
        quote!(num_warps = 3),
        quote!(
            fn k(x: Ptr<f32>) {}
        ),
        "num_warps = 3 is not allowed: it must be 1, 2, 4, 8, 16 or 32",
        "3",
    );
    let all = errors(
        quote!(BLCK = [64]),
        quote!(
            fn k<const BLOCK: usize>(x: Ptr<f32>) {}
        ),
    );
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(all[0]
        .0
        .contains("`BLCK` is not a const parameter of `k` (did you mean `BLOCK`?)"));
    assert_eq!(all[0].1, "BLCK");
    assert!(all[1].0.contains("const parameter `BLOCK` has no values"));
    assert_eq!(all[1].1, "const BLOCK : usize");
    one_error(
        quote!(),
        quote!(
            fn k(x: Ptr<float>) {}
        ),
        "`float` is not an element type of the tile language",
        "float",
    );
    one_error(
        quote!(),
        quote!(
            fn k(x: Ptr<f32>) -> f32 {}
        ),
        "a tile kernel returns nothing",
        "-> f32",
    );
    let all = errors(
        quote!(),
        quote!(
            struct S;
        ),
    );
    assert!(all[0].0.contains("#[tile_kernel] applies to a function"));
}

/// Several independent mistakes are all reported in one expansion, in source order; a value
/// that failed is not reported again where it is used.
#[test]
fn several_errors_at_once() {
    let (attr, item) = kernel(quote! {
        let a = arange(0, 100);
        let b = a + 1;
        let c = frobnicate(b);
        let d = zeros::<f32>([128]).sum(2);
        store(x + arange(0, 128), d);
    });
    let all = errors(attr, item);
    let messages: Vec<&str> = all.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(all.len(), 3, "{messages:#?}");
    assert!(messages[0].contains("not a power of two"));
    assert!(messages[1].contains("unknown tile operation `frobnicate`"));
    assert!(messages[2].contains("axis 2 is out of range"));
}

/// An error that occurs in only some specialisations names them.
#[test]
fn errors_name_their_specialisation() {
    let all = errors(
        quote!(num_warps = 4, BLOCK = [1024, 32768, 65536]),
        quote!(
            fn k<const BLOCK: usize>(x: Ptr<f32>) {
                let v = load(x + arange(0, BLOCK));
            }
        ),
    );
    // One error per failing specialisation (the first tile too large: `arange`), none for 1024.
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(all[0].0.contains("i32[32768] has 32768 elements"));
    assert!(all[0].0.ends_with("(in the specialisation BLOCK = 32768)"));
    assert!(all[1].0.contains("i32[65536] has 65536 elements"));
    assert!(all[1].0.ends_with("(in the specialisation BLOCK = 65536)"));
    assert_eq!(all[0].1, "arange (0 , BLOCK)");
}

/// The expansion of a kernel that checks: code (its PTX entry and host build), no error.
#[test]
fn passing_kernel_expands_to_code() {
    let out = crate::expand::tile_kernel(
        quote!(BLOCK = [128]),
        quote!(
            fn add<const BLOCK: usize>(x: Ptr<f32>) {
                store(x + arange(0, BLOCK), 1.0);
            }
        ),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    // The device entry for nvptx64 and amdgpu (the kernel has no NVIDIA-only instruction).
    assert!(
        out.contains("__tile_kernel_entry ! { # [no_mangle] # [allow (unused , non_snake_case , clippy :: all)] fn add ("),
        "{out}"
    );
    assert!(run(
        quote!(BLOCK = [128]),
        quote!(
            fn add<const BLOCK: usize>() {}
        )
    )
    .is_ok());
}

/// The full expansion of a kernel with this body (see [`kernel`]), which must succeed (no
/// `compile_error!`).
#[track_caller]
fn body_expands(body: TokenStream) -> String {
    let (attr, item) = kernel(body);
    let out = crate::expand::tile_kernel(attr, item).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    out
}

#[test]
fn attributes_inside_the_body_are_refused() {
    let m = body_error(
        quote!(
            #[cfg(any())]
            store(x + arange(0, 128), zeros::<f32>([128]));
        ),
        "attributes inside a tile kernel are not supported: `#[cfg]`",
        "# [cfg (any ())]",
    );
    assert!(m.contains("cannot evaluate `cfg` conditions"), "{m}");
    body_error(
        quote!(let v = #[allow(unused)] arange(0, 128);),
        "attributes inside a tile kernel are not supported: `#[allow]`",
        "# [allow (unused)]",
    );
    // A doc comment changes nothing and passes.
    body_expands(quote!(
        /// the offsets
        let offs = arange(0, 128);
        store(x + offs, 1.0);
    ));
}

#[test]
fn raw_identifiers() {
    // Locals: `r#x` is the name `x`, as in Rust.
    body_expands(quote!(
        let r#loop = arange(0, 128);
        let r#offs = r#loop + 0;
        store(x + offs, 1.0);
    ));
    // Signature names become items of the generated module: refused, never a panic.
    let all = errors(
        quote!(),
        quote!(
            fn r#match(r#type: Ptr<f32>) {}
        ),
    );
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(all[0]
        .0
        .starts_with("raw identifiers are not supported as the kernel's name"));
    assert_eq!(all[0].1, "r#match");
    assert!(all[1].0.contains("a parameter's name"), "{all:#?}");
    assert!(
        all[1].0.contains("rename `r#type` (e.g. `type_`)"),
        "{all:#?}"
    );
    let out = crate::expand::tile_kernel(
        quote!(r#BLOCK = [128]),
        quote!(
            fn k<const r#BLOCK: usize>(x: Ptr<f32>) {}
        ),
    )
    .to_string();
    assert!(out.contains("a const parameter's name"), "{out}");
}

#[test]
fn empty_statements_are_accepted() {
    // From text: formatting would drop the extra semicolons from a `quote!`.
    let body = ";; let offs = arange(0, 128);; store(x + offs, 1.0);;;";
    body_expands(body.parse().expect("body tokens"));
}

#[test]
fn attribute_names() {
    let item = quote!(
        fn k(x: Ptr<f32>) {}
    );
    // (attribute, a part of the message, the underlined code)
    #[rustfmt::skip]
    let cases = [
        (quote!(num_warp = 4), "unknown attribute `num_warp` (did you mean `num_warps`?)", "num_warp"),
        (quote!(NUM_WARPS = 4), "unknown attribute `NUM_WARPS` (did you mean `num_warps`?)", "NUM_WARPS"),
        (quote!(num_stages = 3), "num_stages = 3, but no `for` loop of", "num_stages"),
        (quote!(num_stages = 0), "num_stages = 0 is not allowed: it must be 1 (no pipelining) to 8", "0"),
        (quote!(num_stages = STAGES), "num_stages takes integer literals", "STAGES"),
        (quote!(num_stages = [1, 1]), "num_stages = 1 is listed twice", "1"),
    ];
    for (attr, needle, underlined) in cases {
        one_error(attr, item.clone(), needle, underlined);
    }
    // A const parameter of a non-integer type: one error, on the type; its uses stay silent.
    one_error(
        quote!(BLOCK = [1]),
        quote!(
            fn k<const BLOCK: bool>(x: Ptr<f32>) {
                store(x + arange(0, BLOCK), 1.0);
            }
        ),
        "const generics of a tile kernel must be integer types: write `const BLOCK: usize`",
        "bool",
    );
}

#[test]
fn literals_out_of_range_and_division_by_zero() {
    body_error(
        quote!(store(x + arange(0, 128), full([128], 1e400));),
        "floating-point literal out of range for f64",
        "1e400",
    );
    body_error(
        quote!(store(x + arange(0, 128), full([128], 1e39f32));),
        "floating-point literal out of range for f32",
        "1e39f32",
    );
    body_error(
        quote!(let v = load(x + arange(0, 128)) * 1e39;),
        "floating-point literal out of range for f32",
        "load (x + arange (0 , 128)) * 1e39",
    );
    body_error(
        quote!(let b = cdiv(n, 0);),
        "`cdiv` divides by zero",
        "cdiv (n , 0)",
    );
    body_error(
        quote!(let q = arange(0, 128) / 0;),
        "integer `/` by a literal zero",
        "arange (0 , 128) / 0",
    );
    body_error(
        quote!(let q = n % 0;),
        "integer `%` by a literal zero",
        "n % 0",
    );
    // Float division by zero is IEEE arithmetic, not an error.
    body_expands(quote!(
        let offs = arange(0, 128);
        store(x + offs, load(x + offs) / 0.0);
    ));
}

#[test]
fn a_variable_is_not_called_a_literal() {
    body_error(
        quote!(let e1 = 2; let (a, b) = split(e1);),
        "`split` needs a tile here, found `e1`, a number known at compile time",
        "e1",
    );
}

#[test]
fn stores_broadcast_to_the_pointers() {
    body_error(
        quote!(store(x, load(x + arange(0, 128)));),
        "`store` writes one element per pointer, but the value has shape [128] and the pointers []",
        "load (x + arange (0 , 128))",
    );
    body_error(
        quote!(
            let rows = arange(0, 8).expand_dims(1);
            let cols = arange(0, 16).expand_dims(0);
            let v = load(x + rows * 16 + cols);
            store(x + cols, v);
        ),
        "the value has shape [8, 16] and the pointers [1, 16]",
        "v",
    );
    body_error(
        quote!(
            let offs = arange(0, 16);
            let mask = (arange(0, 8).expand_dims(1) + offs.expand_dims(0)) < n;
            store(x + offs, 1.0, mask);
        ),
        "the mask has shape [8, 16] and the pointers [16]",
        "mask",
    );
    // The value (and mask) broadcast up to the pointers.
    body_expands(quote!(
        let rows = arange(0, 8).expand_dims(1);
        let cols = arange(0, 16).expand_dims(0);
        store(x + rows * 16 + cols, load(x + cols), cols < n);
    ));
}

#[test]
fn scalar_pointers_load_and_store() {
    body_expands(quote!(
        let v = load(x);
        let w = load(x + program_id(0), program_id(0) < n, 0.0);
        store(x + program_id(0), v + w);
        store(x + 1, v, v > 0.0);
    ));
}

#[test]
fn shape_ops_on_scalars() {
    body_error(
        quote!(let t = load(x + arange(0, 128)).sum(0).trans();),
        "`trans` needs a tile of rank 1 or more, found a scalar (f32)",
        "load (x + arange (0 , 128)) . sum (0)",
    );
    body_error(
        quote!(let j = join(program_id(0), program_id(1));),
        "`join` needs a tile of rank 1 or more, found a scalar (i32)",
        "join (program_id (0) , program_id (1))",
    );
    body_error(
        quote!(let (a, b) = join(arange(0, 1), arange(0, 1)).reshape([2]).split();),
        "`split` of a tile of shape [2] would give two scalars",
        "join (arange (0 , 1) , arange (0 , 1)) . reshape ([2]) . split ()",
    );
    body_error(
        quote!(let r = arange(0, 1).reshape([]);),
        "`reshape` to a scalar (shape []) is not supported",
        "arange (0 , 1) . reshape ([])",
    );
    // A scalar with an axis added, or reshaped to one element, is its one-element splat.
    body_expands(quote!(
        let offs = arange(0, 128);
        let total = load(x + offs).sum(0);
        store(x + arange(0, 1), total.expand_dims(0));
        let row = program_id(0);
        let again = row.expand_dims(0).sum(0) + row.reshape([1, 1]).sum(1).sum(0);
        store(x + arange(0, 1) + again, total.reshape([1]));
    ));
}

/// A mistake found after the checks, in every specialisation and alignment variant, is
/// reported once.
#[test]
fn one_mistake_one_error_across_specialisations() {
    let out = crate::expand::tile_kernel(
        quote!(BLOCK = [128, 256]),
        quote!(
            fn growth<const BLOCK: usize>(out: Ptr<f64>, x: Ptr<f64>, n: i32) {
                let offs = program_id(0) * BLOCK + arange(0, BLOCK);
                let mask = offs < n;
                store(out + offs, load(x + offs, mask, 0.0).exp(), mask);
            }
        ),
    )
    .to_string();
    assert_eq!(
        out.matches("`exp` of f64 is not supported").count(),
        1,
        "{out}"
    );
}

/// `load_block` misused: each message names the rule, underlining the argument at fault.
#[test]
fn load_block_mistakes() {
    let block_kernel = |body: TokenStream| {
        (
            quote!(num_warps = 4, BM = 64, BK = 32),
            quote! {
                fn k<const BM: usize, const BK: usize>(
                    t: Tensor<f16, 2>,
                    v: Tensor<f16, 1>,
                    p: Ptr<f16>,
                    out: Tensor<f16, 2>,
                    r: u32,
                ) {
                    #body
                    store(out + arange(0, BM).expand_dims(1) * BK + arange(0, BK).expand_dims(0), x);
                }
            },
        )
    };
    let cases: [(TokenStream, &str, &str); 6] = [
        (
            quote!(let x = load_block(p, [0, 0], [BM, BK]);),
            "`p` is not a tensor parameter of rank 2 to 4",
            "p",
        ),
        (
            quote!(let x = load_block(v, [0, 0], [BM, BK]);),
            "`v` is not a tensor parameter of rank 2 to 4",
            "v",
        ),
        (
            quote!(let x = load_block(t, 0, [BM, BK]);),
            "takes a tensor parameter of rank 2 to 4, the block's first index",
            "0",
        ),
        (
            quote!(let x = load_block(t, [0, 0, 0], [BM, BK]);),
            "`t` has rank 2: the block's origin lists 2 indices, not 3",
            "[0 , 0 , 0]",
        ),
        (
            quote!(let x = load_block(t, [r, 0], [BM, BK]);),
            "the block's origin holds i32 scalars, found u32",
            "r",
        ),
        (
            quote!(let x = load_block(t, [0, 0], [BM]);),
            "the block of `load_block` has two dimensions",
            "[BM]",
        ),
    ];
    for (body, needle, underlined) in cases {
        let (attr, item) = block_kernel(body);
        one_error(attr, item, needle, underlined);
    }
}
