//! Reductions along one axis: `sum`, `max`, `min`, `argmax`, `argmin`.
//!
//! With `S` the operand's layout and `a` the axis, every basis of `S` is either zero (a copy),
//! *along the axis* (only coordinate `a` non-zero) or *across* it (coordinate `a` zero); other
//! layouts are an internal error (inference converts first). Then, as Triton does:
//!
//! 1. **In-thread**: registers are grouped by their element's coordinates off the axis; each
//!    group is combined in register order (copies skipped). `f16`/`bf16`/`f8` sums, maxima and
//!    minima accumulate in `f32` and round once at the end.
//! 2. **Lanes**: for every lane bit along the axis, `acc = combine(acc, shfl.bfly(acc, bit))`;
//!    afterwards every lane of a butterfly group holds the same value (each step combines two
//!    values commutatively, so even float sums agree bit for bit).
//! 3. **Waves (AMD)**: in a body planned for AMD, when warp bit 0 runs along the axis, one more
//!    butterfly with the other warp of the wave (`tile::wave_bfly` of mask 32, `ds_bpermute` over its 64
//!    lanes); the two warps then hold copies, and warp bit 0 leaves the next step.
//! 4. **Warps**: when warp bits run along the axis, each group's partial goes to shared memory
//!    at slot `(element off the axis) × W + (warp's axis bits)`, written once (lanes and warps that
//!    hold copies skip), then after a barrier every thread combines the `W` partials of its
//!    elements in slot order (the same order everywhere, so copies agree).
//!
//! The result's layout is the operand's with the axis removed (its slice): result register `r`
//! is the group whose element is `D(r)`; a rank-0 result is a scalar in every thread. `argmax`
//! and `argmin` carry `(value, index)` pairs, the index being the axis coordinate, and keep the
//! first index on ties (`::tessera::tile::argmax_combine`).

use super::{internal, register_images, unpack, Ctx};
use crate::ir::{Op, OpKind, ReduceKind};
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;
use tessera_layout::plan::Vendor;
use tessera_layout::{Label, LinearLayout};

