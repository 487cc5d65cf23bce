//! The hidden tensor-map parameters of a variant that copies by TMA (`crate::lower::TensorMapUse`,
//! one per tensor and box): the `tessera::TensorMapParam` list of its `Kernel`, the emulator's
//! entry closure that passes the maps after the kernel's own parameters, and the variant's check
//! that the driver would accept every map (else the launch picks the next variant).

use crate::lower::TensorMapUse;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

/// The `tessera::TensorMapParam` values of a variant's tensor maps.
pub(super) fn map_params(maps: &[TensorMapUse]) -> Vec<TokenStream> {
    maps.iter()
        .map(|m| {
            let (tensor, rank, element, rows, cols, swizzle) = (
                Literal::usize_unsuffixed(m.tensor),
                Literal::usize_unsuffixed(m.rank),
                Ident::new(m.element, Span::call_site()),
                Literal::u32_unsuffixed(m.box_shape[0]),
                Literal::u32_unsuffixed(m.box_shape[1]),
                Ident::new(&format!("B{}", m.swizzle_bytes), Span::call_site()),
            );
            quote! {
                ::tessera::TensorMapParam {
                    tensor: #tensor,
                    rank: #rank,
                    element: ::tessera::device::TmaElement::#element,
                    box_shape: [#rows, #cols],
                    swizzle: ::tessera::device::TmaSwizzle::#swizzle,
                }
            }
        })
        .collect()
}

/// The `Kernel::emulate` closure of host entry `entry`: its parameters from `args` (fields
/// `arg_fields`), then, with `maps`, the emulator's maps of them.
pub(super) fn emulate_closure(
    entry: &Ident,
    args: &Ident,
    arg_fields: &[TokenStream],
    maps: &[TensorMapUse],
) -> TokenStream {
    if maps.is_empty() {
        return quote!(|#args: Args| unsafe { #entry(#(#args.#arg_fields),*) });
    }
    let map_params = map_params(maps);
    let map_indices = (0..maps.len()).map(Literal::usize_unsuffixed);
    quote!(|#args: Args| {
        let __tessera_maps = ::tessera::tile::emulated_tensor_maps(&[#(#map_params),*], &#args);
        unsafe { #entry(#(#args.#arg_fields,)* #(__tessera_maps[#map_indices]),*) }
    })
}

/// The variant's check of `maps` against `args` (none without maps): a variant copying by TMA
/// runs only on tensors whose maps the driver accepts (a zero-sized or row-overlapping tensor
/// runs the next variant).
pub(super) fn map_check(kernel: &str, args: &Ident, maps: &[TensorMapUse]) -> Option<TokenStream> {
    (!maps.is_empty()).then(|| {
        let map_params = map_params(maps);
        quote!(::tessera::tile::check_tensor_maps(#kernel, &[#(#map_params),*], #args))
    })
}
