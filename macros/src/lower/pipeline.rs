//! A software-pipelined `for` loop (`num_stages = S`), as `crate::infer::pipeline` planned it.
//!
//! Each pipelined load gets a ring of `S` slots of dynamic shared memory (allocated for the
//! whole loop); slot `s` holds the conversion's shared layout for iterations `≡ s (mod S)`.
//!
//! ```text
//! bar.sync                                   // earlier ops' reads of this memory are done
//! S-1 times: ISSUE                           // iterations 0 .. S-2 (prologue)
//! for each iteration i:
//!     cp.async.wait_group S-2; bar.sync      // slot i%S landed, for every thread; every thread
//!                                            // has read slot (i-1)%S in iteration i-1
//!     ISSUE                                  // iteration i+S-1 into slot (i-1)%S
//!     body: the pipelined loads are gone; their conversions only read slot i%S
//!           (`ldmatrix` / vector loads, the planner's read steps)
//! cp.async.wait_all
//!
//! ISSUE: if the ahead iteration is in range { bind its induction value and the ahead copies of
//!        the carried values; run the issue ops (addresses, masks); cp.async each planned run
//!        (zero-filled where masked off); advance the ahead carried values by their yields, or
//!        pointers moved by a loop-invariant step as their base plus one running offset }
//!        cp.async.commit_group (always, so group counts stay aligned); next slot.
//! ```
//!
//! **TMA rings** (`LoopPipeline::uses_tma`: every ring load a `load_block` copied by boxes):
//! ISSUE runs the issue ops, then thread 0 arms slot `s`'s `mbarrier` with the slot's bytes
//! (`mbarrier.arrive.expect_tx`) and issues `tma_load_{2,3,4}d` per box (no commit group); the
//! wait is every thread's `mbarrier.try_wait.parity` on slot `i mod slots` at parity `(i /
//! slots) mod 2`, then the same `bar.sync`, whose role for the slot about to be overwritten is
//! unchanged. The barriers are initialised by thread 0 after the first `bar.sync` (then a
//! `fence.proxy.async`, for earlier register writes to the rings' memory, and a second
//! `bar.sync`) and invalidated after the loop, when every issued iteration has been waited for.
//!
//! The prologue's and the steady state's range checks make trip counts below `S - 1` (and
//! empty loops) issue nothing past the end. The conditions are uniform over the program, so
//! the barriers are reached by every thread.
//!
//! **`wgmma` dots fed by the rings** (one `WgmmaPipeline` per dot in the plan): the copies write
//! the operands' NVMMA layouts (each ring aligned to the swizzle period), and the wait at the top
//! of iteration `i` stays `cp.async.wait_group S-2; bar.sync`: the slots are written by
//! `cp.async`, not from registers, and are read by the `wgmma`s without a `fence.proxy.async`
//! (Triton's fence insertion fences only shared memory written from registers; a fence here
//! became `MEMBAR.ALL.CTA`, which also waited for the copies still in flight). All rings are
//! filled by one commit group per iteration, so `wait_group S-2` has
//! landed every ring's slot `i mod slots` whatever the number of rings. Each dot issues its
//! `wgmma`s on descriptors of its ring operands' slot `i mod slots`; an operand from before the
//! loop was stored once before the loop into a region of its own (barrier, stores,
//! `fence.proxy.async`; the barrier before the prologue publishes them), which nothing in the loop
//! writes; any other operand without a ring (a computed tile) is stored to the dot's own region
//! first (barrier, stores, `fence.proxy.async`, barrier), and commits. The transpose of a ring load
//! (`k.trans()` as operand `b`) is the same registers, so its copies are the load's.
//!
//! - *No group in flight* (`wait_group 0` after each dot, `slots = S`): as for `ldmatrix`
//!   reads, slot `(i-1) mod S`, which iteration `i` overwrites, was read by groups retired in
//!   iteration `i-1`, before the barrier of iteration `i`.
//! - *One group in flight* (`slots = S + 1`): the loop's accumulators are created before the
//!   loop from the carried accumulator; iteration `i` issues group `i` and `wgmma.wait_group 1`
//!   retires group `i-1`; after the loop `wgmma.wait_group 0` retires the last group and its
//!   registers become the carried accumulator. **Invariant**: iteration `i` copies iteration
//!   `i+S-1` into slot `(i+S-1) mod (S+1) = (i-2) mod (S+1)`, last read by group `i-2`, which
//!   every thread retired (`wait_group 1` in iteration `i-1`) before the barrier of iteration
//!   `i` that precedes the copies; group `i-1`, possibly still reading slot `(i-1) mod (S+1)`,
//!   and the copies in flight (iterations `i+1 .. i+S-1`) use the other `S` slots.
//! - *Retired in the next iteration* (a dot with a `DeferredRetire`, `slots = S + 1`): the
//!   loop's accumulators are created before the loop from the carried value; iteration `i`
//!   assigns them from the dot's `acc` operand, issues group `i` and commits without waiting;
//!   in iteration `i+1` the earlier dot's `wait_group 0` retires it (a second wait tied to the
//!   accumulators) and its registers are bound as the carried value, which nothing reads
//!   before; after the loop `wait_group 0` retires the last group. The slot argument is the one
//!   above: slot `i mod (S+1)`, which group `i` reads, is next written by the copies of
//!   iteration `i+2`, after its barrier, which every thread reaches after the wait of
//!   iteration `i+1`.

