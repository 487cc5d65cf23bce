//! `dot(a, b, acc)` in generated code: the `mma.sync.aligned` instructions (NVIDIA) or `v_mfma`
//! instructions (AMD) layout inference planned and stored on the op (`tessera_layout::plan::mma`
//! and `plan::mfma`, which document the instructions and how fragments are read off the
//! layouts), rendered as a sequence of calls on array elements. The operands arrive in the layouts layout inference gives a dot (the conversions
//! into them are ordinary `Convert` ops, lowered by `convert.rs`).

use super::convert::index_lit;
use super::{elem_type, internal, scalar_type, Ctx};
use crate::ir::Op;
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use tessera_layout::plan::mfma::{MfmaInput, MfmaPlan};
use tessera_layout::plan::mma::{DotPlan, MmaKind};
use tessera_layout::LinearLayout;

/// Lowers `OpKind::Dot` as planned: `a`, `b`, `acc` are the operands' registers; the result
/// is in the accumulator's layout (layout inference keeps it there).
#[allow(clippy::too_many_arguments)]
pub fn lower_dot(
    ctx: &mut Ctx,
    op: &Op,
    plan: &DotPlan,
    [a, b, acc]: [&Ident; 3],
    acc_layout: &LinearLayout,
    dst_layout: &LinearLayout,
    in_dtype: DType,
    acc_dtype: DType,
) -> Result<(TokenStream, Ident), syn::Error> {
    let (DType::Scalar(input), DType::Scalar(accum)) = (in_dtype, acc_dtype) else {
        return Err(internal(&op.loc, "dot of pointers"));
    };
    if dst_layout != acc_layout {
        return Err(internal(
            &op.loc,
            "a dot result not in the accumulator's layout",
        ));
    }
    ctx.nvidia_only("mma.sync");
    let out = ctx.fresh("dot");
    let code = render_dot(plan, a, b, acc, input, accum, &out, op.loc.first);
    Ok((code, out))
}

