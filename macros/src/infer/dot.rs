//! The instruction of every `dot`: on [`Target::Hopper`] `wgmma.mma_async` where
//! [`wgmma_shape`] gives one (f16/bf16/f8 operands with an f32 accumulator or i8 with an i32
//! one, `num_warps` a multiple of 4, M a multiple of 64, a warpgroup's N 64, 128 or 256), else
//! `mma.sync`; on [`Target::Amdgpu`] `v_mfma` ([`mfma_choice`]: f16/bf16/f8 operands with an
//! f32 accumulator (f8: 8 elements a lane, gfx950's f8 instructions or f16 pairs) or i8 with an
//! i32 one, an even `num_warps`, the 32×32
//! instruction where each wave gets a 32×32 tile, else the 16×16 one:
//! `tessera_layout::plan::mfma::choose_mfma`). [`wgmma_choice`] and
//! [`mfma_choice`] are the places this is decided: the anchors (`solve/terms.rs`) choose the
//! accumulator layout by them, and [`attach_dot_plans`] plans the instructions after the
//! rewrite (the `mfma` read off the accumulator's layout).

use crate::ir::{DotCode, LayoutSlot, OpKind, Region, Target, Value, ValueId};
use crate::types::{DType, Scalar};
use tessera_layout::plan::mfma::{choose_mfma, mfma_instr_of, plan_mfma_dot, MfmaInput, MfmaInstr};
use tessera_layout::plan::mma::plan_dot;
use tessera_layout::plan::wgmma_dot::{plan_wgmma_dot, wgmma_shape, WgmmaInput, WgmmaShape};

/// The `wgmma` of a dot of `a` (`[M, K]`), `b` (`[K, N]`) into `acc` in a body for `target`:
/// `None` on Ampere, else the shape or why there is none (the dot then uses `mma.sync`).
pub(crate) fn wgmma_choice(
    target: Target,
    num_warps: u32,
    values: &[Value],
    [a, b, acc]: [ValueId; 3],
) -> Option<Result<WgmmaShape, String>> {
    if target != Target::Hopper {
        return None;
    }
    let ty = |v: ValueId| &values[v.0 as usize].ty;
    let input = match (ty(a).dtype, ty(acc).dtype) {
        (DType::Scalar(Scalar::F16), DType::Scalar(Scalar::F32)) => WgmmaInput::F16,
        (DType::Scalar(Scalar::BF16), DType::Scalar(Scalar::F32)) => WgmmaInput::Bf16,
        (DType::Scalar(Scalar::F8E4M3), DType::Scalar(Scalar::F32)) => WgmmaInput::E4m3,
        (DType::Scalar(Scalar::F8E5M2), DType::Scalar(Scalar::F32)) => WgmmaInput::E5m2,
        (DType::Scalar(Scalar::I8), DType::Scalar(Scalar::I32)) => WgmmaInput::S8,
        (DType::Scalar(i), DType::Scalar(c)) => {
            return Some(Err(format!(
                "wgmma is planned for f16/bf16/f8e4m3/f8e5m2 → f32 and i8 → i32, not {} → {}",
                i.name(),
                c.name()
            )))
        }
        _ => return Some(Err("a dot of pointers".into())),
    };
    let dims = |v: ValueId| -> Option<[u32; 2]> {
        let s = &ty(v).shape;
        Some([u32::try_from(s[0]).ok()?, u32::try_from(s[1]).ok()?])
    };
    let (Some([m, k]), Some([_, n])) = (dims(a), dims(b)) else {
        return Some(Err("the dot is too large".into()));
    };
    Some(wgmma_shape(input, [m, n, k], num_warps))
}

/// The `v_mfma` of a dot of `a` (`[M, K]`), `b` (`[K, N]`) into `acc` in a body for
/// [`Target::Amdgpu`] and its waves (`[M, N]`): `None` on NVIDIA targets, else the instruction
/// or why there is none (`tessera_layout::plan::mfma::choose_mfma`, which the `tessera-layout
/// mfma` command shows too, on the operands' type); `chained` is the warps a dot in a chain
/// takes (`solve/terms.rs`).
pub(crate) fn mfma_choice(
    target: Target,
    num_warps: u32,
    values: &[Value],
    [a, b, acc]: [ValueId; 3],
    chained: Option<&[u32]>,
) -> Option<Result<(MfmaInstr, [u32; 2]), String>> {
    if target != Target::Amdgpu {
        return None;
    }
    let ty = |v: ValueId| &values[v.0 as usize].ty;
    let input = match mfma_input(ty(a).dtype, ty(acc).dtype) {
        Ok(input) => input,
        Err(e) => return Some(Err(e)),
    };
    let (m, k, n) = (ty(a).shape[0], ty(a).shape[1], ty(b).shape[1]);
    let chained = chained.and_then(|w| Some([*w.first()?, *w.get(1)?]));
    Some(choose_mfma(input, [m, n, k], num_warps, chained).map_err(|e| e.to_string()))
}

