//! `dot(a, b, acc)` in generated code: `mma.sync.aligned` on register fragments.
//!
//! The operands arrive in the layouts layout inference gives a dot: `a` `[M, K]` and `b`
//! `[K, N]` in `dot_operand` layouts of an `nvidia_mma` v2 parent, `acc` in that parent (the
//! conversions into them — through swizzled shared memory read by `ldmatrix` — are ordinary
//! `Convert` ops, lowered by `convert.rs`). Instructions:
//!
//! | operands | instruction | per thread |
//! |---|---|---|
//! | f16 → f32 | `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` | a: 8 × f16 in 4 words, b: 4 in 2, c/d: 4 × f32 |
//! | bf16 → f32 | `… m16n8k16 … .f32.bf16.bf16.f32` | as f16 |
//! | i8 → i32 | `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` | a: 16 × i8 in 4 words, b: 8 in 2, c/d: 4 × i32 |
//! | f8e4m3 / f8e5m2 → f32 | the f16 instruction on elements converted to f16 (exact) | as f16 |
//!
//! **Fragments from layouts.** With `g = lane / 4`, `t = lane % 4`, PTX puts element `i` of the
//! A fragment at row `g + 8·i₁` and K index `κ(i, t)` (f16: `2t + i₀ + 8·i₂`; s8: `4t + i₀₁ +
//! 16·i₃`), B's at K index `κ` and column `g`, and `d_j` at `(g + 8·j₁, 2t + j₀)`. The sum over
//! `κ` is the same for any bijection `σ` of the K coordinates used by both operands, so the
//! lowering reads the K directions off the layouts: the low `κ` bits are the first K-direction
//! registers of `a` (the elements of a 32-bit word), the lane bits 0–1 are `a`'s lanes 0–1 (K
//! directions), the top `κ` bit the next K-direction register; `b` must hold the same K
//! directions at the corresponding places, lanes 2–4 must be the rows 1, 2, 4 (columns for
//! `b`), and warps must tile `a`'s M and `b`'s N exactly as the accumulator's. Every remaining
//! K direction of `a`'s registers is a K step (`b` holds it in registers too); remaining M/N
//! directions of the accumulator's registers are tiles. For each accumulator tile and K step the
//! registers of every fragment element are resolved at expansion time (a linear solve on the
//! register bases), so the generated code is a sequence of `mma` calls on array elements. Any
//! mismatch is an internal error naming the operand.

use super::convert::{emit, index_lit, xor_bits};
use super::{elem_type, internal, scalar_type, Ctx};
use crate::ir::Op;
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, TokenStream};
use quote::{quote, quote_spanned};
use tessera_layout::f2::EchelonBasis;
use tessera_layout::plan::bases;
use tessera_layout::plan::conversion_code::plan_conversion_code;
use tessera_layout::{Label, LinearLayout};

/// Which `mma.sync` a dot uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaKind {
    F16,
    Bf16,
    /// f8 operands converted to f16 (exact), then the f16 instruction.
    F8 {
        e4m3: bool,
    },
    S8,
}

impl MmaKind {
    pub fn of(input: Scalar, acc: Scalar) -> Result<MmaKind, String> {
        match (input, acc) {
            (Scalar::F16, Scalar::F32) => Ok(MmaKind::F16),
            (Scalar::BF16, Scalar::F32) => Ok(MmaKind::Bf16),
            (Scalar::F8E4M3, Scalar::F32) => Ok(MmaKind::F8 { e4m3: true }),
            (Scalar::F8E5M2, Scalar::F32) => Ok(MmaKind::F8 { e4m3: false }),
            (Scalar::I8, Scalar::I32) => Ok(MmaKind::S8),
            (i, a) => Err(format!(
                "no mma.sync for {} operands with a {} accumulator",
                i.name(),
                a.name()
            )),
        }
    }

