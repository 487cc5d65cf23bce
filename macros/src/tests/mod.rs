//! Unit tests of the whole front end on token streams (no compiler involved).

mod amdgpu_entries;
mod body_sets;
mod corpus;
mod diagnostics;
mod docs;
mod examples;
mod explain_matches_code;
mod generated_malformed;
mod generated_valid;
mod generator;
pub mod kernel_corpus;
mod macro_rules;
mod new_user_mistakes;
mod rejected_output;
pub mod sources;
mod tile_fn;

use crate::frontend::analyze;
use crate::ir::{Kernel, Op};
use crate::types::TileType;
use proc_macro2::TokenStream;

/// The stream re-lexed from its text, so that its spans have real lines and columns and
/// `source_text` shows what an error underlines (`quote!` spans are all the call site).
pub fn located(tokens: TokenStream) -> TokenStream {
    tokens.to_string().parse().expect("quote! output re-lexes")
}

/// The IR of every specialisation as the macro reads it ([`analyze_desugared`]), or the errors
/// as (message, underlined source text).
pub fn run(attr: TokenStream, item: TokenStream) -> Result<Vec<Kernel>, Vec<(String, String)>> {
    analyze_desugared(located(attr), located(item)).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| {
                let text = e.span().source_text().unwrap_or_default();
                (e.to_string(), text)
            })
            .collect()
    })
}

/// The IR of every specialisation as the macro reads it: `Tensor` parameters desugared
/// ([`desugar`](crate::expand::tensor_params::desugar)) and each tensor's innermost stride
/// marked unit, as the aligned variant assumes.
pub fn analyze_desugared(attr: TokenStream, item: TokenStream) -> Result<Vec<Kernel>, syn::Error> {
    use crate::expand::tensor_params::{desugar, mark_unit_strides};
    let (item, tensors) = desugar(item)?;
    let mut kernels = analyze(attr, item)?;
    for kernel in &mut kernels {
        mark_unit_strides(kernel, &tensors);
    }
    Ok(kernels)
}

/// Every op of `k` (at any depth) whose kind is named `name`, in program order.
pub fn ops_of(k: &Kernel, name: &str) -> Vec<Op> {
    let mut out = Vec::new();
    k.walk(&mut |op| {
        if op.kind.name() == name {
            out.push(op.clone());
        }
    });
    out
}

/// The kernels of a front end run that must succeed.
#[track_caller]
pub fn ok(attr: TokenStream, item: TokenStream) -> Vec<Kernel> {
    match run(attr, item) {
        Ok(k) => k,
        Err(errors) => panic!("expected no errors, got {errors:#?}"),
    }
}

/// The errors of a front end run that must fail.
#[track_caller]
pub fn errors(attr: TokenStream, item: TokenStream) -> Vec<(String, String)> {
    match run(attr, item) {
        Ok(k) => panic!("expected errors, but the kernel checked:\n{}", k[0]),
        Err(e) => e,
    }
}

/// The single error of a failing run whose message contains `needle`; checks that it
/// underlines `underlined` and that there is no other error.
#[track_caller]
pub fn one_error(attr: TokenStream, item: TokenStream, needle: &str, underlined: &str) -> String {
    let all = errors(attr, item);
    assert_eq!(all.len(), 1, "expected exactly one error, got {all:#?}");
    let (message, text) = &all[0];
    assert!(
        message.contains(needle),
        "message {message:?} lacks {needle:?}"
    );
    assert_eq!(
        text, underlined,
        "the error underlines the wrong code: {message}"
    );
    message.clone()
}

/// The type of the last value of `kernel` named `name`.
pub fn named_type(kernel: &Kernel, name: &str) -> Option<TileType> {
    kernel
        .values
        .iter()
        .rev()
        .find(|v| v.name.as_deref() == Some(name))
        .map(|v| v.ty.clone())
}
