//! The kernel's attribute: `num_warps`, const values, element types and `autotune(…)`.

use super::autotune::{parse_autotune, AutotuneAttr};
use super::signature::scalar_named;
use crate::diag::{Diagnostics, Loc, LocIds};
use crate::ir::Target;
use crate::types::Scalar;
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, UnOp};

/// Warps per program when the attribute does not say.
pub const DEFAULT_NUM_WARPS: u32 = 4;

/// Most specialisations one kernel may have (the product of the lengths of its value lists).
pub const MAX_SPECIALISATIONS: usize = 64;

/// `#[tile_kernel(num_warps = [4, 8], num_stages = [1, 3], T = [f16, f32], BLOCK = [256, 1024])]`.
#[derive(Debug)]
pub struct KernelAttr {
    /// Warps per program, one specialisation per value; `None` when the attribute's value is
    /// invalid (an error was reported).
    pub num_warps: Option<Vec<u32>>,
    /// The value lists, one per `NAME = …` entry, in order.
    pub consts: Vec<ConstValues>,
    /// `num_stages = S` or `num_stages = [1, 3]`: the depth of software pipelining of the loops
    /// whose loads feed a `dot` (1: none), one specialisation per value, with the location of
    /// the attribute's key; `None` when not given or invalid.
    pub num_stages: Option<(Vec<u32>, Loc)>,
    /// `autotune(…)`, if given.
    pub autotune: Option<AutotuneAttr>,
    /// `targets = [sm_80, sm_90a]`: the bodies built (the default, both); `[sm_90a]` builds the
    /// sm_90a body alone and the kernel is in the sm_90a PTX only; `[sm_80]` builds the
    /// `mma.sync` body alone, in every PTX.
    pub targets: Vec<Target>,
    /// `requires = [n_cols <= BLOCK, …]`: conditions on the arguments, as written (checked
    /// against the signature by [`super::checked_requirements`]).
    pub requires: Vec<(Expr, Loc)>,
}

/// Most pipeline stages `num_stages` may ask for.
pub const MAX_NUM_STAGES: i128 = 8;

/// `NAME = [v0, v1, …]` (or `NAME = v`) in the attribute: integers for a const parameter,
/// element types for a type parameter (a list whose first value is a name).
#[derive(Debug)]
pub struct ConstValues {
    pub name: String,
    pub loc: Loc,
    pub values: Vec<(AttrValue, Loc)>,
    /// False if the list had an error (then specialisations treat the parameter as unknown).
    pub valid: bool,
}

/// A path as the user wrote it, for messages (`num_warps`, `a::b`).
fn path_name(path: &syn::Path) -> String {
    let names: Vec<String> = path
        .segments
        .iter()
        .map(|s| s.ident.unraw().to_string())
        .collect();
    names.join("::")
}

/// One value of an attribute list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrValue {
    Int(i128),
    Type(Scalar),
}