    /// Bits of one fragment element (f8 travels as f16).
    pub fn fragment_bits(self) -> u32 {
        if self == MmaKind::S8 {
            8
        } else {
            16
        }
    }

    /// Elements of A per thread (8 or 16) and of B (4 or 8).
    fn fragment_elements(self) -> (usize, usize) {
        if self == MmaKind::S8 {
            (16, 8)
        } else {
            (8, 4)
        }
    }
}

/// One `mma`: the operand registers of each fragment element (A, B in fragment order) and the
/// accumulator registers of `d0..d3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MmaStep {
    pub a: Vec<u32>,
    pub b: Vec<u32>,
    pub c: [u32; 4],
}

/// A planned dot: instructions in order (K steps outer, accumulator tiles inner), then
/// `out[dst] = out[src]` for the accumulator's broadcast registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DotPlan {
    pub kind: MmaKind,
    pub steps: Vec<MmaStep>,
    pub duplicates: Vec<(u32, u32)>,
    pub acc_registers: u32,
}

/// Lowers `OpKind::Dot`: `a × b + acc` with the registers of each operand, the result in
/// `dst_layout` (converted from the accumulator's layout when they differ).
#[allow(clippy::too_many_arguments)]
pub fn lower_dot(
    ctx: &mut Ctx,
    op: &Op,
    a: &Ident,
    a_layout: &LinearLayout,
    b: &Ident,
    b_layout: &LinearLayout,
    acc: &Ident,
    acc_layout: &LinearLayout,
    dst_layout: &LinearLayout,
    in_dtype: DType,
    acc_dtype: DType,
) -> Result<(TokenStream, Ident), syn::Error> {
    let (DType::Scalar(input), DType::Scalar(accum)) = (in_dtype, acc_dtype) else {
        return Err(internal(&op.loc, "dot of pointers"));
    };
    let plan = MmaKind::of(input, accum)
        .and_then(|kind| plan_dot(kind, a_layout, b_layout, acc_layout))
        .map_err(|e| internal(&op.loc, &format!("dot: {e}")))?;
    let out = ctx.fresh("dot");
    let code = render_dot(&plan, a, b, acc, input, accum, &out, op.loc.first);
    if dst_layout == acc_layout {
        return Ok((code, out));
    }
    let mut code = code;
    let conversion = plan_conversion_code(acc_layout, dst_layout, acc_dtype.bits())
        .map_err(|e| internal(&op.loc, &format!("dot result conversion: {e}")))?;
    let converted = ctx.fresh("dot");
    code.extend(emit(
        ctx,
        op,
        &conversion.movement,
        &out,
        acc_dtype,
        &converted,
    ));
    Ok((code, converted))
}

/// The `(dim0, dim1)` coordinates of a packed vector of a rank-2 layout.
fn coords(layout: &LinearLayout, v: u64) -> (u32, u32) {
    (layout.coord(v, 0), layout.coord(v, 1))
}

/// Register index (relative to 0) whose image is `target`, by the non-zero register bases.
struct Solver {
    echelon: EchelonBasis,
    bits: Vec<u32>,
}

impl Solver {
    fn new(layout: &LinearLayout) -> Self {
        let mut echelon = EchelonBasis::new();
        let mut bits = Vec::new();
        for (k, v) in bases(layout, Label::Register).into_iter().enumerate() {
            if echelon.insert(v) {
                bits.push(k as u32);
            } else {
                bits.push(u32::MAX);
            }
        }
        Solver { echelon, bits }
    }

    fn solve(&self, target: u64) -> Option<u32> {
        let combo = self.echelon.express(target)?;
        Some(
            self.bits
                .iter()
                .enumerate()
                .filter(|&(j, &k)| combo >> j & 1 == 1 && k != u32::MAX)
                .fold(0, |r, (_, &k)| r | 1 << k),
        )
    }
}

