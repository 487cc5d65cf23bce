//! `requires = [n_cols <= BLOCK, q.size(2) == D]` in the kernel's attribute: conditions on a
//! launch's arguments that the generated `specialisation` checks before anything runs, so that a
//! launch a kernel cannot serve (a row longer than its block, a head dimension other than the
//! compiled one) is refused with the condition and the values that break it instead of giving a
//! silently wrong result.
//!
//! A condition compares integer expressions (`==`, `!=`, `<`, `<=`, `>`, `>=`) and joins
//! comparisons with `&&`, `||` and `!`. An integer expression is built with `+`, `-`, `*`, `/`,
//! `%` and parentheses from integer literals, the kernel's integer runtime parameters, its const
//! parameters, and the sizes and strides of its `Tensor` parameters (`x.size(d)`, `x.stride(d)`).
//! The launcher evaluates it in `i128`; a division by zero or an overflow refuses the launch.
//! A comparison with a float parameter compares floats (`scale > 0.0`, `lo < hi`): float
//! parameters and literals, perhaps negated, without arithmetic, in `f64` (a NaN breaks it).

use super::attr::int_value;
use super::autotune::TensorPart;
use super::signature::Signature;
use crate::diag::{did_you_mean, Diagnostics, Loc, LocIds};
use crate::types::{DType, Scalar};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{BinOp, Expr, UnOp};

/// A condition of `requires`, checked against the signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// As written (for the launcher's error).
    pub text: String,
    pub condition: Condition,
}

/// A boolean condition on the launch's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    Compare(Compare, Box<Integer>, Box<Integer>),
    /// A comparison of floats, evaluated in `f64`.
    CompareFloat(Compare, Box<Float>, Box<Float>),
    And(Box<Condition>, Box<Condition>),
    Or(Box<Condition>, Box<Condition>),
    Not(Box<Condition>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// An integer expression on the launch's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Integer {
    Literal(i128),
    /// A runtime parameter of the desugared signature (`n`, `x__size0`) and its name as written
    /// (`n`, `x.size(0)`).
    Param {
        param: String,
        written: String,
    },
    /// A const parameter (a field of `Consts`).
    Const(String),
    Neg(Box<Integer>),
    Arith(Arith, Box<Integer>, Box<Integer>),
}

/// A float of the launch: a literal (its digits as written) or a float runtime parameter (by
/// its name, which is also how it is written), perhaps negated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Float {
    Literal(String),
    Param(String),
    Neg(Box<Float>),
}

/// A value a condition reads from the launch: an integer parameter or const, or a float
/// parameter (the launcher's error reports each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf<'a> {
    Integer(&'a Integer),
    Float(&'a Float),
}

impl Integer {
    /// The parameters and consts it reads, each once, in order.
    pub fn leaves<'a>(&'a self, out: &mut Vec<Leaf<'a>>) {
        match self {
            Integer::Literal(_) => {}
            Integer::Param { .. } | Integer::Const(_) => {
                if !out.contains(&Leaf::Integer(self)) {
                    out.push(Leaf::Integer(self));
                }
            }
            Integer::Neg(x) => x.leaves(out),
            Integer::Arith(_, a, b) => {
                a.leaves(out);
                b.leaves(out);
            }
        }
    }
}

impl Float {
    /// The parameters it reads, each once, in order.
    pub fn leaves<'a>(&'a self, out: &mut Vec<Leaf<'a>>) {
        match self {
            Float::Literal(_) => {}
            Float::Param(_) => {
                if !out.contains(&Leaf::Float(self)) {
                    out.push(Leaf::Float(self));
                }
            }
            Float::Neg(x) => x.leaves(out),
        }
    }
}

