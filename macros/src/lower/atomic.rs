//! Atomics: one `::tessera::device::atom` (`atom.<sem>.<scope>.global.<op>.<type>` on NVIDIA,
//! `core::sync::atomic` on amdgpu) per element of the tile, each element exactly once.
//!
//! - A tile atomic runs in the layout inference anchored it in (as a store): registers that
//!   duplicate others (free register bits) skip it and take the old value of their canonical
//!   register; lanes and warps that hold copies (`tessera_layout::plan::broadcast` free bits)
//!   skip it by the owner predicate, and, when there are such copies, receive the owner's old
//!   values through shared memory: after a barrier each owner writes its old values to the
//!   slot `thread × registers + register`, after a second barrier every thread reads the slot
//!   of its owner (the thread with its free lane and warp bits cleared).
//! - A scalar atomic is performed once per program, by thread 0 (lane 0 of warp 0), and its old
//!   value goes to every thread the same way.
//!
//! Masked-off elements do not touch memory; their old value is zero.

use super::memory::bind_registers;
use super::{canonical_registers, internal, Ctx};
use crate::ir::{AtomicOp, MemScope, MemSem, Op, OpKind};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use tessera_layout::Label;

pub fn lower(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let OpKind::Atomic {
        op: kind,
        mask,
        sem,
        scope,
    } = op.kind
    else {
        return Err(internal(loc, "not an atomic"));
    };
    let operand = |i: usize| {
        op.operands
            .get(i)
            .copied()
            .ok_or_else(|| internal(loc, &format!("`{}` lacks operand {i}", kind.name())))
    };
    let ptr = operand(0)?;
    let (compare, value, mask) = if kind == AtomicOp::Cas {
        (Some(operand(1)?), operand(2)?, None)
    } else {
        (None, operand(1)?, mask.then(|| operand(2)).transpose()?)
    };
    let result = *op
        .results
        .first()
        .ok_or_else(|| internal(loc, "an atomic without a result"))?;
    let crate::types::DType::Ptr(elem) = ctx.dtype(ptr) else {
        return Err(internal(loc, "an atomic on a non-pointer"));
    };
    let t = super::scalar_type(elem);
    let op_const = Literal::u32_unsuffixed(match kind {
        AtomicOp::Add => 0,
        AtomicOp::Max => 1,
        AtomicOp::Min => 2,
        AtomicOp::And => 3,
        AtomicOp::Or => 4,
        AtomicOp::Xor => 5,
        AtomicOp::Xchg => 6,
        AtomicOp::Cas => 7,
    });
    let sem_const = Literal::u32_unsuffixed(match sem {
        MemSem::Relaxed => 0,
        MemSem::Acquire => 1,
        MemSem::Release => 2,
        MemSem::AcqRel => 3,
    });
    let scope_const = Literal::u32_unsuffixed(match scope {
        MemScope::Cta => 0,
        MemScope::Gpu => 1,
        MemScope::Sys => 2,
    });
    let zero = quote!(<#t as ::tessera::tile::Elem>::from_bits(0));
    let atom = |p: TokenStream, v: TokenStream, c: TokenStream, pred: TokenStream| quote!(::tessera::device::atom::<#t, #op_const, #sem_const, #scope_const>(#p, #v, #c, #pred));
    let bytes = elem.bits().div_ceil(8).max(1);
    let (lane, warp) = (ctx.lane(), ctx.warp());

    if ctx.is_scalar(ptr) {
        let (p, v) = (ctx.name(ptr), ctx.name(value));
        let c = compare.map_or(zero.clone(), |c| {
            let n = ctx.name(c);
            quote!(#n)
        });
        let m = mask.map_or(quote!(true), |m| {
            let n = ctx.name(m);
            quote!(#n)
        });
        let first = quote!(#lane == 0 && #warp == 0);
        let call = atom(quote!(#p), quote!(#v), c, quote!(#m && #first));
        let slot = Literal::u32_unsuffixed(ctx.alloc_shared(bytes, bytes));
        let barrier = ctx.shared_write_barrier();
        return ctx.bind(
            result,
            quote!({
                let __old: #t = unsafe { #call };
                let __base: u32 = ::tessera::device::dynamic_shared_base();
                #barrier
                if #first {
                    unsafe { ::tessera::tile::st_shared_elem::<#t>(__base + #slot, __old) };
                }
                ::tessera::device::sync_threads();
                unsafe { ::tessera::tile::ld_shared_elem::<#t>(__base + #slot) }
            }),
            loc,
        );
    }

    let layout = ctx.layout(ptr, loc)?;
    for v in [Some(value), compare, mask, Some(result)]
        .into_iter()
        .flatten()
    {
        if ctx.layout(v, loc)? != layout {
            return Err(internal(
                loc,
                "atomic operands in another layout than the pointers",
            ));
        }
    }
    let registers = layout.in_size(Label::Register);
    let canonical = canonical_registers(&layout);
    let owner = ctx.owner(&layout);
    let (p, x, c, m, old) = (
        ctx.fresh("p"),
        ctx.fresh("x"),
        ctx.fresh("c"),
        ctx.fresh("m"),
        ctx.fresh("old"),
    );
    let mut body = bind_registers(
        ctx,
        [
            (Some(ptr), &p),
            (Some(value), &x),
            (compare, &c),
            (mask, &m),
        ],
        loc,
    )?;
    let idx = |r: u32| Literal::usize_unsuffixed(r as usize);
    let registers_lit = Literal::usize_unsuffixed(registers as usize);
    let mut elems = Vec::new();
    for r in 0..registers {
        let k = idx(r);
        let canon = canonical[r as usize];
        if canon != r {
            let ck = idx(canon);
            elems.push(quote!(#old[#ck]));
            continue;
        }
        let cmp = compare.map_or(zero.clone(), |_| quote!(#c[#k]));
        let pred = match mask {
            Some(_) => quote!(#owner && #m[#k]),
            None => quote!(#owner),
        };
        let call = atom(quote!(#p[#k]), quote!(#x[#k]), cmp, pred);
        elems.push(quote!(unsafe { #call }));
    }
    // Canonical registers are computed before the registers that copy them (canonical[r] ≤ r).
    let mut assign = TokenStream::new();
    for (r, e) in elems.iter().enumerate() {
        let k = idx(r as u32);
        assign.extend(quote!(#old[#k] = #e;));
    }
    body.extend(quote!(let mut #old: [#t; #registers_lit] = [#zero; #registers_lit]; #assign));
    let masks = layout.free_variable_masks();
    let free = |label: Label| layout.in_index(label).map_or(0, |i| masks[i]);
    let (lane_free, warp_free) = (free(Label::Lane), free(Label::Warp));
    if lane_free != 0 || warp_free != 0 {
        let threads = 32 * ctx.kernel.num_warps;
        let base_offset = ctx.alloc_shared(threads * registers * bytes, bytes);
        let barrier = ctx.shared_write_barrier();
        let (lf, wf) = (
            Literal::u32_unsuffixed(lane_free),
            Literal::u32_unsuffixed(warp_free),
        );
        let (rl, bl, off) = (
            Literal::u32_unsuffixed(registers),
            Literal::u32_unsuffixed(bytes),
            Literal::u32_unsuffixed(base_offset),
        );
        let mut writes = TokenStream::new();
        let mut reads = TokenStream::new();
        for r in 0..registers {
            let (k, rlit) = (idx(r), Literal::u32_unsuffixed(r));
            if canonical[r as usize] == r {
                writes.extend(quote!(
                    ::tessera::tile::st_shared_elem::<#t>(__at(__me, #rlit), #old[#k]);
                ));
            }
            let from = Literal::u32_unsuffixed(canonical[r as usize]);
            reads.extend(
                quote!(#old[#k] = ::tessera::tile::ld_shared_elem::<#t>(__at(__owner, #from));),
            );
        }
        body.extend(quote! {
            let __base: u32 = ::tessera::device::dynamic_shared_base() + #off;
            let __at = |thread: u32, register: u32| __base + (thread * #rl + register) * #bl;
            let __me: u32 = #warp * 32 + #lane;
            let __owner: u32 = (#warp & !#wf) * 32 + (#lane & !#lf);
            #barrier
            if #owner {
                unsafe { #writes }
            }
            ::tessera::device::sync_threads();
            unsafe { #reads }
        });
    }
    ctx.bind(result, quote!({ #body #old }), loc)
}
