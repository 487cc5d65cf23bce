//! Whole kernels that pass the front end, and the IR they produce.

use super::named_type;
use super::sources::{self, tokens};
use super::{ok, ops_of};
use crate::ir::{Kernel, OpKind};
use quote::quote;

fn ops_named(k: &Kernel, name: &str) -> usize {
    ops_of(k, name).len()
}

/// `k` has exactly one op of each of these names.
#[track_caller]
fn assert_once_each(k: &Kernel, names: &[&str]) {
    for name in names {
        assert_eq!(ops_named(k, name), 1, "ops named {name}");
    }
}

/// The number of results of every op of `k` named `name`, in program order.
fn result_counts(k: &Kernel, name: &str) -> Vec<usize> {
    ops_of(k, name).iter().map(|op| op.results.len()).collect()
}

/// The one kernel of `source` (no attribute arguments).
fn only_kernel(source: &str) -> Kernel {
    ok(quote!(), tokens(source)).remove(0)
}

#[test]
fn softmax() {
    let kernels = ok(
        quote!(num_warps = 4, BLOCK = [1024, 4096]),
        tokens(sources::SOFTMAX),
    );
    assert_eq!(kernels.len(), 2);
    assert_eq!(kernels[1].consts, [("BLOCK".to_string(), 4096)]);
    let k = &kernels[0];
    println!("{k}");
    assert_eq!(named_type(k, "x").unwrap().to_string(), "f32[1024]");
    assert_eq!(named_type(k, "den").unwrap().to_string(), "f32");
    assert_eq!(
        named_type(&kernels[1], "num").unwrap().to_string(),
        "f32[4096]"
    );
    assert_once_each(k, &["load", "store", "reduce.max", "reduce.sum"]);
}

#[test]
fn matmul() {
    let kernels = ok(
        quote!(
            num_warps = 8,
            BLOCK_M = 128,
            BLOCK_N = 128,
            BLOCK_K = [32, 64]
        ),
        tokens(sources::MATMUL_STRIDED),
    );
    assert_eq!(kernels.len(), 2);
    let k = &kernels[0];
    println!("{k}");
    let fors = ops_of(k, "for");
    assert_eq!(fors.len(), 1);
    let for_op = &fors[0];
    // Carried: a_ptrs, b_ptrs, acc (in order of first assignment: acc, a_ptrs, b_ptrs).
    assert_eq!(for_op.results.len(), 3);
    let carried: Vec<String> = for_op
        .results
        .iter()
        .map(|&r| k.ty(r).to_string())
        .collect();
    assert_eq!(
        carried,
        ["f32[128, 128]", "Ptr<f16>[128, 32]", "Ptr<f16>[32, 128]"]
    );
    assert_eq!(for_op.regions[0].args.len(), 4);
    assert_eq!(for_op.regions[0].yields.len(), 3);
    assert_eq!(ops_named(k, "dot"), 1);
    // The loop's results are named after the variables they become.
    let names: Vec<_> = for_op
        .results
        .iter()
        .map(|&r| k.value(r).name.clone())
        .collect();
    assert_eq!(
        names,
        [
            Some("acc".into()),
            Some("a_ptrs".into()),
            Some("b_ptrs".into())
        ]
    );
}

/// The full IR of a small kernel, pinned: every implicit step (splat, broadcast, constants) is
/// an explicit op.
#[test]
fn vector_add_ir_snapshot() {
    let kernels = ok(quote!(BLOCK = 256), tokens(sources::VECTOR_ADD));
    let expected = "\
kernel add[num_warps=4, BLOCK=256](%0: Ptr<f32> x, %1: Ptr<f32> y, %2: Ptr<f32> out, %3: i32 n) {
  %4: i32 = program_id axis=0
  %5: i32 = constant 256
  %6: i32 = mul %4, %5
  %7: i32[256] = arange 0..256
  %8: i32[256] = splat %6
  %9: i32[256] = add %8, %7  // offs
  %10: i32[256] = splat %3
  %11: bool[256] = cmp.lt %9, %10  // mask
  %12: Ptr<f32>[256] = splat %0
  %13: Ptr<f32>[256] = addptr %12, %9
  %14: f32 = constant 0.0
  %15: f32[256] = splat %14
  %16: f32[256] = load masked+other %13, %11, %15
  %17: Ptr<f32>[256] = splat %1
  %18: Ptr<f32>[256] = addptr %17, %9
  %19: f32 = constant 0.0
  %20: f32[256] = splat %19
  %21: f32[256] = load masked+other %18, %11, %20
  %22: f32[256] = add %16, %21  // sum
  %23: Ptr<f32>[256] = splat %2
  %24: Ptr<f32>[256] = addptr %23, %9
  store masked %24, %22, %11
}
";
    assert_eq!(kernels[0].to_string(), expected);
}

