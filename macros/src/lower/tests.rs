//! Lowering unit tests on token streams, with layouts assigned by hand (what inference would
//! give): 1-D blocked layouts, and 2-D ones where a test needs them.

use super::{lower_kernel, Facts};
use crate::expand::{generate, Variant};
use crate::infer::Access;
use crate::ir::{Kernel, LayoutSlot, OpKind, ValueId};
use crate::tests::run;
use crate::tests::sources::{self, tokens};
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use tessera_layout::plan::access::{plan_access, DimFacts};
use tessera_layout::{Label, LinearLayout};

/// The device-call names of `tokens` in order (identifiers after `::tessera::device::`).
pub(super) fn device_calls(tokens: &TokenStream, out: &mut Vec<String>) {
    let tts: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, tt) in tts.iter().enumerate() {
        match tt {
            TokenTree::Group(g) => device_calls(&g.stream(), out),
            TokenTree::Ident(d) if d == "device" => {
                if let Some(TokenTree::Ident(name)) = tts.get(i + 3) {
                    out.push(name.to_string());
                }
            }
            _ => {}
        }
    }
}

/// The body lowered with `inference`'s pipelines and accesses: its device calls, and the body
/// as text.
pub(super) fn lower_with_plans(inference: &crate::infer::Inference) -> (Vec<String>, String) {
    let facts = Facts {
        pipelines: inference.pipelines.clone(),
        accesses: inference.accesses.clone(),
        ..Facts::default()
    };
    let body = lower_kernel(&inference.kernel, &facts).unwrap().body;
    let mut calls = Vec::new();
    device_calls(&body, &mut calls);
    (calls, body.to_string())
}

/// A layout from its bases (coordinates per dimension) onto `shape`.
pub fn layout_from(
    register: &[Vec<u32>],
    lane: &[Vec<u32>],
    warp: &[Vec<u32>],
    shape: &[u64],
) -> LinearLayout {
    let mut l = LinearLayout::empty();
    for (d, &n) in shape.iter().enumerate() {
        l = l.with_out_dim(Label::Dim(d as u8), n as u32).unwrap();
    }
    for (label, list) in [
        (Label::Register, register),
        (Label::Lane, lane),
        (Label::Warp, warp),
    ] {
        l = l.with_in_dim(label).unwrap();
        for b in list {
            l = l.with_basis(label, b).unwrap();
        }
    }
    l
}

/// Blocked 1-D: `per_thread` consecutive elements per thread, then lanes, then warps, then
/// further registers; bits beyond the tile are zero bases.
pub fn blocked_1d(n: u64, per_thread: u64, num_warps: u32) -> LinearLayout {
    let total = n.trailing_zeros();
    let basis = |bit: u32| {
        if bit < total {
            vec![1u32 << bit]
        } else {
            vec![0]
        }
    };
    let spt = per_thread.trailing_zeros();
    let wb = num_warps.trailing_zeros();
    let mut reg: Vec<Vec<u32>> = (0..spt).map(basis).collect();
    let lane: Vec<Vec<u32>> = (spt..spt + 5).map(basis).collect();
    let warp: Vec<Vec<u32>> = (spt + 5..spt + 5 + wb).map(basis).collect();
    for bit in spt + 5 + wb..total {
        reg.push(basis(bit));
    }
    // Zero register bases are not kept (registers hold distinct elements).
    reg.retain(|b| b[0] != 0);
    layout_from(&reg, &lane, &warp, &[n])
}

/// Row-major blocked 2-D: `[1, vec]` per thread, lanes `[32 / lanes_x, lanes_x]`, warps along
/// rows, then registers along columns and rows.
pub fn blocked_2d(shape: [u64; 2], vec: u32, lanes_x: u32, num_warps: u32) -> LinearLayout {
    let (rows, cols) = (shape[0] as u32, shape[1] as u32);
    let mut col_bit = 0u32;
    let mut row_bit = 0u32;
    let mut col = |n: u32| -> Vec<Vec<u32>> {
        (0..n)
            .map(|_| {
                let b = if (1 << col_bit) < cols {
                    vec![0, 1 << col_bit]
                } else {
                    vec![0, 0]
                };
                col_bit += 1;
                b
            })
            .collect()
    };
    let mut reg = col(vec.trailing_zeros());
    let mut lane = col(lanes_x.trailing_zeros());
    let mut row = |n: u32| -> Vec<Vec<u32>> {
        (0..n)
            .map(|_| {
                let b = if (1 << row_bit) < rows {
                    vec![1 << row_bit, 0]
                } else {
                    vec![0, 0]
                };
                row_bit += 1;
                b
            })
            .collect()
    };
    lane.extend(row((32 / lanes_x).trailing_zeros()));
    let warp = row(num_warps.trailing_zeros());
    while (1u32 << col_bit) < cols {
        reg.push(vec![0, 1 << col_bit]);
        col_bit += 1;
    }
    while (1u32 << row_bit) < rows {
        reg.push(vec![1 << row_bit, 0]);
        row_bit += 1;
    }
    reg.retain(|b| b.iter().any(|&c| c != 0));
    layout_from(&reg, &lane, &warp, &shape)
}

