//! Pointer arithmetic and global-memory access.
//!
//! - `AddPtr`: per register `ptr.offset(off as isize)` (elements, wrapping as `pointer::
//!   wrapping_offset`).
//! - `Load`/`Store`: vectorized as the op's access plan says (made once by layout inference,
//!   `crate::infer::access`, and stored in [`super::Facts`]): `2^k` registers form one access of
//!   up to 128 bits (`::tessera::tile::load::<T, V>` →
//!   `ld.global.v4.b32` etc.; sub-word vectors are packed into 32-bit words, narrower ones use
//!   `u8`/`u16` accesses). When the mask is not proven constant over a vector, the vector access
//!   runs where all its elements are enabled and per-element predicated accesses otherwise.
//!   Registers that duplicate others are loaded once and copied; stores skip duplicate
//!   registers and, by a per-thread predicate, lanes and warps that hold copies
//!   (`tessera_layout::plan::broadcast` owners), so every element is stored once.

use super::{canonical_registers, internal, Ctx};
use crate::diag::Loc;
use crate::ir::{Op, OpKind, ValueId};
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;
use tessera_layout::plan::access::{AccessPlan, DimFacts};
use tessera_layout::{Label, LinearLayout};

pub fn lower(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let get = |i: usize| -> Result<ValueId, syn::Error> {
        op.operands
            .get(i)
            .copied()
            .ok_or_else(|| internal(loc, &format!("`{}` lacks operand {i}", op.kind.name())))
    };
    match op.kind {
        OpKind::AddPtr => {
            let (p, off) = (get(0)?, get(1)?);
            let result = *op
                .results
                .first()
                .ok_or_else(|| internal(loc, "addptr without a result"))?;
            if ctx.is_scalar(result) {
                let (pn, on) = (ctx.name(p), ctx.name(off));
                return ctx.bind(result, quote!(#pn.offset(#on as isize)), loc);
            }
            let layout = ctx.layout(result, loc)?;
            for v in [p, off] {
                if ctx.layout(v, loc)? != layout {
                    return Err(internal(
                        loc,
                        "addptr operands in another layout than the result",
                    ));
                }
            }
            let (rp, ro) = (ctx.regs(p, loc)?, ctx.regs(off, loc)?);
            let (ps, os) = (ctx.fresh("p"), ctx.fresh("o"));
            let r = layout.in_size(Label::Register) as usize;
            let each = (0..r).map(|k| {
                let k = Literal::usize_unsuffixed(k);
                quote!(#ps[#k].offset(#os[#k] as isize))
            });
            let device = quote!({ let #ps = #rp; let #os = #ro; [#(#each),*] });
            let register = quote!(#ps[__k].offset(#os[__k] as isize));
            let value = super::per_register_on_host(device, &[ps, os], &[rp, ro], &register);
            ctx.bind(result, value, loc)
        }
        OpKind::Load { mask, other, .. } => {
            let ptr = get(0)?;
            let mask = if mask { Some(get(1)?) } else { None };
            let other = if other {
                Some(get(1 + usize::from(mask.is_some()))?)
            } else {
                None
            };
            let result = *op
                .results
                .first()
                .ok_or_else(|| internal(loc, "load without a result"))?;
            lower_load(ctx, op, ptr, mask, other, result)
        }
        OpKind::Store { mask } => {
            let (ptr, value) = (get(0)?, get(1)?);
            let mask = if mask { Some(get(2)?) } else { None };
            lower_store(ctx, op, ptr, value, mask)
        }
        _ => Err(internal(loc, "not a memory op")),
    }
}

/// The stored plan of load or store `op` (see the module docs), else scalar accesses.
fn plan_of(ctx: &Ctx, op: &Op, element_bits: u32) -> AccessPlan {
    match crate::infer::access::find(&ctx.facts.accesses, op) {
        Some(access) => access.plan.clone(),
        None => AccessPlan::scalar(
            element_bits,
            DimFacts {
                contiguity: 1,
                alignment: 1,
                mask_constancy: None,
            },
        ),
    }
}

fn lower_load(
    ctx: &mut Ctx,
    op: &Op,
    ptr: ValueId,
    mask: Option<ValueId>,
    other: Option<ValueId>,
    result: ValueId,
) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let (elem, t) = pointee(ctx, ptr, loc, "load from")?;
    if ctx.is_scalar(ptr) {
        let p = ctx.name(ptr);
        let m = scalar_mask(ctx, mask);
        let o = other.map_or(quote!(<#t as ::tessera::tile::Elem>::from_bits(0)), |o| {
            let n = ctx.name(o);
            quote!(#n)
        });
        return ctx.bind(
            result,
            quote!(unsafe { ::tessera::tile::load::<#t, 1>(#p, #m, [#o]) }[0]),
            loc,
        );
    }
    let layout = pointer_layout(ctx, ptr, [mask, other, Some(result)], loc, "load")?;
    let plan = plan_of(ctx, op, elem.bits());
    let registers = layout.in_size(Label::Register);
    let canonical = canonical_registers(&layout);
    let (p, m, o) = (ctx.fresh("p"), ctx.fresh("m"), ctx.fresh("o"));
    let mut body = bind_registers(ctx, [(Some(ptr), &p), (mask, &m), (other, &o)], loc)?;
    let idx = |r: u32| Literal::usize_unsuffixed(r as usize);
    let mask_of = |r: u32| register_or(mask.map(|_| &m), r, quote!(true));
    let other_of = |r: u32| {
        let zero = quote!(<#t as ::tessera::tile::Elem>::from_bits(0));
        register_or(other.map(|_| &o), r, zero)
    };
    // where[r] = (vector variable, position) holding register r after the loads.
    let mut source: Vec<Option<(proc_macro2::Ident, usize)>> = vec![None; registers as usize];
    let v = Literal::usize_unsuffixed(plan.elements as usize);
    for g in plan.vector_starts(registers) {
        let regs = plan.vector_registers(g);
        if regs.iter().all(|&r| canonical[r as usize] != r) {
            continue;
        }
        let w = ctx.fresh("w");
        let p0 = idx(g);
        let others: Vec<TokenStream> = regs.iter().map(|&r| other_of(r)).collect();
        let access = if mask.is_none() || plan.mask_uniform || plan.elements == 1 {
            let pred = mask_of(g);
            quote!(::tessera::tile::load::<#t, #v>(#p[#p0], #pred, [#(#others),*]))
        } else {
            let preds: Vec<TokenStream> = regs.iter().map(|&r| mask_of(r)).collect();
            let singles = regs.iter().map(|&r| {
                let (ri, pr, orr) = (idx(r), mask_of(r), other_of(r));
                quote!(::tessera::tile::load::<#t, 1>(#p[#ri], #pr, [#orr])[0])
            });
            quote!(if #(#preds)&&* {
                ::tessera::tile::load::<#t, #v>(#p[#p0], true, [#(#others),*])
            } else {
                [#(#singles),*]
            })
        };
        body.extend(quote!(let #w: [#t; #v] = unsafe { #access };));
        for (j, &r) in regs.iter().enumerate() {
            source[r as usize] = Some((w.clone(), j));
        }
    }
    let mut elems = Vec::new();
    for r in 0..registers {
        let from = source[r as usize]
            .clone()
            .or_else(|| source[canonical[r as usize] as usize].clone())
            .ok_or_else(|| internal(loc, "a register of a load is not covered by any access"))?;
        let (w, j) = from;
        let j = Literal::usize_unsuffixed(j);
        elems.push(quote!(#w[#j]));
    }
    ctx.bind(result, quote!({ #body [#(#elems),*] }), loc)
}

fn lower_store(
    ctx: &mut Ctx,
    op: &Op,
    ptr: ValueId,
    value: ValueId,
    mask: Option<ValueId>,
) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let (elem, t) = pointee(ctx, ptr, loc, "store to")?;
    if ctx.is_scalar(ptr) {
        // A scalar store: every thread holds the same value; thread 0 of the program writes it.
        let (p, x) = (ctx.name(ptr), ctx.name(value));
        let m = scalar_mask(ctx, mask);
        let (lane, warp) = (ctx.lane(), ctx.warp());
        return Ok(quote! {
            unsafe {
                ::tessera::tile::store::<#t, 1>(#p, #m && #lane == 0 && #warp == 0, [#x]);
            }
        });
    }
    let layout = pointer_layout(ctx, ptr, [mask, Some(value)], loc, "store")?;
    let plan = plan_of(ctx, op, elem.bits());
    let registers = layout.in_size(Label::Register);
    let free_registers = layout.free_variable_mask(Label::Register);
    let owner = ctx.owner(&layout);
    let (p, m, x) = (ctx.fresh("p"), ctx.fresh("m"), ctx.fresh("x"));
    let mut body = bind_registers(ctx, [(Some(ptr), &p), (Some(value), &x), (mask, &m)], loc)?;
    let idx = |r: u32| Literal::usize_unsuffixed(r as usize);
    let mask_of = |r: u32| register_or(mask.map(|_| &m), r, quote!(true));
    let v = Literal::usize_unsuffixed(plan.elements as usize);
    let owner_and = if owner.to_string() == "true" {
        quote!()
    } else {
        quote!(#owner &&)
    };
    for g in plan.vector_starts(registers) {
        let regs = plan.vector_registers(g);
        // Duplicate registers (free register bits set) hold copies: store each element once.
        if regs.iter().any(|&r| r & free_registers != 0) {
            continue;
        }
        let values: Vec<TokenStream> = regs
            .iter()
            .map(|&r| {
                let r = idx(r);
                quote!(#x[#r])
            })
            .collect();
        let p0 = idx(g);
        let access = if mask.is_none() || plan.mask_uniform || plan.elements == 1 {
            let pred = mask_of(g);
            quote!(::tessera::tile::store::<#t, #v>(#p[#p0], #owner_and #pred, [#(#values),*]);)
        } else {
            let preds: Vec<TokenStream> = regs.iter().map(|&r| mask_of(r)).collect();
            let singles = regs.iter().map(|&r| {
                let (ri, pr) = (idx(r), mask_of(r));
                quote!(::tessera::tile::store::<#t, 1>(#p[#ri], #owner_and #pr, [#x[#ri]]);)
            });
            quote! {
                if #(#preds)&&* {
                    ::tessera::tile::store::<#t, #v>(#p[#p0], #owner_and true, [#(#values),*]);
                } else {
                    #(#singles)*
                }
            }
        };
        body.extend(quote!(unsafe { #access }));
    }
    Ok(quote!({ #body }))
}

/// The element type of the pointers `ptr` and its Rust type (`what`: the access, "load from" or
/// "store to", for the internal error).
fn pointee(
    ctx: &Ctx,
    ptr: ValueId,
    loc: &Loc,
    what: &str,
) -> Result<(Scalar, TokenStream), syn::Error> {
    let DType::Ptr(elem) = ctx.dtype(ptr) else {
        return Err(internal(loc, &format!("{what} a non-pointer")));
    };
    Ok((elem, super::scalar_type(elem)))
}

/// The predicate of a scalar access: the mask's name, or `true` without one.
/// `let name = [registers of value];` for each present operand, in order.
pub(super) fn bind_registers<const N: usize>(
    ctx: &mut Ctx,
    operands: [(Option<ValueId>, &Ident); N],
    loc: &Loc,
) -> Result<TokenStream, syn::Error> {
    let mut bound = TokenStream::new();
    for (value, name) in operands {
        if let Some(v) = value {
            let regs = ctx.regs(v, loc)?;
            bound.extend(quote!(let #name = #regs;));
        }
    }
    Ok(bound)
}

fn scalar_mask(ctx: &mut Ctx, mask: Option<ValueId>) -> TokenStream {
    mask.map_or(quote!(true), |m| {
        let n = ctx.name(m);
        quote!(#n)
    })
}

/// The layout of the pointers `ptr`, which the access's other tile operands share (inference
/// makes them agree; `what`: the access, for the internal error).
fn pointer_layout(
    ctx: &Ctx,
    ptr: ValueId,
    operands: impl IntoIterator<Item = Option<ValueId>>,
    loc: &Loc,
    what: &str,
) -> Result<LinearLayout, syn::Error> {
    let layout = ctx.layout(ptr, loc)?;
    for v in operands.into_iter().flatten() {
        if ctx.layout(v, loc)? != layout {
            let message = format!("{what} operands in another layout than the pointers");
            return Err(internal(loc, &message));
        }
    }
    Ok(layout)
}

/// Register `r` of the register array `array` (`array[r]`), or `absent` without one.
fn register_or(array: Option<&Ident>, r: u32, absent: TokenStream) -> TokenStream {
    match array {
        Some(a) => {
            let r = Literal::usize_unsuffixed(r as usize);
            quote!(#a[#r])
        }
        None => absent,
    }
}
