//! Tests of layout inference on whole kernels (token streams through the front end): explain
//! snapshots of five kernels with the properties each must show, and the validity and
//! consistency of every layout of every example kernel.

use super::layouts::{
    broadcast_backward, join_backward, join_forward, normalize, reduce_forward, reshape, trans,
};
use super::*;
use crate::ir::Region;
use crate::tests::kernel_corpus::kernel_sources;
use crate::tests::{ok, ops_of, sources};
use proc_macro2::TokenStream;
use std::collections::HashMap;
use tessera_layout::plan::conversion::ConversionPlan;
use tessera_layout::plan::gather::{plan_gather, GatherPlan};

/// Every specialisation of a kernel, inferred.
fn infer_all(attr: &str, item: &str) -> Vec<Inference> {
    let attr: TokenStream = attr.parse().expect("attribute tokens");
    let item: TokenStream = item.parse().expect("kernel tokens");
    ok(attr, item)
        .into_iter()
        .map(|mut k| match infer_with(&mut k, AlignmentPolicy::Aligned) {
            Ok(i) => {
                assert_eq!(i.kernel.to_string(), k.to_string());
                i
            }
            Err(e) => panic!("inference failed: {e}\n{k}"),
        })
        .collect()
}

/// Compares `text` with `src/tests/snapshots/{name}.txt`; with `UPDATE_SNAPSHOTS=1` in the
/// environment, writes the file instead.
fn snapshot(name: &str, text: &str) {
    let path = format!(
        "{}/src/tests/snapshots/{name}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(format!(
            "{}/src/tests/snapshots",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("snapshot directory");
        std::fs::write(&path, text).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run with UPDATE_SNAPSHOTS=1 to create it)"));
    if text != expected {
        let first = text
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(text.lines().count().min(expected.lines().count()));
        panic!(
            "explain output differs from {path} (UPDATE_SNAPSHOTS=1 rewrites it) at line {}:\n  now:  {}\n  file: {}\n\nfull output:\n{text}",
            first + 1,
            text.lines().nth(first).unwrap_or("<end>"),
            expected.lines().nth(first).unwrap_or("<end>")
        );
    }
}

fn layout(k: &Kernel, v: ValueId) -> LinearLayout {
    match &k.value(v).layout {
        LayoutSlot::Inferred(l) => *l,
        other => panic!("{v} has no inferred layout: {other:?}"),
    }
}

/// The first specialisation of `kernel` inferred; its explain output must equal the snapshot
/// `name`.
fn snapshot_of_first(kernel: (&str, &str), name: &str) -> Inference {
    let inf = infer_all(kernel.0, kernel.1).swap_remove(0);
    snapshot(name, &inf.to_string());
    inf
}

/// The one op of `k` named `name`.
#[track_caller]
fn only_op(k: &Kernel, name: &str) -> Op {
    let mut ops = ops_of(k, name);
    assert_eq!(ops.len(), 1, "ops named {name}");
    ops.remove(0)
}

/// The `convert` op whose result is `result`.
fn convert_op_of(k: &Kernel, result: ValueId) -> Op {
    let converts = ops_of(k, "convert");
    let found = converts.into_iter().find(|op| op.results[0] == result);
    found.unwrap_or_else(|| panic!("no conversion makes {result}"))
}

// ---------------------------------------------------------------------------- the kernels

const SOFTMAX: (&str, &str) = ("num_warps = 4, BLOCK = 1024", sources::SOFTMAX);

const LAYERNORM: (&str, &str) = ("num_warps = 8, BLOCK = 2048", sources::LAYERNORM);

const TRANSPOSE: (&str, &str) = ("num_warps = 4, TILE = 64", sources::TRANSPOSE);

const GATHER: (&str, &str) = ("num_warps = 4, ROWS = 16, COLS = 64", sources::GATHER_ROWS);

/// The project's matmul (`kernels/tiled/matmul/src/lib.rs`): its attribute arguments and function.
fn project_matmul() -> (String, String) {
    let k = kernel_sources()
        .into_iter()
        .find(|k| k.name == "tile_matmul")
        .expect("kernels/tiled/matmul has tile_matmul");
    (k.attr.to_string(), k.item.to_string())
}

/// Softmax over rows of a 2-D tile: reduce, `expand_dims` and `broadcast` must be layout-only.
const ROW_SOFTMAX: (&str, &str) = (
    "num_warps = 4, ROWS = 4, BLOCK = 256",
    "fn row_softmax<const ROWS: usize, const BLOCK: usize>(out: Ptr<f32>, inp: Ptr<f32>, stride: i32) {
        let rows = program_id(0) * ROWS + arange(0, ROWS);
        let offs = rows.expand_dims(1) * stride + arange(0, BLOCK).expand_dims(0);
        let x = load(inp + offs);
        let shifted = x - x.max(1).expand_dims(1);
        let num = exp(shifted);
        store(out + offs, num / num.sum(1).expand_dims(1));
    }",
);

