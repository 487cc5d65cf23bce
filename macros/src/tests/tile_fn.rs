//! `#[tile_fn]` helpers: a kernel that calls helpers checks as the same kernel with each call
//! written out as the helper's body, and every misuse is an error at the user's code.

use super::sources::tokens;
use super::{located, run};
use crate::ir::Kernel;
use crate::tile_fn::{helper_macro, inline_calls, split_uses, Helper, ResumeState};
use proc_macro2::TokenStream;
use quote::quote;

/// The helpers of `sources` as `#[tile_fn]` hands them over: through the macro it defines and
/// the resume state that macro builds.
fn helpers(sources: &[&str]) -> Vec<Helper> {
    let mut state = quote!([] []);
    for source in sources {
        let expanded = helper_macro(TokenStream::new(), located(tokens(source)));
        let text = expanded.to_string();
        assert!(text.contains("macro_rules"), "not a helper macro: {text}");
        // The macro appends `[#[tile_fn] fn …]` to the state it is given.
        let item: syn::ItemFn = syn::parse2(located(tokens(source))).expect("helper parses");
        state.extend(quote!([#[tile_fn] #item]));
    }
    ResumeState::parse(state).expect("state parses").helpers
}

/// The front end on `kernel` with `helpers` inlined (`attr` may hold `uses`).
fn run_with(
    attr: TokenStream,
    kernel: &str,
    helper_sources: &[&str],
) -> Result<Vec<Kernel>, Vec<(String, String)>> {
    let uses = split_uses(attr).map_err(|e| vec![(e.to_string(), String::new())])?;
    let item = located(tokens(kernel));
    let errors = |e: syn::Error| {
        e.into_iter()
            .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    let inlined = inline_calls(item, &uses, &helpers(helper_sources)).map_err(errors)?;
    run(uses.rest, inlined)
}

/// The IR of each kernel as text without the names of locals (`// x`: helpers rename theirs).
fn ir_text(kernels: &[Kernel]) -> Vec<String> {
    kernels
        .iter()
        .map(|k| {
            let lines = k.to_string();
            let ops = lines
                .lines()
                .map(|line| line.split("  //").next().unwrap_or(line));
            ops.collect::<Vec<_>>().join("\n")
        })
        .collect()
}

const GROUPED: &str = "
    /// Grouped program order: the tile row of program `pid`.
    fn grouped<const GROUP: usize>(pid: i32, tiles_m: i32, tiles_n: i32) -> i32 {
        let in_group = GROUP * tiles_n;
        let first = (pid / in_group) * GROUP;
        let rows = minimum(tiles_m - first, GROUP);
        first + (pid % in_group) % rows
    }";

const ROW_SUM: &str = "
    fn row_sum<T, const BLOCK: usize>(x: Ptr<T>, n: i32) -> f32 {
        let mut acc = zeros::<f32>([BLOCK]);
        for start in (0..n).step_by(BLOCK) {
            let cols = start + arange(0, BLOCK);
            acc += load(x + cols, cols < n, 0.0).to::<f32>();
        }
        acc.sum(0)
    }";

#[test]
fn a_kernel_with_helpers_checks_as_the_kernel_written_out() {
    let with_helpers = run_with(
        quote!(
            T = [f32, f16],
            BLOCK = [128, 256],
            uses = [grouped, row_sum]
        ),
        "fn k<T, const BLOCK: usize>(x: Ptr<T>, out: Ptr<f32>, n: i32) {
            let m = grouped::<8>(program_id(0), 4, n);
            let s = row_sum::<T, BLOCK>(x + m * n, n);
            store(out + m + arange(0, 1), s + zeros::<f32>([1]));
        }",
        &[GROUPED, ROW_SUM],
    )
    .expect("checks");
    let written_out = run_with(
        quote!(T = [f32, f16], BLOCK = [128, 256]),
        "fn k<T, const BLOCK: usize>(x: Ptr<T>, out: Ptr<f32>, n: i32) {
            let m = {
                let pid = program_id(0);
                let tiles_m = 4;
                let tiles_n = n;
                let in_group = (8) * tiles_n;
                let first = (pid / in_group) * (8);
                let rows = minimum(tiles_m - first, (8));
                first + (pid % in_group) % rows
            };
            let s = {
                let x2 = x + m * n;
                let n2 = n;
                let mut acc = zeros::<f32>([BLOCK]);
                for start in (0..n2).step_by(BLOCK) {
                    let cols = start + arange(0, BLOCK);
                    acc += load(x2 + cols, cols < n2, 0.0).to::<f32>();
                }
                acc.sum(0)
            };
            store(out + m + arange(0, 1), s + zeros::<f32>([1]));
        }",
        &[],
    )
    .expect("checks");
    assert_eq!(with_helpers.len(), 4);
    assert_eq!(ir_text(&with_helpers), ir_text(&written_out));
}

#[test]
fn a_helper_returns_two_values_as_a_pair() {
    let kernels = run_with(
        quote!(uses = [row_col]),
        "fn k(out: Ptr<i32>) {
            let (r, c) = row_col(program_id(0), 8);
            store(out + r * 8 + c + arange(0, 1), zeros::<i32>([1]) + r);
        }",
        &["fn row_col(pid: i32, width: i32) -> (i32, i32) { (pid / width, pid % width) }"],
    )
    .expect("checks");
    assert_eq!(kernels.len(), 1);
    let errors = run_with(
        quote!(uses = [row_col]),
        "fn k(out: Ptr<i32>) { store(out + arange(0, 1), row_col(program_id(0), 8)); }",
        &["fn row_col(pid: i32, width: i32) -> (i32, i32) { (pid / width, pid % width) }"],
    )
    .expect_err("a pair is not a value");
    assert!(errors[0].0.contains("destructure"), "{errors:?}");
}

#[test]
fn a_helper_returns_three_values_as_a_tuple() {
    let helper = "fn split3(pid: i32, w: i32) -> (i32, i32, i32) { let q = pid / w; (q / w, q % w, pid % w) }";
    let kernels = run_with(
        quote!(uses = [split3]),
        "fn k(out: Ptr<i32>) {
            let (a, b, c) = split3(program_id(0), 4);
            store(out + arange(0, 1), zeros::<i32>([1]) + a * 16 + b * 4 + c);
        }",
        &[helper],
    )
    .expect("checks");
    assert_eq!(kernels.len(), 1);
    let errors = run_with(
        quote!(uses = [split3]),
        "fn k(out: Ptr<i32>) { let (a, b) = split3(program_id(0), 4); store(out, a + b); }",
        &[helper],
    )
    .expect_err("three values for two names");
    assert!(
        errors[0]
            .0
            .contains("this pattern has 2 names for the 3 values on its right"),
        "{errors:?}"
    );
}