/// Gives every 1-D tile `blocked_1d(n, 4)`: what inference does for 1-D kernels.
fn assign_1d(kernel: &mut Kernel) {
    let nw = kernel.num_warps;
    for v in &mut kernel.values {
        if v.ty.is_scalar() {
            v.layout = LayoutSlot::Scalar;
        } else {
            assert_eq!(
                v.ty.rank(),
                1,
                "assign_1d on a tile of rank {}",
                v.ty.rank()
            );
            v.layout = LayoutSlot::Inferred(blocked_1d(v.ty.shape[0], 4, nw));
        }
    }
}

/// Access plans for 1-D kernels where every pointer tile is `base + arange` (16-byte aligned)
/// and nothing is known of masks.
fn contiguous_pointers(kernel: &Kernel) -> Facts {
    let mut facts = Facts::default();
    kernel.walk(&mut |op| {
        let (is_store, mask) = match op.kind {
            OpKind::Load { mask, .. } => (false, mask.then(|| op.operands[1])),
            OpKind::Store { mask } => (true, mask.then(|| op.operands[2])),
            _ => return,
        };
        let pointer = op.operands[0];
        let (ty, slot) = (kernel.ty(pointer), &kernel.value(pointer).layout);
        let (crate::types::DType::Ptr(elem), LayoutSlot::Inferred(layout)) = (ty.dtype, slot)
        else {
            return;
        };
        let dim = DimFacts {
            contiguity: ty.shape[0],
            alignment: 16,
            mask_constancy: mask.map(|_| 1),
        };
        facts.accesses.push(Access {
            is_store,
            pointer,
            mask,
            plan: plan_access(layout, elem.bits(), &[dim], mask.is_some()),
        });
    });
    facts
}

fn kernels(attr: TokenStream, item: TokenStream) -> Vec<Kernel> {
    run(attr, item).unwrap_or_else(|e| panic!("front end errors: {e:?}"))
}

fn vec_add() -> Vec<Kernel> {
    kernels(
        quote!(num_warps = 4, BLOCK = [1024]),
        tokens(sources::VEC_ADD),
    )
}

