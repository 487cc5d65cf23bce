//! Dots executed on a warp model of `mma.sync` built from the PTX fragment tables (independent
//! of the planner), on the operand layouts layout inference uses, and the rendered structure.
#![allow(clippy::needless_range_loop)] // (warp, lane, register) indexing, as the hardware

use super::*;
use crate::infer::mma_kind;
use crate::lower::convert::tests::{holding_elements, Registers};
use proc_macro2::Span;
use quote::format_ident;
use tessera_layout::families::{DotOperand, MmaParent, NvidiaMma};
use tessera_layout::plan::mma::plan_dot;
use tessera_layout::{Label, LinearLayout};

/// PTX m16n8k16 (16-bit) A element `i` of lane (g, t): (row, κ).
fn a16(g: u32, t: u32, i: u32) -> (u32, u32) {
    (g + 8 * (i >> 1 & 1), 2 * t + (i & 1) + 8 * (i >> 2))
}
/// m16n8k16 B element `i`: (κ, column).
fn b16(g: u32, t: u32, i: u32) -> (u32, u32) {
    (2 * t + (i & 1) + 8 * (i >> 1), g)
}
/// m16n8k32 (s8) A element `i`: (row, κ).
fn a8(g: u32, t: u32, i: u32) -> (u32, u32) {
    (g + 8 * (i >> 2 & 1), 4 * t + (i & 3) + 16 * (i >> 3))
}
/// m16n8k32 B element `i`: (κ, column).
fn b8(g: u32, t: u32, i: u32) -> (u32, u32) {
    (4 * t + (i & 3) + 16 * (i >> 2), g)
}
/// C/D element `j`: (row, column).
fn c_at(g: u32, t: u32, j: u32) -> (u32, u32) {
    (g + 8 * (j >> 1), 2 * t + (j & 1))
}

fn a_value(m: u32, k: u32) -> f64 {
    ((m * 7 + k * 3) % 9) as f64 - 4.0
}
fn b_value(k: u32, n: u32) -> f64 {
    ((k * 5 + n * 11) % 7) as f64 - 3.0
}
fn c_value(m: u32, n: u32) -> f64 {
    ((m + 2 * n) % 5) as f64
}