#[test]
fn helper_locals_do_not_meet_the_kernels() {
    // The helper's `x` and `acc` are its own: the kernel's `acc` is passed in as `x`, and the
    // helper's `acc` leaves the kernel's untouched.
    let kernels = run_with(
        quote!(uses = [twice]),
        "fn k(out: Ptr<f32>) {
            let acc = full::<f32>([32], 1.0);
            let x = twice(acc);
            store(out + arange(0, 32), x + acc);
        }",
        &["fn twice(x: f32) -> f32 { let mut acc = x; acc = acc + x; acc }"],
    )
    .expect("checks");
    assert_eq!(kernels.len(), 1);
}

#[test]
fn helpers_call_helpers_listed_by_the_kernel() {
    let kernels = run_with(
        quote!(BLOCK = 64, uses = [outer, inner]),
        "fn k<const BLOCK: usize>(out: Ptr<f32>) {
            store(out + arange(0, BLOCK), outer::<BLOCK>(2.0));
        }",
        &[
            "fn outer<const B: usize>(v: f32) -> f32 { inner::<B>(v) * 2.0 }",
            "fn inner<const W: usize>(v: f32) -> f32 { full::<f32>([W], v) }",
        ],
    )
    .expect("checks");
    assert_eq!(kernels.len(), 1);
}