/// Parses the attribute's arguments.
pub fn parse_attr(attr: TokenStream, ids: &mut LocIds, diags: &mut Diagnostics) -> KernelAttr {
    let mut out = KernelAttr {
        num_warps: Some(vec![DEFAULT_NUM_WARPS]),
        consts: Vec::new(),
        num_stages: None,
        autotune: None,
        targets: vec![Target::Ampere, Target::Hopper],
        requires: Vec::new(),
    };
    let parser = Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
    // syn reports a list that ends too early ("unexpected end of input") at the call site; the
    // last token of the attribute is where the user's text stops, so the error goes there.
    let last_token = attr.clone().into_iter().last().map(|t| t.span());
    let entries = match syn::parse::Parser::parse2(parser, attr) {
        Ok(entries) => entries,
        Err(e) => {
            let span = match last_token {
                Some(last) if e.to_string().contains("end of input") => last,
                _ => e.span(),
            };
            let loc = ids.at(span);
            diags.error(
                loc,
                format!(
                    "{e}: #[tile_kernel] takes `name = value` pairs, e.g. \
                     #[tile_kernel(num_warps = 4, BLOCK = [256, 1024])]"
                ),
            );
            out.num_warps = None;
            return out;
        }
    };
    // The names given so far: each may be given once.
    let mut given: Vec<String> = Vec::new();
    for meta in entries {
        let entry = match meta {
            syn::Meta::NameValue(entry) => entry,
            syn::Meta::Path(path) => {
                let name = path_name(&path);
                diags.error(
                    ids.of(&path),
                    format!("`{name}` needs a value: write `{name} = …`, e.g. `num_warps = 4`"),
                );
                continue;
            }
            syn::Meta::List(list) if list.path.is_ident("autotune") => {
                if out.autotune.is_some() {
                    diags.error(ids.of(&list.path), "`autotune` is given twice");
                } else {
                    out.autotune = Some(parse_autotune(&list, ids, diags));
                }
                continue;
            }
            syn::Meta::List(list) => {
                let name = path_name(&list.path);
                diags.error(
                    ids.of(&list),
                    format!(
                        "`{name}(…)` is not an attribute argument: #[tile_kernel] takes \
                         `name = value` pairs, e.g. #[tile_kernel(num_warps = 4, BLOCK = [256, 1024])]"
                    ),
                );
                continue;
            }
        };
        let key_loc = ids.of(&entry.path);
        let Some(key) = entry.path.get_ident().map(|k| k.unraw().to_string()) else {
            diags.error(
                key_loc,
                "expected a name such as `num_warps` or a const parameter's name",
            );
            continue;
        };
        if given.contains(&key) {
            diags.error(key_loc, format!("`{key}` is given twice"));
            continue;
        }
        given.push(key.clone());
        if key == "num_warps" {
            out.num_warps = num_warps_values(&entry.value, ids, diags);
            continue;
        }
        if key == "num_stages" {
            out.num_stages = num_stages_values(&entry.value, ids, diags).map(|s| (s, key_loc));
            continue;
        }
        if key == "requires" {
            out.requires = super::requires::requires_list(&entry.value, ids, diags);
            continue;
        }
        if key == "targets" {
            if let Some(targets) = target_values(&entry.value, ids, diags) {
                out.targets = targets;
            }
            continue;
        }
        let mut values = Vec::new();
        let mut valid = true;
        let elements = list_elements(&entry.value);
        let types = elements.first().is_some_and(|e| matches!(e, Expr::Path(_)));
        for element in elements {
            let loc = ids.of(element);
            let value = if types {
                type_value(element, ids, diags).map(AttrValue::Type)
            } else {
                let value = int_value(element).map(AttrValue::Int);
                if value.is_none() {
                    diags.error(
                        loc,
                        format!(
                            "the values of `{key}` must be integer literals, \
                             e.g. `{key} = [128, 256]`"
                        ),
                    );
                }
                value
            };
            match value {
                Some(v) => values.push((v, loc)),
                None => valid = false,
            }
        }
        if values.is_empty() && valid {
            valid = false;
            diags.error(
                ids.of(&entry.value),
                format!("`{key}` needs at least one value, e.g. `{key} = [128, 256]`"),
            );
        }
        out.consts.push(ConstValues {
            name: key,
            loc: key_loc,
            values,
            valid,
        });
    }
    out
}

/// The values of `[a, b, …]`, or the one value written without brackets.
fn list_elements(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Array(array) => array.elems.iter().collect(),
        single => vec![single],
    }
}