/// The registers of `layout` holding `value(coords)`.
fn values(layout: &LinearLayout, value: impl Fn(u32, u32) -> f64) -> Vec<Vec<Vec<f64>>> {
    let ids: Registers = holding_elements(layout);
    ids.iter()
        .map(|w| {
            w.iter()
                .map(|l| {
                    l.iter()
                        .map(|id| {
                            let id = id.unwrap();
                            value(layout.coord(id, 0), layout.coord(id, 1))
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Runs the plan: each step is one `mma` per warp, computed from the PTX fragment tables.
fn execute(
    plan: &DotPlan,
    a: &[Vec<Vec<f64>>],
    b: &[Vec<Vec<f64>>],
    c: &[Vec<Vec<f64>>],
) -> Vec<Vec<Vec<f64>>> {
    let mut out = c.to_vec();
    let kappa = if plan.kind == MmaKind::S8 { 32 } else { 16 };
    type Fragment = fn(u32, u32, u32) -> (u32, u32);
    let (fa, fb): (Fragment, Fragment) = if plan.kind == MmaKind::S8 {
        (a8, b8)
    } else {
        (a16, b16)
    };
    for w in 0..out.len() {
        for s in &plan.steps {
            let mut am = vec![vec![f64::NAN; kappa]; 16];
            let mut bm = vec![vec![f64::NAN; 8]; kappa];
            let mut cm = vec![vec![f64::NAN; 8]; 16];
            for l in 0..32u32 {
                let (g, t) = (l / 4, l % 4);
                for (i, &r) in s.a.iter().enumerate() {
                    let (row, k) = fa(g, t, i as u32);
                    am[row as usize][k as usize] = a[w][l as usize][r as usize];
                }
                for (i, &r) in s.b.iter().enumerate() {
                    let (k, col) = fb(g, t, i as u32);
                    bm[k as usize][col as usize] = b[w][l as usize][r as usize];
                }
                for (j, &r) in s.c.iter().enumerate() {
                    let (row, col) = c_at(g, t, j as u32);
                    cm[row as usize][col as usize] = out[w][l as usize][r as usize];
                }
            }
            for l in 0..32u32 {
                let (g, t) = (l / 4, l % 4);
                for (j, &r) in s.c.iter().enumerate() {
                    let (row, col) = c_at(g, t, j as u32);
                    let dot: f64 = (0..kappa)
                        .map(|k| am[row as usize][k] * bm[k][col as usize])
                        .sum();
                    out[w][l as usize][r as usize] = dot + cm[row as usize][col as usize];
                }
            }
        }
        for l in 0..32 {
            for &(d, s) in &plan.duplicates {
                out[w][l][d as usize] = out[w][l][s as usize];
            }
        }
    }
    out
}

/// The accumulator and operand layouts of an `[m, k] × [k, n]` dot on `warps` warps.
pub(crate) fn dot_layouts(
    m: u32,
    n: u32,
    k: u32,
    warps: &[u32],
    k_width: u32,
) -> (LinearLayout, LinearLayout, LinearLayout) {
    let mma = NvidiaMma::new(2, 0, warps, &[16, 8]);
    let acc = mma.to_linear_layout(&[m, n]).unwrap();
    let a = DotOperand::new(0, k_width, MmaParent::Nvidia(mma))
        .to_linear_layout(&[m, k])
        .unwrap();
    let b = DotOperand::new(1, k_width, MmaParent::Nvidia(mma))
        .to_linear_layout(&[k, n])
        .unwrap();
    (a, b, acc)
}

#[test]
fn dots_compute_the_product_on_the_model() {
    let kinds = [
        (MmaKind::F16, 2),
        (MmaKind::S8, 4),
        (MmaKind::F8 { e4m3: true }, 4),
        // A K permutation shared by both operands (k_width 4 with the f16 instruction).
        (MmaKind::F16, 4),
    ];
    let shapes = [
        (16, 16, 32),
        (32, 32, 32),
        (64, 64, 32),
        (128, 64, 64),
        (64, 128, 32),
        (16, 64, 64),
        (128, 128, 32),
    ];
    let warp_grids: [&[u32]; 5] = [&[1, 1], &[2, 1], &[2, 2], &[4, 2], &[1, 4]];
    let mut runs = 0;
    for (kind, k_width) in kinds {
        for (m, n, k) in shapes {
            for warps in warp_grids {
                let (a, b, acc) = dot_layouts(m, n, k, warps, k_width);
                let ctx = format!("{kind:?} k_width {k_width} [{m}x{k}]x[{k}x{n}] warps {warps:?}");
                let plan = plan_dot(kind, &a, &b, &acc).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let out = execute(
                    &plan,
                    &values(&a, a_value),
                    &values(&b, b_value),
                    &values(&acc, c_value),
                );
                let expected = values(&acc, |i, j| {
                    (0..k).map(|x| a_value(i, x) * b_value(x, j)).sum::<f64>() + c_value(i, j)
                });
                assert_eq!(out, expected, "{ctx}");
                // Each thread computes each of its accumulator tiles once per K step.
                let tiles = acc.in_size(Label::Register) as usize
                    >> (2 + acc.zero_bases_mask(Label::Register).count_ones());
                let steps = (k / if kind == MmaKind::S8 { 32 } else { 16 }) as usize;
                assert_eq!(plan.steps.len(), tiles * steps, "{ctx}");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 4 * 7 * 5);
}

#[test]
fn mismatched_operands_are_an_error() {
    let (a, b, acc) = dot_layouts(64, 64, 32, &[2, 2], 2);
    // b's layout for another K arrangement than a's.
    let (_, b4, _) = dot_layouts(64, 64, 32, &[2, 2], 4);
    assert!(plan_dot(MmaKind::F16, &a, &b4, &acc).is_err());
    // The accumulator as an operand.
    let err = plan_dot(MmaKind::F16, &acc, &b, &acc)
        .unwrap_err()
        .to_string();
    assert!(err.contains("warp 0"), "{err}");
    assert!(mma_kind(Scalar::F32, Scalar::F32).is_none());
}

#[test]
fn rendered_dot_calls_mma_per_step() {
    let (a, b, acc) = dot_layouts(64, 64, 32, &[2, 2], 2);
    let plan = plan_dot(MmaKind::F16, &a, &b, &acc).unwrap();
    let (x, y, z, out) = (
        format_ident!("a"),
        format_ident!("b"),
        format_ident!("acc"),
        format_ident!("d"),
    );
    let code = render_dot(
        &plan,
        &x,
        &y,
        &z,
        Scalar::F16,
        Scalar::F32,
        &out,
        Span::call_site(),
    );
    syn::parse2::<syn::Stmt>(code.clone()).unwrap_or_else(|e| panic!("{e}: {code}"));
    let text = code.to_string();
    // One call per step in the device's form, one in the host's loop over the steps' table.
    assert_eq!(
        text.matches("mma_m16n8k16_f16_f32").count(),
        plan.steps.len() + 1
    );
    assert_eq!(plan.steps.len(), 16);
    assert!(
        text.contains(
            "const __TESSERA_STEPS : [([usize ; 8] , [usize ; 4] , [usize ; 4]) ; 16] = \
             [([0 , 1 , "
        ),
        "{text}"
    );
    assert!(
        text.contains("pack_words :: < :: tessera :: f16 , 2 , 1 >"),
        "{text}"
    );
    let plan = plan_dot(
        MmaKind::F8 { e4m3: false },
        &dot_layouts(32, 32, 32, &[2, 2], 4).0,
        &dot_layouts(32, 32, 32, &[2, 2], 4).1,
        &dot_layouts(32, 32, 32, &[2, 2], 4).2,
    )
    .unwrap();
    let text = render_dot(
        &plan,
        &x,
        &y,
        &z,
        Scalar::F8E5M2,
        Scalar::F32,
        &out,
        Span::call_site(),
    )
    .to_string();
    assert!(text.contains("NarrowFloat"), "{text}");
    assert!(text.contains("mma_m16n8k16_f16_f32"), "{text}");
}
