//! `gather(src, index, axis)` in generated code: the steps of the gather plan layout inference
//! chose and stored on the op (`tessera_layout::plan::gather_code`, which documents the
//! warp-shuffle and shared-memory forms), rendered to tokens (a gather on AMD's 64-lane waves,
//! `Lanes::Wave`, with the wave's lane and index and `wave_shfl_idx_b32`). Nothing is planned
//! here.

use super::convert::{index_lit, render_store, Lanes, Render, ThreadValue};
use super::{internal, Ctx};
use crate::ir::Op;
use crate::types::DType;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{quote, quote_spanned};
use tessera_layout::plan::gather_code::{GatherCode, GatherSteps};
use tessera_layout::LinearLayout;

/// Lowers `OpKind::Gather` as planned (`gather`): `src` and `index` are the operands'
/// registers; the result is in the index layout (layout inference makes it there and converts
/// it by a separate `Convert` op where another layout is needed).
#[allow(clippy::too_many_arguments)]
pub fn lower_gather(
    ctx: &mut Ctx,
    op: &Op,
    gather: &GatherCode,
    src: &Ident,
    index: &Ident,
    index_layout: &LinearLayout,
    dst_layout: &LinearLayout,
    dtype: DType,
) -> Result<(TokenStream, Ident), syn::Error> {
    if dst_layout != index_layout {
        return Err(internal(&op.loc, "a gather result not in the index layout"));
    }
    let out = ctx.fresh("gather");
    let shared = match &gather.steps {
        GatherSteps::Shared { shared_bytes, .. } => Some(*shared_bytes),
        GatherSteps::Shuffle { .. } => None,
    };
    let rc = Render::for_op(ctx, op, dtype, shared);
    let expr = render_gather(gather, src, index, &rc);
    Ok((rc.bind(&out, gather.registers, expr), out))
}