/// The kernels of `tests/examples.rs` and more: every operation, loops, branches.
const CORPUS: &[(&str, &str)] = &[
    SOFTMAX,
    LAYERNORM,
    TRANSPOSE,
    GATHER,
    ROW_SOFTMAX,
    (
        "num_warps = 8, BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = [32, 64]",
        sources::MATMUL_STRIDED,
    ),
    ("BLOCK = 256", sources::VECTOR_ADD),
    ("BLOCK = 128", sources::ROW_STATS),
    ("", sources::SHAPES),
    (
        "num_warps = 2",
        "fn loaded_shapes(out: Ptr<f32>, x: Ptr<f32>) {
            let t = load(x + arange(0, 8).expand_dims(1) * 16 + arange(0, 16).expand_dims(0));
            let j = join(t, t * 2.0);
            let (lo, hi) = j.split();
            let r = (lo + hi).reshape([4, 32]).trans([1, 0]);
            let s = r.sum(1);
            store(out + arange(0, 32), s);
            store(out + arange(0, 128), r.reshape([128]));
            store(out + arange(0, 256), j.reshape([256]));
        }",
    ),
    ("", sources::BITS),
    (
        "num_warps = 4",
        "fn mm_i8(a: Ptr<i8>, c: Ptr<i32>) {
            let t = load(a + arange(0, 32).expand_dims(1) * 32 + arange(0, 32).expand_dims(0));
            let r = dot(t, t);
            store(c + arange(0, 32).expand_dims(1) * 32 + arange(0, 32).expand_dims(0), r);
        }",
    ),
    (
        "num_warps = 4",
        "fn mm_bf16(a: Ptr<bf16>) {
            let t = load(a + arange(0, 32).expand_dims(1) * 32 + arange(0, 32).expand_dims(0));
            let c = dot(t, t);
        }",
    ),
    ("", sources::BRANCHES),
    ("", sources::NESTED),
    ("", sources::LITERALS),
    ("", sources::RELAYOUT),
    (
        "num_warps = 1",
        "fn one_warp(x: Ptr<f32>, out: Ptr<f32>) {
            let t = load(x + arange(0, 4).expand_dims(1) * 8 + arange(0, 8).expand_dims(0));
            store(out + arange(0, 8), t.sum(0));
            store(out + arange(0, 4), t.max(1));
        }",
    ),
];

// ---------------------------------------------------------------------------- snapshots

#[test]
fn softmax_has_no_conversion() {
    let inf = &snapshot_of_first(SOFTMAX, "infer_softmax");
    assert!(inf.conversions.is_empty(), "{inf}");
    assert_eq!(ops_of(&inf.kernel, "convert").len(), 0);
    // 128-bit accesses, masked by `cols < n_cols` with n_cols % 16 == 0.
    assert_eq!(inf.accesses.len(), 2);
    for a in &inf.accesses {
        assert_eq!((a.plan.elements, a.plan.element_bits), (4, 32), "{a:?}");
        assert_eq!(a.plan.facts.mask_constancy, Some(16));
    }
    let names: Vec<String> = inf.assumptions.iter().map(|a| a.to_string()).collect();
    assert_eq!(
        names,
        [
            "out is 16-byte aligned",
            "inp is 16-byte aligned",
            "row_stride % 16 == 0",
            "n_cols % 16 == 0"
        ]
    );
}

#[test]
fn layernorm_has_no_conversion() {
    let inf = &snapshot_of_first(LAYERNORM, "infer_layernorm");
    assert!(inf.conversions.is_empty(), "{inf}");
    // One layout for the bf16 and f32 loads and the store (Triton's coalesce takes the largest
    // per-thread count of connected memory ops of one shape and order).
    let k = &inf.kernel;
    let loads = ops_of(k, "load");
    assert_eq!(loads.len(), 3);
    let first = layout(k, loads[0].results[0]);
    for op in loads.iter().chain(&ops_of(k, "store")) {
        assert_eq!(layout(k, op.operands[0]), first);
    }
    // bf16: 8 × 16 bits; f32: 4 × 32 bits (two accesses per thread).
    let widths: Vec<(u32, u32)> = inf
        .accesses
        .iter()
        .map(|a| (a.plan.elements, a.plan.element_bits))
        .collect();
    assert_eq!(widths, [(8, 16), (4, 32), (4, 32), (8, 16)]);
}

