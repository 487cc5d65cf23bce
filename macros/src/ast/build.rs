//! The AST built from `syn`: statements, expressions, literals, paths and control flow.

use super::{BinOp, Block, Expr, ExprKind, ForLoop, Pat, Special, Stmt, UnOp};
use crate::diag::{Diagnostics, Loc, LocIds};
use crate::ir::CmpOp;
use crate::parse::{scalar_named, scalar_type};
use crate::types::Scalar;
use syn::ext::IdentExt;

/// Builds the AST from `syn` syntax, reporting what the language does not have.
pub struct AstBuilder<'a> {
    pub ids: &'a mut LocIds,
    pub diags: &'a mut Diagnostics,
}

impl AstBuilder<'_> {
    pub(super) fn invalid(
        &mut self,
        node: &impl quote::ToTokens,
        message: impl Into<String>,
    ) -> Expr {
        let loc = self.ids.of(node);
        self.diags.error(loc, message);
        Expr::invalid(loc)
    }

    /// The AST of a kernel's body. Attributes anywhere inside it are errors: `#[cfg(…)]` and
    /// its kin cannot be evaluated by the macro, and ignoring them would compile code the user
    /// switched off. (Doc comments change nothing and pass.)
    pub fn body(&mut self, block: &syn::Block) -> Block {
        let mut attributes = AttributesInBody::default();
        syn::visit::Visit::visit_block(&mut attributes, block);
        for attr in attributes.found {
            let loc = self.ids.of(attr);
            self.diags.error(loc, unsupported_attribute(attr));
        }
        self.block(block)
    }

    pub fn block(&mut self, block: &syn::Block) -> Block {
        let loc = self.ids.of(block);
        let mut stmts = Vec::new();
        let mut tail = None;
        let count = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                syn::Stmt::Local(local) => {
                    if let Some(s) = self.local(local) {
                        stmts.push(s);
                    }
                }
                syn::Stmt::Expr(syn::Expr::Verbatim(empty), Some(_)) if empty.is_empty() => {}
                syn::Stmt::Expr(e, semi) => {
                    if semi.is_none() && i + 1 == count && !is_statement_like(e) {
                        tail = Some(Box::new(self.expr(e)));
                    } else if let Some(s) = self.expr_stmt(e) {
                        stmts.push(s);
                    }
                }
                syn::Stmt::Item(item) => {
                    let what = match item {
                        syn::Item::Const(_) => {
                            "a `const` item inside a kernel is not supported: define layouts \
                             and constants outside the kernel"
                        }
                        syn::Item::Fn(_) => {
                            "a nested function is not supported: define a helper outside \
                             the kernel with #[tile_fn] and list it, `uses = [name]`"
                        }
                        _ => "items (fn, struct, use, …) are not supported inside a tile kernel",
                    };
                    self.invalid(item, what);
                }
                syn::Stmt::Macro(m) => {
                    self.invalid(
                        m,
                        "macros are not supported inside a tile kernel (the body is compiled \
                         to GPU code by #[tile_kernel], not by rustc)",
                    );
                }
            }
        }
        Block { stmts, tail, loc }
    }

    fn local(&mut self, local: &syn::Local) -> Option<Stmt> {
        let pat = self.pat(&local.pat)?;
        let Some(init) = &local.init else {
            let loc = self.ids.of(local);
            self.diags
                .error(loc, "a `let` in a tile kernel needs a value: `let x = …;`");
            return None;
        };
        if let Some((_, diverge)) = &init.diverge {
            self.invalid(diverge, "`let … else` is not supported in a tile kernel");
            return None;
        }
        let init = self.expr(&init.expr);
        Some(Stmt::Let { pat, init })
    }

    fn pat(&mut self, pat: &syn::Pat) -> Option<Pat> {
        let loc = self.ids.of(pat);
        match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(Pat::Bind {
                name: p.ident.unraw().to_string(),
                mutable: p.mutability.is_some(),
                loc,
            }),
            syn::Pat::Wild(_) => Some(Pat::Wild { loc }),
            syn::Pat::Tuple(t) => {
                let elems: Option<Vec<Pat>> = t.elems.iter().map(|p| self.pat(p)).collect();
                Some(Pat::Tuple { elems: elems?, loc })
            }
            syn::Pat::Paren(p) => self.pat(&p.pat),
            syn::Pat::Type(t) => {
                self.diags.error(
                    self.ids.of(&t.ty),
                    "type annotations on `let` are not supported: the shape and element type \
                     of a tile are inferred (cast with `as T` or `.to::<T>()`)",
                );
                self.pat(&t.pat)
            }
            _ => {
                self.diags.error(
                    loc,
                    "expected a name, `_` or a tuple `(a, b)` on the left of `let`",
                );
                None
            }
        }
    }

    /// An expression in statement position (assignments are statements only).
    fn expr_stmt(&mut self, e: &syn::Expr) -> Option<Stmt> {
        let loc = self.ids.of(e);
        match e {
            syn::Expr::Assign(a) => {
                let (name, name_loc) = self.assign_target(&a.left)?;
                let value = self.expr(&a.right);
                Some(Stmt::Assign {
                    name,
                    name_loc,
                    op: None,
                    value,
                    loc,
                })
            }
            syn::Expr::Binary(b) => match compound_op(&b.op) {
                Some(op) => {
                    let (name, name_loc) = self.assign_target(&b.left)?;
                    let value = self.expr(&b.right);
                    Some(Stmt::Assign {
                        name,
                        name_loc,
                        op: Some(op),
                        value,
                        loc,
                    })
                }
                None => Some(Stmt::Expr(self.expr(e))),
            },
            _ => Some(Stmt::Expr(self.expr(e))),
        }
    }

    fn assign_target(&mut self, left: &syn::Expr) -> Option<(String, Loc)> {
        match left {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let ident = p.path.get_ident()?;
                Some((ident.unraw().to_string(), self.ids.of(ident)))
            }
            other => {
                self.invalid(
                    other,
                    "only a variable can be assigned to (tiles have no elements to assign: \
                     build a new tile with `where_(mask, new, old)`)",
                );
                None
            }
        }
    }

    pub fn expr(&mut self, e: &syn::Expr) -> Expr {
        let loc = self.ids.of(e);
        let kind = match e {
            syn::Expr::Lit(lit) => return self.literal(&lit.lit, loc),
            syn::Expr::Paren(p) => return self.reloc(&p.expr, loc),
            syn::Expr::Group(g) => return self.expr(&g.expr),
            syn::Expr::Path(p) => return self.path(p, loc),
            syn::Expr::Array(a) => ExprKind::Array(a.elems.iter().map(|e| self.expr(e)).collect()),
            syn::Expr::Binary(b) => match binary_op(&b.op) {
                Some(op) => ExprKind::Binary {
                    op,
                    lhs: Box::new(self.expr(&b.left)),
                    rhs: Box::new(self.expr(&b.right)),
                },
                None => {
                    return self.invalid(
                        &b.op,
                        format!(
                            "`{}` assigns: it is a statement, not a value",
                            quote::ToTokens::to_token_stream(&b.op)
                        ),
                    )
                }
            },
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ => {
                        return self
                            .invalid(&u.op, "tiles are values: there is nothing to dereference")
                    }
                };
                ExprKind::Unary {
                    op,
                    operand: Box::new(self.expr(&u.expr)),
                }
            }
            syn::Expr::Cast(c) => match scalar_type(&c.ty, self.ids, self.diags) {
                Some(to) => ExprKind::Cast {
                    value: Box::new(self.expr(&c.expr)),
                    to,
                },
                None => ExprKind::Invalid,
            },
            syn::Expr::Call(c) => return self.call(c, loc),
            syn::Expr::MethodCall(m) => return self.method_call(m, loc),
            syn::Expr::If(i) => return self.if_expr(i, loc),
            syn::Expr::ForLoop(f) => return self.for_loop(f, loc),
            syn::Expr::While(w) => return self.while_loop(w, loc),
            syn::Expr::Block(b) => {
                if let Some(label) = &b.label {
                    return self.invalid(label, "labels are not supported in a tile kernel");
                }
                ExprKind::Block(self.block(&b.block))
            }
            syn::Expr::Tuple(t) if t.elems.len() == 2 => ExprKind::Pair(
                Box::new(self.expr(&t.elems[0])),
                Box::new(self.expr(&t.elems[1])),
            ),
            syn::Expr::Tuple(t) if t.elems.len() > 2 => {
                ExprKind::Tuple(t.elems.iter().map(|e| self.expr(e)).collect())
            }
            syn::Expr::Assign(_) => {
                return self.invalid(
                    e,
                    "an assignment is a statement, not a value: end it with `;`",
                )
            }
            other => return self.invalid(other, unsupported_expr(other)),
        };
        Expr { kind, loc }
    }

    /// `inner` with the location of the parenthesised expression around it.
    fn reloc(&mut self, inner: &syn::Expr, loc: Loc) -> Expr {
        let mut e = self.expr(inner);
        e.loc = loc;
        e
    }

    fn literal(&mut self, lit: &syn::Lit, loc: Loc) -> Expr {
        let kind = match lit {
            syn::Lit::Int(i) => {
                let suffix = self.suffix(i.suffix(), lit);
                match i.base10_parse::<i128>() {
                    Ok(value) => ExprKind::Int { value, suffix },
                    Err(_) => return self.invalid(lit, "this integer literal is too large"),
                }
            }
            syn::Lit::Float(f) => {
                let suffix = self.suffix(f.suffix(), lit);
                if suffix.is_some_and(|s| !s.is_float()) {
                    return self.invalid(lit, "a float literal cannot have an integer type suffix");
                }
                match f.base10_parse::<f64>() {
                    Ok(value) if value.is_infinite() => {
                        let ty = suffix.unwrap_or(Scalar::F64);
                        return self.invalid(
                            lit,
                            format!(
                                "floating-point literal out of range for {ty} (it would be \
                                 infinity; write `{ty}::INFINITY` if that is meant)"
                            ),
                        );
                    }
                    Ok(value) => ExprKind::Float { value, suffix },
                    Err(e) => return self.invalid(lit, e.to_string()),
                }
            }
            syn::Lit::Bool(b) => ExprKind::Bool(b.value),
            syn::Lit::Str(s) => ExprKind::Str(s.value()),
            other => {
                return self.invalid(
                    other,
                    "only numbers and `true`/`false` are values of the tile language (and strings, as the memory order and scope of an atomic)",
                )
            }
        };
        Expr { kind, loc }
    }

    fn suffix(&mut self, suffix: &str, lit: &syn::Lit) -> Option<Scalar> {
        if suffix.is_empty() {
            return None;
        }
        let ident = syn::Ident::new(suffix, lit.span());
        scalar_named(&ident, self.ids, self.diags)
    }

    fn path(&mut self, p: &syn::ExprPath, loc: Loc) -> Expr {
        if p.qself.is_none() {
            if let Some(ident) = p.path.get_ident() {
                return Expr {
                    kind: ExprKind::Var(ident.unraw().to_string()),
                    loc,
                };
            }
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.unraw().to_string())
                .collect();
            if let [ty, name] = segs.as_slice() {
                if let Some(ty) = Scalar::from_name(ty) {
                    let which = match name.as_str() {
                        "MAX" => Some(Special::Max),
                        "MIN" => Some(Special::Min),
                        "INFINITY" if ty.is_float() => Some(Special::Infinity),
                        "NEG_INFINITY" if ty.is_float() => Some(Special::NegInfinity),
                        "NAN" if ty.is_float() => Some(Special::Nan),
                        _ => None,
                    };
                    if let Some(which) = which {
                        if ty != Scalar::Bool {
                            return Expr {
                                kind: ExprKind::Special { ty, which },
                                loc,
                            };
                        }
                    }
                    return self.invalid(
                        p,
                        format!(
                            "`{}::{name}` is not a constant of the tile language (it has `MAX`, \
                             `MIN`, and on floats `INFINITY`, `NEG_INFINITY`, `NAN`)",
                            ty.name()
                        ),
                    );
                }
            }
        }
        self.invalid(
            p,
            "paths are not values in a tile kernel: use a parameter, a `let` variable, a const \
             parameter or a literal",
        )
    }
}