/// The rendered gather: a block evaluating to the result registers `[T; R]`.
pub(crate) fn render_gather(
    g: &GatherCode,
    src: &Ident,
    index: &Ident,
    rc: &Render,
) -> TokenStream {
    let rc = &rc.on(g.lanes);
    let (lane, warp, elem, span) = (&rc.lane, &rc.warp, &rc.elem, rc.span);
    let n = index_lit(g.registers);
    let mask = Literal::u32_suffixed(g.axis_size - 1);
    let value = |r: u32| {
        let r = index_lit(r);
        quote!(((#index[#r] as u32) & #mask))
    };
    let axis_terms = |terms: &[u32], v: &TokenStream| -> Vec<TokenStream> {
        terms
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t != 0)
            .map(|(b, &t)| {
                let (b, t) = (Literal::u32_suffixed(b as u32), Literal::u32_suffixed(t));
                quote!(^ ::tessera::tile_move::bit_term(#v, #b, #t))
            })
            .collect()
    };
    let words = (g.element_bits as usize).div_ceil(32);
    match &g.steps {
        GatherSteps::Shuffle {
            rounds,
            register,
            lane: src_lane,
        } => {
            let reg_thread = register.thread.render(lane, warp);
            let lane_thread = src_lane.thread.render(lane, warp);
            let body = rounds
                .iter()
                .enumerate()
                .map(|(r, (reg_c, lane_c, candidates))| {
                    let v = value(r as u32);
                    let ri = index_lit(r as u32);
                    let reg_c = Literal::u32_suffixed(*reg_c);
                    let lane_c = Literal::u32_suffixed(*lane_c);
                    let reg_terms = axis_terms(&register.axis, &quote!(__tessera_v));
                    let lane_terms = axis_terms(&src_lane.axis, &quote!(__tessera_v));
                    let shuffles = candidates.iter().map(|&c| {
                    let (ci, cl) = (index_lit(c), Literal::u32_suffixed(c));
                    let shfl = (0..words).map(|k| {
                        let k = index_lit(k as u32);
                        match rc.lanes {
                            Lanes::Warp => quote_spanned!(span=> ::tessera::device::shfl_idx_b32(
                                ::tessera::device::FULL_MASK, __tessera_w[#k], __tessera_lane,
                                ::tessera::device::SHFL_C_FULL)),
                            Lanes::Wave => quote_spanned!(span=>
                                ::tessera::device::wave_shfl_idx_b32(__tessera_w[#k], __tessera_lane)),
                        }
                    });
                    quote! {{
                        let __tessera_w: [u32; #words] =
                            ::tessera::tile_move::pack_words::<#elem, 1, #words>([#src[#ci]]);
                        let __tessera_got: [#elem; 1] =
                            ::tessera::tile_move::unpack_words::<#elem, 1, #words>([#(#shfl),*]);
                        if __tessera_reg == #cl {
                            __tessera_out[#ri] = __tessera_got[0];
                        }
                    }}
                });
                    quote! {{
                        let __tessera_v: u32 = #v;
                        let __tessera_reg: u32 = #reg_c ^ __tessera_reg_thread #(#reg_terms)*;
                        let __tessera_lane: u32 = #lane_c ^ __tessera_lane_thread #(#lane_terms)*;
                        #(#shuffles)*
                    }}
                });
            quote! {{
                let __tessera_reg_thread: u32 = #reg_thread;
                let __tessera_lane_thread: u32 = #lane_thread;
                #[allow(unused_mut)]
                let mut __tessera_out: [#elem; #n] = [#src[0]; #n];
                #(#body)*
                __tessera_out
            }}
        }
        GatherSteps::Shared {
            store,
            offsets,
            thread,
            stride,
            ..
        } => {
            let smem = quote!(__tessera_smem);
            let offset = Literal::u32_suffixed(rc.shared_offset);
            let store_code = render_store(store, g.element_bits, src, rc, &smem);
            let thread_off = thread.thread.render(lane, warp);
            let widened = stride * 8 != g.element_bits;
            let loads = offsets.iter().enumerate().map(|(r, &c)| {
                let v = value(r as u32);
                let ri = index_lit(r as u32);
                let c = Literal::u32_suffixed(c);
                let terms = axis_terms(&thread.axis, &quote!(__tessera_v));
                let addr = quote!(#smem + (#c ^ __tessera_thread #(#terms)*));
                let load = if widened {
                    quote_spanned!(span=> ::tessera::tile_move::extract_element::<#elem>(
                        ::tessera::device::ld_shared_v1::<u32>(#addr), 0))
                } else if g.element_bits < 32 {
                    quote_spanned!(span=> {
                        let __tessera_at: u32 = #addr;
                        ::tessera::tile_move::extract_element::<#elem>(
                            ::tessera::device::ld_shared_v1::<u32>(__tessera_at & !3u32),
                            __tessera_at & 3u32)
                    })
                } else if g.element_bits == 32 {
                    quote_spanned!(span=> ::tessera::tile_move::unpack_words::<#elem, 1, 1>(
                        [::tessera::device::ld_shared_v1::<u32>(#addr)])[0])
                } else {
                    quote_spanned!(span=> ::tessera::tile_move::unpack_words::<#elem, 1, 2>(
                        ::tessera::device::ld_shared_v2::<u32>(#addr))[0])
                };
                quote!({ let __tessera_v: u32 = #v; __tessera_out[#ri] = #load; })
            });
            quote! {{
                let #smem: u32 = ::tessera::device::dynamic_shared_base() + #offset;
                ::tessera::device::sync_threads();
                #store_code
                ::tessera::device::sync_threads();
                let __tessera_thread: u32 = #thread_off;
                #[allow(unused_mut)]
                let mut __tessera_out: [#elem; #n] = [#src[0]; #n];
                // SAFETY: planned in-bounds, aligned addresses of this gather's region.
                unsafe { #(#loads)* }
                __tessera_out
            }}
        }
    }
}

#[cfg(test)]
#[path = "gather_tests.rs"]
mod tests;
