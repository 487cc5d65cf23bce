//! The launcher's check of the kernel's `requires = […]` conditions (read and checked by
//! [`crate::parse::requires`]): the first statements of the generated `specialisation`, which
//! every launcher (plain, tensor, tuned, generic) calls before it launches anything.
//!
//! Each condition is evaluated on the arguments and const values in `i128` with checked
//! arithmetic (float comparisons in `f64`): an `Option<bool>`, `None` after a division by zero or
//! an overflow.
//! `tessera::tile::check_requirement` turns anything but `Some(true)` into
//! `LaunchError::Requirement`, naming the condition and the values it read.

use crate::parse::{Arith, Compare, Condition, Float, Integer, Leaf, Requirement};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

/// Where the generated code finds the values: `args.#field` of a runtime parameter (by its
/// desugared name), `consts.#name` of a const parameter.
pub struct Values<'a> {
    pub args: &'a Ident,
    pub consts: &'a Ident,
    /// The desugared parameters' names and their fields in `Args`.
    pub fields: &'a [(&'a Ident, TokenStream)],
}

impl Values<'_> {
    /// `args.#field` of runtime parameter `param` (the checker only lets through parameters of
    /// the signature).
    fn arg(&self, param: &str) -> TokenStream {
        let field = self
            .fields
            .iter()
            .find(|(name, _)| *name == param)
            .map(|(_, field)| field);
        let args = self.args;
        quote!(#args.#field)
    }

    /// The `i128` of an integer leaf (a parameter or a const).
    fn leaf(&self, leaf: &Integer) -> TokenStream {
        match leaf {
            Integer::Param { param, .. } => {
                let arg = self.arg(param);
                quote!((#arg as i128))
            }
            Integer::Const(name) => {
                let (consts, name) = (self.consts, Ident::new(name, Span::call_site()));
                quote!((#consts.#name as i128))
            }
            _ => unreachable!("a leaf is a parameter or a const"),
        }
    }

    /// An `f64`.
    fn float(&self, x: &Float) -> TokenStream {
        match x {
            Float::Literal(digits) => {
                // The checker read the digits from a literal.
                let v = Literal::f64_unsuffixed(digits.parse().unwrap_or(f64::NAN));
                quote!(#v)
            }
            Float::Param(param) => {
                let arg = self.arg(param);
                quote!((#arg as f64))
            }
            Float::Neg(x) => {
                let x = self.float(x);
                quote!((-#x))
            }
        }
    }

    /// An `Option<i128>`.
    fn integer(&self, x: &Integer) -> TokenStream {
        match x {
            Integer::Literal(v) => {
                let v = Literal::i128_suffixed(*v);
                quote!(::core::option::Option::Some(#v))
            }
            Integer::Param { .. } | Integer::Const(_) => {
                let v = self.leaf(x);
                quote!(::core::option::Option::Some(#v))
            }
            Integer::Neg(x) => {
                let x = self.integer(x);
                quote!((#x).and_then(i128::checked_neg))
            }
            Integer::Arith(op, a, b) => {
                let (a, b) = (self.integer(a), self.integer(b));
                let op = match op {
                    Arith::Add => quote!(checked_add),
                    Arith::Sub => quote!(checked_sub),
                    Arith::Mul => quote!(checked_mul),
                    Arith::Div => quote!(checked_div),
                    Arith::Rem => quote!(checked_rem),
                };
                quote!((#a).zip(#b).and_then(|(a, b)| a.#op(b)))
            }
        }
    }

    /// An `Option<bool>`; `&&` and `||` decide on their left side when it decides.
    fn condition(&self, c: &Condition) -> TokenStream {
        match c {
            Condition::Compare(op, a, b) => {
                let (a, b) = (self.integer(a), self.integer(b));
                let op = compare_op(*op);
                quote!((#a).zip(#b).map(|(a, b)| a #op b))
            }
            Condition::CompareFloat(op, a, b) => {
                let (a, b) = (self.float(a), self.float(b));
                let op = compare_op(*op);
                quote!(::core::option::Option::Some(#a #op #b))
            }
            Condition::And(a, b) | Condition::Or(a, b) => {
                let decides = matches!(c, Condition::Or(..));
                let (a, b) = (self.condition(a), self.condition(b));
                quote! {
                    match #a {
                        ::core::option::Option::Some(#decides) => ::core::option::Option::Some(#decides),
                        a => a.zip(#b).map(|(_, b)| b),
                    }
                }
            }
            Condition::Not(a) => {
                let a = self.condition(a);
                quote!((#a).map(|a| !a))
            }
        }
    }
}

fn compare_op(op: Compare) -> TokenStream {
    match op {
        Compare::Eq => quote!(==),
        Compare::Ne => quote!(!=),
        Compare::Lt => quote!(<),
        Compare::Le => quote!(<=),
        Compare::Gt => quote!(>),
        Compare::Ge => quote!(>=),
    }
}

/// The statements checking `requires` of `kernel` (`?` on each: they run in a function
/// returning `Result<_, LaunchError>`).
pub fn requirement_checks(kernel: &str, requires: &[Requirement], values: &Values) -> TokenStream {
    let checks = requires.iter().map(|r| {
        let holds = values.condition(&r.condition);
        let mut leaves = Vec::new();
        r.condition.leaves(&mut leaves);
        // Each value read, by name: a float as passed (an `f32` as `f32`), an integer as its
        // `i128`.
        let read = leaves.iter().map(|&leaf| {
            let (name, v) = match leaf {
                Leaf::Integer(x @ Integer::Param { written, .. }) => (written, values.leaf(x)),
                Leaf::Integer(x @ Integer::Const(name)) => (name, values.leaf(x)),
                Leaf::Float(Float::Param(param)) => (param, values.arg(param)),
                _ => unreachable!("a leaf is a parameter or a const"),
            };
            quote!((#name, &#v as &dyn ::core::fmt::Display))
        });
        let text = &r.text;
        quote! {
            ::tessera::tile::check_requirement(#kernel, #text, #holds, &[#(#read),*])?;
        }
    });
    quote!(#(#checks)*)
}