#[test]
fn transpose_has_one_conflict_free_shared_memory_conversion() {
    let inf = &snapshot_of_first(TRANSPOSE, "infer_transpose");
    assert_eq!(inf.conversions.len(), 1, "{inf}");
    let c = inf.conversions[0].conversion.as_ref().expect("planned");
    let ConversionPlan::SharedMemory(shared) = &c.plan else {
        panic!("expected shared memory, got {}", c.plan.kind());
    };
    assert_eq!(shared.write().exact_wavefronts, 1, "store bank conflicts");
    assert_eq!(shared.read().exact_wavefronts, 1, "load bank conflicts");
    // Loads and stores are both 128-bit and coalesced along the contiguous dimension.
    for a in &inf.accesses {
        assert_eq!(
            (a.plan.elements, a.plan.element_bits, a.plan.dim),
            (8, 16, 1),
            "{a:?}"
        );
    }
    // The mask and the pointers are recomputed, not converted.
    assert!(inf.rematerialised > 0);
}

#[test]
fn gather_runs_along_a_warp_resident_axis_by_shuffles() {
    let inf = &snapshot_of_first(GATHER, "infer_gather");
    let k = &inf.kernel;
    let g = &only_op(k, "gather");
    let (src, index) = (layout(k, g.operands[0]), layout(k, g.operands[1]));
    assert_eq!(layout(k, g.results[0]), index);
    // The axis (1) never crosses a warp.
    let (_, _, warps_along) = layouts::bases_along(&src, 1);
    assert_eq!(warps_along, 0);
    let plan = plan_gather(&src, &index, 1, 32).expect("plannable");
    let GatherPlan::WarpShuffle(shuffle) = plan else {
        panic!("expected a warp-shuffle gather");
    };
    assert!(shuffle.shuffles() > 0);
    // The source is loaded straight into the gather's layout (as coalesced and as wide as the
    // load's anchor), so nothing is converted.
    assert!(inf.conversions.is_empty(), "{inf}");
    let widths: Vec<u32> = inf.accesses.iter().map(|a| a.plan.elements).collect();
    assert_eq!(widths, [4, 4, 4]);
}

#[test]
fn matmul_operands_are_in_dot_operand_layouts() {
    let (attr, item) = project_matmul();
    let inf = &snapshot_of_first((&attr, &item), "infer_matmul");
    let k = &inf.kernel;
    let d = &only_op(k, "dot");
    let warps = anchors::mma_warps(64, 64, 4);
    assert_eq!(warps, [2, 2]);
    let a = anchors::dot_operand_layout(0, 2, &[64, 32], &warps, 4).unwrap();
    let b = anchors::dot_operand_layout(1, 2, &[32, 64], &warps, 4).unwrap();
    let acc = anchors::mma_layout(&[64, 64], &warps, 4).unwrap();
    assert_eq!(layout(k, d.operands[0]), a);
    assert_eq!(layout(k, d.operands[1]), b);
    assert_eq!(layout(k, d.operands[2]), acc);
    assert_eq!(layout(k, d.results[0]), acc);
    // The accumulator stays in the mma layout through the loop: the only conversions are the
    // two operands (in the loop) and the f16 result before the store.
    let loop_conversions = inf.conversions.iter().filter(|c| c.weight > 1).count();
    assert_eq!(loop_conversions, 2, "{inf}");
    assert_eq!(inf.conversions.len(), 3, "{inf}");
    let last = convert_op_of(k, inf.conversions.last().unwrap().result);
    assert_eq!(k.ty(last.operands[0]).dtype.to_string(), "f16");
    // `m` (`a.size(0)`, `c.size(0)`) only masks rows, across the vectors (which run along N):
    // not assumed; `k` (`a.size(1)`) and `n` (`b.size(1)` for the loads, `c.size(1)` for the
    // store) are, with the row strides and unit innermost strides.
    let assumed: Vec<String> = inf.assumptions.iter().map(|a| a.name.clone()).collect();
    assert_eq!(
        assumed,
        [
            "a",
            "a__size1",
            "a__stride0",
            "a__stride1",
            "b",
            "b__size1",
            "b__stride0",
            "b__stride1",
            "c",
            "c__size1",
            "c__stride0",
            "c__stride1"
        ]
    );
}

#[test]
fn row_softmax_reductions_and_broadcasts_are_layout_only() {
    let inf = &infer_all(ROW_SOFTMAX.0, ROW_SOFTMAX.1)[0];
    assert!(inf.conversions.is_empty(), "{inf}");
    // Each row lives in one warp: the reductions are warp shuffles only.
    let k = &inf.kernel;
    for op in ops_of(k, "reduce.max")
        .iter()
        .chain(&ops_of(k, "reduce.sum"))
    {
        let (_, lanes, warps) = layouts::bases_along(&layout(k, op.operands[0]), 1);
        assert_eq!((lanes > 0, warps), (true, 0), "{inf}");
    }
}

// ---------------------------------------------------------------------------- validity