/// `let out: [C; R] = { … mma calls … };`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn render_dot(
    plan: &DotPlan,
    a: &Ident,
    b: &Ident,
    acc: &Ident,
    input: Scalar,
    accum: Scalar,
    out: &Ident,
    span: proc_macro2::Span,
) -> TokenStream {
    let acc_ty = scalar_type(accum);
    let (frag_ty, convert): (TokenStream, Option<TokenStream>) = match plan.kind {
        MmaKind::F8 { .. } => {
            let f8 = elem_type(DType::Scalar(input));
            (
                quote!(::tessera::f16),
                Some(
                    quote!(|x: #f8| <::tessera::f16 as ::tessera::tile::NarrowFloat>::narrow(
                    <#f8 as ::tessera::tile::NarrowFloat>::widen(x))),
                ),
            )
        }
        _ => (elem_type(DType::Scalar(input)), None),
    };
    let per_word = 32 / plan.kind.fragment_bits();
    // The fragment element of `array[index]`, and the fragment word packing `elements`.
    let element = |array: &Ident, index: TokenStream| match &convert {
        Some(f) => quote!((#f)(#array[#index])),
        None => quote!(#array[#index]),
    };
    let pack = |elements: TokenStream| {
        let n = index_lit(per_word);
        quote!(::tessera::tile_move::pack_words::<#frag_ty, #n, 1>(#elements)[0])
    };
    let words = |array: &Ident, regs: &[u32]| -> Vec<TokenStream> {
        regs.chunks(per_word as usize)
            .map(|chunk| {
                let elements = chunk
                    .iter()
                    .map(|&r| element(array, index_lit(r).into_token_stream()));
                pack(quote!([#(#elements),*]))
            })
            .collect()
    };
    let instruction = match plan.kind {
        MmaKind::F16 | MmaKind::F8 { .. } => quote!(mma_m16n8k16_f16_f32),
        MmaKind::Bf16 => quote!(mma_m16n8k16_bf16_f32),
        MmaKind::S8 => quote!(mma_m16n8k32_s8_s32),
    };
    let calls = plan.steps.iter().map(|s| {
        let aw = words(a, &s.a);
        let bw = words(b, &s.b);
        let c: Vec<_> = s.c.iter().map(|&r| index_lit(r)).collect();
        let j: Vec<_> = (0..4u32).map(index_lit).collect();
        let call = quote_spanned!(span=> ::tessera::device::#instruction(
            [#(#aw),*], [#(#bw),*], [#(__tessera_out[#c]),*]));
        quote! {{
            let __tessera_d: [#acc_ty; 4] = #call;
            #(__tessera_out[#c] = __tessera_d[#j];)*
        }}
    });
    let host = host_steps(plan, [a, b], &element, &pack, &instruction, span);
    let accumulate = Accumulate {
        out,
        acc_ty: &acc_ty,
        registers: plan.acc_registers,
        acc,
        duplicates: &plan.duplicates,
    };
    accumulate.render(quote!(#(#calls)*), host)
}

/// The binding of a dot's result: `let out: [C; registers] = { … }` starting from the
/// accumulator `acc`, the device's instruction calls or the host's loop over them
/// (`__device_or_host!`), then the copies of its broadcast registers (`duplicates`:
/// `(destination, source)`).
struct Accumulate<'a> {
    out: &'a Ident,
    acc_ty: &'a TokenStream,
    registers: u32,
    acc: &'a Ident,
    duplicates: &'a [(u32, u32)],
}

impl Accumulate<'_> {
    fn render(&self, device: TokenStream, host: TokenStream) -> TokenStream {
        let (out, acc_ty, acc) = (self.out, self.acc_ty, self.acc);
        let n = index_lit(self.registers);
        let dups = self.duplicates.iter().map(|&(d, s)| {
            let (d, s) = (index_lit(d), index_lit(s));
            quote!(__tessera_out[#d] = __tessera_out[#s];)
        });
        quote! {
            let #out: [#acc_ty; #n] = {
                #[allow(unused_mut)]
                let mut __tessera_out: [#acc_ty; #n] = #acc;
                ::tessera::__device_or_host!({ #device } #host);
                #(#dups)*
                __tessera_out
            };
        }
    }
}

/// The host's form of the `mma` calls of `plan` (see `lower::per_register_on_host`): the steps'
/// register indices as one constant table, and one loop over it making the same calls, with the
/// device form's `element` and `pack`.
fn host_steps(
    plan: &DotPlan,
    [a, b]: [&Ident; 2],
    element: &impl Fn(&Ident, TokenStream) -> TokenStream,
    pack: &impl Fn(TokenStream) -> TokenStream,
    instruction: &TokenStream,
    span: proc_macro2::Span,
) -> TokenStream {
    let per_word = index_lit(32 / plan.kind.fragment_bits());
    let (a_len, b_len) = plan
        .steps
        .first()
        .map_or((0, 0), |s| (s.a.len(), s.b.len()));
    let rows = plan.steps.iter().map(|s| {
        let (a, b, c) = (
            s.a.iter().map(|&r| index_lit(r)),
            s.b.iter().map(|&r| index_lit(r)),
            s.c.iter().map(|&r| index_lit(r)),
        );
        quote!(([#(#a),*], [#(#b),*], [#(#c),*]))
    });
    let (a_len, b_len, steps) = (
        index_lit(a_len as u32),
        index_lit(b_len as u32),
        index_lit(plan.steps.len() as u32),
    );
    // Fragment word `__w` of an operand: the elements of its registers `regs[__w·per_word..]`.
    let word = |array: &Ident, regs: TokenStream| {
        let element = element(array, quote!(#regs[__w * #per_word + __e]));
        pack(quote!(::core::array::from_fn(|__e| #element)))
    };
    let (a_word, b_word) = (word(a, quote!(__a)), word(b, quote!(__b)));
    let call = quote_spanned!(span=> ::tessera::device::#instruction(
        ::core::array::from_fn(|__w| #a_word),
        ::core::array::from_fn(|__w| #b_word),
        ::core::array::from_fn(|__j| __tessera_out[__c[__j]])));
    quote!({
        const __TESSERA_STEPS: [([usize; #a_len], [usize; #b_len], [usize; 4]); #steps] =
            [#(#rows),*];
        for (__a, __b, __c) in __TESSERA_STEPS {
            let __tessera_d = #call;
            for __j in 0..4 {
                __tessera_out[__c[__j]] = __tessera_d[__j];
            }
        }
    })
}

/// Lowers `OpKind::Dot` planned as `v_mfma` (an amdgpu body): `a`, `b`, `acc` are the operands'
/// registers; the result is in the accumulator's layout.
#[allow(clippy::too_many_arguments)]
pub fn lower_mfma(
    ctx: &mut Ctx,
    op: &Op,
    plan: &MfmaPlan,
    names: [&Ident; 3],
    acc_layout: &LinearLayout,
    dst_layout: &LinearLayout,
) -> Result<(TokenStream, Ident), syn::Error> {
    if dst_layout != acc_layout {
        return Err(internal(
            &op.loc,
            "a dot result not in the accumulator's layout",
        ));
    }
    let out = ctx.fresh("dot");
    Ok((render_mfma(plan, names, &out, op.loc.first), out))
}

/// `let out: [C; R] = { … mfma calls … };` (`C` f32, or i32 for i8): on the device one call per
/// step (first source `b`'s fragment, second `a`'s: the accumulator is transposed), on the host
/// one loop over a constant table of the steps' registers making the same calls. f8 fragments
/// are 8 elements a lane, as i8 ones (the device layer runs them as gfx950's f8 instruction, or
/// widened to f16 elsewhere: `plan::mfma`).
pub(crate) fn render_mfma(
    plan: &MfmaPlan,
    [a, b, acc]: [&Ident; 3],
    out: &Ident,
    span: proc_macro2::Span,
) -> TokenStream {
    let input = plan.instr.input;
    let scalar = match input {
        MfmaInput::F16 => Scalar::F16,
        MfmaInput::Bf16 => Scalar::BF16,
        MfmaInput::I8 => Scalar::I8,
        MfmaInput::F8E4m3 => Scalar::F8E4M3,
        MfmaInput::F8E5m2 => Scalar::F8E5M2,
    };
    let frag_ty = elem_type(DType::Scalar(scalar));
    let (function, acc_ty) = match input {
        MfmaInput::I8 => ("i32", quote!(i32)),
        _ => ("f32", quote!(f32)),
    };
    let function = quote::format_ident!(
        "mfma_{}_{}x{}x{}_{}",
        function,
        plan.instr.nd,
        plan.instr.nd,
        plan.instr.k(),
        match input {
            MfmaInput::F16 => "f16",
            MfmaInput::Bf16 => "bf16",
            MfmaInput::I8 => "i8",
            MfmaInput::F8E4m3 => "f8e4m3",
            MfmaInput::F8E5m2 => "f8e5m2",
        }
    );
    let nc = index_lit(plan.instr.acc_registers());
    let kw = index_lit(plan.instr.k_width());
    let pack = |elements: TokenStream| quote!(::tessera::tile_move::pack_words::<#frag_ty, #kw, 2>(#elements));
    let calls = plan.steps.iter().map(|s| {
        let fragment = |array: &Ident, regs: &[u32]| {
            let elements = regs.iter().map(|&r| {
                let r = index_lit(r);
                quote!(#array[#r])
            });
            pack(quote!([#(#elements),*]))
        };
        let (src0, src1) = (fragment(b, &s.src0), fragment(a, &s.src1));
        let c: Vec<_> = s.c.iter().map(|&r| index_lit(r)).collect();
        let j: Vec<_> = (0..c.len() as u32).map(index_lit).collect();
        let call = quote_spanned!(span=> ::tessera::device::#function(
            #src0, #src1, [#(__tessera_out[#c]),*]));
        quote! {{
            let __tessera_d: [#acc_ty; #nc] = #call;
            #(__tessera_out[#c] = __tessera_d[#j];)*
        }}
    });
    let rows = plan.steps.iter().map(|s| {
        let (s0, s1, c) = (
            s.src0.iter().map(|&r| index_lit(r)),
            s.src1.iter().map(|&r| index_lit(r)),
            s.c.iter().map(|&r| index_lit(r)),
        );
        quote!(([#(#s0),*], [#(#s1),*], [#(#c),*]))
    });
    let steps = index_lit(plan.steps.len() as u32);
    let (e0, e1) = (quote!(#b[__s0[__e]]), quote!(#a[__s1[__e]]));
    let (s0, s1) = (
        pack(quote!(::core::array::from_fn(|__e| #e0))),
        pack(quote!(::core::array::from_fn(|__e| #e1))),
    );
    let host_call = quote_spanned!(span=> ::tessera::device::#function(
        #s0, #s1, ::core::array::from_fn(|__j| __tessera_out[__c[__j]])));
    let host = quote!({
        const __TESSERA_STEPS: [([usize; #kw], [usize; #kw], [usize; #nc]); #steps] = [#(#rows),*];
        for (__s0, __s1, __c) in __TESSERA_STEPS {
            let __tessera_d = #host_call;
            for __j in 0..#nc {
                __tessera_out[__c[__j]] = __tessera_d[__j];
            }
        }
    });
    let accumulate = Accumulate {
        out,
        acc_ty: &acc_ty,
        registers: plan.acc_registers,
        acc,
        duplicates: &plan.duplicates,
    };
    accumulate.render(quote!(#(#calls)*), host)
}

#[cfg(test)]
#[path = "dot_tests.rs"]
mod tests;
