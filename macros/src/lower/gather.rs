//! `gather(src, index, axis)` in generated code, per `tessera_layout::plan::gather`:
//! `out[x] = src[x with coordinate axis replaced by index[x]]`, `out` in the index's layout `I`.
//!
//! Both plans compute, per index register `r`, where the needed element is: the column (the
//! other coordinates) is `I(r, lane, warp)` with the axis cleared, the axis coordinate is the
//! index value `v` (taken modulo the axis size), and everything is XOR-linear, so a position is
//! `P(r) ⊕ P_thread(lane, warp) ⊕ P_axis(v)` with `P(r)` resolved at expansion time,
//! `P_thread` once per thread and `P_axis` a few XOR terms of the bits of `v`:
//!
//! - **warp shuffles** (the axis stays inside the warp): the source is `S⁻¹(column, v)` =
//!   (register, lane). For each candidate register `c` of the plan's round list for `r` (the
//!   registers `S` may keep that column's axis values in), every lane sends its register `c`
//!   with `shfl.sync.idx` from the source lane and keeps the value if `c` is the source register.
//!   No shared memory.
//! - **shared memory**: barrier; the owners of `S` store it row-major with the widest vectors
//!   the layout allows (elements narrower than a word that would be stored alone are widened to
//!   a word each); barrier; each position loads its element at `offset(column, v)`.

use super::convert::{
    emit, index_lit, render_store, xor_bits, Affine, Render, StoreStep, ThreadValue,
};
use super::{elem_type, internal, Ctx};
use crate::ir::Op;
use crate::types::DType;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{quote, quote_spanned};
use tessera_layout::plan::bank::bank_wavefronts;
use tessera_layout::plan::broadcast::Broadcast;
use tessera_layout::plan::conversion_code::plan_conversion_code;
use tessera_layout::plan::gather::{plan_gather, GatherPlan};
use tessera_layout::plan::shared_steps::store_step;
use tessera_layout::{Label, LinearLayout};

/// A per-thread, per-index-value quantity: `thread(lane, warp) ⊕ ⨁_b bit_b(v)·axis[b]`, plus a
/// register-dependent constant kept by the user of this struct.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct IndexAffine {
    pub thread: Affine,
    /// Per bit of the index value.
    pub axis: Vec<u32>,
}

impl IndexAffine {
    #[cfg(test)]
    pub fn eval(&self, lane: u32, warp: u32, value: u32) -> u32 {
        self.thread.eval(lane, warp) ^ xor_bits(&self.axis, value)
    }
}

/// How a gather runs (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GatherCode {
    Shuffle {
        /// Per index register: (source register constant, source lane constant, candidate
        /// registers, one shuffle round each).
        rounds: Vec<(u32, u32, Vec<u32>)>,
        register: IndexAffine,
        lane: IndexAffine,
    },
    Shared {
        store: StoreStep,
        shared_bytes: u32,
        /// Per index register: the byte-offset constant.
        offsets: Vec<u32>,
        /// Byte offsets.
        thread: IndexAffine,
        /// Bytes per memory cell (the element size, or 4 when widened).
        stride: u32,
    },
}

/// A planned gather.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Gather {
    pub code: GatherCode,
    pub element_bits: u32,
    /// Registers of the index layout (= of the result).
    pub registers: u32,
    /// Size of the source along the axis (index values are taken modulo it).
    pub axis_size: u32,
}

