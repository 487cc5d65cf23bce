//! What `#[tile_kernel]` expands to.
//!
//! Layout inference and code generation are not built yet, so a kernel that passes every check
//! expands to a `compile_error!` saying exactly that, on the kernel's name: the macro never emits
//! the original function as if it were compiled for the GPU.

use crate::frontend::analyze;
use proc_macro2::TokenStream;
use quote::quote_spanned;

/// The message for a kernel that passed parsing and checking.
pub const NOT_IMPLEMENTED: &str = "#[tile_kernel]: code generation is not implemented yet; the \
                                   kernel passed parsing and shape checks";

pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match analyze(attr, item) {
        Err(errors) => errors.to_compile_error(),
        Ok(kernels) => {
            let span = kernels
                .first()
                .map_or_else(proc_macro2::Span::call_site, |k| k.name.span());
            quote_spanned! {span=> ::core::compile_error! { #NOT_IMPLEMENTED } }
        }
    }
}