impl AstBuilder<'_> {
    fn if_expr(&mut self, i: &syn::ExprIf, loc: Loc) -> Expr {
        if let syn::Expr::Let(l) = &*i.cond {
            return self.invalid(
                l,
                "`if let` is not supported: tiles have no patterns to match",
            );
        }
        let cond = Box::new(self.expr(&i.cond));
        let then = self.block(&i.then_branch);
        let els = i.else_branch.as_ref().map(|(_, e)| Box::new(self.expr(e)));
        Expr {
            kind: ExprKind::If { cond, then, els },
            loc,
        }
    }

    fn while_loop(&mut self, w: &syn::ExprWhile, loc: Loc) -> Expr {
        if let Some(label) = &w.label {
            return self.invalid(label, "labels are not supported in a tile kernel");
        }
        if let syn::Expr::Let(l) = strip_groups(&w.cond) {
            return self.invalid(
                l,
                "`while let` is not supported: tiles have no patterns to match",
            );
        }
        let cond = Box::new(self.expr(&w.cond));
        let body = self.block(&w.body);
        Expr {
            kind: ExprKind::While { cond, body },
            loc,
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop, loc: Loc) -> Expr {
        if let Some(label) = &f.label {
            return self.invalid(label, "labels are not supported in a tile kernel");
        }
        let var = match &*f.pat {
            syn::Pat::Ident(p)
                if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() =>
            {
                Pat::Bind {
                    name: p.ident.unraw().to_string(),
                    mutable: false,
                    loc: self.ids.of(p),
                }
            }
            syn::Pat::Wild(w) => Pat::Wild {
                loc: self.ids.of(w),
            },
            other => {
                return self.invalid(other, "the loop variable of `for` is a name or `_`");
            }
        };
        const RANGES: &str = "a `for` loop in a tile kernel runs over `start..end` or \
                              `(start..end).step_by(step)`, optionally `.num_stages(S)`";
        let (ranged, num_stages) = match strip_groups(&f.expr) {
            syn::Expr::MethodCall(m) if m.method == "num_stages" => match self.loop_stages(m) {
                Some(stages) => (strip_groups(&m.receiver), Some(stages)),
                None => return Expr::invalid(loc),
            },
            other => (other, None),
        };
        let (range, step) = match ranged {
            syn::Expr::Range(r) => (r, None),
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                match strip_groups(&m.receiver) {
                    syn::Expr::Range(r) => (r, Some(&m.args[0])),
                    _ => return self.invalid(&f.expr, RANGES),
                }
            }
            other => return self.invalid(other, RANGES),
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return self.invalid(range, format!("{RANGES}, with both bounds"));
        };
        if let syn::RangeLimits::Closed(dots) = &range.limits {
            return self.invalid(dots, format!("{RANGES} (write `start..end + 1` for `..=`)"));
        }
        let start = Box::new(self.expr(start));
        let end = Box::new(self.expr(end));
        let step = step.map(|s| Box::new(self.expr(s)));
        let body = self.block(&f.body);
        Expr {
            kind: ExprKind::For(ForLoop {
                var,
                start,
                end,
                step,
                num_stages,
                body,
            }),
            loc,
        }
    }

    /// The `S` of `range.num_stages(S)`: an integer literal from 1 to
    /// [`MAX_NUM_STAGES`](crate::parse::MAX_NUM_STAGES), as the attribute's (else an error at the
    /// argument, and `None`).
    fn loop_stages(&mut self, m: &syn::ExprMethodCall) -> Option<(u32, Loc)> {
        use crate::parse::MAX_NUM_STAGES;
        let message = format!(
            "`num_stages` of a loop is one integer literal from 1 (no pipelining) to \
             {MAX_NUM_STAGES}: `(start..end).num_stages(3)`"
        );
        let [arg] = m.args.iter().collect::<Vec<_>>()[..] else {
            self.invalid(m, message);
            return None;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(lit),
            ..
        }) = strip_groups(arg)
        else {
            self.invalid(arg, message);
            return None;
        };
        match lit.base10_parse::<i128>() {
            Ok(s) if (1..=MAX_NUM_STAGES).contains(&s) && lit.suffix().is_empty() => {
                Some((s as u32, self.ids.of(arg)))
            }
            _ => {
                self.invalid(arg, message);
                None
            }
        }
    }
}