use super::convert::{render_step, Render};
use super::{elem_type, internal, Ctx};
use crate::infer::pipeline::LoopPipeline;
use crate::ir::Op;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use tessera_layout::plan::pipeline::AsyncCopyPlan;
use tessera_layout::Label;

/// A pipelined load while its loop body is lowered: the load is skipped, and the conversion of
/// its value reads the slot at `slot` (a `u32` shared-window address).
#[derive(Clone)]
pub struct PipelineRead {
    pub value: crate::ir::ValueId,
    /// The transpose of `value` that is a `wgmma` operand read from the slot (skipped too).
    pub transposed: Option<crate::ir::ValueId>,
    pub slot: TokenStream,
    pub copy: AsyncCopyPlan,
}

/// The pieces of a `for` loop that `control::lower_for` builds for both forms.
pub struct LoopParts {
    pub init: TokenStream,
    pub bind_args: TokenStream,
    pub assign: TokenStream,
    pub results: TokenStream,
    pub iv_ty: TokenStream,
    pub lower: Ident,
    pub upper: Ident,
    pub step: Ident,
    pub iv_arg: Ident,
    /// The cells of the carried values (index `j`), assigned by `assign`.
    pub cells: Vec<Ident>,
}

/// The loop `op` pipelined as `plan` says (see the module docs).
pub fn lower_pipelined_for(
    ctx: &mut Ctx,
    op: &Op,
    plan: &LoopPipeline,
    parts: LoopParts,
) -> Result<TokenStream, syn::Error> {
    ctx.nvidia_only(if plan.uses_tma() {
        "cp.async.bulk.tensor"
    } else {
        "cp.async"
    });
    let loc = &op.loc;
    let body = &op.regions[0];
    let stages = plan.stages;
    if stages < 2 {
        return Err(internal(loc, "a pipeline of fewer than 2 stages"));
    }
    let LoopParts {
        init,
        bind_args,
        assign,
        results,
        iv_ty,
        lower,
        upper,
        step,
        iv_arg,
        cells,
    } = parts;
    let (cur, end, stride) = (ctx.fresh("iv"), ctx.fresh("end"), ctx.fresh("step"));
    let (ahead_iv, ahead_live) = (ctx.fresh("ahead_iv"), ctx.fresh("ahead_live"));
    let (issue_slot, read_slot) = (ctx.fresh("issue_slot"), ctx.fresh("read_slot"));
    let slots = plan.slots();
    let slots_lit = Literal::u32_suffixed(slots);
    let wait_depth = Literal::u32_suffixed(stages - 2);
    let prologue_issues = Literal::u32_suffixed(stages - 1);

    // The ahead copies of the carried values the issue ops read.
    let mut ahead_init = TokenStream::new();
    let mut ahead_bind = TokenStream::new();
    let mut ahead_advance = TokenStream::new();
    for c in &plan.carried {
        let j = c.carried;
        let (arg, init_v, yielded) = (body.args[1 + j], op.operands[3 + j], body.yields[j]);
        let ty = ctx.value_type(arg, loc)?;
        let scalar = ctx.is_scalar(arg);
        let cell = ctx.fresh("ahead");
        let (arg, init_v, yielded) = (ctx.name(arg), ctx.name(init_v), ctx.name(yielded));
        match c.step {
            // The pointers before the loop plus one running offset (elements).
            Some(s) => {
                let (base, s) = (ctx.fresh("ahead_base"), ctx.name(s));
                // Each register written out (an array `map` leaves the pointers on the stack).
                let at = if scalar {
                    quote!(#base.offset(#cell))
                } else {
                    let r = ctx.layout(body.args[1 + j], loc)?.in_size(Label::Register);
                    let each = (0..r as usize).map(Literal::usize_unsuffixed);
                    quote!(::tessera::tile::Tile::from_regs({
                        let __tessera_base = #base.regs();
                        [#(__tessera_base[#each].offset(#cell)),*]
                    }))
                };
                ahead_init.extend(quote!(let #base: #ty = #init_v; let mut #cell: isize = 0;));
                ahead_bind.extend(quote!(let #arg: #ty = #at;));
                ahead_advance.extend(quote!(#cell = #cell.wrapping_add(#s as isize);));
            }
            None => {
                ahead_init.extend(quote!(let mut #cell: #ty = #init_v;));
                ahead_bind.extend(quote!(let #arg: #ty = #cell;));
                ahead_advance.extend(quote!(#cell = #yielded;));
            }
        }
    }
    let mut issue_ops = TokenStream::new();
    for &i in &plan.issue_ops {
        let issue_op = body
            .ops
            .get(i)
            .ok_or_else(|| internal(loc, "a pipeline's issue op is not in the loop"))?;
        issue_ops.extend(ctx.lower_op(issue_op)?);
    }

    // The rings, and each load's copies into the issue slot.
    let mut copies = TokenStream::new();
    let mut reads = Vec::new();
    let mut ring_bases = TokenStream::new();
    let mut load_slots = Vec::new();
    // With TMA, an mbarrier per slot: thread 0 expects the slot's bytes and issues the boxes.
    let barriers = plan.uses_tma().then(|| {
        let offset = Literal::u32_suffixed(ctx.alloc_shared(8 * slots, 8));
        let base = ctx.fresh("ring_barriers");
        ring_bases.extend(quote! {
            let #base: u32 = ::tessera::device::dynamic_shared_base() + #offset;
        });
        base
    });
    let mut tma_copies = TokenStream::new();
    let mut tma_bytes = 0u32;
    for l in &plan.loads {
        let (slot_bytes, align) = (l.copy.slot_bytes, l.copy.slot_alignment.max(16));
        let ring = ctx.alloc_shared(slot_bytes * slots + (align - 16), 16);
        let base = ctx.fresh("ring");
        let (ring, slot_bytes, align_mask) = (
            Literal::u32_suffixed(ring),
            Literal::u32_suffixed(slot_bytes),
            Literal::u32_suffixed(align - 1),
        );
        ring_bases.extend(quote! {
            let #base: u32 =
                (::tessera::device::dynamic_shared_base() + #ring + #align_mask) & !#align_mask;
        });
        let slot_at = |slot: &Ident| quote!(#base + #slot * #slot_bytes);
        match (&l.tma, &barriers) {
            (Some(tma), Some(bars)) => {
                tma_bytes += tma.plan.bytes;
                let bar = quote!(#bars + 8 * #issue_slot);
                tma_copies.extend(render_tma_copies(ctx, l, tma, slot_at(&issue_slot), bar)?);
            }
            _ => copies.extend(render_copies(ctx, op, l, slot_at(&issue_slot))?),
        }
        load_slots.push(slot_at(&read_slot));
        reads.push(PipelineRead {
            value: l.value,
            transposed: l.transposed,
            slot: slot_at(&read_slot),
            copy: l.copy.clone(),
        });
    }
    // The wgmma dots reading the rings, and with a group in flight the loop's accumulators.
    let mut ring_wgmma = Vec::new();
    let mut retires = Vec::new();
    let (mut before, mut after) = (TokenStream::new(), TokenStream::new());
    for w in &plan.wgmma {
        let dot = body
            .ops
            .get(w.dot)
            .ok_or_else(|| internal(loc, "a pipeline's dot is not in the loop"))?;
        let crate::ir::OpKind::Dot { plan: Some(code) } = &dot.kind else {
            return Err(internal(loc, "a pipelined wgmma without its plan"));
        };
        let crate::ir::DotCode::Wgmma(dot_plan) = &**code else {
            return Err(internal(loc, "a pipelined wgmma without its plan"));
        };
        let slot_of = |k: usize| -> Result<Option<TokenStream>, syn::Error> {
            w.rings[k]
                .map(|l| {
                    load_slots
                        .get(l)
                        .cloned()
                        .ok_or_else(|| internal(loc, "a wgmma operand's ring is not planned"))
                })
                .transpose()
        };
        let (mut a_slot, mut b_slot) = (slot_of(0)?, slot_of(1)?);
        // Operands from before the loop: stored once, here, into a region of their own.
        for (k, slot) in [&mut a_slot, &mut b_slot].into_iter().enumerate() {
            if w.hoisted[k] {
                let (address, store) = super::wgmma::render_hoisted_operand(ctx, dot, dot_plan, k)?;
                before.extend(store);
                *slot = Some(address);
            }
        }
        let accumulators = match w.accumulator.or(w.deferred.as_ref().map(|d| d.carried)) {
            Some(j) => {
                let cell = cells.get(j).ok_or_else(|| {
                    internal(loc, "a pipelined wgmma's accumulator is not carried")
                })?;
                let accs: Vec<Ident> = (0..dot_plan.acc_registers.len())
                    .map(|_| ctx.fresh("ring_acc"))
                    .collect();
                let loads = super::wgmma::render_ring_accumulators(dot_plan, &accs);
                let retire = super::wgmma::render_retire(dot_plan, 0, &accs);
                before.extend(quote! {
                    #[allow(unused_mut)]
                    let mut __tessera_out = #cell.regs();
                    #loads
                });
                after.extend(quote! {
                    #retire
                    #cell = ::tessera::tile::Tile::from_regs(__tessera_out);
                });
                Some(accs)
            }
            None => None,
        };
        let (accumulators, deferred) = match &w.deferred {
            Some(d) => {
                let accs = accumulators.unwrap_or_default();
                let cell = cells[d.carried].clone();
                let arg = body.args[1 + d.carried];
                let (name, ty) = (ctx.name(arg), ctx.value_type(arg, loc)?);
                retires.push((
                    d.retired_by,
                    super::wgmma::render_deferred_retire(dot_plan, &accs, &cell, &name, &ty),
                ));
                (None, Some((accs, cell)))
            }
            None => (accumulators, None),
        };
        ring_wgmma.push(super::wgmma::RingWgmma {
            dot: w.dot,
            result: dot.results[0],
            a_slot,
            b_slot,
            accumulators,
            deferred,
            retires: TokenStream::new(),
        });
    }
    for (dot, retire) in retires {
        let retiring = ring_wgmma
            .iter_mut()
            .find(|r| r.dot == dot)
            .ok_or_else(|| internal(loc, "a deferred wgmma retired by a dot outside the rings"))?;
        retiring.retires.extend(retire);
    }
    if let Some(bars) = &barriers {
        let bytes = Literal::u32_suffixed(tma_bytes);
        copies.extend(quote! {
            if ::tessera::device::thread_idx_x() == 0 {
                // SAFETY: the slot's barrier was initialised before the loop; every box lies in
                // the slot, aligned to its swizzle period; the maps are the launch's.
                unsafe {
                    ::tessera::device::mbarrier_arrive_expect_tx(#bars + 8 * #issue_slot, #bytes);
                    #tma_copies
                }
            }
        });
    }
    let commit = if barriers.is_some() {
        quote!()
    } else {
        quote!(::tessera::device::cp_async_commit_group();)
    };
    let issue = quote! {
        if #ahead_live && #ahead_iv < #end {
            let #iv_arg: #iv_ty = #ahead_iv;
            #ahead_bind
            #issue_ops
            #copies
            #ahead_advance
        }
        #commit
        #issue_slot = if #issue_slot + 1 == #slots_lit { 0 } else { #issue_slot + 1 };
        match #ahead_iv.checked_add(#stride) {
            ::core::option::Option::Some(next) => #ahead_iv = next,
            ::core::option::Option::None => #ahead_live = false,
        }
    };

    let depth = ctx.pipeline_reads.len();
    ctx.pipeline_reads.extend(reads);
    let outer_wgmma = std::mem::replace(&mut ctx.ring_wgmma, ring_wgmma);
    let inner = ctx.lower_region(body);
    ctx.ring_wgmma = outer_wgmma;
    ctx.pipeline_reads.truncate(depth);
    let inner = inner?;
    let bounds =
        super::control::render_bounds(&iv_ty, [&cur, &end, &stride], [&lower, &upper, &step]);
    // The waits: the slot's mbarrier at the parity of its use (TMA), or the cp.async groups.
    let read_phase = ctx.fresh("read_phase");
    let (init_barriers, wait, next_phase, drain) = match &barriers {
        Some(bars) => (
            quote! {
                let mut #read_phase: u32 = 0;
                if ::tessera::device::thread_idx_x() == 0 {
                    // SAFETY: the barriers' own 8-byte words of this block's shared memory,
                    // which no thread uses before the barrier below.
                    unsafe {
                        for __tessera_s in 0..#slots_lit {
                            ::tessera::device::mbarrier_init(#bars + 8 * __tessera_s, 1);
                        }
                        ::tessera::device::fence_mbarrier_init();
                    }
                }
                // The rings' memory may have been written from registers by ops before the
                // loop: those writes are ordered before the TMA unit's (the async proxy's).
                ::tessera::device::fence_proxy_async_shared_cta();
                ::tessera::device::sync_threads();
            },
            // SAFETY: an initialised barrier of this loop.
            quote!(unsafe { ::tessera::device::mbarrier_wait_parity(#bars + 8 * #read_slot, #read_phase) };),
            quote! {
                if #read_slot == 0 {
                    #read_phase ^= 1;
                }
            },
            // Every thread passed its last wait before the last iteration's barrier: the
            // barriers' memory is free for the ops after the loop once invalidated.
            quote! {
                if ::tessera::device::thread_idx_x() == 0 {
                    // SAFETY: no thread waits on these barriers any more (above).
                    unsafe {
                        for __tessera_s in 0..#slots_lit {
                            ::tessera::device::mbarrier_inval(#bars + 8 * __tessera_s);
                        }
                    }
                }
            },
        ),
        None => (
            quote!(),
            quote!(::tessera::device::cp_async_wait_group::<#wait_depth>();),
            quote!(),
            quote!(::tessera::device::cp_async_wait_all();),
        ),
    };
    Ok(quote! {
        #init
        {
            #bounds
            let mut #ahead_iv: #iv_ty = #lower;
            let mut #ahead_live: bool = __positive;
            #ahead_init
            let mut #issue_slot: u32 = 0;
            let mut #read_slot: u32 = 0;
            #ring_bases
            #before
            ::tessera::device::sync_threads();
            #init_barriers
            for _ in 0..#prologue_issues {
                #issue
            }
            #[allow(unused)]
            let __lead: #iv_ty = #ahead_iv.wrapping_sub(#lower);
            if __positive {
                while #cur < #end {
                    let #iv_arg: #iv_ty = #cur;
                    #bind_args
                    #wait
                    ::tessera::device::sync_threads();
                    // While live, the ahead iteration is `cur + lead`: computed from the loop's
                    // own induction variable, LLVM strength-reduces the issue ops' addresses.
                    #ahead_iv = #cur.wrapping_add(__lead);
                    #issue
                    #inner
                    #assign
                    #read_slot = if #read_slot + 1 == #slots_lit { 0 } else { #read_slot + 1 };
                    #next_phase
                    match #cur.checked_add(#stride) {
                        ::core::option::Option::Some(next) => #cur = next,
                        ::core::option::Option::None => break,
                    }
                }
            }
            #drain
            #after
        }
        #results
    })
}

/// The TMA boxes of one load into the slot at `slot`, completing on the mbarrier at `bar`
/// (thread 0 runs them, after `arrive.expect_tx` of the slot's bytes).
fn render_tma_copies(
    ctx: &mut Ctx,
    l: &crate::infer::pipeline::PipelinedLoad,
    tma: &crate::infer::pipeline::TmaLoad,
    slot: TokenStream,
    bar: TokenStream,
) -> Result<TokenStream, syn::Error> {
    let span = ctx.kernel.value(l.value).loc.first;
    let element = crate::infer::pipeline::tma_element(ctx.dtype(l.value)).ok_or_else(|| {
        internal(
            &ctx.kernel.value(l.value).loc,
            "a TMA load of an element TMA does not copy",
        )
    })?;
    let rank = tma.origin.len();
    let map = ctx.tensor_map(super::TensorMapUse {
        tensor: tma.tensor,
        rank,
        element,
        box_shape: tma.plan.box_shape,
        swizzle_bytes: tma.plan.swizzle_bytes,
    });
    // TMA's coordinates: the contiguous dimension first (the column, the row, then the leading
    // indices from the innermost out).
    let origin: Vec<Ident> = tma.origin.iter().map(|&v| ctx.name(v)).collect();
    let (row, col) = (&origin[rank - 2], &origin[rank - 1]);
    let leading: Vec<&Ident> = origin[..rank - 2].iter().rev().collect();
    let boxes = tma.plan.boxes.iter().map(|&(offset, [r, c])| {
        let (offset, r, c) = (
            Literal::u32_suffixed(offset),
            Literal::i32_suffixed(r as i32),
            Literal::i32_suffixed(c as i32),
        );
        let call = match rank {
            2 => quote!(::tessera::device::tma_load_2d(__tessera_slot + #offset, #map, #col + #c, #row + #r, __tessera_bar)),
            3 => quote!(::tessera::device::tma_load_3d(__tessera_slot + #offset, #map, [#col + #c, #row + #r, #(#leading),*], __tessera_bar)),
            _ => quote!(::tessera::device::tma_load_4d(__tessera_slot + #offset, #map, [#col + #c, #row + #r, #(#leading),*], __tessera_bar)),
        };
        quote_spanned!(span=> #call;)
    });
    Ok(quote! {
        let __tessera_slot: u32 = #slot;
        let __tessera_bar: u32 = #bar;
        #(#boxes)*
    })
}

/// The copies of one load into the slot at `slot` (a `u32` shared-window address).
fn render_copies(
    ctx: &mut Ctx,
    op: &Op,
    l: &crate::infer::pipeline::PipelinedLoad,
    slot: TokenStream,
) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let span = ctx.kernel.value(l.value).loc.first;
    let (lane, warp) = (ctx.lane(), ctx.warp());
    let (p, m) = (ctx.fresh("copy_ptrs"), ctx.fresh("copy_mask"));
    let rp = ctx.regs(l.pointer, loc)?;
    let mut out = quote!(let #p = #rp;);
    if let Some(mv) = l.mask {
        let rm = ctx.regs(mv, loc)?;
        out.extend(quote!(let #m = #rm;));
    }
    let bytes = Literal::u32_suffixed(l.copy.bytes);
    for g in &l.copy.groups {
        let thread = super::convert::ThreadValue::render(&g.thread_offset, &lane, &warp);
        let reach = g.thread_offset.reach();
        let each = g.copies.iter().map(|&(r, off)| {
            let adds = off & reach == 0;
            let (ri, off) = (Literal::usize_unsuffixed(r as usize), Literal::u32_suffixed(off));
            let pred = match l.mask {
                Some(_) => quote!(#m[#ri]),
                None => quote!(true),
            };
            // An offset whose bits the thread's never meet is added (`Affine::reach`): ptxas
            // makes it the address's immediate, one register for all the thread's copies.
            let dst = if adds {
                quote!(__tessera_slot + __tessera_thread + #off)
            } else {
                quote!(__tessera_slot + (#off ^ __tessera_thread))
            };
            if l.copy.bypass_l1 {
                quote_spanned!(span=> ::tessera::device::cp_async_cg_zfill(#dst, #p[#ri], #pred);)
            } else {
                quote_spanned!(span=> ::tessera::device::cp_async_ca_zfill::<#bytes, _>(#dst, #p[#ri], #pred);)
            }
        });
        let (lg, wg) = (
            Literal::u32_suffixed(g.lane_guard),
            Literal::u32_suffixed(g.warp_guard),
        );
        out.extend(quote! {
            if #lane & #lg == 0 && #warp & #wg == 0 {
                let __tessera_thread: u32 = #thread;
                // SAFETY: planned in-bounds, aligned addresses of this slot; a masked-off run
                // reads no global memory (source size 0) and is zero-filled.
                unsafe { #(#each)* }
            }
        });
    }
    Ok(quote!({ let __tessera_slot: u32 = #slot; #out }))
}

/// The conversion of a pipelined load's value: the planner's read steps on its slot.
pub fn lower_read(ctx: &mut Ctx, op: &Op, read: &PipelineRead) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let result = *op
        .results
        .first()
        .ok_or_else(|| internal(loc, "a conversion without a result"))?;
    let rc = Render {
        lane: ctx.lane(),
        warp: ctx.warp(),
        lanes: super::convert::Lanes::Warp,
        elem: elem_type(ctx.dtype(result)),
        span: op.loc.first,
        shared_offset: 0,
    };
    let out = format_ident!("__tessera_out");
    let unused_src = format_ident!("__tessera_no_source");
    let smem = quote!(__tessera_smem);
    let steps: Vec<TokenStream> = read
        .copy
        .reads
        .iter()
        .map(|s| render_step(s, read.copy.element_bits, &unused_src, &out, &rc, &smem))
        .collect();
    let (elem, n) = (
        &rc.elem,
        Literal::usize_unsuffixed(read.copy.dst_registers as usize),
    );
    let slot = &read.slot;
    let value = quote! {{
        let #smem: u32 = #slot;
        let mut #out: [#elem; #n] = [<#elem as ::tessera::tile::Elem>::from_bits(0); #n];
        #(#steps)*
        #out
    }};
    ctx.bind(result, value, loc)
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
