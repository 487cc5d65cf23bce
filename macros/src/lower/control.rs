//! Control flow: `for` and `while` loops with loop-carried values and `if` on scalars.
//!
//! - `for iv in (lower..upper).step_by(step)`: the carried values live in `let mut` locals of
//!   their typed tile type; each iteration binds the region's arguments from them, runs the body
//!   and assigns the yielded values back. The loop runs while `iv < upper`; a step ≤ 0 runs no
//!   iteration, and an `iv + step` that would overflow ends the loop (no wrap-around).
//! - `while cond { … }`: the carried values live in `let mut` locals as for `for`; each
//!   iteration binds the condition region's arguments, evaluates the condition (a scalar, the
//!   same in every thread of the program, so every thread leaves the loop together), leaves the
//!   loop when it is false, else binds the body's arguments, runs the body and assigns the yields.
//! - `if cond { … } else { … }`: a Rust `if` on the scalar (the same in every thread of the
//!   program, so barriers inside are safe) whose branches evaluate to the tuple of their yields.
//!
//! - A loop with a software-pipelining plan (`num_stages`, `crate::infer::pipeline`) with at
//!   least one pipelined load is rendered by `pipeline.rs` from the same pieces.
//!
//! Carried values keep one layout through the loop (inference makes init, argument, yield and
//! result agree, or inserts conversions); a disagreement is an internal error, and rustc would
//! reject it anyway through the typed tiles.

use super::{internal, Ctx};
use crate::ir::{Op, ValueId};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

fn same_type(ctx: &mut Ctx, op: &Op, values: &[ValueId]) -> Result<TokenStream, syn::Error> {
    let mut ty: Option<TokenStream> = None;
    for &v in values {
        let t = ctx.value_type(v, &op.loc)?;
        match &ty {
            None => ty = Some(t),
            Some(prev) if prev.to_string() == t.to_string() => {}
            Some(prev) => {
                return Err(internal(
                    &op.loc,
                    &format!(
                        "a value carried through `{}` changes its type or layout ({prev} vs {t})",
                        op.kind.name()
                    ),
                ))
            }
        }
    }
    ty.ok_or_else(|| internal(&op.loc, "no value"))
}

