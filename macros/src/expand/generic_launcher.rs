//! The launcher of a kernel with type parameters (`#[tile_kernel(T = [f16, bf16])]`): generic
//! `launch` / `emulate` that pick the submodule of the arguments' element types.

use super::*;

/// The launcher of a kernel with type parameters: a trait per type parameter implemented by its
/// listed element types (another type is a compile error naming the parameter), and `launch` /
/// `emulate` generic over them, calling the submodule of the arguments' element types.
pub(super) fn generic_launcher(
    function: &syn::ItemFn,
    name: &Ident,
    groups: &[TypeGroup],
    axes: &Axes,
    has_consts: bool,
) -> TokenStream {
    let Some((first_types, first_group)) = groups.first() else {
        return quote!();
    };
    let launchable_params = first_group
        .first()
        .is_some_and(|k| k.params.iter().all(|p| launchable(k.ty(p.value).dtype)));
    if !launchable_params {
        return quote!();
    }
    let Own {
        device,
        module,
        grid,
        ..
    } = Own::names();
    let kernel_str = name.to_string();
    let mut traits = TokenStream::new();
    let mut bounds = Vec::new();
    for (index, (param, _)) in first_types.iter().enumerate() {
        let listed: Vec<Scalar> =
            groups
                .iter()
                .map(|(types, _)| types[index].1)
                .fold(Vec::new(), |mut all, s| {
                    if !all.contains(&s) {
                        all.push(s);
                    }
                    all
                });
        let names: Vec<&str> = listed.iter().map(|s| s.name()).collect();
        let message = format!(
            "`{{Self}}` is not an element type of `{param}` in the kernel `{kernel_str}`: it is \
             compiled for {param} = [{}]",
            names.join(", ")
        );
        let trait_name = Ident::new(&format!("Listed_{param}"), Span::call_site());
        let doc = format!(
            "The element types `{param}` is compiled for: {}.",
            names.join(", ")
        );
        let impls = listed.iter().map(|s| {
            let t = elem_type(DType::Scalar(*s));
            quote!(impl #trait_name for #t {})
        });
        traits.extend(quote! {
            #[doc = #doc]
            #[diagnostic::on_unimplemented(message = #message)]
            pub trait #trait_name: 'static {}
            #(#impls)*
        });
        let param = Ident::new(param, Span::call_site());
        bounds.push(quote!(#param: #trait_name));
    }
    if !axes.tensors.is_empty() {
        let typed: Vec<(Ident, &syn::Type)> = first_group[0]
            .params
            .iter()
            .map(|p| Ident::new(&p.name, Span::call_site()))
            .zip(function.sig.inputs.iter().filter_map(|input| match input {
                syn::FnArg::Typed(t) => Some(&*t.ty),
                syn::FnArg::Receiver(_) => None,
            }))
            .collect();
        let types: Vec<TokenStream> = typed.iter().map(|(_, t)| quote!(#t)).collect();
        let typed: Vec<(&Ident, &TokenStream)> =
            typed.iter().map(|(n, _)| n).zip(types.iter()).collect();
        // A tensor's element type is a `DeviceElement` (the views' bound).
        let bounds: Vec<TokenStream> = bounds
            .iter()
            .map(|b| quote!(#b + ::tessera::launch::DeviceElement))
            .collect();
        let submodules: Vec<(Ident, Vec<TokenStream>)> = groups
            .iter()
            .map(|(types, _)| (types_module(types), same_types(types)))
            .collect();
        let args = super::tensor_params::tensor_args(
            &kernel_str,
            &axes.tensors,
            &typed,
            &super::tensor_params::param_accesses(&first_group[0]),
        );
        let first_module = types_module(first_types);
        let tensor_launch = super::tensor_params::generic_tensor_launcher(
            &kernel_str,
            &axes.tensors,
            &args,
            &bounds,
            &submodules,
            has_consts,
            axes.autotune.as_ref().map(|_| &first_module),
        );
        return quote!(#traits #tensor_launch);
    }
    let params: Vec<(&syn::Pat, &syn::Type)> = function
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(t) => Some((&*t.pat, &*t.ty)),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let param_names: Vec<Ident> = first_group[0]
        .params
        .iter()
        .map(|p| Ident::new(&p.name, Span::call_site()))
        .collect();
    let param_types: Vec<&syn::Type> = params.iter().map(|(_, t)| *t).collect();
    let (consts_param, consts_arg) = consts_param_arg(has_consts);
    // `if <T is f16> { return T_f16::f(leading…, params…); }` per group.
    let dispatch = |function: &Ident, leading: TokenStream| -> TokenStream {
        let arms = groups.iter().map(|(types, _)| {
            let sub = types_module(types);
            let same = same_types(types);
            quote! {
                if true #(&& #same)* {
                    // SAFETY: the type parameters are these element types, so each argument
                    // already has the type of the submodule's parameter.
                    return #sub::#function(#leading
                        #(unsafe { ::core::mem::transmute_copy(&#param_names) }),*);
                }
            }
        });
        quote!(#(#arms)*)
    };
    let launch_arms = dispatch(
        &Ident::new("launch", Span::call_site()),
        quote!(#device, #module, #consts_arg #grid,),
    );
    let emulate_arms = dispatch(
        &Ident::new("emulate", Span::call_site()),
        quote!(#consts_arg #grid,),
    );
    let no_types = quote! {
        ::core::result::Result::Err(::tessera::launch::LaunchError::InvalidConfig {
            kernel: #kernel_str.to_string(),
            reason: "no specialisation for these element types".to_string(),
        })
    };
    let tuned = if axes.autotune.is_some() {
        let first_module = types_module(first_types);
        generic_tuned(
            &first_module,
            &bounds,
            &param_names,
            &param_types,
            &dispatch,
            &no_types,
        )
    } else {
        quote!()
    };
    let launchers = launch_and_emulate(
        [
            "Launches the specialisation of the arguments' element types (see each submodule's \
             `launch`): a type parameter is given by the arguments' types, e.g. `Ptr<f16>`.",
            "Runs the specialisation of the arguments' element types on the CPU emulator (see \
             each submodule's `emulate`).",
        ],
        &bounds,
        &consts_param,
        &quote!(#(#param_names: #param_types),*),
        [
            quote!(#launch_arms #no_types),
            quote!(#emulate_arms #no_types),
        ],
    );
    quote! {
        #traits

        #tuned

        #launchers
    }
}

/// `T == f16 && …` as `TypeId` comparisons: the type parameters are `types`' element types.
fn same_types(types: &[(String, Scalar)]) -> Vec<TokenStream> {
    types
        .iter()
        .map(|(param, s)| {
            let param = Ident::new(param, Span::call_site());
            let t = elem_type(DType::Scalar(*s));
            quote!(::core::any::TypeId::of::<#param>() == ::core::any::TypeId::of::<#t>())
        })
        .collect()
}