pub fn lower(ctx: &mut Ctx, op: &Op) -> Result<TokenStream, syn::Error> {
    let loc = &op.loc;
    let OpKind::Reduce { kind, axis } = op.kind else {
        return Err(internal(loc, "not a reduction"));
    };
    let x = *op
        .operands
        .first()
        .ok_or_else(|| internal(loc, "a reduction without an operand"))?;
    let result = *op
        .results
        .first()
        .ok_or_else(|| internal(loc, "a reduction without a result"))?;
    let src = ctx.layout(x, loc)?;
    let DType::Scalar(elem) = ctx.dtype(x) else {
        return Err(internal(loc, "a reduction of pointers"));
    };
    let is_arg = matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin);
    let narrow = matches!(
        elem,
        Scalar::F16 | Scalar::BF16 | Scalar::F8E4M3 | Scalar::F8E5M2
    );
    // The accumulator's element type.
    let acc_scalar = if narrow && !is_arg { Scalar::F32 } else { elem };
    let acc_t = super::scalar_type(acc_scalar);
    let elem_t = super::scalar_type(elem);

    // Classify the bases.
    let offset_a = src.out_offset(axis);
    let bits_a = src.out_bits(Label::Dim(axis as u8));
    let axis_mask: u64 = ((1u64 << bits_a) - 1) << offset_a;
    let classify = |label: Label| -> Result<(u32, u32), syn::Error> {
        // (bits along the axis, zero bits)
        let mut along = 0u32;
        let mut zero = 0u32;
        for k in 0..src.in_bits(label) as usize {
            let b = src.in_index(label).map_or(0, |i| src.packed_basis(i, k));
            if b == 0 {
                zero |= 1 << k;
            } else if b & !axis_mask == 0 {
                along |= 1 << k;
            } else if b & axis_mask != 0 {
                return Err(internal(
                    loc,
                    &format!(
                        "{label} bit {k} of the reduced tile's layout moves both the axis and \
                         another coordinate; inference should have converted it"
                    ),
                ));
            }
        }
        Ok((along, zero))
    };
    let (_, reg_zero) = classify(Label::Register)?;
    let (lane_along, lane_zero) = classify(Label::Lane)?;
    let (warp_along, warp_zero) = classify(Label::Warp)?;
    let masks = src.free_variable_masks();
    let free = |label: Label| src.in_index(label).map_or(0, |i| masks[i]);
    if free(Label::Register) != reg_zero
        || free(Label::Lane) != lane_zero
        || free(Label::Warp) != warp_zero
    {
        return Err(internal(
            loc,
            "the reduced tile's layout has copies that are not zero bases; inference should have \
             converted it",
        ));
    }

    let mut out = TokenStream::new();
    let regs = ctx.regs(x, loc)?;
    let xs = ctx.fresh("x");
    out.extend(quote!(let #xs = #regs;));
    let t_axis = ctx.thread_coord(&src, axis);

    // 1. In-thread groups, keyed by the packed coordinate off the axis.
    let images = register_images(&src);
    let mut groups: Vec<(u64, Ident, Ident)> = Vec::new(); // (key, acc, index)
    for r in 0..images.len() as u32 {
        if r & reg_zero != 0 {
            continue;
        }
        let img = images[r as usize];
        let key = img & !axis_mask;
        let ri = Literal::usize_unsuffixed(r as usize);
        let value = if narrow && !is_arg {
            quote!(<#elem_t as ::tessera::tile::NarrowFloat>::widen(#xs[#ri]))
        } else {
            quote!(#xs[#ri])
        };
        let c = Literal::u32_unsuffixed(unpack(&src, img)[axis]);
        let index = quote!((#c ^ #t_axis) as i32);
        match groups.iter().find(|g| g.0 == key) {
            None => {
                let (acc, idx) = (ctx.fresh("acc"), ctx.fresh("idx"));
                out.extend(quote!(let mut #acc: #acc_t = #value;));
                if is_arg {
                    out.extend(quote!(let mut #idx: i32 = #index;));
                }
                groups.push((key, acc, idx));
            }
            Some((_, acc, idx)) => {
                out.extend(combine(kind, &acc_t, acc, idx, &value, &index));
            }
        }
    }

    // 2. Lanes along the axis: butterflies.
    for k in 0..src.in_bits(Label::Lane) {
        if lane_along >> k & 1 == 0 {
            continue;
        }
        let bit = Literal::u32_unsuffixed(1 << k);
        let partner = |x: &Ident| quote!(::tessera::tile::shfl_bfly(#x, #bit));
        out.extend(butterfly(ctx, kind, &acc_t, &groups, partner));
    }

    // 3. On AMD, warp bit 0 along the axis: a butterfly across the wave (its two warps).
    let (mut warp_along, mut warp_zero) = (warp_along, warp_zero);
    if ctx.kernel.target.vendor() == Vendor::Amd && warp_along & 1 == 1 {
        let partner = |x: &Ident| quote!(::tessera::tile::wave_bfly(#x, 32));
        out.extend(butterfly(ctx, kind, &acc_t, &groups, partner));
        // The two warps of a wave now hold the same partials: copies.
        warp_along &= !1;
        warp_zero |= 1;
    }

    // 4. Warps along the axis: through shared memory.
    if warp_along != 0 {
        let stage = WarpStage {
            src: &src,
            axis,
            kind,
            acc_t: &acc_t,
            acc_scalar,
            lane_copies: lane_along | lane_zero,
            warp_zero,
            warp_along,
        };
        out.extend(warp_stage(ctx, &stage, &groups, loc)?);
    }

    // The result.
    let finish = |acc: &Ident, idx: &Ident| -> TokenStream {
        if is_arg {
            quote!(#idx)
        } else if narrow {
            quote!(<#elem_t as ::tessera::tile::NarrowFloat>::narrow(#acc))
        } else {
            quote!(#acc)
        }
    };
    if ctx.is_scalar(result) {
        let [(_, acc, idx)] = groups.as_slice() else {
            return Err(internal(loc, "a reduction to a scalar with several groups"));
        };
        let v = finish(acc, idx);
        out.extend(ctx.bind(result, v, loc)?);
        return Ok(quote!(#out));
    }
    let dst = ctx.layout(result, loc)?;
    let lift = |c: &[u32]| -> u64 {
        let mut v = c.to_vec();
        v.insert(axis, 0);
        src.pack(&v)
    };
    for label in [Label::Lane, Label::Warp] {
        for k in 0..dst.in_bits(label) as usize {
            let d = dst
                .basis(label, k)
                .map_or(0, |b| lift(&b[..dst.num_out_dims()]));
            let s = src.in_index(label).map_or(0, |i| src.packed_basis(i, k)) & !axis_mask;
            if d != s {
                return Err(internal(
                    loc,
                    "the reduction's result layout is not the slice of its operand's layout",
                ));
            }
        }
    }
    let mut elems = Vec::new();
    for img in register_images(&dst) {
        let key = lift(&unpack(&dst, img));
        let (_, acc, idx) = groups.iter().find(|g| g.0 == key).ok_or_else(|| {
            internal(
                loc,
                "a register of the reduction's result holds no element of the operand's thread",
            )
        })?;
        elems.push(finish(acc, idx));
    }
    out.extend(ctx.bind(result, quote!([#(#elems),*]), loc)?);
    Ok(out)
}

/// One butterfly step of every group: `acc = combine(acc, partner(acc))` (and its index for
/// arg reductions), `partner(x)` the expression of `x` in the partner thread.
fn butterfly(
    ctx: &mut Ctx,
    kind: ReduceKind,
    acc_t: &TokenStream,
    groups: &[(u64, Ident, Ident)],
    partner: impl Fn(&Ident) -> TokenStream,
) -> TokenStream {
    let mut out = TokenStream::new();
    for (_, acc, idx) in groups {
        let other = partner(acc);
        if matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin) {
            let other_index = partner(idx);
            let (v, i) = (ctx.fresh("v"), ctx.fresh("i"));
            out.extend(quote!(let #v = #other; let #i = #other_index;));
            out.extend(combine(kind, acc_t, acc, idx, &quote!(#v), &quote!(#i)));
        } else {
            out.extend(combine(kind, acc_t, acc, idx, &other, &quote!(0)));
        }
    }
    out
}

/// `acc = combine(acc, value)` (and the index for arg reductions).
fn combine(
    kind: ReduceKind,
    acc_t: &TokenStream,
    acc: &Ident,
    idx: &Ident,
    value: &TokenStream,
    index: &TokenStream,
) -> TokenStream {
    match kind {
        ReduceKind::Sum => quote!(#acc = <#acc_t as ::tessera::tile::Num>::add(#acc, #value);),
        ReduceKind::Max => quote!(#acc = <#acc_t as ::tessera::tile::Num>::max(#acc, #value);),
        ReduceKind::Min => quote!(#acc = <#acc_t as ::tessera::tile::Num>::min(#acc, #value);),
        ReduceKind::Argmax => {
            quote!((#acc, #idx) = ::tessera::tile::argmax_combine((#acc, #idx), (#value, #index));)
        }
        ReduceKind::Argmin => {
            quote!((#acc, #idx) = ::tessera::tile::argmin_combine((#acc, #idx), (#value, #index));)
        }
    }
}

/// What the shared-memory stage needs to know of the reduction.
struct WarpStage<'a> {
    src: &'a LinearLayout,
    axis: usize,
    kind: ReduceKind,
    /// The accumulator's type and element type.
    acc_t: &'a TokenStream,
    acc_scalar: Scalar,
    /// Lane bits whose lanes hold the same partial (copies, or combined by butterflies).
    lane_copies: u32,
    /// Warp bits whose warps hold copies.
    warp_zero: u32,
    /// Warp bits along the axis.
    warp_along: u32,
}

/// The shared-memory stage over the warp bits along the axis (see the module docs).
fn warp_stage(
    ctx: &mut Ctx,
    stage: &WarpStage,
    groups: &[(u64, Ident, Ident)],
    loc: &crate::diag::Loc,
) -> Result<TokenStream, syn::Error> {
    let WarpStage {
        src,
        axis,
        kind,
        acc_t,
        acc_scalar,
        lane_copies,
        warp_zero,
        warp_along,
    } = *stage;
    let is_arg = matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin);
    let rank = src.num_out_dims();
    // Compressed index of an element off the axis: the other dimensions' bits, in order.
    let mut offsets = vec![0u32; rank];
    let mut at = 0;
    for (d, off) in offsets.iter_mut().enumerate() {
        if d != axis {
            *off = at;
            at += src.out_bits(Label::Dim(d as u8));
        }
    }
    let elements_off_axis = 1u64 << at;
    let along_bits: Vec<u32> = (0..32).filter(|k| warp_along >> k & 1 == 1).collect();
    let w = 1u64 << along_bits.len();
    let slots = elements_off_axis * w;
    let slot_bytes: u64 = if acc_scalar.bits() > 32 { 8 } else { 4 };
    let total = slots * slot_bytes;
    if total > u64::from(u32::MAX) {
        return Err(internal(loc, "reduction scratch too large"));
    }
    let values_at = ctx.alloc_shared(total as u32, 8);
    let index_at = if is_arg {
        Some(ctx.alloc_shared((slots * 4) as u32, 4))
    } else {
        None
    };
    let (lane, warp) = (ctx.lane(), ctx.warp());
    let mut thread_part = Vec::new();
    for (d, &off) in offsets.iter().enumerate() {
        if d == axis {
            continue;
        }
        let t = ctx.thread_coord(src, d);
        let off = Literal::u32_unsuffixed(off);
        thread_part.push(quote!((#t << #off)));
    }
    let thread_key = if thread_part.is_empty() {
        quote!(0u32)
    } else {
        quote!(0u32 #(^ #thread_part)*)
    };
    let wx_terms: Vec<TokenStream> = along_bits
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let (k, i) = (
                Literal::u32_unsuffixed(k),
                Literal::u32_unsuffixed(i as u32),
            );
            quote!((((#warp >> #k) & 1) << #i))
        })
        .collect();
    let (key_ident, wx_ident, base_ident, writer_ident) = (
        ctx.fresh("rkey"),
        ctx.fresh("wx"),
        ctx.fresh("smem"),
        ctx.fresh("writer"),
    );
    let (lc, wz) = (
        Literal::u32_unsuffixed(lane_copies),
        Literal::u32_unsuffixed(warp_zero),
    );
    let wl = Literal::u64_unsuffixed(w);
    let sb = Literal::u32_unsuffixed(slot_bytes as u32);
    let mut out = quote! {
        let #key_ident: u32 = #thread_key;
        let #wx_ident: u32 = 0u32 #(| #wx_terms)*;
        let #base_ident: u32 = ::tessera::device::dynamic_shared_base();
        let #writer_ident: bool = (#lane & #lc) == 0 && (#warp & #wz) == 0;
    };
    out.extend(ctx.shared_write_barrier());
    let va = Literal::u32_unsuffixed(values_at);
    let mut reads = TokenStream::new();
    let mut writes = TokenStream::new();
    for (key, acc, idx) in groups {
        let c = unpack(src, *key);
        let mut compressed = 0u64;
        for d in 0..rank {
            if d != axis {
                compressed |= u64::from(c[d]) << offsets[d];
            }
        }
        let ck = Literal::u64_unsuffixed(compressed);
        let slot = ctx.fresh("slot");
        writes.extend(quote! {
            let #slot: u32 = ((#ck ^ #key_ident) * #wl as u32) + #wx_ident;
            if #writer_ident {
                unsafe {
                    ::tessera::tile::st_shared_elem::<#acc_t>(#base_ident + #va + #slot * #sb, #acc);
                }
            }
        });
        let first = quote!(((#ck ^ #key_ident) * #wl as u32));
        let mut read = quote! {
            #acc = unsafe { ::tessera::tile::ld_shared_elem::<#acc_t>(#base_ident + #va + #first * #sb) };
        };
        if let Some(ia) = index_at {
            let ia = Literal::u32_unsuffixed(ia);
            writes.extend(quote! {
                if #writer_ident {
                    unsafe { ::tessera::tile::st_shared_elem::<i32>(#base_ident + #ia + #slot * 4, #idx); }
                }
            });
            read.extend(quote! {
                #idx = unsafe { ::tessera::tile::ld_shared_elem::<i32>(#base_ident + #ia + #first * 4) };
            });
        }
        let (v, i) = (ctx.fresh("v"), ctx.fresh("i"));
        let mut step = quote! {
            let #v: #acc_t = unsafe { ::tessera::tile::ld_shared_elem::<#acc_t>(#base_ident + #va + (#first + __j) * #sb) };
        };
        if let Some(ia) = index_at {
            let ia = Literal::u32_unsuffixed(ia);
            step.extend(quote! {
                let #i: i32 = unsafe { ::tessera::tile::ld_shared_elem::<i32>(#base_ident + #ia + (#first + __j) * 4) };
            });
        }
        step.extend(combine(kind, acc_t, acc, idx, &quote!(#v), &quote!(#i)));
        read.extend(quote! {
            let mut __j: u32 = 1;
            while __j < #wl {
                #step
                __j += 1;
            }
        });
        reads.extend(read);
    }
    out.extend(writes);
    out.extend(quote!(::tessera::device::sync_threads();));
    out.extend(reads);
    Ok(out)
}