/// The register bit of `layout` whose basis is exactly `target` (the first one), if any.
fn register_with(layout: &LinearLayout, target: u64) -> Option<u32> {
    bases(layout, Label::Register)
        .iter()
        .position(|&v| v == target)
        .map(|k| k as u32)
}

/// Plans the `mma` instructions of `a × b + acc` (see the module docs).
pub(crate) fn plan_dot(
    kind: MmaKind,
    a: &LinearLayout,
    b: &LinearLayout,
    acc: &LinearLayout,
) -> Result<DotPlan, String> {
    for (l, name) in [(a, "a"), (b, "b"), (acc, "the accumulator")] {
        if l.num_out_dims() != 2 || l.in_size(Label::Lane) != 32 {
            return Err(format!(
                "{name} must be a rank-2 tile on 32 lanes (a batched dot is not supported)"
            ));
        }
    }
    // Packing: a and acc are (m, ·), b is (k, n). K vectors are compared as K coordinates.
    let a_k = |v: u64| coords(a, v).1;
    let a_m = |v: u64| coords(a, v).0;
    let b_k = |v: u64| coords(b, v).0;
    let b_n = |v: u64| coords(b, v).1;
    let pure_k_a = |v: u64| a_m(v) == 0 && a_k(v) != 0;
    let pure_k_b = |v: u64| b_n(v) == 0 && b_k(v) != 0;
    let (a_lanes, b_lanes, c_lanes) = (
        bases(a, Label::Lane),
        bases(b, Label::Lane),
        bases(acc, Label::Lane),
    );
    // Lanes: 0–1 K directions shared by a and b; 2–4 rows / columns 1, 2, 4.
    for k in 0..2 {
        if !pure_k_a(a_lanes[k]) || !pure_k_b(b_lanes[k]) || a_k(a_lanes[k]) != b_k(b_lanes[k]) {
            return Err(format!(
                "lane {k} of a and b must be the same K direction (mma fragment), got a {:?} b {:?}",
                coords(a, a_lanes[k]),
                coords(b, b_lanes[k])
            ));
        }
        if coords(acc, c_lanes[k]) != (0, 2 << k) {
            return Err(format!(
                "lane {k} of the accumulator must be column {} (mma fragment)",
                2 << k
            ));
        }
    }
    for k in 2..5 {
        let row = 1u32 << (k - 2);
        if coords(a, a_lanes[k]) != (row, 0)
            || coords(b, b_lanes[k]) != (0, row)
            || coords(acc, c_lanes[k]) != (row, 0)
        {
            return Err(format!(
                "lane {k} must be row {row} of a and the accumulator and column {row} of b"
            ));
        }
    }
    // Warps: the accumulator's M/N tiling, repeated by the operands.
    let (a_warps, b_warps, c_warps) = (
        bases(a, Label::Warp),
        bases(b, Label::Warp),
        bases(acc, Label::Warp),
    );
    if a_warps.len() != c_warps.len() || b_warps.len() != c_warps.len() {
        return Err("a, b and the accumulator use different numbers of warps".into());
    }
    for w in 0..c_warps.len() {
        let (m, n) = coords(acc, c_warps[w]);
        if coords(a, a_warps[w]) != (m, 0) || coords(b, b_warps[w]) != (0, n) {
            return Err(format!(
                "warp {w} covers accumulator ({m}, {n}) but a {:?} and b {:?}",
                coords(a, a_warps[w]),
                coords(b, b_warps[w])
            ));
        }
    }
    // K directions held in registers, in register order.
    let a_regs = bases(a, Label::Register);
    let b_regs = bases(b, Label::Register);
    let a_kdirs: Vec<u32> = a_regs
        .iter()
        .filter(|&&v| pure_k_a(v))
        .map(|&v| a_k(v))
        .collect();
    let mut b_kdirs: Vec<u32> = b_regs
        .iter()
        .filter(|&&v| pure_k_b(v))
        .map(|&v| b_k(v))
        .collect();
    let mut sorted_a = a_kdirs.clone();
    sorted_a.sort_unstable();
    sorted_a.dedup();
    b_kdirs.sort_unstable();
    b_kdirs.dedup();
    if sorted_a != b_kdirs {
        return Err(format!(
            "a and b hold different K directions in registers ({sorted_a:?} vs {b_kdirs:?})"
        ));
    }
    let low_bits = (32 / kind.fragment_bits()).trailing_zeros() as usize;
    if a_kdirs.len() < low_bits + 1 {
        return Err("a holds too few K directions in registers for one mma".into());
    }
    let k_low = &a_kdirs[..low_bits];
    let k_high = a_kdirs[low_bits];
    let k_steps = &a_kdirs[low_bits + 1..];
    let a_at = |m: u32, k: u32| a.pack(&[m, k]);
    let b_at = |k: u32, n: u32| b.pack(&[k, n]);
    let find_a = |m: u32, k: u32| {
        register_with(a, a_at(m, k)).ok_or_else(|| format!("a has no register for ({m}, {k})"))
    };
    let find_b = |k: u32, n: u32| {
        register_with(b, b_at(k, n)).ok_or_else(|| format!("b has no register for ({k}, {n})"))
    };
    // Registers of the fragment bits: element-index bit i → register bit.
    let a_low: Vec<u32> = k_low
        .iter()
        .map(|&k| find_a(0, k))
        .collect::<Result<_, _>>()?;
    let b_low: Vec<u32> = k_low
        .iter()
        .map(|&k| find_b(k, 0))
        .collect::<Result<_, _>>()?;
    let a_row8 = find_a(8, 0)?;
    let a_high = find_a(0, k_high)?;
    let b_high = find_b(k_high, 0)?;
    let c_col1 = register_with(acc, acc.pack(&[0, 1]))
        .ok_or("the accumulator has no register for column 1")?;
    let c_row8 =
        register_with(acc, acc.pack(&[8, 0])).ok_or("the accumulator has no register for row 8")?;
    // A fragment element i: bits (low.., row8, high); B: (low.., high).
    let mut a_frag_bits = a_low.clone();
    a_frag_bits.extend([a_row8, a_high]);
    let mut b_frag_bits = b_low.clone();
    b_frag_bits.push(b_high);
    let (a_elems, b_elems) = kind.fragment_elements();
    debug_assert_eq!(1 << a_frag_bits.len(), a_elems);
    debug_assert_eq!(1 << b_frag_bits.len(), b_elems);
    let element = |bits: &[u32], base: u32, i: usize| -> u32 {
        xor_bits(&bits.iter().map(|&b| 1 << b).collect::<Vec<_>>(), i as u32) ^ base
    };
    // Accumulator tiles: registers with the fragment bits clear, broadcast registers skipped.
    let zeros = acc.zero_bases_mask(Label::Register);
    let fragment_mask = 1 << c_col1 | 1 << c_row8;
    let tiles: Vec<u32> = (0..acc.in_size(Label::Register))
        .filter(|r| r & (fragment_mask | zeros) == 0)
        .collect();
    let c_regs = bases(acc, Label::Register);
    let (a_solver, b_solver) = (Solver::new(a), Solver::new(b));
    let mut steps = Vec::new();
    for step in 0..1u32 << k_steps.len() {
        let kt = xor_bits(k_steps, step);
        for &tile in &tiles {
            let image = c_regs
                .iter()
                .enumerate()
                .filter(|&(j, _)| tile >> j & 1 == 1)
                .fold(0u64, |acc_v, (_, &v)| acc_v ^ v);
            let (m0, n0) = coords(acc, image);
            let a_base = a_solver
                .solve(a_at(m0, kt))
                .ok_or_else(|| format!("a holds no register for rows {m0}.., K {kt}.."))?;
            let b_base = b_solver
                .solve(b_at(kt, n0))
                .ok_or_else(|| format!("b holds no register for K {kt}.., columns {n0}.."))?;
            steps.push(MmaStep {
                a: (0..a_elems)
                    .map(|i| element(&a_frag_bits, a_base, i))
                    .collect(),
                b: (0..b_elems)
                    .map(|i| element(&b_frag_bits, b_base, i))
                    .collect(),
                c: [
                    tile,
                    tile | 1 << c_col1,
                    tile | 1 << c_row8,
                    tile | 1 << c_col1 | 1 << c_row8,
                ],
            });
        }
    }
    let duplicates = (0..acc.in_size(Label::Register))
        .filter(|r| r & zeros != 0)
        .map(|r| (r, r & !zeros))
        .collect();
    Ok(DotPlan {
        kind,
        steps,
        duplicates,
        acc_registers: acc.in_size(Label::Register),
    })
}

