//! The whole front end: attribute and signature (`parse`), body (`ast`), then the checker
//! (`check`) once per specialisation, with the diagnostics of all runs merged.

use crate::ast::{AstBuilder, Block};
use crate::check::{check, Input};
use crate::diag::{combine, Diagnostic, Diagnostics, LocIds};
use crate::ir::Kernel;
use crate::parse::{parse_attr, parse_signature, specialisations, Specialisation};
use proc_macro2::TokenStream;

/// Parses and checks a kernel: `attr` is the attribute's arguments, `item` the function. Returns
/// the IR of every specialisation, or every error found (several, each on the user's code).
pub fn analyze(attr: TokenStream, item: TokenStream) -> Result<Vec<Kernel>, syn::Error> {
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
    let sig = parse_signature(&function.sig, &mut ids, &mut diags);
    let body: Block = AstBuilder {
        ids: &mut ids,
        diags: &mut diags,
    }
    .body(&function.block);
    let specs = specialisations(&attr, &sig, &mut diags);

    let mut kernels = Vec::new();
    let mut found: Vec<(Diagnostic, Vec<usize>)> = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let mut spec_diags = Diagnostics::default();
        let input = Input {
            sig: &sig,
            body: &body,
            num_warps: attr.num_warps,
            spec,
        };
        kernels.push(check(&input, &mut spec_diags));
        for d in spec_diags.into_vec() {
            match found
                .iter_mut()
                .find(|(e, _)| e.loc.id == d.loc.id && e.message == d.message)
            {
                Some((_, in_specs)) => in_specs.push(index),
                None => found.push((d, vec![index])),
            }
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
        None => Ok(kernels),
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