/// Every tile value of a kernel after inference has a valid layout of its shape, and every op
/// sees its operands in the layouts its lowering expects.
fn check_consistent(k: &Kernel) -> Result<(), String> {
    for (i, v) in k.values.iter().enumerate() {
        if v.ty.is_scalar() {
            continue;
        }
        match &v.layout {
            LayoutSlot::Inferred(l) => {
                check_layout(l, &v.ty.shape, k.num_warps).map_err(|e| format!("%{i}: {e}"))?
            }
            LayoutSlot::Fixed(_) => {}
            other => return Err(format!("%{i}: {other:?}")),
        }
    }
    check_region(k, &k.body)
}

fn check_region(k: &Kernel, region: &Region) -> Result<(), String> {
    let nw = k.num_warps;
    let inferred = |v: ValueId| match &k.value(v).layout {
        LayoutSlot::Inferred(l) => Some(*l),
        _ => None,
    };
    let tile = |v: ValueId| !k.ty(v).is_scalar();
    for op in &region.ops {
        let here = || format!("`{}` of {:?}", op.kind.name(), op.results);
        let tiles: Vec<ValueId> = op.operands.iter().copied().filter(|&v| tile(v)).collect();
        let same = |vs: &[ValueId]| -> Result<(), String> {
            let ls: Vec<Option<LinearLayout>> = vs.iter().map(|&v| inferred(v)).collect();
            if ls.iter().any(Option::is_none) || ls.windows(2).any(|w| w[0] != w[1]) {
                return Err(format!(
                    "{}: operands and result in different layouts",
                    here()
                ));
            }
            Ok(())
        };
        match &op.kind {
            kind if solve::keeps_layout(kind) => {
                if tile(op.results[0]) {
                    let mut all = tiles.clone();
                    all.push(op.results[0]);
                    same(&all)?;
                }
            }
            OpKind::Load { .. } | OpKind::Store { .. } => {
                let mut all = tiles.clone();
                all.extend(op.results.iter().copied().filter(|&r| tile(r)));
                same(&all)?;
            }
            OpKind::ExpandDims { .. } | OpKind::Reshape => {
                let (x, r) = (op.operands[0], op.results[0]);
                if tile(x) {
                    let want = reshape(&inferred(x).unwrap(), &k.ty(r).shape, nw);
                    if want != inferred(r) {
                        return Err(format!("{}: result is not the reshaped operand", here()));
                    }
                }
            }
            OpKind::Broadcast => {
                let (x, r) = (op.operands[0], op.results[0]);
                let want = broadcast_backward(&inferred(r).unwrap(), &k.ty(x).shape, nw);
                if want != inferred(x) {
                    return Err(format!("{}: operand is not the projected result", here()));
                }
            }
            OpKind::Trans { perm } => {
                let (x, r) = (op.operands[0], op.results[0]);
                if trans(&inferred(x).unwrap(), perm, nw) != inferred(r) {
                    return Err(format!("{}: result is not the transposed operand", here()));
                }
            }
            OpKind::Join => {
                same(&tiles)?;
                if join_forward(&inferred(tiles[0]).unwrap(), nw) != inferred(op.results[0]) {
                    return Err(format!("{}: result is not the joined operand", here()));
                }
            }
            OpKind::Split => {
                same(&op.results)?;
                if join_backward(&inferred(op.operands[0]).unwrap(), nw) != inferred(op.results[0])
                {
                    return Err(format!("{}: results are not the split operand", here()));
                }
            }
            OpKind::Reduce { axis, .. } => {
                let (x, r) = (op.operands[0], op.results[0]);
                if tile(r) && reduce_forward(&inferred(x).unwrap(), *axis, nw) != inferred(r) {
                    return Err(format!(
                        "{}: result is not the slice of the operand",
                        here()
                    ));
                }
            }
            OpKind::Dot { .. } => {
                let acc = inferred(op.operands[2]);
                if acc.is_none() || acc != inferred(op.results[0]) {
                    return Err(format!("{}: accumulator and result differ", here()));
                }
            }
            OpKind::Gather { axis, .. } => {
                let (src, index) = (inferred(op.operands[0]), inferred(op.operands[1]));
                if index != inferred(op.results[0]) {
                    return Err(format!("{}: result not in the index layout", here()));
                }
                let bits = k.ty(op.operands[0]).dtype.bits().max(8);
                plan_gather(&src.unwrap(), &index.unwrap(), *axis as u32, bits)
                    .map_err(|e| format!("{}: {e}", here()))?;
            }
            OpKind::Convert { conversion } => {
                let (x, r) = (op.operands[0], op.results[0]);
                if k.ty(x) != k.ty(r) {
                    return Err(format!("{}: a conversion changes the type", here()));
                }
                match (conversion, inferred(x)) {
                    (Some(_), Some(_)) | (None, None) => {}
                    _ => return Err(format!("{}: plan and operand kind disagree", here())),
                }
            }
            OpKind::For => {
                let body = &op.regions[0];
                for (j, &r) in op.results.iter().enumerate() {
                    if tile(r) {
                        same(&[op.operands[3 + j], body.args[j + 1], body.yields[j], r])?;
                    }
                }
            }
            OpKind::While => {
                let (cond, body) = (&op.regions[0], &op.regions[1]);
                for (j, &r) in op.results.iter().enumerate() {
                    if tile(r) {
                        same(&[
                            op.operands[j],
                            cond.args[j],
                            body.args[j],
                            body.yields[j],
                            r,
                        ])?;
                    }
                }
            }
            OpKind::If => {
                for (j, &r) in op.results.iter().enumerate() {
                    if tile(r) {
                        same(&[op.regions[0].yields[j], op.regions[1].yields[j], r])?;
                    }
                }
            }
            _ => {}
        }
        for r in &op.regions {
            check_region(k, r)?;
        }
    }
    Ok(())
}