/// `num_warps = 4` or `num_warps = [4, 8]`: each a power of two from 1 to 32, listed once.
fn num_warps_values(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Vec<u32>> {
    launch_axis_values(
        LaunchAxis {
            name: "num_warps",
            allowed: |n| [1, 2, 4, 8, 16, 32].contains(&n),
            rule: "it must be 1, 2, 4, 8, 16 or 32 (a program is one CUDA block of 32 × \
                   num_warps ≤ 1024 threads)"
                .to_string(),
            examples: "`num_warps = 4` or `num_warps = [4, 8]`",
        },
        e,
        ids,
        diags,
    )
}

/// `num_stages = 3` or `num_stages = [1, 3]`: integer literals from 1 to [`MAX_NUM_STAGES`],
/// each listed once.
fn num_stages_values(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Vec<u32>> {
    launch_axis_values(
        LaunchAxis {
            name: "num_stages",
            allowed: |s| (1..=MAX_NUM_STAGES).contains(&s),
            rule: format!(
                "it must be 1 (no pipelining) to {MAX_NUM_STAGES}, the number of loop \
                 iterations whose loads are in flight at once"
            ),
            examples: "`num_stages = 3` or `num_stages = [1, 3]`",
        },
        e,
        ids,
        diags,
    )
}

/// `targets = [sm_80, sm_90a]` (or one of them): the PTX targets, each listed once; `None`
/// after an error (reported at the value).
fn target_values(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Vec<Target>> {
    const EXAMPLE: &str =
        "e.g. `targets = [sm_90a]` (a kernel for Hopper only) or `targets = [sm_80, \
                           sm_90a]` (the default)";
    let mut out = Vec::new();
    let mut valid = true;
    for element in list_elements(e) {
        let loc = ids.of(element);
        let name = match element {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.unraw().to_string()),
            _ => None,
        };
        let target = match name.as_deref() {
            Some("sm_80") => Target::Ampere,
            Some("sm_90a") => Target::Hopper,
            _ => {
                valid = false;
                let written = name.unwrap_or_else(|| quote::quote!(#element).to_string());
                diags.error(
                    loc,
                    format!(
                        "`{written}` is not a target: `targets` lists `sm_80` (`mma.sync`, every \
                         GPU from the A100 on) and `sm_90a` (`wgmma`, Hopper), {EXAMPLE}"
                    ),
                );
                continue;
            }
        };
        if out.contains(&target) {
            diags.error(
                loc,
                format!("`{}` is listed twice in `targets`", target.sm()),
            );
        } else {
            out.push(target);
        }
    }
    if out.is_empty() && valid {
        diags.error(
            ids.of(e),
            format!("`targets` needs at least one target, {EXAMPLE}"),
        );
    }
    (valid && !out.is_empty()).then_some(out)
}

/// A specialisation axis of the launch (`num_warps`, `num_stages`): its name, which values it
/// allows and the messages' rule and examples.
struct LaunchAxis {
    name: &'static str,
    allowed: fn(i128) -> bool,
    rule: String,
    examples: &'static str,
}

/// The values of `axis` written as `e` (one literal or a list): each allowed and listed once;
/// `None` after an error (reported at the value).
fn launch_axis_values(
    axis: LaunchAxis,
    e: &Expr,
    ids: &mut LocIds,
    diags: &mut Diagnostics,
) -> Option<Vec<u32>> {
    let name = axis.name;
    let mut out = Vec::new();
    let mut valid = true;
    for element in list_elements(e) {
        let loc = ids.of(element);
        match int_value(element) {
            Some(n) if (axis.allowed)(n) => {
                if out.contains(&(n as u32)) {
                    diags.error(loc, format!("{name} = {n} is listed twice"));
                } else {
                    out.push(n as u32);
                }
            }
            Some(n) => {
                valid = false;
                diags.error(loc, format!("{name} = {n} is not allowed: {}", axis.rule));
            }
            None => {
                valid = false;
                diags.error(
                    loc,
                    format!("{name} takes integer literals, e.g. {}", axis.examples),
                );
            }
        }
    }
    if out.is_empty() && valid {
        diags.error(
            ids.of(e),
            format!("`{name}` needs at least one value, e.g. {}", axis.examples),
        );
    }
    (valid && !out.is_empty()).then_some(out)
}

/// An element type named in an attribute list (`f16`), or an error at it.
fn type_value(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Scalar> {
    match e {
        Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
            scalar_named(p.path.get_ident()?, ids, diags)
        }
        Expr::Group(g) => type_value(&g.expr, ids, diags),
        other => {
            diags.error(
                ids.of(other),
                "expected an element type, e.g. `T = [f16, bf16, f32]`",
            );
            None
        }
    }
}

/// An integer literal, possibly negated or parenthesised (suffixes allowed).
pub(super) fn int_value(e: &Expr) -> Option<i128> {
    match e {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(i) => i.base10_parse::<i128>().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => int_value(&u.expr)?.checked_neg(),
        Expr::Group(g) => int_value(&g.expr),
        Expr::Paren(p) => int_value(&p.expr),
        _ => None,
    }
}
