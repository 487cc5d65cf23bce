//! What a rejected kernel expands to: its errors, plus an uncallable declaration naming the
//! parameter types the macro accepted (so the user's imports of them stay used), and nothing
//! that names a type the macro already reported.

use crate::expand::tile_kernel;
use proc_macro2::TokenStream;

fn expand(attr: &str, item: &str) -> String {
    let attr: TokenStream = attr.parse().expect("attribute lexes");
    let item: TokenStream = item.parse().expect("item lexes");
    tile_kernel(attr, item).to_string()
}

/// The tokens after the errors: the declaration, or nothing.
fn declaration(output: &str) -> &str {
    output.find("const _").map_or("", |at| &output[at..])
}

#[test]
fn a_check_error_keeps_the_signature_types_named() {
    let output = expand(
        "",
        "fn add(out: Ptr<f32>, x: Ptr<f16>, n: i32) { let a = arange(0, 128); \
         store(out + a, load(x + arange(0, 64)).to::<f32>() + a.to::<f32>()); }",
    );
    assert!(output.contains("compile_error"), "{output}");
    let declared = declaration(&output);
    for ty in ["Ptr < f32 >", "Ptr < f16 >", "i32"] {
        assert!(declared.contains(ty), "{ty} not named in {declared}");
    }
    // Nothing callable: a bodiless trait method, no module named after the kernel.
    assert!(declared.contains("trait"), "{declared}");
    assert!(!output.contains("mod add"), "{output}");
    assert!(
        !output.contains("fn emulate") && !output.contains("fn launch"),
        "{output}"
    );
}

#[test]
fn the_declaration_names_the_accepted_types_only() {
    // (attribute, item, named in the declaration, not named there)
    let cases: [(&str, &str, &[&str], &[&str]); 2] = [
        // A rejected type is not named again.
        (
            "",
            "fn k(out: Ptr<f33>, x: Ptr<f16>) { store(out + arange(0, 128), 1.0); }",
            &["Ptr < f16 >"],
            &["f33"],
        ),
        // Type parameters are declared on the method.
        (
            "T = [f16, f32], num_warp = 4",
            "fn fill<T, const BLOCK: usize>(out: Ptr<T>, n: i32) { store(out + arange(0, 128), 1.0); }",
            &["fn kernel < T >", "Ptr < T >"],
            &[],
        ),
    ];
    for (attr, item, named, not_named) in cases {
        let output = expand(attr, item);
        let declared = declaration(&output);
        for ty in named {
            assert!(declared.contains(ty), "{ty} not named in {declared}");
        }
        for ty in not_named {
            assert!(!declared.contains(ty), "{ty} named in {declared}");
        }
    }
}

#[test]
fn an_input_that_is_not_a_function_gives_only_errors() {
    let output = expand("", "struct NotAKernel;");
    assert!(output.contains("compile_error"), "{output}");
    assert!(declaration(&output).is_empty(), "{output}");
}