#[test]
fn every_layout_of_every_example_is_valid_and_consistent() {
    let mut kernels = 0;
    let matmul = project_matmul();
    let project = [(matmul.0.as_str(), matmul.1.as_str())];
    for (attr, item) in CORPUS.iter().chain(&project) {
        for inf in infer_all(attr, item) {
            if let Err(e) = check_consistent(&inf.kernel) {
                panic!("{e}\n{inf}");
            }
            // Every inferred layout is a distributed layout onto its tile (Definition 4.10).
            for v in &inf.kernel.values {
                if let LayoutSlot::Inferred(l) = &v.layout {
                    assert!(l.is_distributed_layout() && l.is_surjective());
                    let covered: Vec<u64> = (0..l.num_out_dims())
                        .map(|o| 1u64 << l.out_bits_at(o))
                        .collect();
                    assert_eq!(covered, v.ty.shape);
                }
            }
            // Every conversion is recorded; it is planned exactly when its operand has an
            // inferred layout, and its result has one.
            let converts = ops_of(&inf.kernel, "convert");
            assert_eq!(converts.len(), inf.conversions.len());
            for c in &inf.conversions {
                let op = convert_op_of(&inf.kernel, c.result);
                let inferred = matches!(
                    inf.kernel.value(op.operands[0]).layout,
                    LayoutSlot::Inferred(_)
                );
                assert_eq!(inferred, c.conversion.is_some());
                layout(&inf.kernel, c.result);
            }
            kernels += 1;
        }
    }
    // The corpus' specialisations: the project's matmul counts 8 (f16 and bf16 at 1 to 4 stages).
    assert_eq!(kernels, 27);
}

#[test]
fn user_layouts_are_converted_out_of_without_a_plan() {
    let (attr, item) = CORPUS
        .iter()
        .find(|(_, i)| i.contains("fn relayout"))
        .unwrap();
    let inf = &infer_all(attr, item)[0];
    let converts = ops_of(&inf.kernel, "convert");
    // `u` (a user layout) is converted once for the store.
    assert_eq!(converts.len(), 1, "{inf}");
    assert!(matches!(
        converts[0].kind,
        OpKind::Convert { conversion: None }
    ));
    assert!(inf.to_string().contains("from a layout only rustc knows"));
}

// ---------------------------------------------------------------------------- pieces

#[test]
fn explain_setting_names_kernels() {
    assert!(explain_matches("1", "softmax"));
    assert!(explain_matches("softmax", "softmax"));
    assert!(explain_matches("matmul, softmax", "softmax"));
    assert!(!explain_matches("matmul", "softmax"));
    assert!(!explain_matches("0", "softmax"));
}

#[test]
fn triton_blocked_builder_and_mma_warps() {
    // 1024 f32 over 4 warps, 4 per thread: all lanes and warps along the one dimension.
    let o = anchors::blocked_params(&[1024], &[0], 4, 4);
    assert_eq!(
        o.family_text().unwrap(),
        "blocked{spt=[4], tpw=[32], wpc=[4], order=[0]}"
    );
    // [16, 32] i32, 4 per thread along dim 1: 8 lanes cover a row, 4 rows per warp.
    let o = anchors::blocked_params(&[16, 32], &[1, 0], 4, 4);
    assert_eq!(
        o.family_text().unwrap(),
        "blocked{spt=[1, 4], tpw=[4, 8], wpc=[4, 1], order=[1, 0]}"
    );
    // Triton's warpsPerTileV2.
    assert_eq!(anchors::mma_warps(128, 128, 8), [4, 2]);
    assert_eq!(anchors::mma_warps(64, 64, 4), [2, 2]);
    assert_eq!(anchors::mma_warps(16, 128, 4), [1, 4]);
    assert_eq!(anchors::order_from_contiguity(&[1, 1]), [1, 0]);
    assert_eq!(anchors::order_from_contiguity(&[64, 1]), [0, 1]);
}

