//! Elementwise ops and the ops that make values from nothing.
//!
//! | op | lowering |
//! |---|---|
//! | `Constant` | `<T as Elem>::from_bits(bits)` (narrow floats: `T::from_f32` in a `const`) |
//! | `ProgramId`/`NumPrograms` | `block_idx_{x,y,z}() as i32` / `grid_dim_{x,y,z}() as i32` |
//! | `Arange` | register `r`: `start + (L(r)[0] ^ t0) as i32`, `t0` the thread part |
//! | `Splat` | `[x; R]` |
//! | `Unary`/`Binary`/`Compare`/`Fma` | per register, `::tessera::tile::{Num, Bits, Cmp, FloatMath, Transcendental, MulHi}` |
//! | `Select` | per register `if c { a } else { b }` |
//! | (any of these) | once per group of registers holding equal values (`infer::uniform`) |
//! | `Cast` | Rust `as` between native types; narrow floats through f32 with `::tessera::device` `cvt` |
//!
//! Tile operands and the result must have the same layout (inference inserts conversions
//! otherwise); scalars stay scalars. "Per register" is the device's form (`R` expressions with
//! constant indices, `Splat` listed `R` times); the host's build, which the emulator runs, loops
//! over the registers instead (`lower::per_register_on_host`).

use super::{elem_type, internal, per_register_on_host, scalar_type, Ctx};
use crate::ir::{BinaryOp, CmpOp, ConstValue, Op, OpKind, UnaryOp};
use crate::types::{DType, Scalar};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use tessera_layout::Label;