fn lowered_text(kernel: &mut Kernel, facts: &Facts) -> String {
    assign_1d(kernel);
    lower_kernel(kernel, facts)
        .unwrap_or_else(|e| panic!("lowering failed: {e}"))
        .body
        .to_string()
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn vec_add_loads_128_bits_with_a_scalar_tail() {
    let mut ks = vec_add();
    let k = &mut ks[0];
    let facts = {
        assign_1d(k);
        contiguous_pointers(k)
    };
    let text = lowered_text(k, &facts);
    // 1024 elements over 128 threads: 8 registers = 2 vectors of 4 per tile.
    assert_eq!(count(&text, "load :: < f32 , 4 >"), 4, "{text}");
    assert_eq!(count(&text, "store :: < f32 , 4 >"), 2, "{text}");
    // The mask is not known constant over a vector: per-element fallbacks.
    assert_eq!(count(&text, "load :: < f32 , 1 >"), 16);
    assert_eq!(count(&text, "store :: < f32 , 1 >"), 8);
    // One layout, one marker type with its const check, a module item (every body and variant
    // of the kernel module with that layout shares it).
    assert!(count(&text, "TileLayout_") > 0, "{text}");
    assert_eq!(count(&text, "struct TileLayout"), 0);
    let lowered = crate::lower::lower_kernel(k, &facts).unwrap();
    let items: Vec<String> = lowered.module_items.iter().map(|i| i.to_string()).collect();
    assert_eq!(
        items
            .iter()
            .filter(|i| i.contains("struct TileLayout_"))
            .count(),
        1
    );
    assert_eq!(count(&items.concat(), "assert_tile_layout"), 1);
}

#[test]
fn without_facts_accesses_are_scalar() {
    let mut ks = vec_add();
    let text = lowered_text(&mut ks[0], &Facts::default());
    assert_eq!(count(&text, "load :: < f32 , 4 >"), 0);
    assert_eq!(count(&text, "load :: < f32 , 1 >"), 16);
}

/// Per-dimension facts: pointer contiguity and alignment (bytes), mask constancy.
fn dims(contiguity: &[u64], alignment: &[u64], mask: Option<&[u64]>) -> Vec<DimFacts> {
    (0..contiguity.len())
        .map(|d| DimFacts {
            contiguity: contiguity[d],
            alignment: alignment[d],
            mask_constancy: mask.map(|m| m[d]),
        })
        .collect()
}

#[test]
fn access_plans_follow_layout_and_facts() {
    let l = blocked_1d(1024, 4, 4);
    let facts = dims(&[1024], &[16], None);
    let p = plan_access(&l, 32, &facts, false);
    assert_eq!((p.elements, p.registers.clone()), (4, vec![0, 1]));
    // f16: 8 elements would need 8 consecutive registers; the layout has 4.
    let p = plan_access(&l, 16, &facts, false);
    assert_eq!(p.elements, 4);
    // 8-byte alignment limits f32 vectors to 2.
    assert_eq!(
        plan_access(&l, 32, &dims(&[1024], &[8], None), false).elements,
        2
    );
    // Contiguity 1 (a gather-like pointer tile): scalar.
    assert_eq!(
        plan_access(&l, 32, &dims(&[1], &[16], None), false).elements,
        1
    );
    // A mask constant over 16 elements makes vectors single-predicate.
    assert!(plan_access(&l, 32, &dims(&[1024], &[16], Some(&[16])), true).mask_uniform);
    assert!(!plan_access(&l, 32, &dims(&[1024], &[16], Some(&[1])), true).mask_uniform);
    // A 2-D row-major tile vectorizes along columns only.
    let l2 = blocked_2d([32, 64], 4, 16, 4);
    let p = plan_access(&l2, 32, &dims(&[1, 64], &[16, 16], None), false);
    assert_eq!(p.elements, 4);
    // Contiguous along rows, but each thread's consecutive registers run along columns.
    assert_eq!(
        plan_access(&l2, 32, &dims(&[32, 1], &[16, 16], None), false).elements,
        1
    );
}

fn softmax() -> Vec<Kernel> {
    kernels(
        quote!(num_warps = 4, BLOCK = [256, 1024]),
        tokens(sources::SOFTMAX),
    )
}

#[test]
fn softmax_reduces_through_lanes_then_shared_memory() {
    let mut ks = softmax();
    let k = &mut ks[1];
    assign_1d(k);
    let lowered = lower_kernel(k, &Facts::default()).unwrap();
    let text = lowered.body.to_string();
    // Two reductions, each over 5 lane bits, then 2 warp bits through shared memory.
    assert_eq!(count(&text, "shfl_bfly"), 10, "{text}");
    assert_eq!(count(&text, "st_shared_elem"), 2);
    // One slot per warp (the result is a scalar): 4 × 4 bytes, reused by both reductions.
    assert_eq!(lowered.shared_bytes, 16);
    assert!(text.contains("sync_threads"));
}

#[test]
fn reductions_within_a_warp_need_no_shared_memory() {
    let mut ks = softmax();
    let k = &mut ks[0];
    for v in &mut k.values {
        if !v.ty.is_scalar() {
            // 256 elements: 8 registers × 32 lanes, all in warp 0's lanes; warps hold copies.
            let lane: Vec<Vec<u32>> = (0..5).map(|i| vec![8u32 << i]).collect();
            let reg: Vec<Vec<u32>> = (0..3).map(|i| vec![1u32 << i]).collect();
            let warp = vec![vec![0], vec![0]];
            v.layout = LayoutSlot::Inferred(layout_from(&reg, &lane, &warp, &[256]));
        }
    }
    let lowered = lower_kernel(k, &Facts::default()).unwrap();
    let text = lowered.body.to_string();
    assert_eq!(count(&text, "shfl_bfly"), 10);
    assert_eq!(lowered.shared_bytes, 0);
    // The store is issued by warp 0 only (warps 1-3 hold copies).
    assert!(text.contains("__owner"), "{text}");
}

#[test]
fn shape_ops_rename_registers() {
    let mut ks = kernels(
        quote!(num_warps = 1),
        quote! {
            fn k(out: Ptr<f32>) {
                let r = arange(0, 8);
                let c = arange(0, 32);
                let x = r.expand_dims(1) * 32 + c.expand_dims(0);
                let t = x.trans();
                store(out + t, t.to::<f32>());
            }
        },
    );
    let k = &mut ks[0];
    // [8, 32] row-major: lanes along columns, 8 registers along rows.
    let row_major = layout_from(
        &(0..3).map(|i| vec![1u32 << i, 0]).collect::<Vec<_>>(),
        &(0..5).map(|i| vec![0, 1u32 << i]).collect::<Vec<_>>(),
        &[],
        &[8, 32],
    );
    let transposed = layout_from(
        &(0..3).map(|i| vec![0, 1u32 << i]).collect::<Vec<_>>(),
        &(0..5).map(|i| vec![1u32 << i, 0]).collect::<Vec<_>>(),
        &[],
        &[32, 8],
    );
    let rows = layout_from(
        &(0..3).map(|i| vec![1u32 << i]).collect::<Vec<_>>(),
        &[vec![0], vec![0], vec![0], vec![0], vec![0]],
        &[],
        &[8],
    );
    let cols = layout_from(
        &[],
        &(0..5).map(|i| vec![1u32 << i]).collect::<Vec<_>>(),
        &[],
        &[32],
    );
    let rows_2d = layout_from(
        &(0..3).map(|i| vec![1u32 << i, 0]).collect::<Vec<_>>(),
        &[vec![0, 0], vec![0, 0], vec![0, 0], vec![0, 0], vec![0, 0]],
        &[],
        &[8, 1],
    );
    let cols_2d = layout_from(
        &[],
        &(0..5).map(|i| vec![0, 1u32 << i]).collect::<Vec<_>>(),
        &[],
        &[1, 32],
    );
    for v in &mut k.values {
        v.layout = match v.ty.shape.as_slice() {
            [] => LayoutSlot::Scalar,
            [8] => LayoutSlot::Inferred(rows),
            [32] => LayoutSlot::Inferred(cols),
            [8, 1] => LayoutSlot::Inferred(rows_2d),
            [1, 32] => LayoutSlot::Inferred(cols_2d),
            [8, 32] => LayoutSlot::Inferred(row_major),
            [32, 8] => LayoutSlot::Inferred(transposed),
            other => panic!("unexpected shape {other:?}"),
        };
    }
    let text = lower_kernel(k, &Facts::default()).unwrap().body.to_string();
    assert!(text.contains("__src"), "{text}");
    // A wrong layout for the transpose's result is an internal error, not wrong code.
    for v in &mut k.values {
        if v.ty.shape == [32, 8] {
            v.layout = LayoutSlot::Inferred(layout_from(
                &(0..3).map(|i| vec![1u32 << i, 0]).collect::<Vec<_>>(),
                &[vec![8, 0], vec![16, 0], vec![0, 1], vec![0, 2], vec![0, 4]],
                &[],
                &[32, 8],
            ));
        }
    }
    let err = lower_kernel(k, &Facts::default()).err().expect("an error");
    assert!(err.to_string().contains("not a register renaming"), "{err}");
}

/// Writes the full expansion of kernels with hand-assigned 1-D layouts to
/// `$TESSERA_DUMP_DIR/hand_assigned`
/// (a development aid for compiling the generated code; does nothing without the variable).
#[test]
fn dump_expansions_for_inspection() {
    let Ok(dir) = std::env::var("TESSERA_DUMP_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir).join("hand_assigned");
    std::fs::create_dir_all(&dir).expect("dump directory");
    let prepare = |mut kernel: Kernel| -> Result<Vec<Variant>, syn::Error> {
        assign_1d(&mut kernel);
        let mut facts = contiguous_pointers(&kernel);
        facts.assumptions = kernel
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(kernel.ty(p.value).dtype, crate::types::DType::Ptr(_)))
            .map(|(i, _)| {
                (
                    i,
                    crate::infer::AssumptionKind::PointerAligned { bytes: 16 },
                )
            })
            .collect();
        Ok(vec![Variant {
            kernel,
            facts,
            suffix: "",
            explain: String::new(),
            policy: crate::infer::AlignmentPolicy::Aligned,
        }])
    };
    for (name, attr, item) in [
        (
            "vec_add",
            quote!(num_warps = 4, BLOCK = [1024]),
            tokens(&format!("pub {}", sources::VEC_ADD)),
        ),
        (
            "softmax",
            quote!(num_warps = 4, BLOCK = [256, 1024]),
            tokens(&format!("pub {}", sources::SOFTMAX)),
        ),
    ] {
        let function: syn::ItemFn = syn::parse2(item.clone()).unwrap();
        let ks = kernels(attr, item);
        let tokens = generate(&function, ks, &prepare).unwrap();
        std::fs::write(dir.join(format!("{name}.rs")), tokens.to_string()).expect("write dump");
    }
    let _ = ValueId(0);
}

/// The lowering renders every load and store with the vector width of the plan inference
/// stored (and its explain output reports), on real inferred kernels under both alignment
/// policies.
#[test]
fn access_plans_agree_with_inference() {
    use crate::infer::{infer_with, AlignmentPolicy};
    let mut all = softmax();
    all.extend(vec_add());
    all.extend(kernels(
        quote!(num_warps = 4, BLOCK = [1024]),
        quote! {
            fn ln<const BLOCK: usize>(y: Ptr<f16>, x: Ptr<f16>, w: Ptr<f16>, stride: i32, n: i32) {
                let row = program_id(0);
                let cols = arange(0, BLOCK);
                let mask = cols < n;
                let xv = load(x + row * stride + cols, mask, 0.0).to::<f32>();
                let mean = xv.sum(0) / (n as f32);
                let wv = load(w + cols, mask, 0.0).to::<f32>();
                store(y + row * stride + cols, ((xv - mean) * wv).to::<f16>(), mask);
            }
        },
    ));
    all.extend(kernels(
        quote!(num_warps = 4, BM = 32, BN = 64),
        quote! {
            fn col_sum<const BM: usize, const BN: usize>(out: Ptr<f32>, x: Ptr<f32>, m: i32, n: i32, stride: i32) {
                let cols = program_id(0) * BN + arange(0, BN);
                let rows = arange(0, BM);
                let mut acc = zeros::<f32>([BN]);
                for start in (0..m).step_by(BM) {
                    let r = start + rows;
                    let mask = (r.expand_dims(1) < m) & (cols.expand_dims(0) < n);
                    acc += load(x + r.expand_dims(1) * stride + cols.expand_dims(0), mask, 0.0).sum(0);
                }
                store(out + cols, acc, cols < n);
            }
        },
    ));
    let mut checked = 0;
    for kernel in all {
        for policy in [AlignmentPolicy::Aligned, AlignmentPolicy::Natural] {
            let mut k = kernel.clone();
            let inference = infer_with(&mut k, policy).expect("inference");
            let facts = Facts {
                accesses: inference.accesses.clone(),
                assumptions: Vec::new(),
                param_values: inference.param_values.clone(),
                uniform_registers: inference.uniform_registers.clone(),
                pipelines: inference.pipelines.clone(),
            };
            let text = lower_kernel(&inference.kernel, &facts)
                .unwrap_or_else(|e| panic!("lowering failed: {e}"))
                .body
                .to_string();
            let mut problems = Vec::new();
            inference.kernel.walk(&mut |op| {
                let name = match op.kind {
                    OpKind::Load { .. } => "load",
                    OpKind::Store { .. } => "store",
                    _ => return,
                };
                let ptr = op.operands[0];
                if inference.kernel.ty(ptr).is_scalar() {
                    return;
                }
                let crate::types::DType::Ptr(elem) = inference.kernel.ty(ptr).dtype else {
                    panic!("not a pointer");
                };
                let plan = &inference.access(op).expect("a stored plan").plan;
                let t = super::scalar_type(elem);
                let wide = format!("{name} :: < {t} , {} >", plan.elements);
                if !text.contains(&wide) {
                    problems.push(format!("no `{wide}`"));
                }
                // Wider accesses than planned never appear.
                let wider = format!("{name} :: < {t} , {} >", plan.elements * 2);
                if text.contains(&wider) {
                    problems.push(format!("a `{wider}`"));
                }
                checked += 1;
            });
            assert!(
                problems.is_empty(),
                "{} {policy:?}: {problems:?}\n{}",
                kernel.name,
                inference.kernel
            );
        }
    }
    assert!(checked >= 20, "{checked}");
}