#[test]
fn shape_maps_agree_with_the_layout_crate() {
    use tessera_layout::families::shape::{permute_out_coords, reshape_row_major};
    use tessera_layout::families::slice::slice_of;
    let origin = anchors::blocked_params(&[8, 4, 16], &[2, 1, 0], 2, 4);
    let l = anchors::blocked_layout(&origin, &[8, 4, 16], 4).unwrap();
    let nw = 4;
    let t = trans(&l, &[2, 0, 1], nw).unwrap();
    let crate_t = permute_out_coords(&l, &[2, 0, 1]).unwrap();
    assert_eq!(Ok(t), normalize(&crate_t, &[16, 8, 4], nw));
    let r = reshape(&l, &[32, 16], nw).unwrap();
    let crate_r = reshape_row_major(&l, &[32, 16]).unwrap();
    assert_eq!(Ok(r), normalize(&crate_r, &[32, 16], nw));
    let s = reduce_forward(&l, 1, nw).unwrap();
    let crate_s = slice_of(&l, 1).unwrap();
    assert_eq!(Ok(s), normalize(&crate_s, &[8, 16], nw));
    // expand_dims then broadcast back gives the operand's layout.
    let e = reshape(&s, &[8, 1, 16], nw).unwrap();
    assert_eq!(broadcast_backward(&l, &[8, 1, 16], nw), Some(e));
    // join then split is the identity; split of a layout whose last dimension is in lanes is
    // not layout-only.
    let j = join_forward(&l, nw).unwrap();
    assert_eq!(join_backward(&j, nw), Some(l));
    let lanes_last = trans(&j, &[0, 1, 3, 2], nw).unwrap();
    let moved = trans(&lanes_last, &[0, 1, 3, 2], nw).unwrap();
    assert_eq!(moved, j);
    let in_lanes =
        anchors::blocked_layout(&anchors::blocked_params(&[8, 2], &[1, 0], 1, 1), &[8, 2], 1)
            .unwrap();
    assert_eq!(join_backward(&in_lanes, 1), None);
}

#[test]
fn axis_facts_of_a_pointer_expression() {
    let inf = &infer_all(SOFTMAX.0, SOFTMAX.1)[0];
    let k = &inf.kernel;
    let load = &ops_of(k, "load")[0];
    let axis = axis_of(inf);
    let ptr = &axis[load.operands[0].0 as usize];
    // inp (16 B) + row * row_stride (÷16) * 4 B + arange: 1024 consecutive f32, 16-byte aligned.
    assert_eq!(ptr.contiguity, [1024]);
    assert_eq!(ptr.divisibility, [16]);
    assert_eq!(ptr.constancy, [1]);
    let mask = &axis[load.operands[1].0 as usize];
    assert_eq!(mask.constancy, [16]);
    // Without the assumptions nothing is known of the stride: 4-byte alignment, scalar access.
    let mut kernel = ok(SOFTMAX.0.parse().unwrap(), SOFTMAX.1.parse().unwrap()).remove(0);
    let natural = infer_with(&mut kernel, AlignmentPolicy::Natural).unwrap();
    assert!(natural.assumptions.is_empty());
    assert_eq!(natural.accesses[0].plan.elements, 1);
    assert_eq!(natural.accesses[0].plan.facts.alignment, 4);
}

#[test]
fn loop_invariant_conversions_run_once_before_the_loop() {
    let inf = &infer_all(
        "num_warps = 4",
        "fn acc_from_load(a: Ptr<f16>, c: Ptr<f32>) {
            let offs = arange(0, 32).expand_dims(1) * 32 + arange(0, 32).expand_dims(0);
            let mut acc = load(c + offs);
            let t = load(a + offs);
            for i in 0..4 {
                acc = dot(t, t, acc);
            }
            store(c + offs, acc);
        }",
    )[0];
    check_consistent(&inf.kernel).unwrap();
    // `t` to both operand layouts, and the loaded accumulator to the mma layout: all outside
    // the loop; inside it nothing converts. Then the result back for the store.
    assert_eq!(inf.conversions.len(), 4, "{inf}");
    assert!(inf.conversions.iter().all(|c| c.weight == 1), "{inf}");
    let for_op = &ops_of(&inf.kernel, "for")[0];
    let mut inside = 0;
    for_op.regions[0].walk(&mut |op| inside += usize::from(op.kind.name() == "convert"));
    assert_eq!(inside, 0, "{inf}");
}

