//! Scans along one axis (`cumsum`, `cumprod`): the levels of the stored
//! `tessera_layout::plan::scan::ScanPlan` rendered to tokens. Nothing is planned here.
//!
//! Every register `r` keeps a prefix `p_r` and its block's total `t_r` (both `x_r` at first;
//! `f16`/`bf16`/`f8` in `f32`, rounded once at the end). Level `k` fetches each register's
//! partner total `t'_r` (the element whose axis index differs in bit `k`): from register
//! `r ^ registers` of this thread, by `shfl.sync.bfly` over the level's lane mask (each thread
//! sending register `r ^ registers`), on AMD by a butterfly of the 64-lane wave over the
//! level's wave mask (`tile::wave_bfly`) when the partner is in the other warp of the wave, or
//! through shared memory (every distinct element's total
//! stored in its slot `plan.slot(index)` by the thread that owns it, a barrier, the partner's slot
//! read back). Then, with `upper` = bit `k` of the element's axis index:
//! `t_r ← upper ? t'_r ⊕ t_r : t_r ⊕ t'_r`; forward: `p_r ← upper ? t'_r ⊕ p_r : p_r`;
//! reverse: `p_r ← upper ? p_r : p_r ⊕ t'_r`. The result is `p`, in the operand's layout.

use super::{canonical_registers, internal, register_images, unpack, Ctx};
use crate::ir::{Op, OpKind, ScanKind};
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;
use tessera_layout::plan::scan::{ScanPlan, ScanRoute};
use tessera_layout::Label;