/// The `mfma` operand type of a dot of `a` elements into an `acc` accumulator: f16, bf16, f8e4m3
/// or f8e5m2 into f32, i8 into i32, else why not.
fn mfma_input(a: DType, acc: DType) -> Result<MfmaInput, String> {
    match (a, acc) {
        (DType::Scalar(Scalar::F16), DType::Scalar(Scalar::F32)) => Ok(MfmaInput::F16),
        (DType::Scalar(Scalar::BF16), DType::Scalar(Scalar::F32)) => Ok(MfmaInput::Bf16),
        (DType::Scalar(Scalar::F8E4M3), DType::Scalar(Scalar::F32)) => Ok(MfmaInput::F8E4m3),
        (DType::Scalar(Scalar::F8E5M2), DType::Scalar(Scalar::F32)) => Ok(MfmaInput::F8E5m2),
        (DType::Scalar(Scalar::I8), DType::Scalar(Scalar::I32)) => Ok(MfmaInput::I8),
        (DType::Scalar(i), DType::Scalar(c)) => Err(format!(
            "mfma is planned for f16, bf16, f8e4m3 and f8e5m2 operands with an f32 accumulator \
             and i8 with an i32 one, not {} → {}",
            i.name(),
            c.name()
        )),
        _ => Err("a dot of pointers".into()),
    }
}

/// Stores on every dot of `region` its plan for the operands' layouts: `wgmma` where
/// [`wgmma_choice`] gives a shape, else `mma.sync` (with the reason on Hopper).
pub(super) fn attach_dot_plans(
    region: &mut Region,
    values: &[Value],
    target: Target,
    num_warps: u32,
) -> Result<(), syn::Error> {
    for op in &mut region.ops {
        for r in &mut op.regions {
            attach_dot_plans(r, values, target, num_warps)?;
        }
        if !matches!(op.kind, OpKind::Dot { .. }) {
            continue;
        }
        let value = |k: usize| &values[op.operands[k].0 as usize];
        let layout = |k: usize| match &value(k).layout {
            LayoutSlot::Inferred(l) => Some(*l),
            _ => None,
        };
        let (Some(a), Some(b), Some(acc)) = (layout(0), layout(1), layout(2)) else {
            return Err(op
                .loc
                .error("#[tile_kernel] internal error: a dot without layouts"));
        };
        let operands = [op.operands[0], op.operands[1], op.operands[2]];
        if target == Target::Amdgpu {
            let plan = mfma_input(value(0).ty.dtype, value(2).ty.dtype)
                .and_then(|input| {
                    mfma_instr_of(input, &acc)
                        .ok_or_else(|| "the accumulator holds no mfma fragment".to_string())
                })
                .and_then(|instr| plan_mfma_dot(instr, &a, &b, &acc).map_err(|e| e.to_string()))
                .map_err(|e| {
                    op.loc
                        .error(&format!("#[tile_kernel] internal error: mfma dot: {e}"))
                })?;
            op.kind = OpKind::Dot {
                plan: Some(Box::new(DotCode::Mfma(plan))),
            };
            continue;
        }
        let choice = wgmma_choice(target, num_warps, values, operands);
        let code = match choice {
            Some(Ok(shape)) => {
                let planned = plan_wgmma_dot(shape, &a, &b, &acc).map_err(|e| {
                    op.loc
                        .error(&format!("#[tile_kernel] internal error: wgmma dot: {e}"))
                })?;
                DotCode::Wgmma(Box::new(planned))
            }
            fallback => {
                let (DType::Scalar(input), DType::Scalar(accum)) =
                    (value(0).ty.dtype, value(2).ty.dtype)
                else {
                    return Err(op
                        .loc
                        .error("#[tile_kernel] internal error: a dot of pointers"));
                };
                let kind = super::mma_kind(input, accum).ok_or_else(|| {
                    op.loc.error(&format!(
                        "no mma.sync for {} operands with a {} accumulator",
                        input.name(),
                        accum.name()
                    ))
                })?;
                let plan = plan_dot(kind, &a, &b, &acc).map_err(|e| {
                    op.loc
                        .error(&format!("#[tile_kernel] internal error: dot: {e}"))
                })?;
                DotCode::MmaSync {
                    plan,
                    fallback: fallback.and_then(Result::err),
                }
            }
        };
        op.kind = OpKind::Dot {
            plan: Some(Box::new(code)),
        };
    }
    Ok(())
}
