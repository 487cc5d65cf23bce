//! `#[tile_kernel]`: the tile language of Tessera — parsing, the tile IR, the shape and type
//! checks, layout inference and lowering to the device runtime layer. The language reference is
//! the documentation of [`macro@tile_kernel`].
//!
//! The front end is a pipeline of plain functions on `proc_macro2` token streams, each unit-tested
//! without a compiler: `parse` (attribute and signature) → `ast` (the body as a syntax tree of the
//! language) → `check` (types, shapes and rules, per specialisation, building the IR) → `ir`
//! (SSA tile IR) → `infer` (a linear layout for every tile, conversions planned) → `lower`
//! (Rust tokens calling `tessera::device`) → `expand` (entry points, host launcher). Errors are collected and
//! emitted together as `syn::Error`s on the user's code; nothing panics on bad input.

#![warn(missing_docs)]

mod ast;
mod autotune;
mod check;
mod diag;
mod expand;
mod frontend;
mod infer;
mod ir;
mod lower;
mod ops;
mod parse;
mod tile_fn;
mod types;

#[cfg(test)]
mod tests;

/// The 64-bit FNV-1a hash of `bytes`: the same in every compiler run and version, so names and
/// fingerprints made from it are stable (layout marker types, helper macros, autotuning keys).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[doc = include_str!("../README.md")]
#[proc_macro_attribute]
pub fn tile_kernel(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::tile_kernel(attr.into(), item.into()).into()
}

/// `#[tile_fn]`: a helper function of the tile language, inlined into the kernels that list it
/// in their attribute (`uses = [name]`). See *Helper functions* in the docs of
/// [`macro@tile_kernel`].
#[proc_macro_attribute]
pub fn tile_fn(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    tile_fn::helper_macro(attr.into(), item.into()).into()
}

/// The expansion of a kernel resumed with one more of its helpers (called by the macro that
/// `#[tile_fn]` defines, never by users).
#[doc(hidden)]
#[proc_macro]
pub fn tile_kernel_resume(state: proc_macro::TokenStream) -> proc_macro::TokenStream {
    tile_fn::resume(state.into(), expand::expand_kernel).into()
}
