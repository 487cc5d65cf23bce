//! The PTX entries of one kernel variant and their host twins: one entry per target body
//! (told apart by `cfg(target_feature = "sm_90a")`), and the host function the emulator runs.
//! Each is the argument of a `tessera::__tile_kernel_items!` call under its `#[cfg]`, so that a
//! build parses only the bodies of its own target.

use crate::ir::Target;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The PTX entry and its host twin for the bodies of one variant: with one body (a kernel
/// without `dot`, or `targets = [sm_80]`), one of each; with an Ampere and a Hopper body, the
/// PTX entry once per target (`cfg(target_feature = "sm_90a")` tells them apart) and a host
/// function that runs the body of the emulated target (`tessera::emulator::running_target`);
/// with a Hopper body alone (`targets = [sm_90a]`), the entry in the sm_90a PTX only.
pub(super) fn entry_items(
    entry: &Ident,
    param_names: &[&Ident],
    param_types: &[TokenStream],
    bodies: &[(Target, TokenStream, u32)],
    tensor_maps: usize,
) -> TokenStream {
    let body_of = |target: Target| bodies.iter().find(|(t, _, _)| *t == target).map(|b| &b.1);
    let host_doc = quote! {
        /// The host build of the PTX entry of the same name (the emulator runs it).
        ///
        /// # Safety
        /// Only on a simulated GPU thread, with pointers valid for what the kernel
        /// accesses; use the module's `launch`/`emulate`.
    };
    let attrs = quote!(#[allow(unused, non_snake_case, clippy::all)]);
    // The hidden tensor-map parameters of the sm_90a body's TMA copies (its PTX entry and the
    // host function take them; the other targets' entries do not).
    let maps: Vec<TokenStream> = (0..tensor_maps)
        .map(|i| {
            let name = crate::lower::TensorMapUse::param(i);
            quote!(#name: ::tessera::Ptr<::tessera::device::TensorMap>)
        })
        .collect();
    // The PTX entry, in the PTX of the targets `cfg` selects.
    let device_entry = |cfg: TokenStream, body: &TokenStream, maps: &[TokenStream]| {
        quote! {
            #[cfg(#cfg)]
            ::tessera::__tile_kernel_items! {
                #[no_mangle]
                #attrs
                pub unsafe extern "ptx-kernel" fn #entry(#(#param_names: #param_types,)* #(#maps),*) {
                    #body
                }
            }
        }
    };
    let host_entry = |body: TokenStream| {
        quote! {
            #[cfg(not(target_arch = "nvptx64"))]
            ::tessera::__tile_kernel_items! {
                #attrs
                #host_doc
                pub unsafe fn #entry(#(#param_names: #param_types,)* #(#maps),*) {
                    #body
                }
            }
        }
    };
    let sm90a = quote!(all(target_arch = "nvptx64", target_feature = "sm_90a"));
    let items = match (body_of(Target::Ampere), body_of(Target::Hopper)) {
        // `targets = [sm_90a]`: in the sm_90a PTX alone (the launcher refuses other targets).
        (None, Some(hopper)) => vec![
            device_entry(sm90a, hopper, &maps),
            host_entry(hopper.clone()),
        ],
        (Some(ampere), Some(hopper)) => {
            let others = quote!(all(target_arch = "nvptx64", not(target_feature = "sm_90a")));
            let emulated = quote! {
                if ::tessera::emulator::running_target()
                    == ::tessera::emulator::EmulatedTarget::Sm90a
                {
                    #hopper
                } else {
                    #ampere
                }
            };
            vec![
                device_entry(others, ampere, &[]),
                device_entry(sm90a, hopper, &maps),
                host_entry(emulated),
            ]
        }
        _ => {
            let body = bodies.first().map(|b| b.1.clone()).unwrap_or_default();
            let every = quote!(target_arch = "nvptx64");
            vec![device_entry(every, &body, &maps), host_entry(body)]
        }
    };
    items.into_iter().collect()
}
