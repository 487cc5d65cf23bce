//! The whole front end: attribute and signature (`parse`), body (`ast`, read once per
//! assignment of element types to the type parameters), then the checker (`check`) once per
//! specialisation, with the diagnostics of all runs merged; and what a rejected kernel expands to
//! ([`rejected`]).

use crate::ast::{AstBuilder, Block};
use crate::check::{check, Input};
use crate::diag::{combine, Diagnostic, Diagnostics, LocIds};
use crate::ir::Kernel;
use crate::parse::{
    checked_requirements, parse_attr, parse_signature, specialisations, substitute_types,
    tuned_specialisations, Autotune, Signature, Specialisation,
};
use crate::types::Scalar;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;

/// Parses and checks a kernel: `attr` is the attribute's arguments, `item` the function. Returns
/// the IR of every specialisation, or every error found (several, each on the user's code).
#[cfg_attr(not(test), allow(dead_code))] // the tests' entry; the macro calls `analyze_kernel`
pub fn analyze(attr: TokenStream, item: TokenStream) -> Result<Vec<Kernel>, syn::Error> {
    analyze_kernel(attr, item).map(|(kernels, _)| kernels)
}

/// [`analyze`], also returning the checked `autotune(…)` of the attribute (the specialisations
/// are those its `configs` keep).
pub fn analyze_kernel(
    attr: TokenStream,
    item: TokenStream,
) -> Result<(Vec<Kernel>, Option<Autotune>), syn::Error> {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            return Err(match syn::parse2::<syn::Item>(item) {
                Ok(other) => syn::Error::new_spanned(
                    other,
                    "#[tile_kernel] applies to a function: `fn name(x: Ptr<f32>, ..) { .. }`",
                ),
                Err(_) => e,
            })
        }
    };
    let mut ids = LocIds::default();
    let mut diags = Diagnostics::default();
    let attr = parse_attr(attr, &mut ids, &mut diags);
    for a in &function.attrs {
        if !a.path().is_ident("doc") {
            diags.error(
                ids.of(a),
                "only doc comments may be attached to a tile kernel besides #[tile_kernel]",
            );
        }
    }
    // The generics alone decide the specialisations; the parameters and body are read once per
    // element-type assignment (below), each reading handing out the same location ids.
    let ids_at_signature = ids.clone();
    let generics = parse_signature(&function.sig, &mut ids.clone(), &mut Diagnostics::default());
    let specs = specialisations(&attr, &generics, &mut diags);
    let (specs, autotune) = tuned_specialisations(&attr, &generics, specs, &mut diags);
    let requires = checked_requirements(&attr.requires, &generics, &mut diags);

    let mut kernels = Vec::new();
    let mut found: Vec<(Diagnostic, Vec<usize>)> = Vec::new();
    let mut read: Option<Reading> = None;
    for (index, spec) in specs.iter().enumerate() {
        if read
            .as_ref()
            .is_none_or(|(types, ..)| *types != spec.types.as_slice())
        {
            let types: Vec<(String, Scalar)> = spec
                .types
                .iter()
                .filter_map(|(n, t)| Some((n.clone(), (*t)?)))
                .collect();
            let function = substitute_types(&function, &types);
            let mut ids = ids_at_signature.clone();
            let mut read_diags = Diagnostics::default();
            let sig = parse_signature(&function.sig, &mut ids, &mut read_diags);
            let body: Block = AstBuilder {
                ids: &mut ids,
                diags: &mut read_diags,
            }
            .body(&function.block);
            read = Some((&spec.types, sig, body, read_diags.into_vec()));
        }
        let Some((_, sig, body, read_diags)) = &read else {
            continue;
        };
        // A type parameter whose list had an error is unknown: its uses are not reported again.
        let unknown: Vec<String> = spec
            .types
            .iter()
            .filter(|(_, t)| t.is_none())
            .map(|(name, _)| format!("`{name}` is not an element type"))
            .collect();
        for d in read_diags {
            if !unknown.iter().any(|u| d.message.starts_with(u)) {
                merge(&mut found, d.clone(), index);
            }
        }
        let mut spec_diags = Diagnostics::default();
        let input = Input { sig, body, spec };
        let mut kernel = check(&input, &mut spec_diags);
        kernel.targets = attr.targets.clone();
        kernel.requires = requires.clone();
        let stages = spec
            .num_stages
            .zip(attr.num_stages.as_ref().map(|(_, loc)| *loc));
        crate::check::control::check_num_stages(&mut kernel, stages, &mut spec_diags);
        kernels.push(kernel);
        for d in spec_diags.into_vec() {
            merge(&mut found, d, index);
        }
    }
    let mut all = diags.into_vec();
    for (mut d, in_specs) in found {
        if in_specs.len() < specs.len() {
            d.message
                .push_str(&which_specialisations(&specs, &in_specs));
        }
        all.push(d);
    }
    all.sort_by_key(|d| d.loc.id);
    match combine(&all) {
        Some(error) => Err(error),
        None => Ok((kernels, autotune)),
    }
}