/// The attributes (other than doc comments) inside a kernel body, in source order.
#[derive(Default)]
struct AttributesInBody<'ast> {
    found: Vec<&'ast syn::Attribute>,
}

impl<'ast> syn::visit::Visit<'ast> for AttributesInBody<'ast> {
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if !attr.path().is_ident("doc") {
            self.found.push(attr);
        }
    }
}

/// Why the attribute `attr` inside a kernel body is refused.
fn unsupported_attribute(attr: &syn::Attribute) -> String {
    let path = attr.path();
    let what = if path.is_ident("cfg") || path.is_ident("cfg_attr") {
        "#[tile_kernel] cannot evaluate `cfg` conditions, and ignoring one would compile code \
         that is switched off: choose between variants with a const parameter and `if`, or \
         write one kernel per configuration"
    } else {
        "the body is compiled to GPU code by #[tile_kernel], which would ignore it"
    };
    let name: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    format!(
        "attributes inside a tile kernel are not supported: `#[{}]` — {what}",
        name.join("::")
    )
}

/// Statements that end without `;` but are not the block's value (`for`, `if` without `else`).
fn is_statement_like(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::ForLoop(_) | syn::Expr::While(_) | syn::Expr::Loop(_) => true,
        syn::Expr::If(i) => i.else_branch.is_none(),
        _ => false,
    }
}

