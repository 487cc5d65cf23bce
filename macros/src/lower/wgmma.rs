//! `dot(a, b, acc)` as `wgmma.mma_async` (sm_90a bodies), rendering the
//! [`WgmmaDotPlan`] layout inference stored on the op (`tessera_layout::plan::wgmma_dot`
//! documents the plan):
//!
//! ```text
//! bar.sync                                  // the region may still be read by an earlier op
//! st.shared a, b                            // the plan's vectorised stores, NVMMA layout
//! fence.proxy.async.shared::cta; bar.sync   // the stores, visible to the async proxy
//! acc_b = fragment registers of block b     // per accumulator block
//! wgmma.fence
//! wgmma.mma_async × K steps × blocks        // descriptors: template | (address >> 4), + step
//! wgmma.commit_group
//! wgmma.wait_group N; fragment registers → the accumulator tile's registers
//! ```
//!
//! [`render_issue`] (stores to commit) and [`render_retire`] (the wait and the registers back)
//! are separate so that a pipelined loop can issue a group and retire it later with
//! `wait_group N > 0`; [`lower_wgmma`] renders both back to back with `wait_group 0`.

use super::convert::{guarded_stores, index_lit, render_store, Render};
use super::{internal, Ctx};
use crate::ir::Op;
use crate::types::DType;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use tessera_layout::plan::wgmma_dot::{WgmmaDotPlan, WgmmaOperand};
use tessera_layout::LinearLayout;

/// Lowers `OpKind::Dot` planned as `wgmma`: `a`, `b`, `acc` are the operands' registers; the
/// result is in the accumulator's layout (the mma v3 layout the plan was made for).
pub fn lower_wgmma(
    ctx: &mut Ctx,
    op: &Op,
    plan: &WgmmaDotPlan,
    [a, b, acc]: [&Ident; 3],
    acc_layout: &LinearLayout,
    dst_layout: &LinearLayout,
    in_dtype: DType,
) -> Result<(TokenStream, Ident), syn::Error> {
    ctx.nvidia_only("wgmma");
    if dst_layout != acc_layout {
        return Err(internal(
            &op.loc,
            "a dot result not in the accumulator's layout",
        ));
    }
    let registers = plan.acc_registers.iter().map(Vec::len).sum::<usize>() as u32;
    if acc_layout.in_size(tessera_layout::Label::Register) != registers {
        return Err(internal(
            &op.loc,
            "a wgmma plan for another accumulator layout",
        ));
    }
    let out = ctx.fresh("wgmma");
    let operands = [OperandAt::Registers(a), OperandAt::Registers(b)];
    let code = render_synchronous(ctx, op, plan, operands, acc, &out, in_dtype);
    Ok((code, out))
}