/// Misuses of helpers, each one error: (kernel's `uses`, kernel body, helpers, message, the
/// source text it underlines).
const MISUSES: &[(&str, &str, &[&str], &str, &str)] = &[
    (
        "scaled",
        "store(out + arange(0, 32), scaled(1.0));",
        &["fn scaled(v: f32) -> f32 { full::<f32>([32], v * s) }"],
        "`s` is neither a parameter of helper `scaled` nor defined in it: a helper sees only \
         its arguments (pass `s` as one)",
        "s",
    ),
    (
        "scaled",
        "store(out + arange(0, 32), scaled(1.0));",
        &["fn scaled(v: f32, s: f32) -> f32 { full::<f32>([32], v * s) }"],
        "helper `scaled` takes 2 arguments, 1 given",
        "scaled (1.0)",
    ),
    (
        "ones",
        "store(out + arange(0, 32), ones(1.0));",
        &["fn ones<const W: usize>(v: f32) -> f32 { full::<f32>([W], v) }"],
        "helper `ones` has 1 generic parameter (W), the call gives 0: write `ones::<W>(..)`",
        "ones",
    ),
    (
        "ping, pong",
        "store(out + arange(0, 32), ping(1.0));",
        &[
            "fn ping(v: f32) -> f32 { pong(v) }",
            "fn pong(v: f32) -> f32 { ping(v) }",
        ],
        "helper `ping` calls itself (ping → pong → ping): helpers are inlined, so they cannot \
         recurse",
        "ping (v)",
    ),
    (
        "row_of",
        "store(out + arange(0, 32), row_of(out, 1));",
        &["fn row_of(t: _, r: i32) -> _ { load(t + r * t.stride(0) + arange(0, 32)) }"],
        "`t.stride(..)` in helper `row_of`: `t` is not a tensor parameter of the helper; \
         declare it `t: Tensor<_, RANK>` to read its sizes, strides and pointer",
        "stride",
    ),
    (
        "row_of",
        "store(out + arange(0, 32), row_of(out + 1, 1));",
        &["fn row_of(t: Tensor<f32, 1>, r: i32) -> _ { load(t + r * t.stride(0) + arange(0, 32)) }"],
        "helper `row_of` takes `t` as a tensor: pass a tensor parameter of the kernel by its name",
        "out + 1",
    ),
    (
        "row_of",
        "store(out + arange(0, 32), row_of(out, 1));",
        &["fn row_of(t: Tensor<f32, 1>, r: i32) -> _ { let t = r; full::<f32>([32], 1.0) }"],
        "helper `row_of` binds `t`, the name of its tensor parameter: give the local another name",
        "row_of (out , 1)",
    ),
];

/// A helper reads the sizes and strides of the tensors it is given: the kernel checks as the
/// kernel written out with the caller's tensors in their place, through a helper's call of
/// another helper too.
#[test]
fn helpers_take_tensors() {
    let with_helpers = run_with(
        quote!(BLOCK = 64, uses = [scaled_row, row_of]),
        "fn k<const BLOCK: usize>(out: Tensor<f32, 2>, x: Tensor<f32, 2>) {
            let r = program_id(0);
            store(out + r * out.stride(0) + arange(0, BLOCK) * out.stride(1), scaled_row::<BLOCK>(x, r, 2.0));
        }",
        &[
            "fn scaled_row<const B: usize>(t: Tensor<_, 2>, r: i32, s: f32) -> _ { row_of::<B>(t, r) * s }",
            "fn row_of<const W: usize>(m: Tensor<f32, 2>, r: i32) -> _ {
                let cols = arange(0, W);
                load(m + r * m.stride(0) + cols * m.stride(1), cols < m.size(1), 0.0)
            }",
        ],
    )
    .expect("checks");
    let written_out = run_with(
        quote!(BLOCK = 64),
        "fn k<const BLOCK: usize>(out: Tensor<f32, 2>, x: Tensor<f32, 2>) {
            let r = program_id(0);
            store(out + r * out.stride(0) + arange(0, BLOCK) * out.stride(1), {
                let r2 = r;
                let s2 = 2.0;
                ({
                    let r3 = r2;
                    let cols = arange(0, BLOCK);
                    load(x + r3 * x.stride(0) + cols * x.stride(1), cols < x.size(1), 0.0)
                }) * s2
            });
        }",
        &[],
    )
    .expect("checks");
    assert_eq!(ir_text(&with_helpers), ir_text(&written_out));
}

#[test]
fn misuses_of_helpers_are_errors_at_the_users_code() {
    for (uses, body, helper_sources, message, underlined) in MISUSES {
        let attr: TokenStream = format!("uses = [{uses}]").parse().unwrap();
        let kernel = format!("fn k(out: Ptr<f32>, s: f32) {{ {body} }}");
        let errors = match run_with(attr, &kernel, helper_sources) {
            Ok(_) => panic!("{body}: expected an error"),
            Err(e) => e,
        };
        assert_eq!(errors.len(), 1, "{body}: expected one error: {errors:#?}");
        assert_eq!(errors[0].0, *message);
        assert_eq!(errors[0].1, *underlined, "{message}");
    }
}

