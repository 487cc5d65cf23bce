//! Shape ops as register maps: `expand_dims`, `broadcast`, `reshape`, `trans`, `join`, `split`.
//!
//! Each op is a linear map `f` from the result's logical coordinates to the operand's (over F₂,
//! since every size is a power of two: dropping or zeroing a coordinate, permuting coordinates,
//! re-splitting the row-major index's bits). Layout inference gives the result a layout `D` for
//! which every thread already holds what it needs: `f(D(0, lane, warp)) = S(0, lane, warp)` for
//! the operand's layout `S` (checked on every lane and warp basis), so result register `r` is
//! operand register `r'` with `S(r', 0, 0) = f(D(r, 0, 0))`, found at expansion time. The op is
//! then a renaming of registers: no instruction. A pair of layouts without this property is an
//! internal error (inference inserts a conversion instead).

use super::{internal, register_images, unpack, Ctx};
use crate::diag::Loc;
use crate::ir::{Op, OpKind, ValueId};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;
use std::collections::HashMap;
use tessera_layout::{Label, LinearLayout};

pub fn lower(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let get = |list: &[ValueId], i: usize| -> Result<ValueId, syn::Error> {
        list.get(i)
            .copied()
            .ok_or_else(|| internal(loc, &format!("`{}` lacks a value", op.kind.name())))
    };
    let x = get(&op.operands, 0)?;
    let src_shape = ctx.kernel.ty(x).shape.clone();
    match &op.kind {
        OpKind::ExpandDims { axis } => {
            let axis = *axis;
            unary_map(ctx, op, x, get(&op.results, 0)?, move |c: &[u32]| {
                let mut s = c.to_vec();
                s.remove(axis);
                s
            })
        }
        OpKind::Broadcast => {
            let shape = src_shape.clone();
            unary_map(ctx, op, x, get(&op.results, 0)?, move |c: &[u32]| {
                c.iter()
                    .zip(&shape)
                    .map(|(&v, &n)| if n == 1 { 0 } else { v })
                    .collect()
            })
        }
        OpKind::Reshape => {
            let result = get(&op.results, 0)?;
            let dst_shape = ctx.kernel.ty(result).shape.clone();
            let src = src_shape.clone();
            unary_map(ctx, op, x, result, move |c: &[u32]| {
                from_linear(to_linear(c, &dst_shape), &src)
            })
        }
        OpKind::Trans { perm } => {
            let perm = perm.clone();
            unary_map(ctx, op, x, get(&op.results, 0)?, move |c: &[u32]| {
                let mut s = vec![0u32; c.len()];
                for (i, &p) in perm.iter().enumerate() {
                    s[p] = c[i];
                }
                s
            })
        }
        OpKind::Join => lower_join(ctx, op, x, get(&op.operands, 1)?, get(&op.results, 0)?),
        OpKind::Split => lower_split(ctx, op, x, get(&op.results, 0)?, get(&op.results, 1)?),
        other => Err(internal(
            loc,
            &format!("`{}` is not a shape op", other.name()),
        )),
    }
}

/// Row-major linear index of coordinates `c` in `shape`.
fn to_linear(c: &[u32], shape: &[u64]) -> u64 {
    c.iter()
        .zip(shape)
        .fold(0u64, |acc, (&v, &n)| acc * n + v as u64)
}

/// Coordinates of row-major linear index `i` in `shape`.
fn from_linear(mut i: u64, shape: &[u64]) -> Vec<u32> {
    let mut c = vec![0u32; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = (i % shape[d]) as u32;
        i /= shape[d];
    }
    c
}

/// For each register of `dst`, the register of `src` holding `f(dst element)` in the same
/// thread, where `thread` (`f` without its constant term, as lane and warp bases are linear)
/// takes each lane and warp basis of `dst` to `src`'s; `Err` says why the thread parts differ
/// or an element is missing.
pub fn register_map(
    dst: &LinearLayout,
    src: &LinearLayout,
    thread: &dyn Fn(&[u32]) -> Vec<u32>,
    f: &dyn Fn(&[u32]) -> Vec<u32>,
) -> Result<Vec<u32>, String> {
    for label in [Label::Lane, Label::Warp] {
        for k in 0..dst.in_bits(label) as usize {
            let d = dst
                .basis(label, k)
                .map(|b| b[..dst.num_out_dims()].to_vec());
            let s = src
                .basis(label, k)
                .map(|b| b[..src.num_out_dims()].to_vec());
            let (Some(d), Some(s)) = (d, s) else {
                return Err(format!("the layouts have different {label} sizes"));
            };
            let image = thread(&d);
            if image != s {
                return Err(format!(
                    "{label} bit {k} holds {d:?} in the result, which comes from {image:?}, but the \
                     operand's {label} bit {k} holds {s:?}"
                ));
            }
        }
    }
    let mut src_registers: HashMap<u64, u32> = HashMap::new();
    for (r, img) in register_images(src).into_iter().enumerate() {
        src_registers.entry(img).or_insert(r as u32);
    }
    register_images(dst)
        .into_iter()
        .map(|img| {
            let c = unpack(dst, img);
            let s = f(&c);
            let packed = src.pack(&s);
            src_registers.get(&packed).copied().ok_or_else(|| {
                format!(
                    "the result element {c:?} comes from {s:?}, which the operand's thread does \
                     not hold in a register"
                )
            })
        })
        .collect()
}