/// `out`, the dot of `operands` and `acc` issued and retired at once (`wait_group 0`); the
/// dot's region of `shared_bytes + alignment` bytes is allocated when an operand is in
/// registers.
fn render_synchronous(
    ctx: &mut Ctx,
    op: &Op,
    plan: &WgmmaDotPlan,
    operands: [OperandAt<'_>; 2],
    acc: &Ident,
    out: &Ident,
    in_dtype: DType,
) -> TokenStream {
    let registers = plan.acc_registers.iter().map(Vec::len).sum::<usize>() as u32;
    let offset = if operands
        .iter()
        .any(|at| matches!(at, OperandAt::Registers(_)))
    {
        ctx.alloc_shared(plan.shared_bytes + plan.alignment, 16)
    } else {
        0
    };
    let barrier = ctx.shared_write_barrier();
    let rc = Render::for_op(ctx, op, in_dtype, None);
    let warpgroup = warpgroup_binding(ctx, plan, a_from_registers(plan, &operands));
    let accumulators: Vec<Ident> = (0..plan.acc_registers.len())
        .map(|b| format_ident!("__tessera_acc{}", b))
        .collect();
    let issue = render_issue(plan, offset, operands, &rc, &barrier, &accumulators, true);
    let retire = render_retire(plan, 0, &accumulators);
    let (n, element) = (index_lit(registers), accumulator_element(plan));
    quote! {
        let #out: [#element; #n] = {
            #[allow(unused_mut)]
            let mut __tessera_out: [#element; #n] = #acc;
            #warpgroup
            #issue
            #retire
            __tessera_out
        };
    }
}

/// Where an operand of a `wgmma` is: registers stored to the dot's region, or a ring slot a
/// pipelined loop has copied with `cp.async` and waited for (a `u32` shared-window address).
pub(crate) enum OperandAt<'a> {
    Registers(&'a Ident),
    Slot(TokenStream),
}

/// From the operands to the committed group: the stores of the operands in registers, the
/// fences, one accumulator per block (`accumulators`, from `__tessera_out`: declared here, or
/// with `declare` false assigned to variables the caller declared), the instructions, the
/// commit. `offset`: the dot's region in dynamic shared memory (`shared_bytes + alignment`
/// bytes), used when an operand is in registers.
pub(crate) fn render_issue(
    plan: &WgmmaDotPlan,
    offset: u32,
    [a, b]: [OperandAt<'_>; 2],
    rc: &Render,
    barrier: &TokenStream,
    accumulators: &[Ident],
    declare: bool,
) -> TokenStream {
    let span = rc.span;
    let (a_smem, b_smem) = (quote!(__tessera_wgmma_a), quote!(__tessera_wgmma_b));
    let mut stores = TokenStream::new();
    let mut addresses = TokenStream::new();
    let mut stored = false;
    // A in registers that hold its fragments is read from them (no store).
    let a_registers = match (&a, &plan.a_registers) {
        (OperandAt::Registers(src), Some(_)) => Some(*src),
        _ => None,
    };
    let operands = [(a, &plan.a, &a_smem), (b, &plan.b, &b_smem)];
    for (k, (at, operand, smem)) in operands.into_iter().enumerate() {
        match at {
            OperandAt::Registers(_) if k == 0 && a_registers.is_some() => {}
            OperandAt::Registers(src) => {
                let region_offset = Literal::u32_suffixed(operand.region_offset);
                addresses.extend(quote!(let #smem: u32 = __tessera_wgmma_base + #region_offset;));
                stores.extend(render_operand_store(operand, src, rc, smem));
                stored = true;
            }
            OperandAt::Slot(slot) => addresses.extend(quote!(let #smem: u32 = #slot;)),
        }
    }
    let loads = render_fragment_loads(plan, accumulators, declare);
    let calls = render_calls(plan, &a_smem, &b_smem, a_registers, accumulators, span);
    let (base, stores) = if stored {
        let base = aligned_shared_address(offset, plan.alignment);
        let stores = fenced_stores(barrier, stores);
        (
            quote!(let __tessera_wgmma_base: u32 = #base;),
            quote! {
                #stores
                ::tessera::device::sync_threads();
            },
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    quote! {
        #base
        #addresses
        #stores
        #loads
        #(::tessera::device::wgmma_pin(&mut #accumulators);)*
        ::tessera::device::wgmma_fence();
        // SAFETY: every thread of each warpgroup issues the same wgmmas on operands in shared
        // memory that are complete (stored from registers and fenced to the async proxy behind
        // a barrier, or a ring slot its loop waited for behind a barrier); the wait below retires them
        // before the memory is written again.
        unsafe { #calls }
        ::tessera::device::wgmma_commit_group();
    }
}

/// The Rust type of the accumulator's registers: `i32` for integer operands, else `f32`.
fn accumulator_element(plan: &WgmmaDotPlan) -> TokenStream {
    if plan.shape.input.is_integer() {
        quote!(i32)
    } else {
        quote!(f32)
    }
}

/// One `WgmmaAccumulator` per block (`accumulators`), from the registers of `__tessera_out`:
/// `let mut` bindings, or with `declare` false assignments.
fn render_fragment_loads(
    plan: &WgmmaDotPlan,
    accumulators: &[Ident],
    declare: bool,
) -> TokenStream {
    let half_lit = index_lit(plan.shape.instr_n / 2);
    let element = accumulator_element(plan);
    let loads = plan
        .acc_registers
        .iter()
        .zip(accumulators)
        .map(|(regs, acc)| {
            let regs = regs.iter().map(|&r| index_lit(r));
            let binding = if declare { quote!(let mut) } else { quote!() };
            quote! {
                #binding #acc = ::tessera::device::WgmmaAccumulator::<#half_lit, #element>::from_registers(
                    [#(__tessera_out[#regs]),*]);
            }
        });
    quote!(#(#loads)*)
}

/// The `wgmma` instructions of every block and K step, on the operands at the shared
/// addresses `a_smem` and `b_smem` (`u32`s in scope), into `accumulators`; with `a_registers`
/// (the `a` tile's registers, holding the plan's `a_registers` fragments) A comes from them
/// (the `_rs` instructions), pairs of 16-bit elements packed into 32-bit registers.
fn render_calls(
    plan: &WgmmaDotPlan,
    a_smem: &TokenStream,
    b_smem: &TokenStream,
    a_registers: Option<&Ident>,
    accumulators: &[Ident],
    span: Span,
) -> TokenStream {
    let fragments = a_registers.zip(plan.a_registers.as_ref());
    let input = plan.shape.input;
    let instruction = format_ident!(
        "wgmma_m64n{}k{}_{}{}",
        plan.shape.instr_n,
        input.instr_k(),
        input.name(),
        if fragments.is_some() { "_rs" } else { "" }
    );
    // `imm-trans` immediates: 16-bit operands only (8-bit ones are K-major).
    let (ta, tb) = (
        Literal::u32_unsuffixed(plan.a.trans()),
        Literal::u32_unsuffixed(plan.b.trans()),
    );
    let trans = if input.transposable() {
        quote!(::<#ta, #tb>)
    } else {
        quote!()
    };
    let groups = plan.shape.warpgroups[0] * plan.shape.warpgroups[1];
    let mut calls = TokenStream::new();
    for (block, acc) in accumulators.iter().enumerate() {
        let (da_base, db_base) = (
            format_ident!("__tessera_da{}", block),
            format_ident!("__tessera_db{}", block),
        );
        calls.extend(descriptor_base(
            &plan.b, b_smem, block, groups, &db_base, span,
        ));
        if fragments.is_none() {
            calls.extend(descriptor_base(
                &plan.a, a_smem, block, groups, &da_base, span,
            ));
        }
        for step in 0..plan.k_steps() as usize {
            let db = step_descriptor(&plan.b, &db_base, step, span);
            calls.extend(match fragments {
                Some((src, f)) => {
                    let f = &f[block][step];
                    let pairs = (0..4).map(|p| {
                        let (lo, hi) = (index_lit(f[2 * p]), index_lit(f[2 * p + 1]));
                        quote! {
                            (::tessera::tile::Elem::to_bits(#src[#lo]) as u32)
                                | ((::tessera::tile::Elem::to_bits(#src[#hi]) as u32) << 16)
                        }
                    });
                    quote_spanned! {span=>
                        ::tessera::device::#instruction::<#tb>(&mut #acc, [#(#pairs),*], #db, true);
                    }
                }
                None => {
                    let da = step_descriptor(&plan.a, &da_base, step, span);
                    quote_spanned! {span=>
                        ::tessera::device::#instruction #trans(&mut #acc, #da, #db, true);
                    }
                }
            });
        }
    }
    calls
}

/// A `wgmma` dot whose operands a software-pipelined loop copies into ring slots
/// (`super::pipeline`): the shared addresses of this iteration's slots (`None`: the operand is
/// stored from registers) and, with one group in flight, the loop's accumulators (live across
/// iterations; the loop retires them).
#[derive(Clone)]
pub struct RingWgmma {
    /// The dot's index in the loop body.
    pub dot: usize,
    /// The dot's result.
    pub result: crate::ir::ValueId,
    pub a_slot: Option<TokenStream>,
    pub b_slot: Option<TokenStream>,
    pub accumulators: Option<Vec<Ident>>,
    /// A dot whose group is retired in the next iteration: the loop's accumulators it issues
    /// into, and the cell of the carried value its result becomes (`super::pipeline`).
    pub deferred: Option<(Vec<Ident>, Ident)>,
    /// The deferred dots this dot's `wait_group 0` retires: their statements after the wait
    /// (the carried value rebound from their accumulators).
    pub retires: TokenStream,
}

/// Operand `k` (0: `a`, 1: `b`) of the `wgmma` `dot`, a value from before its pipelined loop,
/// stored once before the loop into a region of its own (the operand's bytes, aligned to its
/// swizzle period): the operand's `u32` shared-window address, and the statements (the stores
/// of [`fenced_stores`]; the loop's barrier before its prologue makes them visible to every
/// thread's `wgmma`s).
pub(crate) fn render_hoisted_operand(
    ctx: &mut Ctx,
    dot: &Op,
    plan: &WgmmaDotPlan,
    k: usize,
) -> Result<(TokenStream, TokenStream), syn::Error> {
    let value = dot.operands[k];
    let regs = ctx.regs(value, &dot.loc)?;
    let dtype = ctx.dtype(dot.operands[0]);
    let operand = if k == 0 { &plan.a } else { &plan.b };
    let alignment = operand.descriptors.alignment;
    let region = ctx.alloc_shared(operand.bytes + alignment, 16);
    let barrier = ctx.shared_write_barrier();
    let rc = Render::for_op(ctx, dot, dtype, None);
    let (src, address) = (ctx.fresh("hoisted_regs"), ctx.fresh("hoisted"));
    let base = aligned_shared_address(region, alignment);
    let stores = render_operand_store(operand, &src, &rc, &quote!(#address));
    let stores = fenced_stores(&barrier, stores);
    let statements = quote! {
        let #address: u32 = #base;
        {
            let #src = #regs;
            #stores
        }
    };
    Ok((quote!(#address), statements))
}

/// The `u32` shared-window address of byte `offset` of dynamic shared memory rounded up to
/// `alignment` (a power of two; the region holds `alignment` bytes more than it stores).
fn aligned_shared_address(offset: u32, alignment: u32) -> TokenStream {
    let (offset, align_mask) = (
        Literal::u32_suffixed(offset),
        Literal::u32_suffixed(alignment - 1),
    );
    quote!((::tessera::device::dynamic_shared_base() + #offset + #align_mask) & !#align_mask)
}

/// An operand's `stores` behind `barrier` (earlier ops may still read this memory), then
/// `fence.proxy.async` (the generic proxy's writes, visible to the `wgmma`s' async proxy).
fn fenced_stores(barrier: &TokenStream, stores: TokenStream) -> TokenStream {
    quote! {
        #barrier
        #stores
        ::tessera::device::fence_proxy_async_shared_cta();
    }
}

/// The accumulators of a pipelined loop's `wgmma` with a group in flight, made from the
/// registers of `__tessera_out` (the loop's initial accumulator) before the loop.
pub(crate) fn render_ring_accumulators(plan: &WgmmaDotPlan, accumulators: &[Ident]) -> TokenStream {
    let loads = render_fragment_loads(plan, accumulators, true);
    // Pinned here, before the loop, each register has a definition of its own (not one shared
    // zero): the value a loop of no iteration leaves needs no copies on its way to the retiring
    // wait, copies ptxas would count as defining accumulators under a `wgmma` in flight and
    // answer by serialising every `wgmma` of the kernel (its C7515).
    quote! {
        #loads
        #(::tessera::device::wgmma_pin(&mut #accumulators);)*
    }
}

/// `dot(a, b, acc)` planned as `wgmma` with operands in the ring slots of `ring` (the loop has
/// waited for their copies and synchronised; an operand without
/// a slot is stored from its registers, `operands`): the instructions, the commit, and
/// `wait_group 0` with the registers back, or with a group in flight (both operands in slots)
/// `wait_group 1` (retiring the previous iteration's group) and the result left in the loop's
/// accumulators (the value bound here is the unchanged `acc`, which nothing reads).
pub fn lower_wgmma_from_ring(
    ctx: &mut Ctx,
    op: &Op,
    plan: &WgmmaDotPlan,
    ring: &RingWgmma,
    [a, b, acc]: [&Ident; 3],
    in_dtype: DType,
) -> Result<(TokenStream, Ident), syn::Error> {
    ctx.nvidia_only("wgmma");
    let registers = plan.acc_registers.iter().map(Vec::len).sum::<usize>() as u32;
    let (n, element) = (index_lit(registers), accumulator_element(plan));
    let out = ctx.fresh("wgmma");
    let (a_smem, b_smem) = (quote!(__tessera_wgmma_a), quote!(__tessera_wgmma_b));
    let span = op.loc.first;
    let at = |slot: &Option<TokenStream>, regs| match slot {
        Some(s) => OperandAt::Slot(s.clone()),
        None => OperandAt::Registers(regs),
    };
    if let Some((accumulators, cell)) = &ring.deferred {
        let operands = [at(&ring.a_slot, a), at(&ring.b_slot, b)];
        let issue = render_deferred(ctx, op, plan, operands, accumulators, in_dtype);
        let code = quote! {
            let #out: [#element; #n] = #cell.regs();
            {
                #[allow(unused_mut)]
                let mut __tessera_out: [#element; #n] = #acc;
                #issue
            }
        };
        return Ok((code, out));
    }
    let code = match (&ring.accumulators, &ring.a_slot, &ring.b_slot) {
        (Some(accumulators), Some(a_slot), Some(b_slot)) => {
            let warpgroup = warpgroup_binding(ctx, plan, false);
            let calls = render_calls(plan, &a_smem, &b_smem, None, accumulators, span);
            let waits = accumulators
                .iter()
                .map(|a| quote!(::tessera::device::wgmma_wait_group::<1, _>(&mut #a);));
            quote! {
                let #out: [#element; #n] = #acc;
                {
                    let #a_smem: u32 = #a_slot;
                    let #b_smem: u32 = #b_slot;
                    #warpgroup
                    ::tessera::device::wgmma_fence();
                    // SAFETY: every thread of each warpgroup issues the same wgmmas on the ring
                    // slot its loop waited for and synchronised; the slot is not written
                    // again before the group is retired (`super::pipeline`'s invariant).
                    unsafe { #calls }
                    ::tessera::device::wgmma_commit_group();
                    #(#waits)*
                }
            }
        }
        (Some(_), ..) => {
            return Err(internal(
                &op.loc,
                "a wgmma group in flight with an operand outside the rings",
            ))
        }
        (None, a_slot, b_slot) => {
            let operands = [at(a_slot, a), at(b_slot, b)];
            let code = render_synchronous(ctx, op, plan, operands, acc, &out, in_dtype);
            let retires = &ring.retires;
            quote!(#code #retires)
        }
    };
    Ok((code, out))
}

/// The issue of a dot whose group is retired in the next iteration: the accumulators
/// (`accumulators`, the loop's) assigned from `__tessera_out`, the instructions, the commit;
/// no wait.
fn render_deferred(
    ctx: &mut Ctx,
    op: &Op,
    plan: &WgmmaDotPlan,
    operands: [OperandAt<'_>; 2],
    accumulators: &[Ident],
    in_dtype: DType,
) -> TokenStream {
    let a_registers = a_from_registers(plan, &operands);
    let stored = operands
        .iter()
        .enumerate()
        .any(|(k, at)| matches!(at, OperandAt::Registers(_)) && !(k == 0 && a_registers));
    let offset = if stored {
        ctx.alloc_shared(plan.shared_bytes + plan.alignment, 16)
    } else {
        0
    };
    let barrier = ctx.shared_write_barrier();
    let rc = Render::for_op(ctx, op, in_dtype, None);
    let warpgroup = warpgroup_binding(ctx, plan, a_registers);
    let issue = render_issue(plan, offset, operands, &rc, &barrier, accumulators, false);
    quote!(#warpgroup #issue)
}

/// After the `wait_group 0` of another dot: a deferred dot's group (its `accumulators`,
/// planned as `plan`) retired, and its registers rebound as `arg: ty`, the carried value.
pub(crate) fn render_deferred_retire(
    plan: &WgmmaDotPlan,
    accumulators: &[Ident],
    cell: &Ident,
    arg: &Ident,
    ty: &TokenStream,
) -> TokenStream {
    let retire = render_retire(plan, 0, accumulators);
    quote! {
        let #arg: #ty = {
            #[allow(unused_mut)]
            let mut __tessera_out = #cell.regs();
            #retire
            ::tessera::tile::Tile::from_regs(__tessera_out)
        };
    }
}

/// The stores of one operand (16- or 8-bit elements): the conversion renderer's vector stores
/// (whole words), or one `st.shared.b16` / `st.shared.b8` per element when the plan stores
/// single elements.
fn render_operand_store(
    operand: &WgmmaOperand,
    src: &Ident,
    rc: &Render,
    smem: &TokenStream,
) -> TokenStream {
    let (store, bits) = (&operand.store, operand.shared.element_bitwidth);
    if store.access.elements.len() > 1 {
        return render_store(store, bits, src, rc, smem);
    }
    let span = rc.span;
    let stores = store.access.chunks.iter().map(|&(r, off)| {
        let (r, off) = (index_lit(r), Literal::u32_suffixed(off));
        let bits_of = quote!(::tessera::tile::Elem::to_bits(#src[#r]));
        let addr = quote!(#smem + (#off ^ __tessera_thread));
        if bits == 8 {
            quote_spanned!(span=> ::tessera::device::st_shared_b8(#addr, #bits_of as u8);)
        } else {
            quote_spanned!(span=> ::tessera::device::st_shared_b16(#addr, #bits_of as u16);)
        }
    });
    guarded_stores(store, rc, stores)
}

/// `let name = template | ((smem + block offset) >> 4)`: the descriptor of `operand`'s first
/// K step for accumulator block `block` of this thread's warpgroup (`__tessera_warpgroup`, a
/// table when the warpgroups read different blocks). Shared-window addresses are below 2¹⁸,
/// so the 14-bit start-address field needs no mask and a later K step's descriptor is this one
/// plus its offset in 16-byte units ([`step_descriptor`]).
fn descriptor_base(
    operand: &WgmmaOperand,
    smem: &TokenStream,
    block: usize,
    groups: u32,
    name: &Ident,
    span: Span,
) -> TokenStream {
    let template = Literal::u64_suffixed(operand.descriptors.descriptor.encode());
    let per_group = &operand.block_offsets[block];
    let block_offset = if same_for_every_warpgroup(per_group) {
        let o = Literal::u32_suffixed(per_group[0]);
        quote!(#o)
    } else if let Some(stride) = affine_stride(per_group) {
        // `first + warpgroup · stride`: arithmetic, no table in memory to read per `wgmma`.
        let (first, stride) = (
            Literal::u32_suffixed(per_group[0]),
            Literal::u32_suffixed(stride),
        );
        let g = Literal::u32_suffixed(groups);
        quote!((#first + (__tessera_warpgroup as u32 % #g) * #stride))
    } else {
        let entries = per_group.iter().map(|&o| Literal::u32_suffixed(o));
        let g = index_lit(groups);
        // `% groups` (a power of two): no bounds check, whose trap path would make ptxas
        // serialize the wgmmas.
        quote!({ const OFFSETS: [u32; #g] = [#(#entries),*]; OFFSETS[__tessera_warpgroup % #g] })
    };
    quote_spanned!(span=> let #name: u64 = #template | ((#smem + #block_offset) >> 4) as u64;)
}

/// The descriptor of K step `step`: the block's first one (`base`, [`descriptor_base`]) plus
/// the step's offset in 16-byte units, added by `wgmma_descriptor_offset` in place (one
/// 64-bit add beside the `wgmma`, rather than a descriptor per step kept live across a loop).
fn step_descriptor(operand: &WgmmaOperand, base: &Ident, step: usize, span: Span) -> TokenStream {
    let offset = operand.descriptors.k_step_offsets[step];
    if offset == 0 {
        return quote!(#base);
    }
    let units = Literal::u64_suffixed(u64::from(offset >> 4));
    quote_spanned!(span=> ::tessera::device::wgmma_descriptor_offset::<#units>(#base))
}

/// `let __tessera_warpgroup = …` (the thread's warpgroup, [`Ctx::warpgroup`]) where a
/// descriptor depends on it (its operand's blocks differ between warpgroups; A's only when
/// read from shared memory), else nothing.
fn warpgroup_binding(ctx: &mut Ctx, plan: &WgmmaDotPlan, a_from_registers: bool) -> TokenStream {
    let varies = |operand: &WgmmaOperand| {
        !operand
            .block_offsets
            .iter()
            .all(|per_group| same_for_every_warpgroup(per_group))
    };
    if !varies(&plan.b) && (a_from_registers || !varies(&plan.a)) {
        return TokenStream::new();
    }
    let warpgroup = ctx.warpgroup();
    quote!(let __tessera_warpgroup: usize = #warpgroup;)
}

/// Whether the dot's A is read from the registers of `operands[0]` (which hold the plan's A
/// fragments) rather than from shared memory.
fn a_from_registers(plan: &WgmmaDotPlan, operands: &[OperandAt<'_>; 2]) -> bool {
    matches!(operands[0], OperandAt::Registers(_)) && plan.a_registers.is_some()
}

/// Whether every warpgroup reads the same block (`per_group`: each warpgroup's offset).
fn same_for_every_warpgroup(per_group: &[u32]) -> bool {
    per_group.iter().all(|&o| o == per_group[0])
}

/// `d` when `offsets` is `o₀, o₀ + d, o₀ + 2d, …` (increasing), else `None`.
fn affine_stride(offsets: &[u32]) -> Option<u32> {
    let d = offsets.get(1)?.checked_sub(offsets[0])?;
    offsets
        .windows(2)
        .all(|w| w[1].checked_sub(w[0]) == Some(d))
        .then_some(d)
}

/// Waits until at most `pending` committed groups are in flight (`wait_group pending`), then
/// copies each block's fragment registers back into `__tessera_out`. With `pending > 0` the
/// caller must retire the group before the accumulators are read (a later `wait_group`).
pub(crate) fn render_retire(
    plan: &WgmmaDotPlan,
    pending: u32,
    accumulators: &[Ident],
) -> TokenStream {
    let pending = Literal::u32_unsuffixed(pending);
    let backs = plan
        .acc_registers
        .iter()
        .zip(accumulators)
        .map(|(regs, acc)| {
            let copies = regs.iter().enumerate().map(|(i, &r)| {
                let (i, r) = (index_lit(i as u32), index_lit(r));
                quote!(__tessera_out[#r] = __tessera_regs[#i];)
            });
            quote! {
                ::tessera::device::wgmma_wait_group::<#pending, _>(&mut #acc);
                {
                    let __tessera_regs = #acc.registers();
                    #(#copies)*
                }
            }
        });
    quote!(#(#backs)*)
}

#[cfg(test)]
#[path = "wgmma_tests.rs"]
mod tests;