/// Lowers `OpKind::Gather`: `src` in `src_layout`, `index` in `index_layout`, the result in
/// `dst_layout` (converted from the index layout when they differ).
#[allow(clippy::too_many_arguments)]
pub fn lower_gather(
    ctx: &mut Ctx,
    op: &Op,
    src: &Ident,
    src_layout: &LinearLayout,
    index: &Ident,
    index_layout: &LinearLayout,
    axis: usize,
    dst_layout: &LinearLayout,
    dtype: DType,
    index_dtype: DType,
) -> Result<(TokenStream, Ident), syn::Error> {
    let _ = index_dtype;
    let gather = gather_for(src_layout, index_layout, axis, dtype.bits())
        .map_err(|e| internal(&op.loc, &format!("gather: {e}")))?;
    let out = ctx.fresh("gather");
    let shared_offset = match &gather.code {
        GatherCode::Shared { shared_bytes, .. } => ctx.alloc_shared(*shared_bytes, 16),
        GatherCode::Shuffle { .. } => 0,
    };
    let rc = Render {
        lane: ctx.lane(),
        warp: ctx.warp(),
        elem: elem_type(dtype),
        span: op.loc.first,
        shared_offset,
    };
    let expr = render_gather(&gather, src, index, &rc);
    let (elem, n) = (&rc.elem, index_lit(gather.registers));
    let mut code = quote!(let #out: [#elem; #n] = #expr;);
    if dst_layout == index_layout {
        return Ok((code, out));
    }
    // The result was asked in another layout than the index's: convert.
    let conversion = plan_conversion_code(index_layout, dst_layout, dtype.bits())
        .map_err(|e| internal(&op.loc, &format!("gather result conversion: {e}")))?;
    let converted = ctx.fresh("gather");
    code.extend(emit(ctx, op, &conversion.movement, &out, dtype, &converted));
    Ok((code, converted))
}

/// Plans the code of `gather(src, index, axis)` on elements of `element_bits`.
pub(crate) fn gather_for(
    src: &LinearLayout,
    index: &LinearLayout,
    axis: usize,
    element_bits: u32,
) -> Result<Gather, String> {
    let plan = plan_gather(src, index, axis as u32, element_bits).map_err(|e| e.to_string())?;
    let axis_label = Label::Dim(axis as u8);
    let axis_o = src
        .out_index(axis_label)
        .ok_or_else(|| format!("the source has no dimension {axis_label}"))?;
    let axis_bits = src.out_bits_at(axis_o);
    let registers = index.in_size(Label::Register);
    // The column of each index input bit, as coordinates of the source tile (axis cleared).
    let column = |label: Label, k: usize| -> Vec<u32> {
        let mut coords = index
            .basis(label, k)
            .map(|c| c[..index.num_out_dims()].to_vec())
            .unwrap_or_default();
        if let Some(o) = index.out_index(axis_label) {
            coords[o] = 0;
        }
        coords
    };
    let axis_coords = |b: u32| -> Vec<u32> {
        let mut coords = vec![0u32; src.num_out_dims()];
        coords[axis_o] = 1 << b;
        coords
    };
    let code = match &plan {
        GatherPlan::WarpShuffle(p) => {
            let source = &p.source;
            let (reg_o, lane_o) = (
                source
                    .out_index(Label::Register)
                    .ok_or("the source inverse has no registers")?,
                source.out_index(Label::Lane),
            );
            // (register, lane) of S⁻¹ at the given source coordinates.
            let locate = |coords: &[u32]| -> (u32, u32) {
                let packed = source.apply_packed(coords);
                (
                    source.coord(packed, reg_o),
                    lane_o.map_or(0, |o| source.coord(packed, o)),
                )
            };
            let thread_part = |select: usize| -> IndexAffine {
                let pick = |label: Label| -> Vec<u32> {
                    (0..index.in_bits(label) as usize)
                        .map(|k| {
                            let at = locate(&column(label, k));
                            if select == 0 {
                                at.0
                            } else {
                                at.1
                            }
                        })
                        .collect()
                };
                IndexAffine {
                    thread: Affine {
                        constant: 0,
                        lane: pick(Label::Lane),
                        warp: pick(Label::Warp),
                    },
                    axis: (0..axis_bits)
                        .map(|b| {
                            let at = locate(&axis_coords(b));
                            if select == 0 {
                                at.0
                            } else {
                                at.1
                            }
                        })
                        .collect(),
                }
            };
            let register_columns: Vec<(u32, u32)> = (0..index.in_bits(Label::Register) as usize)
                .map(|k| locate(&column(Label::Register, k)))
                .collect();
            let rounds = (0..registers)
                .map(|r| {
                    let (reg, lane) = register_columns
                        .iter()
                        .enumerate()
                        .filter(|&(k, _)| r >> k & 1 == 1)
                        .fold((0, 0), |(a, b), (_, &(x, y))| (a ^ x, b ^ y));
                    (reg, lane, p.rounds[r as usize].clone())
                })
                .collect();
            GatherCode::Shuffle {
                rounds,
                register: thread_part(0),
                lane: thread_part(1),
            }
        }
        GatherPlan::SharedMemory(p) => {
            // Row-major memory; elements that would be stored alone in a word are widened.
            let widened = p.store.vector.bits < 32;
            let bits = if widened { 32 } else { element_bits };
            let shift = (bits / 8).trailing_zeros();
            let write = bank_wavefronts(&p.memory, src, bits).map_err(|e| e.to_string())?;
            let owners = Broadcast::of(src).map_err(|e| e.to_string())?;
            let store = store_step(
                &p.store_address,
                src,
                &write.vector.registers,
                &owners,
                shift,
            );
            let offset_of = |coords: &[u32]| p.load_address.apply_packed(coords) as u32;
            let pick = |label: Label| -> Vec<u32> {
                (0..index.in_bits(label) as usize)
                    .map(|k| offset_of(&column(label, k)) << shift)
                    .collect()
            };
            let reg_offsets = pick(Label::Register);
            GatherCode::Shared {
                store,
                shared_bytes: (1u32 << p.memory.total_in_bits()) << shift,
                offsets: (0..registers).map(|r| xor_bits(&reg_offsets, r)).collect(),
                thread: IndexAffine {
                    thread: Affine {
                        constant: 0,
                        lane: pick(Label::Lane),
                        warp: pick(Label::Warp),
                    },
                    axis: (0..axis_bits)
                        .map(|b| offset_of(&axis_coords(b)) << shift)
                        .collect(),
                },
                stride: 1 << shift,
            }
        }
    };
    Ok(Gather {
        code,
        element_bits,
        registers,
        axis_size: 1 << axis_bits,
    })
}

/// The rendered gather: a block evaluating to the result registers `[T; R]`.
pub(crate) fn render_gather(g: &Gather, src: &Ident, index: &Ident, rc: &Render) -> TokenStream {
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
    match &g.code {
        GatherCode::Shuffle {
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
                        quote_spanned!(span=> ::tessera::device::shfl_idx_b32(
                            ::tessera::device::FULL_MASK, __tessera_w[#k], __tessera_lane,
                            ::tessera::device::SHFL_C_FULL))
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
        GatherCode::Shared {
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