pub fn lower(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let OpKind::Scan {
        kind,
        axis,
        reverse,
        plan: Some(plan),
    } = &op.kind
    else {
        return Err(internal(loc, "a scan without its plan"));
    };
    let (kind, axis, reverse) = (*kind, *axis, *reverse);
    let plan: &ScanPlan = plan;
    let (Some(&x), Some(&result)) = (op.operands.first(), op.results.first()) else {
        return Err(internal(loc, "a scan without its operand or result"));
    };
    let src = ctx.layout(x, loc)?;
    if ctx.layout(result, loc)? != src || plan.axis != axis {
        return Err(internal(
            loc,
            "a scan's result is not in its operand's layout, or its plan is of another axis",
        ));
    }
    let DType::Scalar(elem) = ctx.dtype(x) else {
        return Err(internal(loc, "a scan of pointers"));
    };
    let narrow = matches!(
        elem,
        Scalar::F16 | Scalar::BF16 | Scalar::F8E4M3 | Scalar::F8E5M2
    );
    let acc_scalar = if narrow { Scalar::F32 } else { elem };
    let acc_t = super::scalar_type(acc_scalar);
    let elem_t = super::scalar_type(elem);
    let combine = |a: &TokenStream, b: &TokenStream| match kind {
        ScanKind::Sum => quote!(<#acc_t as ::tessera::tile::Num>::add(#a, #b)),
        ScanKind::Prod => quote!(<#acc_t as ::tessera::tile::Num>::mul(#a, #b)),
    };

    let mut out = TokenStream::new();
    let regs = ctx.regs(x, loc)?;
    let xs = ctx.fresh("scan_x");
    out.extend(quote!(let #xs = #regs;));
    let images = register_images(&src);
    let n = images.len();
    let mut p: Vec<Ident> = Vec::with_capacity(n);
    let mut t: Vec<Ident> = Vec::with_capacity(n);
    for r in 0..n {
        let ri = Literal::usize_unsuffixed(r);
        let value = if narrow {
            quote!(<#elem_t as ::tessera::tile::NarrowFloat>::widen(#xs[#ri]))
        } else {
            quote!(#xs[#ri])
        };
        let (pi, ti) = (ctx.fresh("scan_p"), ctx.fresh("scan_t"));
        out.extend(quote!(let mut #pi: #acc_t = #value; let mut #ti: #acc_t = #pi;));
        p.push(pi);
        t.push(ti);
    }
    let t_axis = ctx.thread_coord(&src, axis);

    // Shared memory for the levels across warps: one slot per element of the tile, the
    // element at tile index `i` in slot `plan.slot(i)` (the thread's part of it is `key`).
    let shared = plan.levels.iter().any(|l| l.route() == ScanRoute::Shared);
    let mut scratch = None;
    if shared {
        let slot_bytes: u32 = if acc_scalar.bits() > 32 { 8 } else { 4 };
        let elements: u32 = 1 << plan.slot_columns.len();
        let at = ctx.alloc_shared(elements * slot_bytes, 8);
        let mut thread_part = Vec::new();
        for (label, var) in [(Label::Lane, ctx.lane()), (Label::Warp, ctx.warp())] {
            for k in 0..src.in_bits(label) {
                let slot = plan.slot(src.apply_packed(&hardware_unit(label, k)));
                if slot != 0 {
                    let (k, slot) = (Literal::u32_unsuffixed(k), Literal::u64_unsuffixed(slot));
                    thread_part.push(quote!((((#var >> #k) & 1) * (#slot as u32))));
                }
            }
        }
        let (key, base) = (ctx.fresh("scan_key"), ctx.fresh("scan_smem"));
        out.extend(quote! {
            let #key: u32 = 0u32 #(^ #thread_part)*;
            let #base: u32 = ::tessera::device::dynamic_shared_base()
                + #at;
        });
        scratch = Some((key, base, Literal::u32_unsuffixed(slot_bytes)));
    }
    let canonical = canonical_registers(&src);
    let owner = if shared {
        ctx.owner(&src)
    } else {
        quote!(true)
    };

    for level in &plan.levels {
        let k = Literal::u32_unsuffixed(level.axis_bit);
        let partner: Vec<Ident> = (0..n).map(|_| ctx.fresh("scan_tp")).collect();
        match level.route() {
            ScanRoute::Registers | ScanRoute::Shuffle | ScanRoute::WaveShuffle => {
                let (mask, wave_mask) = (
                    Literal::u32_unsuffixed(level.lanes),
                    Literal::u32_unsuffixed(level.wave_mask()),
                );
                for r in 0..n {
                    let from = &t[r ^ level.registers as usize];
                    let value = match level.route() {
                        ScanRoute::Shuffle => quote!(::tessera::tile::shfl_bfly(#from, #mask)),
                        ScanRoute::WaveShuffle => {
                            quote!(::tessera::tile::wave_bfly(#from, #wave_mask))
                        }
                        _ => quote!(#from),
                    };
                    let tp = &partner[r];
                    out.extend(quote!(let #tp: #acc_t = #value;));
                }
            }
            ScanRoute::Shared => {
                let Some((key, base, sb)) = &scratch else {
                    return Err(internal(loc, "a shared scan level without scratch memory"));
                };
                out.extend(ctx.shared_write_barrier());
                let mut writes = TokenStream::new();
                for r in 0..n {
                    if canonical[r] as usize != r {
                        continue;
                    }
                    let img = Literal::u64_unsuffixed(plan.slot(images[r]));
                    let tr = &t[r];
                    writes.extend(quote! {
                        unsafe {
                            ::tessera::tile::st_shared_elem::<#acc_t>(
                                #base + ((#img as u32) ^ #key) * #sb, #tr);
                        }
                    });
                }
                out.extend(quote!(if #owner { #writes }));
                out.extend(quote!(::tessera::device::sync_threads();));
                let flip = plan.slot(1u64 << (src.out_offset(axis) + level.axis_bit));
                for r in 0..n {
                    let img = Literal::u64_unsuffixed(plan.slot(images[r]) ^ flip);
                    let tp = &partner[r];
                    out.extend(quote! {
                        let #tp: #acc_t = unsafe {
                            ::tessera::tile::ld_shared_elem::<#acc_t>(
                                #base + ((#img as u32) ^ #key) * #sb)
                        };
                    });
                }
            }
        }
        for r in 0..n {
            let c = Literal::u32_unsuffixed(unpack(&src, images[r])[axis]);
            let (pr, tr, tp) = (&p[r], &t[r], &partner[r]);
            let upper = quote!((((#c ^ #t_axis) >> #k) & 1) == 1);
            let (pr_q, tr_q, tp_q) = (quote!(#pr), quote!(#tr), quote!(#tp));
            let total_upper = combine(&tp_q, &tr_q);
            let total_lower = combine(&tr_q, &tp_q);
            let prefix = if reverse {
                let add = combine(&pr_q, &tp_q);
                quote!(if #upper { #pr } else { #add })
            } else {
                let add = combine(&tp_q, &pr_q);
                quote!(if #upper { #add } else { #pr })
            };
            out.extend(quote! {
                #pr = #prefix;
                #tr = if #upper { #total_upper } else { #total_lower };
            });
        }
    }
    let elems: Vec<TokenStream> = p
        .iter()
        .map(|pr| {
            if narrow {
                quote!(<#elem_t as ::tessera::tile::NarrowFloat>::narrow(#pr))
            } else {
                quote!(#pr)
            }
        })
        .collect();
    out.extend(ctx.bind(result, quote!([#(#elems),*]), loc)?);
    Ok(out)
}

/// The hardware vector `[register, lane, warp]` with only bit `k` of `label` set.
fn hardware_unit(label: Label, k: u32) -> [u32; 3] {
    let mut unit = [0; 3];
    unit[if label == Label::Lane { 1 } else { 2 }] = 1 << k;
    unit
}
