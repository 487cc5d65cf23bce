//! Layout conversions in generated code: the [`Movement`] of a conversion planned by
//! `tessera_layout::plan::conversion::plan_conversion` (stored on the `Convert` op by layout
//! inference), rendered as straight-line per-thread code on register arrays. Every choice —
//! the plan, the shared-memory layout, vector widths, `ldmatrix` reads — is the planner's; this
//! module only turns each step into tokens.
//!
//! A tile in layout `L` is a local array `[T; R]` per thread; register `r` of thread
//! `(lane, warp)` holds the element `L(r, lane, warp)`. A conversion `A → B` reads the array of `A`
//! and builds the array of `B`:
//!
//! | step | generated code |
//! |---|---|
//! | copy | `B[r] = A[s(r)]` with `s` resolved at planning time |
//! | select | a `match` on the XOR-linear selector `⊕ lane_k·from_lane[k] ⊕ …` (lane-selected registers) |
//! | shuffle round | each lane packs the vector it sends (elements packed into words), `shfl.sync.idx` from its source lane, unpacks into its receive registers; send register, source lane and receive register are XOR-affine functions of the lane id or a 32-entry lookup table (a movement on AMD's 64-lane waves, [`Lanes::Wave`]: the wave's lane and index, `wave_shfl_idx_b32`, 64 entries) |
//! | barrier | `bar.sync` |
//! | store | owners of `A` (broadcast copies skipped) store vectors (`st.shared.v1/v2/v4.b32`, elements packed) at their planned byte offsets |
//! | load | vector loads at the planned byte offsets (narrower than a word: load the word and extract) |
//! | ldmatrix | `ldmatrix[.trans]` at the planned row addresses |
//! | duplicate | `B[r] = B[r']` for broadcast registers of `B` |
//!
//! The unit tests execute movements on a CTA model that follows PTX semantics (`shfl.sync.idx`,
//! `ld/st.shared`, `ldmatrix`) and count bank wavefronts as the emulator does.

use super::{elem_type, Ctx};
use crate::ir::Op;
use crate::types::DType;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
pub(crate) use tessera_layout::plan::movement::{
    word_count, Affine, LaneFn, Movement, ShuffleStep, Step, StoreStep,
};
pub(crate) use tessera_layout::plan::wave::Lanes;

/// Lowers an `OpKind::Convert` of `src` (the registers `[T; R]` of a tile) as planned: the
/// statements and the local `[T; R']` holding the destination's registers.
pub fn lower_convert(
    ctx: &mut Ctx,
    op: &Op,
    src: &Ident,
    dtype: DType,
    movement: &Movement,
) -> (TokenStream, Ident) {
    let out = ctx.fresh("cvt");
    let code = emit(ctx, op, movement, src, dtype, &out);
    (code, out)
}

/// `let out: [T; R'] = <movement of src>;`, with the movement's shared memory allocated.
pub(crate) fn emit(
    ctx: &mut Ctx,
    op: &Op,
    movement: &Movement,
    src: &Ident,
    dtype: DType,
    out: &Ident,
) -> TokenStream {
    let shared = (movement.shared_bytes > 0).then_some(movement.shared_bytes);
    if movement
        .steps
        .iter()
        .any(|s| matches!(s, Step::Ldmatrix(_)))
    {
        ctx.nvidia_only("ldmatrix");
    }
    let rc = Render::for_op(ctx, op, dtype, shared);
    let expr = render_movement(movement, src, &rc);
    rc.bind(out, movement.dst_registers, expr)
}

/// Rendering of a per-thread value of a plan (a function of the lane and warp ids).
pub(crate) trait ThreadValue {
    /// The `u32` expression of the value, given the thread's lane and warp expressions.
    fn render(&self, lane: &TokenStream, warp: &TokenStream) -> TokenStream;
}