pub fn lower(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let result = *op
        .results
        .first()
        .ok_or_else(|| internal(loc, "an elementwise op without a result"))?;
    let rdtype = ctx.dtype(result);
    match &op.kind {
        OpKind::Constant(value) => {
            let v = constant(*value, rdtype, loc)?;
            ctx.bind(result, v, loc)
        }
        OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => {
            let f = match (&op.kind, axis) {
                (OpKind::ProgramId { .. }, 0) => quote!(block_idx_x),
                (OpKind::ProgramId { .. }, 1) => quote!(block_idx_y),
                (OpKind::ProgramId { .. }, _) => quote!(block_idx_z),
                (_, 0) => quote!(grid_dim_x),
                (_, 1) => quote!(grid_dim_y),
                _ => quote!(grid_dim_z),
            };
            ctx.bind(result, quote!(::tessera::device::#f() as i32), loc)
        }
        OpKind::Arange { start, .. } => {
            let layout = ctx.layout(result, loc)?;
            let t = ctx.thread_coord(&layout, 0);
            let start = Literal::i64_unsuffixed(*start);
            let regs: Vec<TokenStream> = super::register_images(&layout)
                .iter()
                .map(|&img| {
                    let c = Literal::u32_unsuffixed(super::unpack(&layout, img)[0]);
                    quote!(((#c ^ #t) as i32).wrapping_add(#start))
                })
                .collect();
            ctx.bind(result, quote!([#(#regs),*]), loc)
        }
        OpKind::Splat => {
            let x = operand(ctx, op, 0)?;
            let layout = ctx.layout(result, loc)?;
            let r = layout.in_size(Label::Register) as usize;
            let name = ctx.name(x);
            // Listed for the device, not `[x; R]`: there a repeat expression may become a store
            // loop, which keeps the array in local memory instead of registers. The host's
            // build (the emulator's) takes `[x; R]`.
            let copies = (0..r).map(|_| quote!(#name));
            let value = quote!(::tessera::__device_or_host!({ [#(#copies),*] } { [#name; #r] }));
            ctx.bind(result, value, loc)
        }
        _ => {
            let operands: Vec<_> = op.operands.clone();
            let scalar = ctx.is_scalar(result);
            let dtypes: Vec<DType> = operands.iter().map(|&v| ctx.dtype(v)).collect();
            let params: Vec<_> = (0..operands.len())
                .map(|i| format_ident!("x{}", i))
                .collect();
            let args: Vec<TokenStream> = params.iter().map(|p| quote!(#p)).collect();
            let body = scalar_expr(&op.kind, &dtypes, rdtype, &args, loc)?;
            if scalar {
                for &v in &operands {
                    if !ctx.is_scalar(v) {
                        return Err(internal(loc, "a scalar result of a tile operand"));
                    }
                }
                let values: Vec<TokenStream> = operands
                    .iter()
                    .map(|&v| {
                        let n = ctx.name(v);
                        quote!(#n)
                    })
                    .collect();
                let value = quote!({ #(let #params = #values;)* #body });
                return ctx.bind(result, value, loc);
            }
            let layout = ctx.layout(result, loc)?;
            let mut regs = Vec::new();
            for &v in &operands {
                if ctx.is_scalar(v) {
                    return Err(internal(
                        loc,
                        "a scalar operand of a tile op (the front end makes broadcasts explicit)",
                    ));
                }
                if ctx.layout(v, loc)? != layout {
                    return Err(internal(
                        loc,
                        &format!(
                            "operand {v} of `{}` has another layout than its result (inference \
                             should have inserted a conversion)",
                            op.kind.name()
                        ),
                    ));
                }
                regs.push(ctx.regs(v, loc)?);
            }
            // Unrolled per register (constant indices only), so every array stays in registers.
            let r = layout.in_size(tessera_layout::Label::Register) as usize;
            let locals: Vec<_> = (0..regs.len())
                .map(|i| ctx.fresh(&format!("in{i}_")))
                .collect();
            // Register `__k` of the result, for the host's loop (`per_register_on_host`).
            let register = quote!({ #(let #params = #locals[__k];)* #body });
            // Registers in groups of equal values (`infer::uniform`): one computation per group.
            let group = ctx
                .facts
                .uniform_registers
                .get(&result)
                .map_or(1, |&g| g as usize);
            let firsts: Vec<_> = (0..r)
                .step_by(group)
                .map(|k| ctx.fresh(&format!("g{k}_")))
                .collect();
            let per_group = (0..r).step_by(group).zip(&firsts).map(|(k, first)| {
                let k = Literal::usize_unsuffixed(k);
                quote!(let #first = { #(let #params = #locals[#k];)* #body };)
            });
            // f32 → f16/bf16 in pairs of registers: one `cvt.rn.{f16,bf16}x2.f32` each
            // (`NarrowFloat::narrow_pair`, the same bits as two `narrow`s).
            if let (
                OpKind::Cast {
                    to: to @ (Scalar::F16 | Scalar::BF16),
                },
                [DType::Scalar(Scalar::F32)],
                1,
            ) = (&op.kind, dtypes.as_slice(), group)
            {
                if r.is_multiple_of(2) {
                    let t = scalar_type(*to);
                    let src = &locals[0];
                    let pairs = (0..r).step_by(2).map(|k| {
                        let (lo, hi) = (&firsts[k], &firsts[k + 1]);
                        let (kl, kh) = (Literal::usize_unsuffixed(k), Literal::usize_unsuffixed(k + 1));
                        quote!(let (#lo, #hi) = <#t as ::tessera::tile::NarrowFloat>::narrow_pair(#src[#kl], #src[#kh]);)
                    });
                    let device = quote!({
                        #(let #locals = #regs;)*
                        #(#pairs)*
                        [#(#firsts),*]
                    });
                    let value = per_register_on_host(device, &locals, &regs, &register);
                    return ctx.bind(result, value, loc);
                }
            }
            let per_register = (0..r).map(|k| &firsts[k / group]);
            let device = quote!({
                #(let #locals = #regs;)*
                #(#per_group)*
                [#(#per_register),*]
            });
            let value = per_register_on_host(device, &locals, &regs, &register);
            ctx.bind(result, value, loc)
        }
    }
}

fn operand(ctx: &Ctx, op: &Op, i: usize) -> Result<crate::ir::ValueId, syn::Error> {
    let _ = ctx;
    op.operands
        .get(i)
        .copied()
        .ok_or_else(|| internal(&op.loc, &format!("`{}` lacks operand {i}", op.kind.name())))
}

/// The expression of a constant of element type `dtype`.
pub fn constant(
    value: ConstValue,
    dtype: DType,
    loc: &crate::diag::Loc,
) -> Result<TokenStream, syn::Error> {
    let DType::Scalar(s) = dtype else {
        return Err(internal(loc, "a pointer constant"));
    };
    let t = scalar_type(s);
    let as_f64 = match value {
        ConstValue::Int(v) => v as f64,
        ConstValue::Float(f) => f,
        ConstValue::Bool(b) => b as u8 as f64,
    };
    Ok(match s {
        Scalar::Bool => {
            let b = match value {
                ConstValue::Bool(b) => b,
                ConstValue::Int(v) => v != 0,
                ConstValue::Float(f) => f != 0.0,
            };
            quote!(#b)
        }
        Scalar::F32 => {
            let bits = Literal::u32_suffixed((as_f64 as f32).to_bits());
            quote!(f32::from_bits(#bits))
        }
        Scalar::F64 => {
            let bits = Literal::u64_suffixed(as_f64.to_bits());
            quote!(f64::from_bits(#bits))
        }
        Scalar::F16 | Scalar::BF16 | Scalar::F8E4M3 | Scalar::F8E5M2 => {
            let bits = Literal::u32_suffixed((as_f64 as f32).to_bits());
            quote!({ const C: #t = #t::from_f32(f32::from_bits(#bits)); C })
        }
        int => {
            let v: i128 = match value {
                ConstValue::Int(v) => v,
                ConstValue::Float(f) => f as i128,
                ConstValue::Bool(b) => b as i128,
            };
            let bits = int.bits();
            let pattern = (v as u128) & ((1u128 << bits) - 1);
            let lit = Literal::u64_suffixed(pattern as u64);
            quote!(<#t as ::tessera::tile::Elem>::from_bits(#lit))
        }
    })
}

/// The expression computing one element of an elementwise op from `args` (one per operand, of
/// the operands' element types `dtypes`), of element type `result`.
pub fn scalar_expr(
    kind: &OpKind,
    dtypes: &[DType],
    result: DType,
    args: &[TokenStream],
    loc: &crate::diag::Loc,
) -> Result<TokenStream, syn::Error> {
    let arg = |i: usize| -> Result<&TokenStream, syn::Error> {
        args.get(i)
            .ok_or_else(|| internal(loc, &format!("`{}` lacks operand {i}", kind.name())))
    };
    let t0 = dtypes.first().map(|&d| elem_type(d)).unwrap_or_default();
    let float_only = |what: &str, d: DType| -> Result<(), syn::Error> {
        if d.is_float() {
            Ok(())
        } else {
            Err(internal(loc, &format!("`{what}` on {d}")))
        }
    };
    Ok(match kind {
        OpKind::Unary(u) => {
            let a = arg(0)?;
            let d = dtypes[0];
            match u {
                UnaryOp::Neg => quote!(<#t0 as ::tessera::tile::Num>::neg(#a)),
                UnaryOp::Not => quote!(<#t0 as ::tessera::tile::Bits>::not(#a)),
                UnaryOp::Abs => quote!(<#t0 as ::tessera::tile::Num>::abs(#a)),
                UnaryOp::Sqrt => {
                    float_only("sqrt", d)?;
                    quote!(<#t0 as ::tessera::tile::FloatMath>::sqrt(#a))
                }
                UnaryOp::Rsqrt => {
                    float_only("rsqrt", d)?;
                    quote!(<#t0 as ::tessera::tile::FloatMath>::rsqrt(#a))
                }
                UnaryOp::Exp
                | UnaryOp::Exp2
                | UnaryOp::Log
                | UnaryOp::Log2
                | UnaryOp::Tanh
                | UnaryOp::Erf
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Sigmoid => {
                    let name = format!("{u:?}").to_lowercase();
                    float_only(&name, d)?;
                    if d == DType::Scalar(Scalar::F64) {
                        return Err(loc.error(&format!(
                            "`{name}` of f64 is not supported: the GPU has no f64 instruction \
                             for it; cast to f32 first"
                        )));
                    }
                    let f = format_ident!("{}", name);
                    quote!(<#t0 as ::tessera::tile::Transcendental>::#f(#a))
                }
            }
        }
        OpKind::Binary(b) => {
            let (a, c) = (arg(0)?, arg(1)?);
            // The tile trait's method has the op's IR name (`add`, `shl`, `umulhi`, …).
            let f = format_ident!("{}", format!("{b:?}").to_lowercase());
            let trait_ = match b {
                BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr => {
                    quote!(Bits)
                }
                BinaryOp::Umulhi => quote!(MulHi),
                _ => quote!(Num),
            };
            quote!(<#t0 as ::tessera::tile::#trait_>::#f(#a, #c))
        }
        OpKind::Compare(c) => {
            let (a, b) = (arg(0)?, arg(1)?);
            let f = format_ident!("{}", format!("{c:?}").to_lowercase());
            let _: CmpOp = *c;
            quote!(<#t0 as ::tessera::tile::Cmp>::#f(#a, #b))
        }
        OpKind::Fma => {
            float_only("fma", dtypes[0])?;
            let (a, b, c) = (arg(0)?, arg(1)?, arg(2)?);
            quote!(<#t0 as ::tessera::tile::FloatMath>::fma(#a, #b, #c))
        }
        OpKind::Select => {
            let (c, a, b) = (arg(0)?, arg(1)?, arg(2)?);
            quote!(if #c { #a } else { #b })
        }
        OpKind::Cast { to } => {
            let from = match dtypes[0] {
                DType::Scalar(s) => s,
                DType::Ptr(_) => return Err(internal(loc, "a cast of a pointer")),
            };
            let _ = result;
            cast_expr(from, *to, arg(0)?.clone(), loc)?
        }
        other => {
            return Err(internal(
                loc,
                &format!("`{}` is not elementwise", other.name()),
            ))
        }
    })
}

fn is_narrow(s: Scalar) -> bool {
    matches!(
        s,
        Scalar::F16 | Scalar::BF16 | Scalar::F8E4M3 | Scalar::F8E5M2
    )
}

/// Rust `as` semantics from `from` to `to` (float → int saturates, NaN → 0). Narrow floats go
/// through f32 (`cvt`: exact widening, round-to-nearest-even narrowing; f8 saturates to its
/// largest finite value); f64 or 64-bit integers to a narrow float round twice (to f32 first).
pub fn cast_expr(
    from: Scalar,
    to: Scalar,
    x: TokenStream,
    loc: &crate::diag::Loc,
) -> Result<TokenStream, syn::Error> {
    if from == to {
        return Ok(x);
    }
    if to == Scalar::Bool {
        return Err(internal(loc, "a cast to bool"));
    }
    if is_narrow(from) {
        let t = scalar_type(from);
        let wide = quote!(<#t as ::tessera::tile::NarrowFloat>::widen(#x));
        return cast_expr(Scalar::F32, to, wide, loc);
    }
    if is_narrow(to) {
        let t = scalar_type(to);
        let f = cast_expr(from, Scalar::F32, x, loc)?;
        return Ok(quote!(<#t as ::tessera::tile::NarrowFloat>::narrow(#f)));
    }
    let t = scalar_type(to);
    Ok(if from == Scalar::Bool && to.is_float() {
        quote!((#x as u8 as #t))
    } else {
        quote!((#x as #t))
    })
}
