use super::*;
use crate::diag::{Diagnostics, LocIds};
use quote::quote;

fn lower(body: proc_macro2::TokenStream) -> (Block, Vec<String>) {
    let mut ids = LocIds::default();
    let mut diags = Diagnostics::default();
    let block: syn::Block = syn::parse2(quote!({ #body })).unwrap();
    let b = AstBuilder {
        ids: &mut ids,
        diags: &mut diags,
    }
    .block(&block);
    (b, diags.iter().map(|d| d.message.clone()).collect())
}

fn init(stmt: &Stmt) -> &Expr {
    match stmt {
        Stmt::Let { init, .. } => init,
        other => panic!("expected a `let`, found {other:?}"),
    }
}

#[test]
fn method_calls_become_operations_with_the_receiver_first() {
    let (b, errors) = lower(quote! {
        let a = x.sum(1) + exp(-x) as f16;
        let b = (x.to::<bf16>()).trans([1, 0]).convert_layout(layouts::L);
        let c = zeros::<f32>([BLOCK / 2, 4]);
        let d = f32::NEG_INFINITY;
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        init(&b.stmts[0]).to_string(),
        "sum(x, 1) + (exp(-x) as f16)"
    );
    assert_eq!(
        init(&b.stmts[1]).to_string(),
        "convert_layout(trans(x as bf16, [1, 0]), layouts::L)"
    );
    assert_eq!(
        init(&b.stmts[2]).to_string(),
        "zeros::<f32>([BLOCK / 2, 4])"
    );
    assert_eq!(init(&b.stmts[3]).to_string(), "f32::NEG_INFINITY");
    assert!(matches!(
        init(&b.stmts[0]).kind,
        ExprKind::Binary { op: BinOp::Add, .. }
    ));
}

#[test]
fn statements_and_control_flow() {
    let (b, errors) = lower(quote! {
        let mut acc = zeros::<f32>([16]);
        let (lo, hi) = t.split();
        for i in (0..n).step_by(2) {
            acc += lo;
        }
        if n > 0 { acc = hi; } else if n < 0 { acc = lo; }
        let v = if c { 1 } else { 2 };
        store(p, acc)
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(b.stmts.len(), 5);
    assert!(matches!(
        &b.stmts[0],
        Stmt::Let {
            pat: Pat::Bind { mutable: true, .. },
            ..
        }
    ));
    assert!(
        matches!(&b.stmts[1], Stmt::Let { pat: Pat::Tuple { elems, .. }, .. } if elems.len() == 2)
    );
    let Stmt::Expr(Expr {
        kind:
            ExprKind::For(ForLoop {
                step: Some(_),
                body,
                ..
            }),
        ..
    }) = &b.stmts[2]
    else {
        panic!("expected a `for`: {:?}", b.stmts[2]);
    };
    assert!(matches!(
        &body.stmts[0],
        Stmt::Assign { op: Some(BinOp::Add), name, .. } if name == "acc"
    ));
    let Stmt::Expr(Expr {
        kind: ExprKind::If { els: Some(els), .. },
        ..
    }) = &b.stmts[3]
    else {
        panic!("expected an `if`");
    };
    assert!(matches!(els.kind, ExprKind::If { .. }));
    assert!(matches!(init(&b.stmts[4]).kind, ExprKind::If { .. }));
    // `store(..)` without `;` at the end is the block's tail.
    assert_eq!(b.tail.as_ref().unwrap().to_string(), "store(p, acc)");
}

#[test]
fn unsupported_syntax_is_reported_and_lowering_continues() {
    let (b, errors) = lower(quote! {
        let a = v[0];
        let b = |x| x;
        let c = frob(a);
        let d = a.field;
        let e = exp(1.0);
    });
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors[0].starts_with("indexing a tile is not supported"));
    assert!(errors[1].starts_with("closures are not supported"));
    assert!(errors[2].starts_with("unknown tile operation `frob`"));
    assert!(errors[3].starts_with("field access is not supported"));
    assert_eq!(b.stmts.len(), 5);
    assert!(matches!(init(&b.stmts[0]).kind, ExprKind::Invalid));
    assert_eq!(init(&b.stmts[4]).to_string(), "exp(1.0)");
}

#[test]
fn literals() {
    let (b, errors) = lower(quote! {
        let a = 0x10;
        let b = 2.5e3f32;
        let c = 7u8;
        let d = 1.0i32;
        let e = 3float;
    });
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("float literal cannot have an integer type suffix"));
    assert!(errors[1].contains("`float` is not an element type"));
    assert!(matches!(
        init(&b.stmts[0]).kind,
        ExprKind::Int {
            value: 16,
            suffix: None
        }
    ));
    assert!(matches!(
        init(&b.stmts[1]).kind,
        ExprKind::Float {
            suffix: Some(Scalar::F32),
            ..
        }
    ));
    assert!(matches!(
        init(&b.stmts[2]).kind,
        ExprKind::Int {
            value: 7,
            suffix: Some(Scalar::U8)
        }
    ));
}