#[test]
fn while_carries_tiles_in_one_layout() {
    // The carried tile `acc` is loaded in one layout and reduced inside the loop (a slice
    // layout); it keeps one layout from init to result, and the condition is a scalar.
    let inf = &infer_all(
        "num_warps = 4",
        "fn halve_until_small(x: Ptr<f32>, out: Ptr<f32>, limit: f32) {
            let offs = arange(0, 16).expand_dims(1) * 64 + arange(0, 64).expand_dims(0);
            let mut acc = load(x + offs);
            let mut steps = 0;
            while acc.abs().max(1).max(0) > limit && steps < 100 {
                acc = acc * 0.5;
                steps += 1;
            }
            store(out + offs, acc + steps as f32);
        }",
    )[0];
    check_consistent(&inf.kernel).unwrap();
    let while_op = &ops_of(&inf.kernel, "while")[0];
    assert_eq!(while_op.regions.len(), 2);
    assert_eq!(
        while_op.operands.len(),
        2,
        "acc and steps are carried\n{inf}"
    );
    assert_eq!(while_op.regions[0].yields.len(), 1);
    assert!(inf.kernel.ty(while_op.regions[0].yields[0]).is_scalar());
    let mut inside = 0;
    for r in &while_op.regions {
        r.walk(&mut |op| inside += usize::from(op.kind.name() == "convert"));
    }
    assert_eq!(inside, 0, "nothing converts inside the loop\n{inf}");
    let text = inf.to_string();
    assert!(text.contains("while") && text.contains(" do ("), "{text}");
}

/// The axis facts of every value of an inferred kernel, under the assumptions it reports.
fn axis_of(inf: &Inference) -> Vec<AxisInfo> {
    let assumed = inf.assumptions.iter().map(|a| a.param).collect();
    axis::analyze_assuming(&inf.kernel, &Graph::new(&inf.kernel), &assumed).info
}

/// The axis facts of the values a kernel names.
fn named_facts(item: &str) -> HashMap<String, AxisInfo> {
    let inf = infer_all("", item).remove(0);
    let axis = axis_of(&inf);
    inf.kernel
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((v.name.clone()?, axis[i].clone())))
        .collect()
}

#[test]
fn axis_rules() {
    let f = named_facts(
        "fn facts(x: Ptr<f32>, n: i32) {
            let plus_one = arange(0, 64) + 1;
            let times_four = arange(0, 64) * 4;
            let shifted = arange(0, 64) << 3;
            let wrapped = arange(0, 64).to::<u32>() % 16u32;
            let signed_wrap = arange(0, 64) % 16;
            let negative_wrap = (arange(0, 64) - 32) % 16;
            let signed_blocks = arange(0, 64) / 8;
            let blocks = arange(0, 64).to::<u32>() / 8u32;
            let below = arange(0, 64) < 32;
            let below_odd = arange(0, 64) < 17;
            let at_most = arange(0, 64) <= 31;
            let from_n = n + arange(0, 64);
            let rows = arange(0, 8).expand_dims(1) * 64 + arange(0, 64).expand_dims(0);
            let flat = rows.reshape([512]);
            let swapped = rows.trans([1, 0]);
            let picked = where_(below, arange(0, 64), arange(64, 128));
            store(x + arange(0, 64), plus_one.to::<f32>());
        }",
    );
    let check = |name: &str, contiguity: &[u64], divisibility: &[u64], constancy: &[u64]| {
        let a = &f[name];
        assert_eq!(
            (&a.contiguity[..], &a.divisibility[..], &a.constancy[..]),
            (contiguity, divisibility, constancy),
            "{name}"
        );
    };
    check("plus_one", &[64], &[1], &[1]);
    check("times_four", &[1], &[4], &[1]);
    check("shifted", &[1], &[8], &[1]);
    check("wrapped", &[16], &[16], &[1]);
    // `arange` from 0 is nonnegative, so Rust's `%` wraps it like unsigned; after `- 32` the
    // sign is unknown and nothing is proven.
    check("signed_wrap", &[16], &[16], &[1]);
    check("negative_wrap", &[1], &[1], &[1]);
    check("signed_blocks", &[1], &[1], &[8]);
    check("blocks", &[1], &[1], &[8]);
    check("below", &[1], &[1], &[32]);
    check("below_odd", &[1], &[1], &[1]);
    // x <= 31 splits at 32, not at a multiple of the run: nothing proven.
    check("at_most", &[1], &[1], &[1]);
    // `n` only feeds arithmetic that no access uses: nothing assumed of it.
    check("from_n", &[64], &[1], &[1]);
    // Along dim 0 (contiguity 1) the divisibility holds for every element: 64·i + j is only
    // known to be an integer. Along dim 1 each run starts at 64·i.
    check("rows", &[1, 64], &[1, 64], &[1, 1]);
    // Runs of 64 survive a row-major flatten; that the rows chain up is not tracked.
    check("flat", &[64], &[64], &[1]);
    check("swapped", &[64, 1], &[64, 1], &[1, 1]);
    check("picked", &[32], &[32], &[1]);
}

