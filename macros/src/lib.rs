#![doc = include_str!("../README.md")]

mod ast;
mod check;
mod diag;
mod expand;
mod frontend;
// The IR is the interface to layout inference and lowering (later issues); until they exist,
// parts of it are read only by the tests.
#[allow(dead_code)]
mod ir;
mod ops;
mod parse;
mod types;

#[cfg(test)]
mod tests;

/// Compiles a tile kernel. See the crate documentation for the language.
#[proc_macro_attribute]
pub fn tile_kernel(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::tile_kernel(attr.into(), item.into()).into()
}