impl Condition {
    /// The parameters and consts it reads, each once, in order.
    pub fn leaves<'a>(&'a self, out: &mut Vec<Leaf<'a>>) {
        match self {
            Condition::Compare(_, a, b) => {
                a.leaves(out);
                b.leaves(out);
            }
            Condition::CompareFloat(_, a, b) => {
                a.leaves(out);
                b.leaves(out);
            }
            Condition::And(a, b) | Condition::Or(a, b) => {
                a.leaves(out);
                b.leaves(out);
            }
            Condition::Not(a) => a.leaves(out),
        }
    }
}

/// The conditions of `requires = [...]` as written, each with its location.
pub fn requires_list(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Vec<(Expr, Loc)> {
    match e {
        Expr::Array(array) if !array.elems.is_empty() => {
            array.elems.iter().map(|c| (c.clone(), ids.of(c))).collect()
        }
        _ => {
            diags.error(
                ids.of(e),
                "`requires` takes a list of conditions on the arguments, e.g. \
                 `requires = [n_cols <= BLOCK, x.size(1) == w.size(0)]`",
            );
            Vec::new()
        }
    }
}

/// The conditions checked against the signature: each leaf a runtime integer parameter, a
/// const parameter, a tensor's size or stride, or a literal. Problems are reported at the
/// user's code; a condition with a problem is left out.
pub fn checked_requirements(
    written: &[(Expr, Loc)],
    sig: &Signature,
    diags: &mut Diagnostics,
) -> Vec<Requirement> {
    let mut out = Vec::new();
    for (expr, loc) in written {
        let mut reader = Reader {
            sig,
            condition: *loc,
            diags,
            ok: true,
        };
        let condition = reader.condition(expr);
        if let (Some(condition), true) = (condition, reader.ok) {
            out.push(Requirement {
                text: as_written(expr),
                condition,
            });
        }
    }
    out
}

/// A condition as the user wrote it, near enough: the tokens without the spaces `to_string`
/// puts around `.`, before a method call's `(` and after a unary `!` or `-`
/// (`!(x.size(0) > -1)`).
fn as_written(expr: &Expr) -> String {
    let spaced = expr.to_token_stream().to_string().replace(" . ", ".");
    let mut out = String::with_capacity(spaced.len());
    for (i, c) in spaced.char_indices() {
        let after_word = out.ends_with(|p: char| p.is_alphanumeric() || p == '_' || p == ')');
        let call = c == ' ' && spaced[i + 1..].starts_with('(') && after_word;
        let unary = c == ' '
            && (out.ends_with('!') || out.ends_with('-'))
            && !out[..out.len() - 1]
                .trim_end()
                .ends_with(|p: char| p.is_alphanumeric() || p == '_' || p == ')');
        if !call && !unary {
            out.push(c);
        }
    }
    out
}

struct Reader<'a> {
    sig: &'a Signature,
    /// The condition being read: its parts are reported under its id.
    condition: Loc,
    diags: &'a mut Diagnostics,
    ok: bool,
}

const GRAMMAR: &str = "a `requires` condition compares integer expressions (`==`, `!=`, `<`, \
                       `<=`, `>`, `>=`) joined by `&&`, `||` and `!`; the integers are literals, \
                       integer parameters, const parameters and tensor sizes and strides \
                       (`x.size(0)`, `x.stride(1)`) with `+ - * / %`; a float parameter is \
                       compared with a literal or another float parameter (`scale > 0.0`)";