pub(super) fn strip_groups(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Group(g) => strip_groups(&g.expr),
        syn::Expr::Paren(p) => strip_groups(&p.expr),
        other => other,
    }
}

fn binary_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as S;
    Some(match op {
        S::Add(_) => BinOp::Add,
        S::Sub(_) => BinOp::Sub,
        S::Mul(_) => BinOp::Mul,
        S::Div(_) => BinOp::Div,
        S::Rem(_) => BinOp::Rem,
        S::And(_) => BinOp::And,
        S::Or(_) => BinOp::Or,
        S::BitXor(_) => BinOp::BitXor,
        S::BitAnd(_) => BinOp::BitAnd,
        S::BitOr(_) => BinOp::BitOr,
        S::Shl(_) => BinOp::Shl,
        S::Shr(_) => BinOp::Shr,
        S::Eq(_) => BinOp::Cmp(CmpOp::Eq),
        S::Lt(_) => BinOp::Cmp(CmpOp::Lt),
        S::Le(_) => BinOp::Cmp(CmpOp::Le),
        S::Ne(_) => BinOp::Cmp(CmpOp::Ne),
        S::Ge(_) => BinOp::Cmp(CmpOp::Ge),
        S::Gt(_) => BinOp::Cmp(CmpOp::Gt),
        _ => return None,
    })
}