/// Two chained dots as in flash attention: `s = q · kᵀ`, `acc += exp2(s − max).to::<f16>() · v`.
/// At 8 warps the per-dot rule would split `s`'s columns over 2 warps (`[4, 2]`).
const CHAINED_DOTS: (&str, &str) = (
    "num_warps = 8, BM = 128, BN = 64, D = 64",
    "fn chained<const BM: usize, const BN: usize, const D: usize>(
        q: Ptr<f16>, k: Ptr<f16>, v: Ptr<f16>, o: Ptr<f16>, seq: i32,
    ) {
        let rm = program_id(0) * BM + arange(0, BM);
        let rd = arange(0, D);
        let q_tile = load(q + rm.expand_dims(1) * D + rd.expand_dims(0));
        let mut acc = zeros::<f32>([BM, D]);
        for j in 0..cdiv(seq, BN) {
            let rn = j * BN + arange(0, BN);
            let k_tile = load(k + rn.expand_dims(1) * D + rd.expand_dims(0));
            let v_tile = load(v + rn.expand_dims(1) * D + rd.expand_dims(0));
            let s = dot(q_tile, k_tile.trans());
            let p = exp2(s - s.max(1).expand_dims(1));
            acc = dot(p.to::<f16>(), v_tile, acc);
        }
        store(o + rm.expand_dims(1) * D + rd.expand_dims(0), acc.to::<f16>());
    }",
);

/// [`CHAINED_DOTS`] masking only the last block's scores, through an `if` whose branches yield
/// `s` masked or `s` itself: the chain goes through the `if`.
fn chained_dots_edge_mask() -> String {
    let p = "let p = exp2(s - s.max(1).expand_dims(1));";
    let masked = CHAINED_DOTS.1.replace(
        p,
        &format!(
            "let s = if (j + 1) * BN > seq {{
                where_(rn.expand_dims(0) < seq, s, f32::NEG_INFINITY)
            }} else {{
                s
            }};
            {p}"
        ),
    );
    assert_ne!(
        masked, CHAINED_DOTS.1,
        "the kernel has the line to mask before"
    );
    masked
}

#[test]
fn chained_dots_take_p_from_registers() {
    chained_dots_take_p_from_registers_in(CHAINED_DOTS);
    chained_dots_take_p_from_registers_in((CHAINED_DOTS.0, &chained_dots_edge_mask()));
}

fn chained_dots_take_p_from_registers_in(kernel: (&str, &str)) {
    let inf = &infer_all(kernel.0, kernel.1)[0];
    let k = &inf.kernel;
    let dots = ops_of(k, "dot");
    assert_eq!(dots.len(), 2);
    assert_eq!(anchors::mma_warps(128, 64, 8), [4, 2]);
    let warps = [8, 1];
    for d in &dots {
        assert_eq!(
            layout(k, d.results[0]),
            anchors::mma_layout(&[128, 64], &warps, 8).unwrap(),
            "{inf}"
        );
    }
    // p reaches the second dot's `a` operand by a conversion without shared memory.
    let a = dots[1].operands[0];
    assert_eq!(
        layout(k, a),
        anchors::dot_operand_layout(0, 2, &[128, 64], &warps, 8).unwrap()
    );
    // For 16-bit operands that layout is the accumulator's, so the cast of `p` is already in
    // it: nothing converts `p`, and the loop converts only `k` and `v` (through shared memory).
    assert_eq!(
        layout(k, a),
        anchors::mma_layout(&[128, 64], &warps, 8).unwrap()
    );
    assert!(inf.conversions.iter().all(|c| c.result != a), "{inf}");
    let loop_conversions = inf.conversions.iter().filter(|c| c.weight > 1).count();
    assert_eq!(loop_conversions, 2, "{inf}");
}

/// The law behind the chained-dot warps: with [`anchors::chained_mma_warps`], an f16/bf16
/// accumulator `[m, n]` becomes the `a` operand `[m, n]` of a dot with the same warps by
/// registers alone (no shuffles, no shared memory), for every shape and warp count it applies
/// to.
#[test]
fn chained_warps_make_accumulator_to_a_operand_register_only() {
    use tessera_layout::plan::conversion_code::plan_conversion_code;
    let mut applied = 0;
    for nw in [1u32, 2, 4, 8] {
        for m in [16u64, 32, 64, 128, 256] {
            for n in [16u64, 32, 64, 128, 256] {
                let Some(warps) = anchors::chained_mma_warps(m, n, nw) else {
                    continue;
                };
                if warps[1] != 1 {
                    continue; // all warps along n: `a` is replicated across them, the acc not
                }
                applied += 1;
                let acc = anchors::mma_layout(&[m, n], &warps, nw).unwrap();
                let a = anchors::dot_operand_layout(0, 2, &[m, n], &warps, nw).unwrap();
                let code = plan_conversion_code(&acc, &a, 16, tessera_layout::plan::Vendor::Nvidia)
                    .unwrap();
                assert!(
                    matches!(
                        code.plan,
                        ConversionPlan::NoOp | ConversionPlan::RegisterPermutation(_)
                    ),
                    "[{m}, {n}] over {nw} warps {warps:?}: {:?}",
                    code.plan.kind()
                );
            }
        }
    }
    assert!(applied >= 40, "{applied}");
}