pub fn lower_for(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let [body] = op.regions.as_slice() else {
        return Err(internal(loc, "a `for` without exactly one region"));
    };
    if op.operands.len() < 3 || body.args.is_empty() {
        return Err(internal(
            loc,
            "a `for` without bounds or induction variable",
        ));
    }
    let (lower, upper, step) = (op.operands[0], op.operands[1], op.operands[2]);
    let inits = &op.operands[3..];
    let carried_args = &body.args[1..];
    if inits.len() != carried_args.len()
        || body.yields.len() != inits.len()
        || op.results.len() != inits.len()
    {
        return Err(internal(
            loc,
            "a `for` whose carried values do not match up",
        ));
    }
    let iv_ty = ctx.value_type(body.args[0], loc)?;
    let (lo, hi, st) = (ctx.name(lower), ctx.name(upper), ctx.name(step));
    let iv_arg = ctx.name(body.args[0]);
    let mut init = TokenStream::new();
    let mut bind_args = TokenStream::new();
    let mut assign = TokenStream::new();
    let mut results = TokenStream::new();
    let mut cells = Vec::new();
    for i in 0..inits.len() {
        let ty = same_type(
            ctx,
            op,
            &[inits[i], carried_args[i], body.yields[i], op.results[i]],
        )?;
        let cell = ctx.fresh("carried");
        cells.push(cell.clone());
        let (iv, arg, y, res) = (
            ctx.name(inits[i]),
            ctx.name(carried_args[i]),
            ctx.name(body.yields[i]),
            ctx.name(op.results[i]),
        );
        init.extend(quote!(let mut #cell: #ty = #iv;));
        bind_args.extend(quote!(let #arg: #ty = #cell;));
        assign.extend(quote!(#cell = #y;));
        results.extend(quote!(let #res: #ty = #cell;));
    }
    let pipeline = crate::infer::pipeline::find(&ctx.facts.pipelines, body.args[0])
        .filter(|p| !p.loads.is_empty())
        .cloned();
    if let Some(plan) = pipeline {
        let parts = super::pipeline::LoopParts {
            init,
            bind_args,
            assign,
            results,
            iv_ty,
            lower: lo,
            upper: hi,
            step: st,
            iv_arg,
            cells,
        };
        return super::pipeline::lower_pipelined_for(ctx, op, &plan, parts);
    }
    let inner = ctx.lower_region(body)?;
    let (cur, end, stride) = (ctx.fresh("iv"), ctx.fresh("end"), ctx.fresh("step"));
    let bounds = render_bounds(&iv_ty, [&cur, &end, &stride], [&lo, &hi, &st]);
    Ok(quote! {
        #init
        {
            #bounds
            if __positive {
                while #cur < #end {
                    let #iv_arg: #iv_ty = #cur;
                    #bind_args
                    #inner
                    #assign
                    match #cur.checked_add(#stride) {
                        ::core::option::Option::Some(next) => #cur = next,
                        ::core::option::Option::None => break,
                    }
                }
            }
        }
        #results
    })
}

/// A `for` loop's bounds, evaluated once: the induction variable `cur` from `lower`, `end` and
/// `stride` (of type `iv_ty`), and `__positive`, whether the loop counts up.
pub(super) fn render_bounds(
    iv_ty: &TokenStream,
    [cur, end, stride]: [&Ident; 3],
    [lower, upper, step]: [&Ident; 3],
) -> TokenStream {
    quote! {
        let mut #cur: #iv_ty = #lower;
        let #end: #iv_ty = #upper;
        let #stride: #iv_ty = #step;
        #[allow(unused_comparisons)]
        let __positive = #stride > 0;
    }
}

pub fn lower_while(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let [cond, body] = op.regions.as_slice() else {
        return Err(internal(
            loc,
            "a `while` without a condition and a body region",
        ));
    };
    let n = op.operands.len();
    if cond.args.len() != n || body.args.len() != n || body.yields.len() != n {
        return Err(internal(
            loc,
            "a `while` whose carried values do not match up",
        ));
    }
    if op.results.len() != n {
        return Err(internal(loc, "a `while` whose results do not match up"));
    }
    let [c] = cond.yields.as_slice() else {
        return Err(internal(loc, "a `while` condition without one value"));
    };
    if !ctx.is_scalar(*c) {
        return Err(internal(loc, "a `while` on a tile"));
    }
    let mut init = TokenStream::new();
    let mut bind_cond = TokenStream::new();
    let mut bind_body = TokenStream::new();
    let mut assign = TokenStream::new();
    let mut results = TokenStream::new();
    for i in 0..n {
        let ty = same_type(
            ctx,
            op,
            &[
                op.operands[i],
                cond.args[i],
                body.args[i],
                body.yields[i],
                op.results[i],
            ],
        )?;
        let cell = ctx.fresh("carried");
        let (iv, ca, ba, y, res) = (
            ctx.name(op.operands[i]),
            ctx.name(cond.args[i]),
            ctx.name(body.args[i]),
            ctx.name(body.yields[i]),
            ctx.name(op.results[i]),
        );
        init.extend(quote!(let mut #cell: #ty = #iv;));
        bind_cond.extend(quote!(let #ca: #ty = #cell;));
        bind_body.extend(quote!(let #ba: #ty = #cell;));
        assign.extend(quote!(#cell = #y;));
        results.extend(quote!(let #res: #ty = #cell;));
    }
    let cond_ops = ctx.lower_region(cond)?;
    let c = ctx.name(*c);
    let body_ops = ctx.lower_region(body)?;
    Ok(quote! {
        #init
        loop {
            #bind_cond
            #cond_ops
            if !#c {
                break;
            }
            #bind_body
            #body_ops
            #assign
        }
        #results
    })
}

pub fn lower_if(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let [then, otherwise] = op.regions.as_slice() else {
        return Err(internal(loc, "an `if` without two regions"));
    };
    let cond = *op
        .operands
        .first()
        .ok_or_else(|| internal(loc, "an `if` without a condition"))?;
    if !ctx.is_scalar(cond) {
        return Err(internal(loc, "an `if` on a tile"));
    }
    let n = op.results.len();
    if then.yields.len() != n || otherwise.yields.len() != n {
        return Err(internal(loc, "an `if` whose branches yield other counts"));
    }
    let mut types = Vec::new();
    for i in 0..n {
        types.push(same_type(
            ctx,
            op,
            &[then.yields[i], otherwise.yields[i], op.results[i]],
        )?);
    }
    let c = ctx.name(cond);
    let then_body = ctx.lower_region(then)?;
    let then_yields: Vec<_> = then.yields.iter().map(|&v| ctx.name(v)).collect();
    let else_body = ctx.lower_region(otherwise)?;
    let else_yields: Vec<_> = otherwise.yields.iter().map(|&v| ctx.name(v)).collect();
    let results: Vec<_> = op.results.iter().map(|&v| ctx.name(v)).collect();
    Ok(quote! {
        let (#(#results,)*): (#(#types,)*) = if #c {
            #then_body
            (#(#then_yields,)*)
        } else {
            #else_body
            (#(#else_yields,)*)
        };
    })
}