#[test]
fn layernorm() {
    let kernels = ok(
        quote!(num_warps = 8, BLOCK = [1024, 2048]),
        tokens(sources::LAYERNORM),
    );
    let k = &kernels[1];
    assert_eq!(named_type(k, "x").unwrap().to_string(), "f32[2048]");
    assert_eq!(named_type(k, "mean").unwrap().to_string(), "f32");
    assert_eq!(named_type(k, "centered").unwrap().to_string(), "f32[2048]");
    assert_once_each(k, &["fma", "rsqrt", "select"]);
    assert_eq!(ops_named(k, "cast"), 4); // `.to::<f32>()`, `n as f32` twice, `as bf16`
}

#[test]
fn transpose() {
    let kernels = ok(quote!(num_warps = 4, TILE = 64), tokens(sources::TRANSPOSE));
    let k = &kernels[0];
    let perms: Vec<Vec<usize>> = ops_of(k, "trans")
        .into_iter()
        .filter_map(|op| match op.kind {
            OpKind::Trans { perm } => Some(perm),
            _ => None,
        })
        .collect();
    assert_eq!(perms, [vec![1, 0], vec![1, 0]]);
}

#[test]
fn gather_along_axis_1() {
    let kernels = ok(
        quote!(num_warps = 4, ROWS = 16, COLS = 64),
        tokens(sources::GATHER_ROWS),
    );
    let k = &kernels[0];
    assert_eq!(named_type(k, "picked").unwrap().to_string(), "f32[16, 32]");
    assert_eq!(ops_named(k, "gather"), 1);
}

#[test]
fn reductions_and_argmax() {
    let kernels = ok(quote!(BLOCK = 128), tokens(sources::ROW_STATS));
    let k = &kernels[0];
    let reductions = ["max", "argmax", "min", "sum", "argmin"].map(|r| format!("reduce.{r}"));
    assert_once_each(k, &reductions.each_ref().map(String::as_str));
}

#[test]
fn shape_operations() {
    let k = &only_kernel(sources::SHAPES);
    assert_eq!(named_type(k, "j").unwrap().to_string(), "f32[8, 16, 2]");
    assert_eq!(named_type(k, "lo").unwrap().to_string(), "f32[8, 16]");
    assert_eq!(named_type(k, "p").unwrap().to_string(), "f32[8, 2, 4]");
    assert_eq!(named_type(k, "q").unwrap().to_string(), "i32[1, 4, 16]");
    assert_once_each(k, &["join", "split", "max", "min"]);
}

#[test]
fn integer_and_logic_operators() {
    let k = &only_kernel(sources::BITS);
    assert_eq!(named_type(k, "keep").unwrap().to_string(), "bool[64]");
    assert_once_each(k, &["shl", "shr", "xor", "rem", "neg"]);
    assert_eq!(ops_named(k, "not"), 2);
}

#[test]
fn dot_element_types() {
    for (input, acc) in [
        ("i8", "i32"),
        ("bf16", "f32"),
        ("f8e4m3", "f32"),
        ("f8e5m2", "f32"),
    ] {
        let input_ty: proc_macro2::TokenStream = input.parse().unwrap();
        let kernels = ok(
            quote!(num_warps = 4),
            quote! {
                fn mm(a: Ptr<#input_ty>) {
                    let t = load(a + arange(0, 32).expand_dims(1) * 32 + arange(0, 32).expand_dims(0));
                    let c = dot(t, t);
                }
            },
        );
        assert_eq!(
            named_type(&kernels[0], "c").unwrap().to_string(),
            format!("{acc}[32, 32]")
        );
    }
}

#[test]
fn convert_layout_keeps_the_users_layout() {
    let k = &only_kernel(sources::RELAYOUT);
    let fixed: Vec<String> = k
        .values
        .iter()
        .filter_map(|v| match &v.layout {
            crate::ir::LayoutSlot::Fixed(p) => Some(quote!(#p).to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(fixed, ["layouts :: ROW_MAJOR", "WARP_PER_ROW"]);
    let unassigned = k
        .values
        .iter()
        .filter(|v| matches!(v.layout, crate::ir::LayoutSlot::Unassigned))
        .count();
    assert!(unassigned > 0);
}

#[test]
fn if_on_scalars_with_values_and_carried_variables() {
    let k = &only_kernel(sources::BRANCHES);
    let ifs = result_counts(k, "if");
    // The outer `if` carries t and count; the nested one (in the else branch) carries t; the
    // value `if` yields scale.
    assert_eq!(ifs, [2, 1, 1]);
}

#[test]
fn nested_loops_carry_through_both() {
    let k = &only_kernel(sources::NESTED);
    let loops = result_counts(k, "for");
    assert_eq!(loops, [2, 2, 1]);
}

#[test]
fn literals_adapt_to_their_use() {
    let k = &only_kernel(sources::LITERALS);
    assert_eq!(named_type(k, "h").unwrap().to_string(), "f16[16]");
    assert_eq!(named_type(k, "l").unwrap().to_string(), "i64[16]");
}