#[test]
fn an_unlisted_helper_is_an_unknown_operation_with_a_hint() {
    let errors = run_with(
        quote!(),
        "fn k(out: Ptr<f32>) { store(out + arange(0, 32), softplus(1.0)); }",
        &[],
    )
    .expect_err("an error");
    assert_eq!(
        errors[0].0,
        "unknown tile operation `softplus`: the operations of the tile language are listed in \
         the docs of tessera::tile_kernel; a #[tile_fn] helper is called once the kernel lists \
         it: `uses = [softplus]`"
    );
}

#[test]
fn uses_is_a_list_of_names_without_repeats() {
    let error = split_uses(quote!(num_warps = 4, uses = grouped))
        .err()
        .expect("an error");
    assert!(error
        .to_string()
        .starts_with("`uses` lists the #[tile_fn] helpers"));
    let error = split_uses(quote!(uses = [a, m::a]))
        .err()
        .expect("an error");
    assert_eq!(error.to_string(), "`a` is listed twice in `uses`");
    let uses = split_uses(quote!(num_warps = 4, uses = [a, m::b], BLOCK = 8)).expect("parses");
    assert_eq!(uses.paths.len(), 2);
    assert_eq!(uses.rest.to_string(), "num_warps = 4 , BLOCK = 8");
}

#[test]
fn tile_fn_rejects_what_a_helper_cannot_be() {
    let cases = [
        (
            "pub(crate) const fn h(x: f32) -> f32 { x }",
            "a #[tile_fn] helper is a plain `fn`",
        ),
        (
            "fn h((a, b): (f32, f32)) -> f32 { a }",
            "a #[tile_fn] parameter is a name and a type",
        ),
        (
            "fn h<T: Copy>(x: T) -> T { x }",
            "a #[tile_fn] helper's generic parameters",
        ),
        (
            "#[inline] fn h(x: f32) -> f32 { x }",
            "only doc comments may be attached",
        ),
        ("struct H;", "#[tile_fn] applies to a function"),
    ];
    for (source, needle) in cases {
        let text = helper_macro(TokenStream::new(), tokens(source)).to_string();
        assert!(text.contains("compile_error"), "{source}: {text}");
        assert!(text.contains(needle), "{source}: {text} lacks {needle:?}");
    }
    let text = helper_macro(quote!(inline), tokens("fn h(x: f32) -> f32 { x }")).to_string();
    assert!(text.contains("#[tile_fn] takes no arguments"), "{text}");
}

/// A `pub` helper's macro is exported (kernels of other crates fetch it through the helper's
/// `pub use`) under a name of its own per helper (the crate's root holds every exported macro),
/// the same in every build of the same source; other helpers' macros are not exported.
#[test]
fn pub_helpers_export_their_macro_under_a_name_of_their_own() {
    let expand = |source: &str| helper_macro(TokenStream::new(), tokens(source)).to_string();
    let exported = |text: &str| text.contains("# [macro_export]");
    let hidden_name = |text: &str| {
        let at = text.find("macro_rules ! ").expect("a macro_rules") + "macro_rules ! ".len();
        text[at..]
            .split_whitespace()
            .next()
            .expect("its name")
            .to_string()
    };
    let public = expand("pub fn h(x: f32) -> f32 { x }");
    assert!(exported(&public), "{public}");
    assert!(
        public.contains(&format!("pub use {} as h ;", hidden_name(&public))),
        "{public}"
    );
    assert_eq!(public, expand("pub fn h(x: f32) -> f32 { x }"));
    let other_body = expand("pub fn h(x: f32) -> f32 { x + x }");
    assert_ne!(hidden_name(&public), hidden_name(&other_body));
    for source in [
        "fn h(x: f32) -> f32 { x }",
        "pub(crate) fn h(x: f32) -> f32 { x }",
    ] {
        let text = expand(source);
        assert!(!exported(&text), "{text}");
        assert_eq!(hidden_name(&text), "__tessera_tile_fn_h");
    }
}