/// `let out: [C; R] = { … mma calls … };`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn render_dot(
    plan: &DotPlan,
    a: &Ident,
    b: &Ident,
    acc: &Ident,
    input: Scalar,
    accum: Scalar,
    out: &Ident,
    span: proc_macro2::Span,
) -> TokenStream {
    let acc_ty = scalar_type(accum);
    let n = index_lit(plan.acc_registers);
    let (frag_ty, convert): (TokenStream, Option<TokenStream>) = match plan.kind {
        MmaKind::F8 { .. } => {
            let f8 = elem_type(DType::Scalar(input));
            (
                quote!(::tessera::f16),
                Some(
                    quote!(|x: #f8| <::tessera::f16 as ::tessera::tile::NarrowFloat>::narrow(
                    <#f8 as ::tessera::tile::NarrowFloat>::widen(x))),
                ),
            )
        }
        _ => (elem_type(DType::Scalar(input)), None),
    };
    let per_word = 32 / plan.kind.fragment_bits();
    let element = |array: &Ident, r: u32| {
        let r = index_lit(r);
        match &convert {
            Some(f) => quote!((#f)(#array[#r])),
            None => quote!(#array[#r]),
        }
    };
    let words = |array: &Ident, regs: &[u32]| -> Vec<TokenStream> {
        let n = index_lit(per_word);
        regs.chunks(per_word as usize)
            .map(|chunk| {
                let elements = chunk.iter().map(|&r| element(array, r));
                quote!(::tessera::tile_move::pack_words::<#frag_ty, #n, 1>([#(#elements),*])[0])
            })
            .collect()
    };
    let instruction = match plan.kind {
        MmaKind::F16 | MmaKind::F8 { .. } => quote!(mma_m16n8k16_f16_f32),
        MmaKind::Bf16 => quote!(mma_m16n8k16_bf16_f32),
        MmaKind::S8 => quote!(mma_m16n8k32_s8_s32),
    };
    let calls = plan.steps.iter().map(|s| {
        let aw = words(a, &s.a);
        let bw = words(b, &s.b);
        let c: Vec<_> = s.c.iter().map(|&r| index_lit(r)).collect();
        let j: Vec<_> = (0..4u32).map(index_lit).collect();
        let call = quote_spanned!(span=> ::tessera::device::#instruction(
            [#(#aw),*], [#(#bw),*], [#(__tessera_out[#c]),*]));
        quote! {{
            let __tessera_d: [#acc_ty; 4] = #call;
            #(__tessera_out[#c] = __tessera_d[#j];)*
        }}
    });
    let dups = plan.duplicates.iter().map(|&(d, s)| {
        let (d, s) = (index_lit(d), index_lit(s));
        quote!(__tessera_out[#d] = __tessera_out[#s];)
    });
    quote! {
        let #out: [#acc_ty; #n] = {
            #[allow(unused_mut)]
            let mut __tessera_out: [#acc_ty; #n] = #acc;
            #(#calls)*
            #(#dups)*
            __tessera_out
        };
    }
}

#[cfg(test)]
#[path = "dot_tests.rs"]
mod tests;
