//! Every kernel in the crate documentation (README.md) passes the front end (its `Tensor`
//! parameters desugared as the macro does).

use super::analyze_desugared;
use crate::tile_fn::{inline_calls, split_uses, Helper};
use quote::ToTokens;

const README: &str = include_str!("../../README.md");

/// The ```rust code blocks of the README.
fn rust_blocks() -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in README.lines() {
        match &mut current {
            None if line.starts_with("```rust") => current = Some(String::new()),
            Some(_) if line.starts_with("```") => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn documented_kernels_pass_the_checks() {
    let mut kernels = 0;
    for block in rust_blocks() {
        let file: syn::File = syn::parse_str(&block).expect("README code parses as Rust");
        // The block's `#[tile_fn]` helpers, for the kernels of the same block that list them.
        let mut helpers = Vec::new();
        let mut functions = Vec::new();
        for item in file.items {
            let syn::Item::Fn(function) = item else {
                continue;
            };
            if function.attrs.iter().any(|a| a.path().is_ident("tile_fn")) {
                helpers.push(Helper::new(function));
            } else {
                functions.push(function);
            }
        }
        for mut function in functions {
            let position = function
                .attrs
                .iter()
                .position(|a| a.path().is_ident("tile_kernel"))
                .expect("every fn in the README is a tile kernel or a #[tile_fn] helper");
            let attr = function.attrs.remove(position);
            let args = match attr.meta {
                syn::Meta::List(list) => list.tokens,
                _ => Default::default(),
            };
            let name = function.sig.ident.to_string();
            let uses = split_uses(args).expect("`uses` of a README kernel");
            let item = inline_calls(function.into_token_stream(), &uses, &helpers)
                .unwrap_or_else(|e| panic!("README kernel `{name}`: its helpers fail: {e}"));
            if let Err(e) = analyze_desugared(uses.rest, item) {
                panic!("README kernel `{name}` fails: {e}");
            }
            kernels += 1;
        }
    }
    assert_eq!(
        kernels, 10,
        "the README shows softmax, matmul, the element-type generic axpy, a row cumsum, the \
         scalar-memory row_loss, the atomic histogram and tickets, the `while` loops \
         search_sorted and collatz_steps, and row_max with its helper"
    );
}

/// The operation table of the README lists every operation the parser knows.
#[test]
fn documented_operations_are_complete() {
    for op in crate::ops::all() {
        assert!(
            README.contains(&format!("{}(", op.name))
                || README.contains(&format!("{}::<", op.name)),
            "README does not document `{}`",
            op.name
        );
    }
}
