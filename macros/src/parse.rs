//! The kernel's attribute (`num_warps`, const values) and signature (parameters, const
//! parameters), read from `syn` into plain data. Problems are reported, never fatal: a bad
//! parameter is kept with an unknown type so the body is still checked.

use crate::diag::{did_you_mean, Diagnostics, Loc, LocIds};
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, TokenStream};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{Expr, FnArg, GenericArgument, GenericParam, Lit, Pat, PathArguments, Type, UnOp};

/// Warps per program when the attribute does not say.
pub const DEFAULT_NUM_WARPS: u32 = 4;

/// Most specialisations one kernel may have (the product of the lengths of its value lists).
pub const MAX_SPECIALISATIONS: usize = 64;

/// `#[tile_kernel(num_warps = 4, BLOCK = [256, 1024])]`.
#[derive(Debug)]
pub struct KernelAttr {
    /// Warps per program; `None` when the attribute's value is invalid (an error was reported).
    pub num_warps: Option<u32>,
    /// The value lists, one per `NAME = …` entry, in order.
    pub consts: Vec<ConstValues>,
}

/// `NAME = [v0, v1, …]` (or `NAME = v`) in the attribute.
#[derive(Debug)]
pub struct ConstValues {
    pub name: String,
    pub loc: Loc,
    pub values: Vec<(i128, Loc)>,
    /// False if the list had an error (then specialisations treat the constant as unknown).
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

/// Parses the attribute's arguments.
pub fn parse_attr(attr: TokenStream, ids: &mut LocIds, diags: &mut Diagnostics) -> KernelAttr {
    let mut out = KernelAttr {
        num_warps: Some(DEFAULT_NUM_WARPS),
        consts: Vec::new(),
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
    let mut seen_num_warps = false;
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
        if key == "num_warps" {
            if seen_num_warps {
                diags.error(key_loc, "`num_warps` is given twice");
                continue;
            }
            seen_num_warps = true;
            let value_loc = ids.of(&entry.value);
            out.num_warps = match int_value(&entry.value) {
                Some(n) if [1, 2, 4, 8, 16, 32].contains(&n) => Some(n as u32),
                Some(n) => {
                    diags.error(
                        value_loc,
                        format!(
                            "num_warps = {n} is not allowed: it must be 1, 2, 4, 8, 16 or 32 \
                             (a program is one CUDA block of 32 × num_warps ≤ 1024 threads)"
                        ),
                    );
                    None
                }
                None => {
                    diags.error(
                        value_loc,
                        "num_warps takes one integer literal, e.g. `num_warps = 4`",
                    );
                    None
                }
            };
            continue;
        }
        if key == "num_stages" {
            diags.error(
                key_loc,
                "`num_stages` is not supported yet: Tessera does not pipeline loops' loads; \
                 when it does, the depth will be this attribute, `#[tile_kernel(num_stages = 3)]`, \
                 as in Triton",
            );
            continue;
        }
        if out.consts.iter().any(|c| c.name == key) {
            diags.error(key_loc, format!("`{key}` is given twice"));
            continue;
        }
        let mut values = Vec::new();
        let mut valid = true;
        let elements: Vec<&Expr> = match &entry.value {
            Expr::Array(array) => array.elems.iter().collect(),
            single => vec![single],
        };
        for element in elements {
            let loc = ids.of(element);
            match int_value(element) {
                Some(v) => values.push((v, loc)),
                None => {
                    valid = false;
                    diags.error(
                        loc,
                        format!(
                            "the values of `{key}` must be integer literals, \
                             e.g. `{key} = [128, 256]`"
                        ),
                    );
                }
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

/// An integer literal, possibly negated (suffixes allowed).
fn int_value(e: &Expr) -> Option<i128> {
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

/// The kernel's signature.
#[derive(Debug)]
pub struct Signature {
    pub name: Ident,
    pub params: Vec<Param>,
    pub consts: Vec<ConstParam>,
}

/// A runtime parameter: `x: Ptr<f32>` or `n: i32`.
#[derive(Debug)]
pub struct Param {
    pub name: String,
    pub mutable: bool,
    /// `None` when the type is not one the language has (an error was reported).
    pub dtype: Option<DType>,
    pub loc: Loc,
}

/// A compile-time parameter: `const BLOCK: usize` in the generics.
#[derive(Debug)]
pub struct ConstParam {
    pub name: String,
    /// The declared type's name (`usize`, `i32`, …) and the values it holds; `None` when the
    /// type is not an integer (reported: the parameter is then unknown in every specialisation).
    pub ty: String,
    pub range: Option<(i128, i128)>,
    pub loc: Loc,
}

/// Integer types a const parameter may have, and their ranges.
const CONST_TYPES: &[(&str, i128, i128)] = &[
    ("usize", 0, u64::MAX as i128),
    ("isize", i64::MIN as i128, i64::MAX as i128),
    ("u8", 0, u8::MAX as i128),
    ("u16", 0, u16::MAX as i128),
    ("u32", 0, u32::MAX as i128),
    ("u64", 0, u64::MAX as i128),
    ("i8", i8::MIN as i128, i8::MAX as i128),
    ("i16", i16::MIN as i128, i16::MAX as i128),
    ("i32", i32::MIN as i128, i32::MAX as i128),
    ("i64", i64::MIN as i128, i64::MAX as i128),
];

/// Reads the signature of the kernel function.
pub fn parse_signature(
    sig: &syn::Signature,
    ids: &mut LocIds,
    diags: &mut Diagnostics,
) -> Signature {
    let mut unsupported = |loc: Loc, what: &str| {
        diags.error(loc, format!("a tile kernel cannot be {what}"));
    };
    if let Some(t) = &sig.constness {
        unsupported(ids.of(t), "`const`");
    }
    if let Some(t) = &sig.asyncness {
        unsupported(ids.of(t), "`async`");
    }
    if let Some(t) = &sig.unsafety {
        unsupported(
            ids.of(t),
            "`unsafe` (the generated launcher decides what is unsafe)",
        );
    }
    if let Some(abi) = &sig.abi {
        unsupported(
            ids.of(abi),
            "`extern` (the macro chooses the ABI per target)",
        );
    }
    if let Some(v) = &sig.variadic {
        diags.error(ids.of(v), "a tile kernel cannot be variadic");
    }
    if let Some(w) = &sig.generics.where_clause {
        diags.error(
            ids.of(w),
            "a tile kernel has no `where` clause: its only generics are `const` parameters",
        );
    }
    refuse_raw(&sig.ident, "the kernel's name", ids, diags);
    let mut consts = Vec::new();
    for param in &sig.generics.params {
        match param {
            GenericParam::Const(c) => {
                let loc = ids.of(c);
                refuse_raw(&c.ident, "a const parameter's name", ids, diags);
                let ty_name = match &c.ty {
                    Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(Ident::to_string),
                    _ => None,
                };
                let integer = ty_name
                    .as_deref()
                    .and_then(|n| CONST_TYPES.iter().find(|t| t.0 == n));
                if integer.is_none() {
                    diags.error(
                        ids.of(&c.ty),
                        format!(
                            "const generics of a tile kernel must be integer types: write \
                             `const {}: usize` (or another integer type)",
                            c.ident.unraw()
                        ),
                    );
                }
                if let Some(default) = &c.default {
                    diags.error(
                        ids.of(default),
                        format!(
                            "const parameter `{}` takes its values from the attribute, \
                             not a default: #[tile_kernel({} = [..])]",
                            c.ident, c.ident
                        ),
                    );
                }
                consts.push(ConstParam {
                    name: c.ident.unraw().to_string(),
                    ty: ty_name.unwrap_or_default(),
                    range: integer.map(|&(_, lo, hi)| (lo, hi)),
                    loc,
                });
            }
            GenericParam::Type(t) => diags.error(
                ids.of(t),
                format!(
                    "a tile kernel takes no type parameters (`{}`): write one kernel per \
                     element type, or a const parameter for a size",
                    t.ident
                ),
            ),
            GenericParam::Lifetime(l) => {
                diags.error(ids.of(l), "a tile kernel takes no lifetime parameters")
            }
        }
    }

    let mut params: Vec<Param> = Vec::new();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Typed(t) => t,
            FnArg::Receiver(r) => {
                diags.error(
                    ids.of(r),
                    "a tile kernel is a free function: it has no `self`",
                );
                continue;
            }
        };
        let (name, mutable) = match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                refuse_raw(&p.ident, "a parameter's name", ids, diags);
                (p.ident.unraw().to_string(), p.mutability.is_some())
            }
            other => {
                diags.error(
                    ids.of(other),
                    "a kernel parameter is a plain name, e.g. `x: Ptr<f32>`",
                );
                continue;
            }
        };
        let loc = ids.of(typed);
        if params.iter().any(|p| p.name == name) || consts.iter().any(|c| c.name == name) {
            diags.error(
                ids.of(&typed.pat),
                format!("identifier `{name}` is bound more than once in the parameter list"),
            );
            continue;
        }
        let dtype = param_type(&typed.ty, ids, diags);
        params.push(Param {
            name,
            mutable,
            dtype,
            loc,
        });
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        let is_unit = matches!(&**ty, Type::Tuple(t) if t.elems.is_empty());
        if !is_unit {
            diags.error(
                ids.of(&sig.output),
                "a tile kernel returns nothing: write its results with `store(ptrs, value)`",
            );
        }
    }
    Signature {
        name: sig.ident.clone(),
        params,
        consts,
    }
}

/// Reports a raw identifier (`r#type`) where the name becomes part of the generated module (the
/// entry points, the launcher's parameters and `Consts`), which spells names without `r#`.
fn refuse_raw(ident: &Ident, what: &str, ids: &mut LocIds, diags: &mut Diagnostics) {
    if ident.to_string().starts_with("r#") {
        diags.error(
            ids.of(ident),
            format!(
                "raw identifiers are not supported as {what} in a tile kernel: rename `{ident}` \
                 (e.g. `{}_`)",
                ident.unraw()
            ),
        );
    }
}

/// `Ptr<T>` or a scalar type name.
fn param_type(ty: &Type, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<DType> {
    const EXPECTED: &str = "kernel parameters are `Ptr<T>` (a pointer to global memory) or a \
                            scalar (bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, \
                            f64); sizes known at compile time are `const` generic parameters";
    let path = match ty {
        Type::Path(p) if p.qself.is_none() => &p.path,
        Type::Group(g) => return param_type(&g.elem, ids, diags),
        other => {
            diags.error(
                ids.of(other),
                format!("unsupported parameter type: {EXPECTED}"),
            );
            return None;
        }
    };
    let last = path.segments.last()?;
    if last.ident == "Ptr" {
        let elem = match &last.arguments {
            PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
                GenericArgument::Type(elem) => scalar_type(elem, ids, diags)?,
                other => {
                    diags.error(ids.of(other), "write the element type: `Ptr<f32>`");
                    return None;
                }
            },
            _ => {
                diags.error(ids.of(ty), "`Ptr` needs its element type: `Ptr<f32>`");
                return None;
            }
        };
        if elem == Scalar::Bool {
            diags.error(
                ids.of(ty),
                "`Ptr<bool>` is not supported: store flags as `Ptr<u8>` or `Ptr<i8>`",
            );
            return None;
        }
        return Some(DType::Ptr(elem));
    }
    if path.segments.len() == 1 && last.arguments.is_empty() {
        return scalar_type(ty, ids, diags).map(DType::Scalar);
    }
    diags.error(
        ids.of(ty),
        format!("unsupported parameter type: {EXPECTED}"),
    );
    None
}

/// An element type named by a single identifier (`f32`).
pub fn scalar_type(ty: &Type, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Scalar> {
    let ident = match ty {
        Type::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Type::Group(g) => return scalar_type(&g.elem, ids, diags),
        _ => None,
    };
    match ident {
        Some(id) => scalar_named(id, ids, diags),
        None => {
            diags.error(
                ids.of(ty),
                "expected an element type: bool, i8, i16, i32, i64, u8, u16, u32, u64, \
                 f8e4m3, f8e5m2, f16, bf16, f32 or f64",
            );
            None
        }
    }
}

/// The element type named `id`, or an error listing them.
pub fn scalar_named(id: &Ident, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Scalar> {
    let name = id.to_string();
    if let Some(s) = Scalar::from_name(&name) {
        return Some(s);
    }
    let hint = match name.as_str() {
        "usize" | "isize" => " (tiles index with i32 or i64)".to_string(),
        "char" | "str" | "String" => String::new(),
        _ => did_you_mean(&name, Scalar::ALL.iter().map(|s| s.name()))
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default(),
    };
    diags.error(
        ids.at(id.span()),
        format!(
            "`{name}` is not an element type of the tile language{hint}; element types are \
             bool, i8, i16, i32, i64, u8, u16, u32, u64, f8e4m3, f8e5m2, f16, bf16, f32 and f64"
        ),
    );
    None
}

/// One specialisation: a value for every const parameter (`None` where its list had an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Specialisation {
    pub consts: Vec<(String, Option<i128>)>,
}

impl Specialisation {
    /// `BLOCK = 1024, WARPS = 4`, for messages.
    pub fn describe(&self) -> String {
        self.consts
            .iter()
            .filter_map(|(n, v)| v.map(|v| format!("{n} = {v}")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Matches the attribute's value lists with the signature's const parameters and returns every
/// specialisation (the Cartesian product of the lists, first parameter varying slowest).
pub fn specialisations(
    attr: &KernelAttr,
    sig: &Signature,
    diags: &mut Diagnostics,
) -> Vec<Specialisation> {
    for entry in &attr.consts {
        if !sig.consts.iter().any(|c| c.name == entry.name) {
            if did_you_mean(&entry.name, ["num_warps"]).is_some() {
                diags.error(
                    entry.loc,
                    format!(
                        "unknown attribute `{}` (did you mean `num_warps`?)",
                        entry.name
                    ),
                );
                continue;
            }
            let names = sig.consts.iter().map(|c| c.name.as_str());
            let hint = match did_you_mean(&entry.name, names) {
                Some(n) => format!(" (did you mean `{n}`?)"),
                None => format!(
                    "; declare it in the generics: `fn {}<const {}: usize>(..)`",
                    sig.name, entry.name
                ),
            };
            diags.error(
                entry.loc,
                format!(
                    "`{}` is not a const parameter of `{}`{hint}",
                    entry.name, sig.name
                ),
            );
        }
    }
    let mut lists: Vec<(String, Vec<Option<i128>>)> = Vec::new();
    for param in &sig.consts {
        let Some((lo, hi)) = param.range else {
            lists.push((param.name.clone(), vec![None]));
            continue;
        };
        let Some(entry) = attr.consts.iter().find(|e| e.name == param.name) else {
            diags.error(
                param.loc,
                format!(
                    "const parameter `{0}` has no values: list the sizes to compile in the \
                     attribute, e.g. #[tile_kernel({0} = [128, 256])]",
                    param.name
                ),
            );
            lists.push((param.name.clone(), vec![None]));
            continue;
        };
        let mut values = Vec::new();
        let mut valid = entry.valid;
        for &(v, loc) in &entry.values {
            if v < lo || v > hi {
                valid = false;
                diags.error(
                    loc,
                    format!(
                        "{} = {v} does not fit the parameter's type `{}`",
                        param.name, param.ty
                    ),
                );
            } else if values.contains(&Some(v)) {
                diags.error(loc, format!("{} = {v} is listed twice", param.name));
            } else {
                values.push(Some(v));
            }
        }
        if !valid || values.is_empty() {
            values = vec![None];
        }
        lists.push((param.name.clone(), values));
    }
    let count = lists
        .iter()
        .fold(1usize, |n, (_, vs)| n.saturating_mul(vs.len()));
    if count > MAX_SPECIALISATIONS {
        if let Some(first) = attr.consts.first() {
            diags.error(
                first.loc,
                format!(
                    "these value lists make {count} specialisations of the kernel; at most \
                     {MAX_SPECIALISATIONS} are compiled: list fewer values"
                ),
            );
        }
        return vec![Specialisation {
            consts: lists.into_iter().map(|(n, _)| (n, None)).collect(),
        }];
    }
    let mut specs = vec![Specialisation { consts: Vec::new() }];
    for (name, values) in &lists {
        specs = specs
            .into_iter()
            .flat_map(|s| {
                values.iter().map(move |v| {
                    let mut s = s.clone();
                    s.consts.push((name.clone(), *v));
                    s
                })
            })
            .collect();
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn attr(tokens: TokenStream) -> (KernelAttr, Vec<String>) {
        let mut ids = LocIds::default();
        let mut diags = Diagnostics::default();
        let a = parse_attr(tokens, &mut ids, &mut diags);
        (a, diags.iter().map(|d| d.message.clone()).collect())
    }

    fn sig(tokens: TokenStream) -> (Signature, Vec<String>) {
        let mut ids = LocIds::default();
        let mut diags = Diagnostics::default();
        let f: syn::ItemFn = syn::parse2(tokens).unwrap();
        let s = parse_signature(&f.sig, &mut ids, &mut diags);
        (s, diags.iter().map(|d| d.message.clone()).collect())
    }

    #[test]
    fn attribute_lists() {
        let (a, errors) = attr(quote!(num_warps = 8, BLOCK = [256, 1024], K = 64));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(a.num_warps, Some(8));
        assert_eq!(a.consts.len(), 2);
        assert_eq!(a.consts[0].name, "BLOCK");
        let values: Vec<i128> = a.consts[0].values.iter().map(|v| v.0).collect();
        assert_eq!(values, [256, 1024]);
        assert_eq!(a.consts[1].values[0].0, 64);
        let (a, errors) = attr(quote!());
        assert!(errors.is_empty());
        assert_eq!(a.num_warps, Some(DEFAULT_NUM_WARPS));
    }

    #[test]
    fn attribute_errors() {
        let (a, errors) = attr(quote!(num_warps = 3));
        assert_eq!(a.num_warps, None);
        assert!(
            errors[0].contains("num_warps = 3 is not allowed"),
            "{errors:?}"
        );
        let (_, errors) = attr(quote!(num_warps 4));
        assert!(errors[0].contains("name = value"), "{errors:?}");
        let (_, errors) = attr(quote!(BLOCK = [1.5, x], BLOCK = 4));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("integer literals"));
        assert!(errors[2].contains("given twice"));
        let (_, errors) = attr(quote!(BLOCK = []));
        assert!(errors[0].contains("at least one value"), "{errors:?}");
    }

    #[test]
    fn signature() {
        let (s, errors) = sig(quote!(
            fn k<const BLOCK: usize, const K: i32>(x: Ptr<f16>, mut n: i32, s: f32) {}
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(s.name, "k");
        assert_eq!(s.consts.len(), 2);
        assert_eq!(s.consts[1].ty, "i32");
        assert_eq!(s.params[0].dtype, Some(DType::Ptr(Scalar::F16)));
        assert!(s.params[1].mutable);
        assert_eq!(s.params[2].dtype, Some(DType::Scalar(Scalar::F32)));
    }

    #[test]
    fn signature_errors() {
        let (s, errors) = sig(quote!(
            async unsafe fn k<'a, T, const B: bool>(&self, x: &f32, y: Ptr<fp32>, x: i32) -> f32 {}
        ));
        assert_eq!(s.params.len(), 2);
        let all = errors.join("\n");
        for needle in [
            "cannot be `async`",
            "cannot be `unsafe`",
            "returns nothing",
            "no lifetime",
            "no type parameters (`T`)",
            "const generics of a tile kernel must be integer types",
            "no `self`",
            "unsupported parameter type",
            "did you mean `f32`",
            "bound more than once",
        ] {
            assert!(all.contains(needle), "missing {needle:?} in\n{all}");
        }
    }

    #[test]
    fn specialisation_product() {
        let (a, _) = attr(quote!(M = [64, 128], N = [32, 64, 128]));
        let (s, _) = sig(quote!(
            fn k<const M: usize, const N: usize>() {}
        ));
        let mut diags = Diagnostics::default();
        let specs = specialisations(&a, &s, &mut diags);
        assert!(diags.is_empty());
        assert_eq!(specs.len(), 6);
        assert_eq!(specs[0].describe(), "M = 64, N = 32");
        assert_eq!(specs[5].describe(), "M = 128, N = 128");
    }

    #[test]
    fn specialisation_errors() {
        let (a, _) = attr(quote!(BLCK = [64], N = [-1]));
        let (s, _) = sig(quote!(
            fn k<const BLOCK: usize, const N: usize>() {}
        ));
        let mut diags = Diagnostics::default();
        let specs = specialisations(&a, &s, &mut diags);
        let all: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        assert!(all[0].contains("did you mean `BLOCK`"), "{all:?}");
        assert!(all[1].contains("`BLOCK` has no values"), "{all:?}");
        assert!(all[2].contains("N = -1 does not fit"), "{all:?}");
        assert_eq!(specs.len(), 1);
        assert_eq!(
            specs[0].consts,
            [("BLOCK".into(), None), ("N".into(), None)]
        );

        let (a, _) = attr(quote!(
            A = [1, 2, 4, 8, 16],
            B = [1, 2, 4, 8, 16],
            C = [1, 2, 4]
        ));
        let (s, _) = sig(quote!(
            fn k<const A: usize, const B: usize, const C: usize>() {}
        ));
        let mut diags = Diagnostics::default();
        specialisations(&a, &s, &mut diags);
        assert!(diags
            .iter()
            .next()
            .unwrap()
            .message
            .contains("75 specialisations"));
    }
}
