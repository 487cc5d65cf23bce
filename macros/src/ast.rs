//! The kernel body as a small syntax tree of the tile language, lowered from `syn`.
//!
//! This stage resolves what is purely syntactic: which Rust constructs the language has, which
//! operation a call names (and its arity), element type names, literal values. It knows nothing
//! of shapes or types; the checker (`check`) does that. Unsupported syntax is reported and replaced
//! by [`ExprKind::Invalid`], so the rest of the body is still lowered and checked.

use crate::diag::{did_you_mean, Diagnostics, Loc, LocIds};
use crate::ops::{self, Op, TypeArg, OPS, OTHER_NAMES};
use crate::parse::{scalar_named, scalar_type};
use crate::types::Scalar;

/// A `{ … }` block: statements and an optional value.
#[derive(Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The final expression without `;`, the block's value.
    pub tail: Option<Box<Expr>>,
    pub loc: Loc,
}

#[derive(Debug)]
pub enum Stmt {
    /// `let pat = init;`
    Let { pat: Pat, init: Expr },
    /// `name = value;` or, with `op`, `name op= value;`
    Assign {
        name: String,
        name_loc: Loc,
        op: Option<BinOp>,
        value: Expr,
        loc: Loc,
    },
    /// An expression evaluated for its effect (`store(..);`, `for`, `if`).
    Expr(Expr),
}

/// The left side of `let`.
#[derive(Debug)]
pub enum Pat {
    Bind {
        name: String,
        mutable: bool,
        loc: Loc,
    },
    Wild {
        loc: Loc,
    },
    Tuple {
        elems: Vec<Pat>,
        loc: Loc,
    },
}

impl Pat {
    pub fn loc(&self) -> Loc {
        match self {
            Pat::Bind { loc, .. } | Pat::Wild { loc } | Pat::Tuple { loc, .. } => *loc,
        }
    }
}

#[derive(Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: Loc,
}

#[derive(Debug)]
pub enum ExprKind {
    /// An integer literal; with a suffix (`3u32`) it has that type, else it adapts to its use.
    Int {
        value: i128,
        suffix: Option<Scalar>,
    },
    /// A float literal; with a suffix (`1.0f32`) it has that type, else it adapts to its use.
    Float {
        value: f64,
        suffix: Option<Scalar>,
    },
    Bool(bool),
    /// `f32::INFINITY`, `i32::MAX`, …
    Special {
        ty: Scalar,
        which: Special,
    },
    /// A variable, parameter or const parameter.
    Var(String),
    /// `[a, b, …]`: a shape or a permutation.
    Array(Vec<Expr>),
    /// An operation; a method call has its receiver as `args[0]`.
    Call {
        op: Op,
        /// The `::<T>` element type.
        type_arg: Option<Scalar>,
        args: Vec<Expr>,
        /// The operation's name in the source.
        name_loc: Loc,
    },
    /// `convert_layout(value, LAYOUT)`: `LAYOUT` names a user-written `const` layout.
    ConvertLayout {
        value: Box<Expr>,
        layout: syn::Path,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    /// `value as T` (and `value.to::<T>()`).
    Cast {
        value: Box<Expr>,
        to: Scalar,
    },
    /// `if cond { … } else { … }`; `els` is a `Block` or another `If`.
    If {
        cond: Box<Expr>,
        then: Block,
        els: Option<Box<Expr>>,
    },
    /// `for var in start..end { … }` or `for var in (start..end).step_by(step) { … }`.
    For {
        var: Pat,
        start: Box<Expr>,
        end: Box<Expr>,
        step: Option<Box<Expr>>,
        body: Block,
    },
    Block(Block),
    /// Syntax the language does not have; an error was reported.
    Invalid,
}

/// `MAX`, `INFINITY` and friends on an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Max,
    Min,
    Infinity,
    NegInfinity,
    Nan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    /// `&&`: on bools, the same as `&` (tiles have no short circuit).
    And,
    /// `||`: on bools, the same as `|`.
    Or,
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Ge => ">=",
            BinOp::Gt => ">",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne | BinOp::Ge | BinOp::Gt
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// Lowers `syn` syntax to the AST, reporting what the language does not have.
pub struct Lowerer<'a> {
    pub ids: &'a mut LocIds,
    pub diags: &'a mut Diagnostics,
}