/// The signature and body read with one assignment of element types (that assignment, what was
/// read, and the problems found reading it).
type Reading<'a> = (
    &'a [(String, Option<Scalar>)],
    Signature,
    Block,
    Vec<Diagnostic>,
);

/// Records that `d` holds in the specialisation `index`: the same message on the same code,
/// found in several specialisations, is one diagnostic naming them.
fn merge(found: &mut Vec<(Diagnostic, Vec<usize>)>, d: Diagnostic, index: usize) {
    match found
        .iter_mut()
        .find(|(e, _)| e.loc.id == d.loc.id && e.message == d.message)
    {
        Some((_, in_specs)) if in_specs.contains(&index) => {}
        Some((_, in_specs)) => in_specs.push(index),
        None => found.push((d, vec![index])),
    }
}

/// ` (in the specialisation BLOCK = 4096)` for a message that holds only in some of them.
fn which_specialisations(specs: &[Specialisation], in_specs: &[usize]) -> String {
    let described: Vec<String> = in_specs
        .iter()
        .map(|&i| specs[i].describe())
        .filter(|d| !d.is_empty())
        .collect();
    match described.len() {
        0 => String::new(),
        1 => format!(" (in the specialisation {})", described[0]),
        _ => format!(" (in the specialisations {})", described.join("; ")),
    }
}

/// What the macro emits for a kernel it rejects: the errors, and a declaration that names the
/// parameter types the user wrote, so that the imports they use (`Ptr`, `f16`, ..) stay used
/// and rustc adds no "unused import" warning to the errors. The declaration is a bodiless method
/// of a private trait inside `const _`: nothing can call it or name it. Only the types the
/// macro accepted are named (with `f32` standing in for the type parameters while checking), so
/// a type it already reported is not reported again by rustc.
pub fn rejected(errors: &syn::Error, function: Option<&syn::ItemFn>) -> TokenStream {
    let errors = errors.to_compile_error();
    let Some(function) = function else {
        return errors;
    };
    let type_params: Vec<&syn::Ident> = function
        .sig
        .generics
        .type_params()
        .map(|t| &t.ident)
        .filter(|ident| !ident.to_string().starts_with("r#"))
        .collect();
    let stand_ins: Vec<(String, Scalar)> = type_params
        .iter()
        .map(|ident| (ident.to_string(), Scalar::F32))
        .collect();
    let checked = substitute_types(function, &stand_ins);
    let accepted = parse_signature(
        &checked.sig,
        &mut LocIds::default(),
        &mut Diagnostics::default(),
    );
    let mut named = Vec::new();
    for input in &function.sig.inputs {
        let syn::FnArg::Typed(typed) = input else {
            continue;
        };
        let syn::Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        let name = pat.ident.unraw().to_string();
        let dtype = accepted.params.iter().find(|p| p.name == name);
        if dtype.is_some_and(|p| p.dtype.is_some()) {
            named.push(&*typed.ty);
        }
    }
    if named.is_empty() {
        return errors;
    }
    let declaration = syn::Ident::new("Signature", Span::mixed_site());
    quote! {
        #errors
        const _: () = {
            #[allow(dead_code, non_camel_case_types)]
            trait #declaration {
                fn kernel<#(#type_params),*>(#(_: #named),*);
            }
        };
    }
}
