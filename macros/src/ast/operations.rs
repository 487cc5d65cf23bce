//! Calls and method calls built into operations: the name resolved, the arity checked, type and
//! const arguments read.

use super::build::{strip_groups, AstBuilder};
use super::{Expr, ExprKind};
use crate::diag::{did_you_mean, Loc};
use crate::ops::{self, Op, TypeArg, OTHER_NAMES};
use crate::parse::scalar_type;
use syn::ext::IdentExt;

impl AstBuilder<'_> {
    pub(super) fn call(&mut self, c: &syn::ExprCall, loc: Loc) -> Expr {
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

    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall, loc: Loc) -> Expr {
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
        let name_str = name.unraw().to_string();
        let Some(info) = ops::lookup(&name_str) else {
            if matches!(name_str.as_str(), "num_stages" | "step_by") {
                // `0..n.num_stages(3)` applies the method to `n`, not to the range.
                self.diags.error(
                    name_loc,
                    format!(
                        "`{name_str}` applies to the range of a `for` loop: write \
                         `for k in (start..end).{name_str}(…)`, the range in parentheses"
                    ),
                );
                for a in receiver.into_iter().chain(args.iter().copied()) {
                    self.expr(a);
                }
                return Expr::invalid(loc);
            }
            let hint = OTHER_NAMES
                .iter()
                .find(|(other, _)| *other == name_str)
                .map(|(_, ours)| *ours)
                .or_else(|| did_you_mean(&name_str, ops::all().map(|o| o.name)))
                .map(|ours| format!(" (did you mean `{ours}`?)"))
                .unwrap_or_default();
            let how = if receiver.is_some() {
                "method"
            } else {
                "operation"
            };
            // A call that is no operation may be meant for a helper the kernel does not list.
            let helper = if receiver.is_none() && hint.is_empty() {
                format!("; a #[tile_fn] helper is called once the kernel lists it: `uses = [{name_str}]`")
            } else {
                String::new()
            };
            self.diags.error(
                name_loc,
                format!(
                    "unknown tile {how} `{name_str}`{hint}: the operations of the tile language \
                     are listed in the docs of tessera::tile_kernel{helper}"
                ),
            );
            // Still lower the arguments: errors inside them are worth reporting too.
            for a in receiver.into_iter().chain(args.iter().copied()) {
                self.expr(a);
            }
            return Expr::invalid(loc);
        };
        if receiver.is_some() && !info.method {
            self.diags.error(
                name_loc,
                format!(
                    "`{name_str}` is a free function, not a method: write `{}`",
                    info.usage
                ),
            );
            return Expr::invalid(loc);
        }
        // `load(p, mask = m)`: a Python keyword argument reads as an assignment in Rust.
        let keyword = args.iter().find_map(|a| match strip_groups(a) {
            syn::Expr::Assign(assign) => Some(assign),
            _ => None,
        });
        if let Some(keyword) = keyword {
            let left = quote::ToTokens::to_token_stream(&keyword.left).to_string();
            return self.invalid(
                keyword,
                format!(
                    "`{left} = …` reads as a keyword argument, which Rust does not have: the \
                     arguments of `{name_str}` are positional, write `{}`",
                    info.usage
                ),
            );
        }
        let count = args.len() + usize::from(receiver.is_some());
        let triton_module = receiver.is_some_and(
            |r| matches!(strip_groups(r), syn::Expr::Path(p) if p.path.is_ident("tl")),
        );
        if triton_module && args.len() >= info.min_args && args.len() <= info.max_args {
            self.diags.error(
                loc,
                format!(
                    "`tl.{name_str}(..)` is Triton's spelling: a tile kernel has no `tl` module, \
                     its operations are called by name: write `{}`",
                    info.usage
                ),
            );
            return Expr {
                kind: ExprKind::Invalid,
                loc,
            };
        }
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
            return Expr::invalid(loc);
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
                return Expr::invalid(loc);
            }
            (None, _) => None,
            (Some(t), TypeArg::None) => {
                self.diags.error(
                    self.ids.of(t),
                    format!("`{name_str}` takes no `::<T>`: write `{}`", info.usage),
                );
                return Expr::invalid(loc);
            }
            (Some(t), _) => match t.args.iter().collect::<Vec<_>>().as_slice() {
                [syn::GenericArgument::Type(ty)] => match scalar_type(ty, self.ids, self.diags) {
                    Some(s) => Some(s),
                    None => return Expr::invalid(loc),
                },
                _ => {
                    self.diags.error(
                        self.ids.of(t),
                        format!("write one element type: `{}`", info.usage),
                    );
                    return Expr::invalid(loc);
                }
            },
        };
        let all: Vec<&syn::Expr> = receiver.into_iter().chain(args.iter().copied()).collect();
        match info.op {
            Op::To => {
                let value = Box::new(self.expr(all[0]));
                let Some(to) = type_arg else {
                    let message = format!(
                        "`{name_str}` needs the element type: write `{}`",
                        info.usage
                    );
                    return self.invalid(name, message);
                };
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
}
