//! One entry of a kernel's `SPECIALISATIONS` table: a variant of a specialisation as its
//! `tessera::tile::Specialisation` is generated (its handle, const values, warps and each
//! target's shared memory).

use super::tensor_maps;
use crate::lower::{Facts, TensorMapUse};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

/// One entry of a kernel's `SPECIALISATIONS`: a variant of a specialisation, as its
/// `tessera::tile::Specialisation` is generated.
pub(super) struct SpecEntry {
    pub entry: Ident,
    pub consts: Vec<(String, i128)>,
    /// Dynamic shared memory of each target's body: sm_80, sm_90a, amdgpu.
    pub shared: [u32; 3],
    pub facts: Facts,
    pub num_warps: u32,
    pub maps: Vec<TensorMapUse>,
    pub nvidia_only: Vec<&'static str>,
    /// The earlier variant whose amdgpu kernel this one runs (the same amdgpu body).
    pub amdgpu_entry: Option<Ident>,
}

/// The `tessera::tile::Specialisation` of `spec`: `targets` is the kernel's
/// `tessera::KernelTargets`, `args` and `arg_fields` name the launch arguments (the emulator's
/// closure unpacks them).
pub(super) fn specialisation_item(
    spec: &SpecEntry,
    targets: &TokenStream,
    args: &Ident,
    arg_fields: &[TokenStream],
) -> TokenStream {
    let SpecEntry {
        entry,
        consts: values,
        shared,
        num_warps,
        maps,
        nvidia_only,
        amdgpu_entry,
        ..
    } = spec;
    let entry_str = entry.to_string();
    let amdgpu_entry = match amdgpu_entry {
        Some(owner) => {
            let owner = owner.to_string();
            quote!(::core::option::Option::Some(#owner))
        }
        None => quote!(::core::option::Option::None),
    };
    let map_params = tensor_maps::map_params(maps);
    let emulate = tensor_maps::emulate_closure(entry, args, arg_fields, maps);
    let cs = values.iter().map(|(c, v)| {
        let v = Literal::i128_unsuffixed(*v);
        quote!((#c, #v))
    });
    let [sm80, sm90a, amdgpu] = shared.map(Literal::u32_unsuffixed);
    let most = Literal::u32_unsuffixed(shared.iter().copied().max().unwrap_or(0));
    let nw = Literal::u32_unsuffixed(*num_warps);
    quote! {
        ::tessera::tile::Specialisation {
            kernel: ::tessera::Kernel {
                name: #entry_str,
                emulate: #emulate,
                targets: #targets,
                tensor_maps: &[#(#map_params),*],
                nvidia_only: &[#(#nvidia_only),*],
                amdgpu_entry: #amdgpu_entry,
            },
            consts: &[#(#cs),*],
            num_warps: #nw,
            shared_bytes: #most,
            target_shared_bytes: ::tessera::tile::TargetSharedBytes {
                sm80: #sm80,
                sm90a: #sm90a,
                amdgpu: #amdgpu,
            },
            entry: ::tessera::launch::EntryCache::new(),
        }
    }
}
