//! One specialisation to the statements of its kernel body.

use super::{Ctx, Facts};
use crate::ir::Kernel;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

/// The lowered body of one specialisation.
pub struct LoweredKernel {
    /// The statements of the kernel function's body: layout marker items, the per-thread
    /// prologue, the parameters bound to their locals, then the ops. The function's parameters
    /// are named as the user's. Register arrays read at constant indices are read through
    /// locals bound once ([`super::scalarise`]).
    pub body: TokenStream,
    /// Dynamic shared memory the body uses (bytes).
    pub shared_bytes: u32,
    /// Items for the kernel's module (the `const` checks of user layouts), to be emitted once
    /// per distinct text across specialisations and variants.
    pub module_items: Vec<TokenStream>,
    /// The tensor maps its TMA copies read: hidden parameters `__tessera_map0`, … after the
    /// kernel's own.
    pub tensor_maps: Vec<super::TensorMapUse>,
    /// The NVIDIA-only instructions the body uses (`mma.sync`, `ldmatrix`, `cp.async`, TMA,
    /// `wgmma`), in the order first met: a body with none also builds for amdgpu.
    pub nvidia_only: Vec<&'static str>,
}

/// Lowers the body of `kernel` (after layout inference) with the facts of its analysis.
pub fn lower_kernel(kernel: &Kernel, facts: &Facts) -> Result<LoweredKernel, syn::Error> {
    let mut ctx = Ctx::new(kernel, facts);
    let mut params = TokenStream::new();
    for (i, p) in kernel.params.iter().enumerate() {
        let ty = ctx.value_type(p.value, &kernel.value(p.value).loc)?;
        let local = ctx.name(p.value);
        let arg = Ident::new(&p.name, Span::call_site());
        // A value the variant knows (checked before launch): the literal, which folds.
        let value = match facts.param_values.iter().find(|(j, _)| *j == i) {
            Some(&(_, v)) => {
                let magnitude = Literal::u128_unsuffixed(v.unsigned_abs());
                let literal = if v < 0 {
                    quote!(-#magnitude)
                } else {
                    quote!(#magnitude)
                };
                quote!({ let _ = #arg; #literal })
            }
            None => quote!(#arg),
        };
        params.extend(quote!(let #local: #ty = #value;));
    }
    let ops = ctx.lower_region(&kernel.body)?;
    let (bytes, limit) = (ctx.shared_bytes(), kernel.target.shared_bytes_limit());
    if bytes > limit {
        return Err(syn::Error::new(
            kernel.name.span(),
            format!(
                "`{}`{} needs {bytes} bytes of shared memory on {} (its conversions, rings and \
                 `wgmma` operands at their largest), above the {limit} bytes ({} KiB) a block \
                 may use there: use smaller tiles or fewer stages",
                kernel.name,
                specialisation_text(kernel),
                kernel.target.sm(),
                limit / 1024
            ),
        ));
    }
    let items = ctx.items.clone();
    let prologue = ctx.prologue();
    Ok(LoweredKernel {
        body: super::scalarise::scalarise_reads(quote! {
            #items
            #prologue
            #params
            #ops
        }),
        shared_bytes: ctx.shared_bytes(),
        module_items: ctx.module_items.clone(),
        tensor_maps: ctx.tensor_maps.clone(),
        nvidia_only: ctx.nvidia_only.clone(),
    })
}

/// ` [num_warps = 8, num_stages = 3, BM = 128, …]`: the specialisation's settings.
fn specialisation_text(kernel: &Kernel) -> String {
    let mut parts = vec![
        format!("num_warps = {}", kernel.num_warps),
        format!("num_stages = {}", kernel.num_stages),
    ];
    parts.extend(kernel.types.iter().map(|(n, t)| format!("{n} = {t}")));
    parts.extend(kernel.consts.iter().map(|(n, v)| format!("{n} = {v}")));
    format!(" [{}]", parts.join(", "))
}