impl ThreadValue for Affine {
    /// `c ^ bit_term(lane, k, t_k) ^ …` (zero terms left out).
    fn render(&self, lane: &TokenStream, warp: &TokenStream) -> TokenStream {
        let mut parts: Vec<TokenStream> = Vec::new();
        if self.constant != 0 || self.is_constant() {
            let c = Literal::u32_suffixed(self.constant);
            parts.push(quote!(#c));
        }
        for (var, terms) in [(lane, &self.lane), (warp, &self.warp)] {
            for (k, &t) in terms.iter().enumerate() {
                if t != 0 {
                    let (k, t) = (Literal::u32_suffixed(k as u32), Literal::u32_suffixed(t));
                    parts.push(quote!(::tessera::tile_move::bit_term(#var, #k, #t)));
                }
            }
        }
        quote!((#(#parts)^*))
    }
}

impl ThreadValue for LaneFn {
    fn render(&self, lane: &TokenStream, warp: &TokenStream) -> TokenStream {
        match self {
            LaneFn::Affine(a) => a.render(lane, warp),
            LaneFn::Table(t) => {
                let n = t.len();
                let entries = t.iter().map(|&v| Literal::u32_suffixed(v));
                quote!({
                    const TABLE: [u32; #n] = [#(#entries),*];
                    TABLE[(#lane as usize) % #n]
                })
            }
        }
    }
}

// -------------------------------------------------------------------------------------------
// Rendering
// -------------------------------------------------------------------------------------------

/// What rendering needs besides the movement: the thread's lane and warp (`u32` expressions
/// computed once per thread), the element type, the span of the user's code the calls are
/// attributed to, and the shared-memory address of the movement's region.
pub(crate) struct Render {
    pub lane: TokenStream,
    pub warp: TokenStream,
    /// What `lane` and `warp` name: a warp's lane and the warp, or (amdgpu) a wave's.
    pub lanes: Lanes,
    pub elem: TokenStream,
    pub span: Span,
    pub shared_offset: u32,
}

impl Render {
    /// The context of `op`'s data movement on `dtype` elements; `shared`: the bytes of scratch
    /// it takes, when it uses shared memory.
    pub(crate) fn for_op(ctx: &mut Ctx, op: &Op, dtype: DType, shared: Option<u32>) -> Render {
        let shared_offset = shared.map_or(0, |bytes| ctx.alloc_shared(bytes, 16));
        Render {
            lane: ctx.lane(),
            warp: ctx.warp(),
            lanes: Lanes::Warp,
            elem: elem_type(dtype),
            span: op.loc.first,
            shared_offset,
        }
    }

    /// This context for a movement on `lanes`: on [`Lanes::Wave`] the lane is the thread's lane
    /// in its 64-lane wave (`lane | (warp & 1) << 5`) and the warp its wave (`warp >> 1`).
    pub(crate) fn on(&self, lanes: Lanes) -> Render {
        let (lane, warp) = (&self.lane, &self.warp);
        let (lane, warp) = match lanes {
            Lanes::Warp => (lane.clone(), warp.clone()),
            Lanes::Wave => (quote!((#lane | (#warp & 1) << 5)), quote!((#warp >> 1))),
        };
        Render {
            lane,
            warp,
            lanes,
            elem: self.elem.clone(),
            span: self.span,
            shared_offset: self.shared_offset,
        }
    }

    /// `let out: [T; registers] = expr;`
    pub(crate) fn bind(&self, out: &Ident, registers: u32, expr: TokenStream) -> TokenStream {
        let (elem, n) = (&self.elem, index_lit(registers));
        quote!(let #out: [#elem; #n] = #expr;)
    }
}

/// A load of `words` 32-bit words (1, 2 or 4) at the shared-memory address `addr`, as a
/// `[u32; words]`.
fn ld_shared_words(words: usize, addr: &TokenStream, span: Span) -> TokenStream {
    match words {
        1 => quote_spanned!(span=> [::tessera::device::ld_shared_v1::<u32>(#addr)]),
        2 => quote_spanned!(span=> ::tessera::device::ld_shared_v2::<u32>(#addr)),
        _ => quote_spanned!(span=> ::tessera::device::ld_shared_v4::<u32>(#addr)),
    }
}

/// An unsuffixed integer literal for an array index or length.
pub(crate) fn index_lit(i: u32) -> Literal {
    Literal::usize_unsuffixed(i as usize)
}

/// The expression (a block) computing the destination array of `movement` from the array
/// `src` (elements of type `elem`); shared memory at `shared_offset` bytes into the kernel's
/// dynamic shared memory. Calls that the emulator attributes to a source line carry `span`.
pub(crate) fn render_movement(movement: &Movement, src: &Ident, rc: &Render) -> TokenStream {
    let rc = &rc.on(movement.lanes);
    let elem = &rc.elem;
    let shared_offset = rc.shared_offset;
    let out = format_ident!("__tessera_out");
    let n_out = index_lit(movement.dst_registers);
    // A pure copy of a prefix: no per-thread code.
    if movement
        .steps
        .iter()
        .all(|s| matches!(s, Step::Copy { .. }))
    {
        let elements = movement.steps.iter().map(|s| match s {
            Step::Copy { src: r, .. } => {
                let r = index_lit(*r);
                quote!(#src[#r])
            }
            _ => unreachable!("all steps are copies"),
        });
        return quote!({ let __tessera_copy: [#elem; #n_out] = [#(#elements),*]; __tessera_copy });
    }
    let smem = quote!(__tessera_smem);
    let offset = Literal::u32_suffixed(shared_offset);
    let body: Vec<TokenStream> = movement
        .steps
        .iter()
        .map(|step| render_step(step, movement.element_bits, src, &out, rc, &smem))
        .collect();
    let smem_decl = if movement.shared_bytes > 0 {
        quote!(let #smem: u32 = ::tessera::device::dynamic_shared_base() + #offset;)
    } else {
        quote!()
    };
    quote! {{
        #smem_decl
        #[allow(unused_mut)]
        let mut #out: [#elem; #n_out] = [#src[0]; #n_out];
        #(#body)*
        #out
    }}
}

pub(crate) fn render_step(
    step: &Step,
    bits: u32,
    src: &Ident,
    out: &Ident,
    rc: &Render,
    smem: &TokenStream,
) -> TokenStream {
    let (lane, warp, elem, span) = (&rc.lane, &rc.warp, &rc.elem, rc.span);
    match step {
        Step::Copy { dst, src: s } => {
            let (d, s) = (index_lit(*dst), index_lit(*s));
            quote!(#out[#d] = #src[#s];)
        }
        Step::Duplicate { dst, src: s } => {
            let (d, s) = (index_lit(*dst), index_lit(*s));
            quote!(#out[#d] = #out[#s];)
        }
        Step::Select { dst, base, select } => {
            let d = index_lit(*dst);
            let sel = select.render(lane, warp);
            let arms = select.values().into_iter().map(|v| {
                let (lit, r) = (Literal::u32_suffixed(v), index_lit(base ^ v));
                quote!(#lit => #src[#r],)
            });
            let fallback = index_lit(*base);
            quote!(#out[#d] = match #sel { #(#arms)* _ => #src[#fallback], };)
        }
        Step::Barrier => quote_spanned!(span=> ::tessera::device::sync_threads();),
        Step::Shuffle(s) => render_shuffle(s, bits, src, out, rc),
        Step::Store(s) => render_store(s, bits, src, rc, smem),
        Step::Load(s) => {
            let n = s.elements.len();
            let thread = s.thread_offset.render(lane, warp);
            let widened = s.stride * 8 != bits;
            let bytes = s.stride as usize * n;
            let loads = s.chunks.iter().map(|&(first, off)| {
                let off = Literal::u32_suffixed(off);
                let addr = quote!(#smem + (#off ^ __tessera_thread));
                let targets: Vec<Literal> = s.elements.iter().map(|&e| index_lit(first ^ e)).collect();
                if widened {
                    let load = ld_shared_words(n, &addr, span);
                    let assigns = targets.iter().enumerate().map(|(j, t)| {
                        let j = index_lit(j as u32);
                        quote!(#out[#t] = ::tessera::tile_move::extract_element::<#elem>(__tessera_words[#j], 0);)
                    });
                    quote!({ let __tessera_words: [u32; #n] = #load; #(#assigns)* })
                } else if bytes < 4 {
                    // Sub-word: load the word, take the elements at their byte.
                    let load = quote_spanned!(span=> ::tessera::device::ld_shared_v1::<u32>(__tessera_at & !3u32));
                    let step_bytes = Literal::u32_suffixed(bits / 8);
                    let assigns = targets.iter().enumerate().map(|(j, t)| {
                        let j = Literal::u32_suffixed(j as u32);
                        quote!(#out[#t] = ::tessera::tile_move::extract_element::<#elem>(
                            __tessera_word, (__tessera_at & 3u32) + #j * #step_bytes);)
                    });
                    quote!({ let __tessera_at: u32 = #addr; let __tessera_word: u32 = #load; #(#assigns)* })
                } else {
                    let w = word_count(n, bits);
                    let load = ld_shared_words(w, &addr, span);
                    let assigns = targets.iter().enumerate().map(|(j, t)| {
                        let j = index_lit(j as u32);
                        quote!(#out[#t] = __tessera_elements[#j];)
                    });
                    quote!({
                        let __tessera_elements: [#elem; #n] =
                            ::tessera::tile_move::unpack_words::<#elem, #n, #w>(#load);
                        #(#assigns)*
                    })
                }
            });
            quote! {{
                let __tessera_thread: u32 = #thread;
                // SAFETY: planned in-bounds, aligned addresses of this conversion's region.
                unsafe { #(#loads)* }
            }}
        }
        Step::Ldmatrix(s) => {
            let row = s.row_offset.render(lane, warp);
            let per_word = if s.transposed {
                2
            } else {
                (32 / bits) as usize
            };
            let name = format_ident!(
                "ldmatrix_x{}{}",
                s.matrices,
                if s.transposed { "_trans" } else { "" }
            );
            let loads = s.chunks.iter().map(|(off, targets)| {
                let off = Literal::u32_suffixed(*off);
                let assigns = targets.iter().enumerate().map(|(m, regs)| {
                    let m = index_lit(m as u32);
                    let sets = regs.iter().enumerate().map(|(j, &r)| {
                        let (j, r) = (index_lit(j as u32), index_lit(r));
                        quote!(#out[#r] = __tessera_elements[#j];)
                    });
                    quote!({
                        let __tessera_elements: [#elem; #per_word] =
                            ::tessera::tile_move::unpack_words::<#elem, #per_word, 1>([__tessera_words[#m]]);
                        #(#sets)*
                    })
                });
                let call = quote_spanned!(span=> ::tessera::device::#name(#smem + (#off ^ __tessera_row)));
                quote!({ let __tessera_words = #call; #(#assigns)* })
            });
            quote! {{
                let __tessera_row: u32 = #row;
                // SAFETY: every lane executes it; rows are 16-byte aligned in this region.
                unsafe { #(#loads)* }
            }}
        }
    }
}

/// The owners' vector stores of `s` (`smem`: the region's shared-window address).
pub(crate) fn render_store(
    s: &StoreStep,
    bits: u32,
    src: &Ident,
    rc: &Render,
    smem: &TokenStream,
) -> TokenStream {
    let (elem, span) = (&rc.elem, rc.span);
    let access = &s.access;
    let n = access.elements.len();
    let widened = access.stride * 8 != bits;
    let stores = access.chunks.iter().map(|&(first, off)| {
        let off = Literal::u32_suffixed(off);
        let values = access.elements.iter().map(|&e| {
            let r = index_lit(first ^ e);
            quote!(#src[#r])
        });
        let (words, value) = if widened {
            let values = values.map(|v| quote!(::tessera::tile::Elem::to_bits(#v) as u32));
            (n, quote!([#(#values),*]))
        } else {
            let w = word_count(n, bits);
            (
                w,
                quote!(::tessera::tile_move::pack_words::<#elem, #n, #w>([#(#values),*])),
            )
        };
        let addr = quote!(#smem + (#off ^ __tessera_thread));
        match words {
            1 => quote_spanned!(span=> ::tessera::device::st_shared_v1::<u32>(#addr, (#value)[0]);),
            2 => quote_spanned!(span=> ::tessera::device::st_shared_v2::<u32>(#addr, #value);),
            _ => quote_spanned!(span=> ::tessera::device::st_shared_v4::<u32>(#addr, #value);),
        }
    });
    guarded_stores(s, rc, stores)
}

/// `stores` (at offsets from `__tessera_thread`, the thread's byte offset) in the threads that
/// store for `s` (its lane and warp guards).
pub(crate) fn guarded_stores(
    s: &StoreStep,
    rc: &Render,
    stores: impl Iterator<Item = TokenStream>,
) -> TokenStream {
    let (lane, warp) = (&rc.lane, &rc.warp);
    let thread = s.access.thread_offset.render(lane, warp);
    let lane_guard = Literal::u32_suffixed(s.lane_guard);
    let warp_guard = Literal::u32_suffixed(s.warp_guard);
    quote! {
        if #lane & #lane_guard == 0 && #warp & #warp_guard == 0 {
            let __tessera_thread: u32 = #thread;
            // SAFETY: the addresses lie in this op's region of dynamic shared memory, aligned
            // to the access (planned at expansion time).
            unsafe { #(#stores)* }
        }
    }
}

/// `code(v)` for the value `v` that `select` takes in the running thread: the code of its one
/// value, or a `match` on it (`fallback` for the values no thread takes).
fn per_value(
    select: &LaneFn,
    lane: &TokenStream,
    warp: &TokenStream,
    code: impl Fn(u32) -> TokenStream,
    fallback: TokenStream,
) -> TokenStream {
    let values = select.values();
    if let [only] = values[..] {
        return code(only);
    }
    let arms = values.iter().map(|&v| {
        let lit = Literal::u32_suffixed(v);
        let c = code(v);
        quote!(#lit => #c,)
    });
    let sel = select.render(lane, warp);
    quote!(match #sel { #(#arms)* _ => #fallback, })
}

fn render_shuffle(
    s: &ShuffleStep,
    bits: u32,
    src: &Ident,
    out: &Ident,
    rc: &Render,
) -> TokenStream {
    let (lane, warp, elem, span) = (&rc.lane, &rc.warp, &rc.elem, rc.span);
    let n = s.send_offsets.len();
    let w = word_count(n, bits);
    let pack = |base: u32| {
        let values = s.send_offsets.iter().map(|&o| {
            let r = index_lit(base ^ o);
            quote!(#src[#r])
        });
        quote!(::tessera::tile_move::pack_words::<#elem, #n, #w>([#(#values),*]))
    };
    let fallback = pack(s.send.values()[0]);
    let sent = per_value(&s.send, lane, warp, pack, fallback);
    let source = s.source_lane.render(lane, warp);
    let shuffles = (0..w).map(|k| {
        let k = index_lit(k as u32);
        match rc.lanes {
            Lanes::Warp => quote_spanned!(span=> ::tessera::device::shfl_idx_b32(
                ::tessera::device::FULL_MASK, __tessera_sent[#k], __tessera_source,
                ::tessera::device::SHFL_C_FULL)),
            Lanes::Wave => quote_spanned!(span=> ::tessera::device::wave_shfl_idx_b32(
                __tessera_sent[#k], __tessera_source)),
        }
    });
    let store = |base: u32| {
        let sets = s.receive_offsets.iter().enumerate().map(|(j, &o)| {
            let (j, r) = (index_lit(j as u32), index_lit(base ^ o));
            quote!(#out[#r] = __tessera_got[#j];)
        });
        quote!(#(#sets)*)
    };
    let write = per_value(
        &s.receive,
        lane,
        warp,
        |v| {
            let st = store(v);
            quote!({ #st })
        },
        quote!({}),
    );
    let every_lane = u64::MAX >> (64 - rc.lanes.count());
    let guarded = if s.active == every_lane {
        write
    } else {
        let active = Literal::u64_suffixed(s.active);
        quote!(if (#active >> #lane) & 1 == 1 { #write })
    };
    quote! {{
        let __tessera_sent: [u32; #w] = #sent;
        let __tessera_source: u32 = #source;
        let __tessera_got: [#elem; #n] = ::tessera::tile_move::unpack_words::<#elem, #n, #w>(
            [#(#shuffles),*]);
        #guarded
    }}
}

#[cfg(test)]
#[path = "convert_tests.rs"]
pub(crate) mod tests;