/// The operator of `x op= y`.
fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as S;
    Some(match op {
        S::AddAssign(_) => BinOp::Add,
        S::SubAssign(_) => BinOp::Sub,
        S::MulAssign(_) => BinOp::Mul,
        S::DivAssign(_) => BinOp::Div,
        S::RemAssign(_) => BinOp::Rem,
        S::BitXorAssign(_) => BinOp::BitXor,
        S::BitAndAssign(_) => BinOp::BitAnd,
        S::BitOrAssign(_) => BinOp::BitOr,
        S::ShlAssign(_) => BinOp::Shl,
        S::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

/// The message for Rust syntax the tile language does not have.
fn unsupported_expr(e: &syn::Expr) -> String {
    let (what, instead) = match e {
        syn::Expr::Loop(_) => (
            "`loop` is",
            "use `while condition { … }` or `for i in start..end`",
        ),
        syn::Expr::Match(_) => (
            "`match` is",
            "use `if` on a scalar or `where_(c, a, b)` on tiles",
        ),
        syn::Expr::Closure(_) => (
            "closures are",
            "reductions are the named operations sum/max/min/argmax/argmin",
        ),
        syn::Expr::Index(_) => (
            "indexing a tile is",
            "tiles are whole values: use `gather`, `load` or `split`",
        ),
        syn::Expr::Field(_) => ("field access is", "tiles have no fields"),
        syn::Expr::Reference(_) => ("references are", "tiles are passed by value"),
        syn::Expr::Return(_) => ("`return` is", "mask the work instead of leaving early"),
        syn::Expr::Break(_) | syn::Expr::Continue(_) => (
            "`break` and `continue` are",
            "a `for` loop runs over its whole range; put the exit test in the condition of \
                 a `while` loop",
        ),
        syn::Expr::Macro(_) => (
            "macros are",
            "the body is compiled to GPU code by #[tile_kernel], not by rustc",
        ),
        syn::Expr::Tuple(_) => (
            "the empty tuple `()` and one-element tuples are",
            "pairs and longer tuples are destructured by `let (x, y, …) = (a, b, …)`",
        ),
        syn::Expr::Range(_) => (
            "ranges outside `for` are",
            "use `arange(start, end)` for a tile of indices",
        ),
        syn::Expr::Struct(_) => ("struct literals are", "tiles are built by operations"),
        syn::Expr::Repeat(_) => ("`[x; n]` arrays are", "use `full([n], x)`"),
        syn::Expr::Unsafe(_) => ("`unsafe` blocks are", "the kernel body needs none"),
        syn::Expr::Async(_) | syn::Expr::Await(_) => {
            ("`async` and `.await` are", "kernels run synchronously")
        }
        syn::Expr::Try(_) => ("`?` is", "tile operations do not fail at run time"),
        syn::Expr::Let(_) => ("`let` inside an expression is", "use a `let` statement"),
        _ => (
            "this expression is",
            "see the tessera::tile_kernel docs for the language",
        ),
    };
    format!("{what} not supported in a tile kernel: {instead}")
}