impl Lowerer<'_> {
    fn invalid(&mut self, node: &impl quote::ToTokens, message: impl Into<String>) -> Expr {
        let loc = self.ids.of(node);
        self.diags.error(loc, message);
        Expr {
            kind: ExprKind::Invalid,
            loc,
        }
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
                            "a nested function is not supported: the tile language has no \
                             function calls other than its operations"
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
                name: p.ident.to_string(),
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
                Some((ident.to_string(), self.ids.of(ident)))
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
            syn::Expr::Block(b) => {
                if let Some(label) = &b.label {
                    return self.invalid(label, "labels are not supported in a tile kernel");
                }
                ExprKind::Block(self.block(&b.block))
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
                    Ok(value) => ExprKind::Float { value, suffix },
                    Err(e) => return self.invalid(lit, e.to_string()),
                }
            }
            syn::Lit::Bool(b) => ExprKind::Bool(b.value),
            other => {
                return self.invalid(
                    other,
                    "only numbers and `true`/`false` are values of the tile language",
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
                    kind: ExprKind::Var(ident.to_string()),
                    loc,
                };
            }
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
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

    fn call(&mut self, c: &syn::ExprCall, loc: Loc) -> Expr {
        let path = match &*c.func {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => &p.path,
            other => {
                return self.invalid(
                    other,
                    "call an operation by its name, e.g. `exp(x)` or `load(ptrs, mask, 0.0)`",
                )
            }
        };
        let segment = &path.segments[0];
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let type_arg = match &segment.arguments {
            syn::PathArguments::None => None,
            syn::PathArguments::AngleBracketed(a) => Some(a),
            syn::PathArguments::Parenthesized(p) => {
                return self.invalid(p, "unexpected parenthesised arguments")
            }
        };
        self.operation(&segment.ident, type_arg, None, &args, loc)
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall, loc: Loc) -> Expr {
        let args: Vec<&syn::Expr> = m.args.iter().collect();
        self.operation(
            &m.method,
            m.turbofish.as_ref(),
            Some(&m.receiver),
            &args,
            loc,
        )
    }

    /// A call `name::<T>(args)` or method call `receiver.name::<T>(args)`.
    fn operation(
        &mut self,
        name: &syn::Ident,
        type_arg: Option<&syn::AngleBracketedGenericArguments>,
        receiver: Option<&syn::Expr>,
        args: &[&syn::Expr],
        loc: Loc,
    ) -> Expr {
        let name_loc = self.ids.of(name);
        let name_str = name.to_string();
        let Some(info) = ops::lookup(&name_str) else {
            let hint = OTHER_NAMES
                .iter()
                .find(|(other, _)| *other == name_str)
                .map(|(_, ours)| *ours)
                .or_else(|| did_you_mean(&name_str, OPS.iter().map(|o| o.name)))
                .map(|ours| format!(" (did you mean `{ours}`?)"))
                .unwrap_or_default();
            let how = if receiver.is_some() {
                "method"
            } else {
                "operation"
            };
            self.diags.error(
                name_loc,
                format!(
                    "unknown tile {how} `{name_str}`{hint}: the operations of the tile language \
                     are listed in the docs of tessera::tile_kernel"
                ),
            );
            // Still lower the arguments: errors inside them are worth reporting too.
            for a in receiver.into_iter().chain(args.iter().copied()) {
                self.expr(a);
            }
            return Expr {
                kind: ExprKind::Invalid,
                loc,
            };
        };
        if receiver.is_some() && !info.method {
            self.diags.error(
                name_loc,
                format!(
                    "`{name_str}` is a free function, not a method: write `{}`",
                    info.usage
                ),
            );
            return Expr {
                kind: ExprKind::Invalid,
                loc,
            };
        }
        let count = args.len() + usize::from(receiver.is_some());
        if count < info.min_args || count > info.max_args {
            let expected = if info.min_args == info.max_args {
                format!("{}", info.min_args)
            } else {
                format!("{} to {}", info.min_args, info.max_args)
            };
            let counted = if receiver.is_some() {
                ", counting the tile it is called on"
            } else {
                ""
            };
            self.diags.error(
                loc,
                format!(
                    "`{name_str}` takes {expected} argument{}{counted}, but {count} {} given: \
                     write `{}`",
                    if info.max_args == 1 { "" } else { "s" },
                    if count == 1 { "was" } else { "were" },
                    info.usage
                ),
            );
            return Expr {
                kind: ExprKind::Invalid,
                loc,
            };
        }
        let type_arg = match (type_arg, info.type_arg) {
            (None, TypeArg::Required) => {
                self.diags.error(
                    name_loc,
                    format!(
                        "`{name_str}` needs the element type: write `{}`",
                        info.usage
                    ),
                );
                return Expr {
                    kind: ExprKind::Invalid,
                    loc,
                };
            }
            (None, _) => None,
            (Some(t), TypeArg::None) => {
                self.diags.error(
                    self.ids.of(t),
                    format!("`{name_str}` takes no `::<T>`: write `{}`", info.usage),
                );
                return Expr {
                    kind: ExprKind::Invalid,
                    loc,
                };
            }
            (Some(t), _) => match t.args.iter().collect::<Vec<_>>().as_slice() {
                [syn::GenericArgument::Type(ty)] => match scalar_type(ty, self.ids, self.diags) {
                    Some(s) => Some(s),
                    None => {
                        return Expr {
                            kind: ExprKind::Invalid,
                            loc,
                        }
                    }
                },
                _ => {
                    self.diags.error(
                        self.ids.of(t),
                        format!("write one element type: `{}`", info.usage),
                    );
                    return Expr {
                        kind: ExprKind::Invalid,
                        loc,
                    };
                }
            },
        };
        let all: Vec<&syn::Expr> = receiver.into_iter().chain(args.iter().copied()).collect();
        match info.op {
            Op::To => {
                let value = Box::new(self.expr(all[0]));
                let to = type_arg.expect("`to` requires a type argument, checked above");
                Expr {
                    kind: ExprKind::Cast { value, to },
                    loc,
                }
            }
            Op::ConvertLayout => {
                let value = Box::new(self.expr(all[0]));
                match strip_groups(all[1]) {
                    syn::Expr::Path(p) if p.qself.is_none() => Expr {
                        kind: ExprKind::ConvertLayout {
                            value,
                            layout: p.path.clone(),
                        },
                        loc,
                    },
                    other => self.invalid(
                        other,
                        "the layout of `convert_layout` is the name of a `const` layout defined \
                         outside the kernel, e.g. `x.convert_layout(ROW_MAJOR_4_WARPS)`",
                    ),
                }
            }
            op => Expr {
                kind: ExprKind::Call {
                    op,
                    type_arg,
                    args: all.iter().map(|a| self.expr(a)).collect(),
                    name_loc,
                },
                loc,
            },
        }
    }

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

    fn for_loop(&mut self, f: &syn::ExprForLoop, loc: Loc) -> Expr {
        if let Some(label) = &f.label {
            return self.invalid(label, "labels are not supported in a tile kernel");
        }
        let var = match &*f.pat {
            syn::Pat::Ident(p)
                if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() =>
            {
                Pat::Bind {
                    name: p.ident.to_string(),
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
                              `(start..end).step_by(step)`";
        let (range, step) = match strip_groups(&f.expr) {
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
            kind: ExprKind::For {
                var,
                start,
                end,
                step,
                body,
            },
            loc,
        }
    }
}

/// Statements that end without `;` but are not the block's value (`for`, `if` without `else`).
fn is_statement_like(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::ForLoop(_) | syn::Expr::While(_) | syn::Expr::Loop(_) => true,
        syn::Expr::If(i) => i.else_branch.is_none(),
        _ => false,
    }
}

fn strip_groups(e: &syn::Expr) -> &syn::Expr {
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
        S::Eq(_) => BinOp::Eq,
        S::Lt(_) => BinOp::Lt,
        S::Le(_) => BinOp::Le,
        S::Ne(_) => BinOp::Ne,
        S::Ge(_) => BinOp::Ge,
        S::Gt(_) => BinOp::Gt,
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
        syn::Expr::While(_) => ("`while` loops are", "use `for i in start..end`"),
        syn::Expr::Loop(_) => ("`loop` is", "use `for i in start..end`"),
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
        syn::Expr::Break(_) | syn::Expr::Continue(_) => {
            ("`break` and `continue` are", "loops run over a fixed range")
        }
        syn::Expr::Macro(_) => (
            "macros are",
            "the body is compiled to GPU code by #[tile_kernel], not by rustc",
        ),
        syn::Expr::Tuple(_) => (
            "tuples are",
            "`split` is the only operation with two results",
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

impl std::fmt::Display for Expr {
    /// The expression written back as source (normalised spacing; method calls as written with
    /// the receiver first), for naming it in messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ExprKind::Int { value, suffix } => {
                write!(f, "{value}{}", suffix.map_or("", Scalar::name))
            }
            ExprKind::Float { value, suffix } => {
                write!(f, "{value:?}{}", suffix.map_or("", Scalar::name))
            }
            ExprKind::Bool(b) => write!(f, "{b}"),
            ExprKind::Special { ty, which } => {
                let name = match which {
                    Special::Max => "MAX",
                    Special::Min => "MIN",
                    Special::Infinity => "INFINITY",
                    Special::NegInfinity => "NEG_INFINITY",
                    Special::Nan => "NAN",
                };
                write!(f, "{ty}::{name}")
            }
            ExprKind::Var(name) => f.write_str(name),
            ExprKind::Array(elems) => {
                f.write_str("[")?;
                write_list(f, elems)?;
                f.write_str("]")
            }
            ExprKind::Call {
                op, args, type_arg, ..
            } => {
                let info = ops::info_of(*op);
                write!(f, "{}", info.name)?;
                if let Some(t) = type_arg {
                    write!(f, "::<{t}>")?;
                }
                f.write_str("(")?;
                write_list(f, args)?;
                f.write_str(")")
            }
            ExprKind::ConvertLayout { value, layout } => {
                let segments: Vec<String> = layout
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                write!(f, "convert_layout({value}, {})", segments.join("::"))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                write_operand(f, lhs)?;
                write!(f, " {} ", op.symbol())?;
                write_operand(f, rhs)
            }
            ExprKind::Unary { op, operand } => {
                f.write_str(if *op == UnOp::Neg { "-" } else { "!" })?;
                write_operand(f, operand)
            }
            ExprKind::Cast { value, to } => {
                write_operand(f, value)?;
                write!(f, " as {to}")
            }
            ExprKind::If { .. } => f.write_str("if …"),
            ExprKind::For { .. } => f.write_str("for …"),
            ExprKind::Block(_) => f.write_str("{ … }"),
            ExprKind::Invalid => f.write_str("…"),
        }
    }
}

fn write_list(f: &mut std::fmt::Formatter<'_>, exprs: &[Expr]) -> std::fmt::Result {
    for (i, e) in exprs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

/// An operand of an operator, parenthesised when it is itself an operator expression.
fn write_operand(f: &mut std::fmt::Formatter<'_>, e: &Expr) -> std::fmt::Result {
    match e.kind {
        ExprKind::Binary { .. } | ExprKind::Cast { .. } => write!(f, "({e})"),
        _ => write!(f, "{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn lower(body: proc_macro2::TokenStream) -> (Block, Vec<String>) {
        let mut ids = LocIds::default();
        let mut diags = Diagnostics::default();
        let block: syn::Block = syn::parse2(quote!({ #body })).unwrap();
        let b = Lowerer {
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
                ExprKind::For {
                    step: Some(_),
                    body,
                    ..
                },
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
}