impl Reader<'_> {
    fn error<T: ToTokens>(&mut self, at: &T, message: impl Into<String>) {
        self.ok = false;
        let mut tokens = at.to_token_stream().into_iter();
        let first = tokens.next().map_or(self.condition.first, |t| t.span());
        let last = tokens.last().map_or(first, |t| t.span());
        let loc = Loc {
            first,
            last,
            id: self.condition.id,
        };
        self.diags.error(loc, message);
    }

    fn condition(&mut self, e: &Expr) -> Option<Condition> {
        match e {
            Expr::Paren(p) => self.condition(&p.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Not(_)) => {
                Some(Condition::Not(Box::new(self.condition(&u.expr)?)))
            }
            Expr::Binary(b) => {
                let both = |r: &mut Self| (r.condition(&b.left), r.condition(&b.right));
                let compare = match b.op {
                    BinOp::And(_) => {
                        let (l, r) = both(self);
                        return Some(Condition::And(Box::new(l?), Box::new(r?)));
                    }
                    BinOp::Or(_) => {
                        let (l, r) = both(self);
                        return Some(Condition::Or(Box::new(l?), Box::new(r?)));
                    }
                    BinOp::Eq(_) => Compare::Eq,
                    BinOp::Ne(_) => Compare::Ne,
                    BinOp::Lt(_) => Compare::Lt,
                    BinOp::Le(_) => Compare::Le,
                    BinOp::Gt(_) => Compare::Gt,
                    BinOp::Ge(_) => Compare::Ge,
                    _ => {
                        self.error(e, format!("this is an integer, not a condition: {GRAMMAR}"));
                        return None;
                    }
                };
                if self.is_float(&b.left) || self.is_float(&b.right) {
                    let (l, r) = (self.float(&b.left), self.float(&b.right));
                    return Some(Condition::CompareFloat(compare, Box::new(l?), Box::new(r?)));
                }
                let (l, r) = (self.integer(&b.left), self.integer(&b.right));
                Some(Condition::Compare(compare, Box::new(l?), Box::new(r?)))
            }
            _ => {
                self.error(e, format!("not a condition: {GRAMMAR}"));
                None
            }
        }
    }

    fn integer(&mut self, e: &Expr) -> Option<Integer> {
        if let Some(v) = int_value(e) {
            return Some(Integer::Literal(v));
        }
        match e {
            Expr::Paren(p) => self.integer(&p.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
                Some(Integer::Neg(Box::new(self.integer(&u.expr)?)))
            }
            Expr::Binary(b) => {
                let op = match b.op {
                    BinOp::Add(_) => Arith::Add,
                    BinOp::Sub(_) => Arith::Sub,
                    BinOp::Mul(_) => Arith::Mul,
                    BinOp::Div(_) => Arith::Div,
                    BinOp::Rem(_) => Arith::Rem,
                    _ => {
                        self.error(
                            e,
                            format!("a condition where an integer is expected: {GRAMMAR}"),
                        );
                        return None;
                    }
                };
                let (l, r) = (self.integer(&b.left), self.integer(&b.right));
                Some(Integer::Arith(op, Box::new(l?), Box::new(r?)))
            }
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let name = p.path.get_ident()?.unraw().to_string();
                self.named(e, &name)
            }
            Expr::MethodCall(call) => self.tensor_part(call),
            _ => {
                self.error(e, format!("not an integer of the launch: {GRAMMAR}"));
                None
            }
        }
    }

    /// Whether `e` is a float literal or a float parameter (perhaps negated or in parentheses):
    /// the comparison it stands in compares floats.
    fn is_float(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Float(_)),
            Expr::Paren(p) => self.is_float(&p.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => self.is_float(&u.expr),
            Expr::Path(p) => p.path.get_ident().is_some_and(|name| {
                let name = name.unraw().to_string();
                self.sig.params.iter().any(|p| {
                    p.name == name
                        && matches!(p.dtype, Some(DType::Scalar(Scalar::F32 | Scalar::F64)))
                })
            }),
            _ => false,
        }
    }

    /// A side of a float comparison: a literal or a float parameter, perhaps negated.
    fn float(&mut self, e: &Expr) -> Option<Float> {
        match e {
            Expr::Lit(lit) => match &lit.lit {
                syn::Lit::Float(f) => Some(Float::Literal(f.base10_digits().to_string())),
                syn::Lit::Int(i) => Some(Float::Literal(i.base10_digits().to_string())),
                _ => {
                    self.error(e, format!("not a number of the launch: {GRAMMAR}"));
                    None
                }
            },
            Expr::Paren(p) => self.float(&p.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
                Some(Float::Neg(Box::new(self.float(&u.expr)?)))
            }
            Expr::Path(p) if self.is_float(e) => {
                Some(Float::Param(p.path.get_ident()?.unraw().to_string()))
            }
            Expr::Binary(_) => {
                self.error(
                    e,
                    "`requires` does no arithmetic on floats: compare a float parameter with a \
                     literal or another float parameter (`scale > 0.0`)",
                );
                None
            }
            _ => {
                // An integer leaf where a float is compared: say what it is.
                let integer = self.integer(e);
                if integer.is_some() {
                    self.error(
                        e,
                        "an integer compared with a float: `requires` compares a float parameter \
                         with a float literal or another float parameter",
                    );
                }
                None
            }
        }
    }

    /// A parameter or const parameter by name.
    fn named(&mut self, e: &Expr, name: &str) -> Option<Integer> {
        if self.sig.consts.iter().any(|c| c.name == name) {
            return Some(Integer::Const(name.to_string()));
        }
        let Some(param) = self.sig.params.iter().find(|p| p.name == name) else {
            let names = self
                .sig
                .params
                .iter()
                .map(|p| p.name.as_str())
                .chain(self.sig.consts.iter().map(|c| c.name.as_str()));
            let hint = match did_you_mean(name, names) {
                Some(n) => format!(" (did you mean `{n}`?)"),
                None => String::new(),
            };
            self.error(
                e,
                format!(
                    "`requires` names `{name}`, which is not a parameter of `{}`{hint}",
                    self.sig.name
                ),
            );
            return None;
        };
        match param.dtype {
            Some(DType::Scalar(s)) if s.is_int() => Some(Integer::Param {
                param: name.to_string(),
                written: name.to_string(),
            }),
            // An unknown type was reported at the parameter.
            None => None,
            Some(DType::Scalar(s @ (Scalar::F32 | Scalar::F64))) => {
                self.error(
                    e,
                    format!(
                        "`{name}` is a float (`{}`): `requires` does no arithmetic on floats; \
                         compare it with a literal or another float parameter (`{name} > 0.0`)",
                        s.name()
                    ),
                );
                None
            }
            Some(other) => {
                let what = match other {
                    DType::Ptr(_) => "a pointer".to_string(),
                    DType::Scalar(s) => format!("of type `{}`", s.name()),
                };
                self.error(
                    e,
                    format!(
                        "`{name}` is {what}: `requires` compares integers (integer parameters, \
                         const parameters, tensor sizes and strides) and `f32`/`f64` parameters"
                    ),
                );
                None
            }
        }
    }

    /// `x.size(d)` / `x.stride(d)` of a tensor parameter.
    fn tensor_part(&mut self, call: &syn::ExprMethodCall) -> Option<Integer> {
        let Some((part, dim)) = TensorPart::of(call).and_then(|p| p.dim.map(|d| (p, d))) else {
            self.error(
                call,
                "`requires` reads a tensor parameter's sizes and strides as `x.size(d)` and \
                 `x.stride(d)`, `d` an integer literal",
            );
            return None;
        };
        let param = part.param(dim);
        if self.sig.params.iter().any(|p| p.name == param) {
            return Some(Integer::Param {
                param,
                written: part.written(dim),
            });
        }
        let tensor = &part.tensor;
        let rank = self.sig.tensor_rank(tensor);
        let message = if rank > 0 {
            format!("`{tensor}` is a tensor of rank {rank}: it has no dimension {dim}")
        } else if self.sig.params.iter().any(|p| p.name == *tensor) {
            format!("`{tensor}` is not a `Tensor` parameter (only a tensor has sizes and strides)")
        } else {
            format!(
                "`requires` names `{tensor}`, which is not a parameter of `{}`",
                self.sig.name
            )
        };
        self.error(call, message);
        None
    }
}
