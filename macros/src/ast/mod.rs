//! The kernel body as a small syntax tree of the tile language, built from `syn`.
//!
//! This stage resolves what is purely syntactic: which Rust constructs the language has, which
//! operation a call names (and its arity), element type names, literal values. It knows nothing
//! of shapes or types; the checker (`check`) does that. Unsupported syntax is reported and replaced
//! by [`ExprKind::Invalid`], so the rest of the body is still built and checked.

mod build;
mod operations;
#[cfg(test)]
mod tests;

pub use build::AstBuilder;

use crate::diag::Loc;
use crate::ir::CmpOp;
use crate::ops::{self, Op};
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

impl Expr {
    /// The stand-in for an expression already reported as an error.
    pub fn invalid(loc: Loc) -> Expr {
        Expr {
            kind: ExprKind::Invalid,
            loc,
        }
    }
}

/// `for var in start..end { … }` or `for var in (start..end).step_by(step) { … }`.
#[derive(Debug)]
pub struct ForLoop {
    pub var: Pat,
    pub start: Box<Expr>,
    pub end: Box<Expr>,
    pub step: Option<Box<Expr>>,
    /// `(start..end).num_stages(S)`: this loop's pipelining depth (the attribute's otherwise),
    /// with the literal's place.
    pub num_stages: Option<(u32, Loc)>,
    pub body: Block,
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
    /// A string literal: only the memory order and scope of an atomic (`"relaxed"`, `"cta"`).
    Str(String),
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
    For(ForLoop),
    /// `while cond { … }`: `cond` is evaluated before each iteration.
    While {
        cond: Box<Expr>,
        body: Block,
    },
    Block(Block),
    /// `(a, b)`: two values, destructured by `let (x, y) = …` (what a helper returns to give
    /// two results, as `split` does).
    Pair(Box<Expr>, Box<Expr>),
    /// `(a, b, c, …)`: three or more values, destructured right away by a `let` of as many
    /// names (`let (m, n, k) = (a.size(0), b.size(1), a.size(1));`).
    Tuple(Vec<Expr>),
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
    /// `<`, `<=`, `==`, `!=`, `>=`, `>`: the comparison of the IR.
    Cmp(CmpOp),
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
            BinOp::Cmp(c) => c.symbol(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
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
            ExprKind::Str(s) => write!(f, "{s:?}"),
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
            ExprKind::For(_) => f.write_str("for …"),
            ExprKind::While { .. } => f.write_str("while …"),
            ExprKind::Block(_) => f.write_str("{ … }"),
            ExprKind::Pair(a, b) => write!(f, "({a}, {b})"),
            ExprKind::Tuple(items) => {
                write!(f, "(")?;
                for (i, item) in items.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{item}")?;
                }
                write!(f, ")")
            }
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