fn not_renaming(loc: &Loc, op: &Op, why: &str) -> syn::Error {
    internal(
        loc,
        &format!(
            "`{}` is not a register renaming for the inferred layouts ({why}); inference should \
             have inserted a conversion",
            op.kind.name()
        ),
    )
}

fn unary_map(
    ctx: &mut Ctx,
    op: &Op,
    x: ValueId,
    result: ValueId,
    f: impl Fn(&[u32]) -> Vec<u32>,
) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let src = ctx.layout(x, loc)?;
    let dst = ctx.layout(result, loc)?;
    let map = register_map(&dst, &src, &f, &f).map_err(|why| not_renaming(loc, op, &why))?;
    let regs = ctx.regs(x, loc)?;
    let s = ctx.fresh("src");
    let elems = registers_at(&s, &map);
    ctx.bind(result, quote!({ let #s = #regs; [#(#elems),*] }), loc)
}

/// `join(a, b)`: result `[S…, 2]`; the new last coordinate picks the operand, and must be a
/// register coordinate of the result (no lane or warp basis moves it).
fn lower_join(
    ctx: &mut Ctx,
    op: &Op,
    a: ValueId,
    b: ValueId,
    result: ValueId,
) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let (la, lb, dst) = (
        ctx.layout(a, loc)?,
        ctx.layout(b, loc)?,
        ctx.layout(result, loc)?,
    );
    if la != lb {
        return Err(not_renaming(
            loc,
            op,
            "the two operands have different layouts",
        ));
    }
    let n = dst.num_out_dims() - 1;
    let drop_last = |c: &[u32]| c[..n].to_vec();
    // The lane/warp check of `register_map` on the projection also requires the thread parts to
    // have last coordinate 0 (else the projection would lose it).
    for label in [Label::Lane, Label::Warp] {
        for k in 0..dst.in_bits(label) as usize {
            if dst.basis(label, k).is_some_and(|c| c[n] != 0) {
                return Err(not_renaming(
                    loc,
                    op,
                    "a lane or warp bit selects the joined operand",
                ));
            }
        }
    }
    let map = register_map(&dst, &la, &drop_last, &drop_last)
        .map_err(|why| not_renaming(loc, op, &why))?;
    let (ra, rb) = (ctx.regs(a, loc)?, ctx.regs(b, loc)?);
    let (sa, sb) = (ctx.fresh("a"), ctx.fresh("b"));
    let elems = register_images(&dst)
        .into_iter()
        .zip(&map)
        .map(|(img, &r)| {
            let r = Literal::usize_unsuffixed(r as usize);
            if unpack(&dst, img)[n] == 0 {
                quote!(#sa[#r])
            } else {
                quote!(#sb[#r])
            }
        })
        .collect::<Vec<_>>();
    ctx.bind(
        result,
        quote!({ let #sa = #ra; let #sb = #rb; [#(#elems),*] }),
        loc,
    )
}

/// `split(x)`: `x` is `[S…, 2]`; result `i` holds the elements with last coordinate `i`.
fn lower_split(
    ctx: &mut Ctx,
    op: &Op,
    x: ValueId,
    first: ValueId,
    second: ValueId,
) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let src = ctx.layout(x, loc)?;
    let mut out = TokenStream::new();
    let regs = ctx.regs(x, loc)?;
    let s = ctx.fresh("src");
    out.extend(quote!(let #s = #regs;));
    for (which, result) in [(0u32, first), (1u32, second)] {
        let dst = ctx.layout(result, loc)?;
        // The result's coordinates with `which` appended; a lane/warp basis is linear (no
        // constant term), so its lift has last coordinate 0.
        let lift = |last: u32| {
            move |c: &[u32]| {
                let mut v = c.to_vec();
                v.push(last);
                v
            }
        };
        let map = register_map(&dst, &src, &lift(0), &lift(which))
            .map_err(|why| not_renaming(loc, op, &why))?;
        let elems = registers_at(&s, &map);
        out.extend(ctx.bind(result, quote!([#(#elems),*]), loc)?);
    }
    Ok(out)
}

/// `array[r]` for each register `r` of `map`.
fn registers_at(array: &Ident, map: &[u32]) -> Vec<TokenStream> {
    map.iter()
        .map(|&r| {
            let r = Literal::usize_unsuffixed(r as usize);
            quote!(#array[#r])
        })
        .collect()
}
