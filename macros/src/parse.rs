//! The kernel's attribute (`num_warps`, const values, element types) and signature (parameters,
//! const and type parameters), read from `syn` into plain data. Problems are reported, never fatal: a bad
//! parameter is kept with an unknown type so the body is still checked.

use crate::diag::{did_you_mean, Diagnostics, Loc, LocIds};
use crate::types::{DType, Scalar};
use proc_macro2::{Group, Ident, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{Expr, FnArg, GenericArgument, GenericParam, Lit, Pat, PathArguments, Type, UnOp};

/// Warps per program when the attribute does not say.
pub const DEFAULT_NUM_WARPS: u32 = 4;

/// Most specialisations one kernel may have (the product of the lengths of its value lists).
pub const MAX_SPECIALISATIONS: usize = 64;

/// `#[tile_kernel(num_warps = [4, 8], T = [f16, f32], BLOCK = [256, 1024])]`.
#[derive(Debug)]
pub struct KernelAttr {
    /// Warps per program, one specialisation per value; `None` when the attribute's value is
    /// invalid (an error was reported).
    pub num_warps: Option<Vec<u32>>,
    /// The value lists, one per `NAME = …` entry, in order.
    pub consts: Vec<ConstValues>,
}

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
            out.num_warps = num_warps_values(&entry.value, ids, diags);
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
    let mut out = Vec::new();
    let mut valid = true;
    for element in list_elements(e) {
        let loc = ids.of(element);
        match int_value(element) {
            Some(n) if [1, 2, 4, 8, 16, 32].contains(&n) => {
                if out.contains(&(n as u32)) {
                    diags.error(loc, format!("num_warps = {n} is listed twice"));
                } else {
                    out.push(n as u32);
                }
            }
            Some(n) => {
                valid = false;
                diags.error(
                    loc,
                    format!(
                        "num_warps = {n} is not allowed: it must be 1, 2, 4, 8, 16 or 32 \
                         (a program is one CUDA block of 32 × num_warps ≤ 1024 threads)"
                    ),
                );
            }
            None => {
                valid = false;
                diags.error(
                    loc,
                    "num_warps takes integer literals, e.g. `num_warps = 4` or \
                     `num_warps = [4, 8]`",
                );
            }
        }
    }
    if out.is_empty() && valid {
        diags.error(
            ids.of(e),
            "`num_warps` needs at least one value, e.g. `num_warps = [4, 8]`",
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
    /// The type parameters (`T` in `fn k<T>`), each an element type per specialisation.
    pub types: Vec<TypeParam>,
}

/// A type parameter: `T` in the generics, given its element types by the attribute.
#[derive(Debug)]
pub struct TypeParam {
    pub name: String,
    pub loc: Loc,
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
            "a tile kernel has no `where` clause: its generics are element types and `const` \
             parameters, given their values by the attribute",
        );
    }
    refuse_raw(&sig.ident, "the kernel's name", ids, diags);
    let mut consts = Vec::new();
    let mut types: Vec<TypeParam> = Vec::new();
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
            GenericParam::Type(t) => {
                refuse_raw(&t.ident, "a type parameter's name", ids, diags);
                let name = t.ident.unraw().to_string();
                if !t.bounds.is_empty() || t.default.is_some() {
                    diags.error(
                        ids.of(t),
                        format!(
                            "type parameter `{name}` takes its element types from the \
                             attribute, without bounds or a default: \
                             #[tile_kernel({name} = [f16, f32])] fn k<{name}>(..)"
                        ),
                    );
                }
                types.push(TypeParam {
                    name,
                    loc: ids.of(&t.ident),
                });
            }
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
        if params.iter().any(|p| p.name == name)
            || consts.iter().any(|c| c.name == name)
            || types.iter().any(|t| t.name == name)
        {
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
        types,
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

/// The kernel with each type parameter replaced by its element type in `types` in the
/// parameters, the return type and the body (each name keeps its span, so errors stay on the
/// user's code); the generics are left as written.
pub fn substitute_types(function: &syn::ItemFn, types: &[(String, Scalar)]) -> syn::ItemFn {
    fn substitute(tokens: TokenStream, types: &[(String, Scalar)]) -> TokenStream {
        tokens
            .into_iter()
            .map(|tree| match tree {
                TokenTree::Ident(id) => match types.iter().find(|(n, _)| id == n) {
                    Some((_, t)) => TokenTree::Ident(Ident::new(t.name(), id.span())),
                    None => TokenTree::Ident(id),
                },
                TokenTree::Group(g) => {
                    let mut out = Group::new(g.delimiter(), substitute(g.stream(), types));
                    out.set_span(g.span());
                    TokenTree::Group(out)
                }
                other => other,
            })
            .collect()
    }
    fn reparse<T: syn::parse::Parse + ToTokens>(node: &mut T, types: &[(String, Scalar)]) {
        if let Ok(new) = syn::parse2(substitute(node.to_token_stream(), types)) {
            *node = new;
        }
    }
    let mut out = function.clone();
    if types.is_empty() {
        return out;
    }
    for input in &mut out.sig.inputs {
        if let FnArg::Typed(t) = input {
            reparse(&mut *t.ty, types);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &mut out.sig.output {
        reparse(&mut **ty, types);
    }
    reparse(&mut *out.block, types);
    out
}

/// One specialisation: an element type for every type parameter, a value for every const
/// parameter (`None` where its list had an error), and its warps per program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Specialisation {
    pub types: Vec<(String, Option<Scalar>)>,
    pub consts: Vec<(String, Option<i128>)>,
    /// `None` when the attribute's `num_warps` was invalid.
    pub num_warps: Option<u32>,
    /// Whether the attribute lists several `num_warps` (then they tell specialisations apart).
    pub num_warps_varies: bool,
}

impl Specialisation {
    /// `T = f16, BLOCK = 1024, num_warps = 8`, for messages.
    pub fn describe(&self) -> String {
        let types = self
            .types
            .iter()
            .filter_map(|(n, t)| t.map(|t| format!("{n} = {}", t.name())));
        let consts = self
            .consts
            .iter()
            .filter_map(|(n, v)| v.map(|v| format!("{n} = {v}")));
        let warps = self
            .num_warps
            .filter(|_| self.num_warps_varies)
            .map(|w| format!("num_warps = {w}"));
        types
            .chain(consts)
            .chain(warps)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The values of one specialisation axis: a type parameter's element types or a const
/// parameter's integers (`None`: unknown after an error).
type Axis<V> = (String, Vec<Option<V>>);

/// Matches the attribute's lists with the signature's type and const parameters and returns
/// every specialisation (the Cartesian product of the lists: type parameters, then const
/// parameters, then `num_warps`; the first varying slowest).
pub fn specialisations(
    attr: &KernelAttr,
    sig: &Signature,
    diags: &mut Diagnostics,
) -> Vec<Specialisation> {
    for entry in &attr.consts {
        let is_type = sig.types.iter().any(|t| t.name == entry.name);
        let is_const = sig.consts.iter().any(|c| c.name == entry.name);
        let first_value = entry.values.first().map(|(v, loc)| (*v, *loc));
        match first_value {
            Some((AttrValue::Int(_), loc)) if is_type => diags.error(
                loc,
                format!(
                    "`{0}` is a type parameter: list element types, e.g. `{0} = [f16, f32]`",
                    entry.name
                ),
            ),
            Some((AttrValue::Type(_), loc)) if is_const => diags.error(
                loc,
                format!(
                    "the values of `{0}` must be integer literals, e.g. `{0} = [128, 256]`",
                    entry.name
                ),
            ),
            _ => {}
        }
        if is_type || is_const {
            continue;
        }
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
        let names = sig
            .consts
            .iter()
            .map(|c| c.name.as_str())
            .chain(sig.types.iter().map(|t| t.name.as_str()));
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
    let types: Vec<Axis<Scalar>> = sig
        .types
        .iter()
        .map(|param| (param.name.clone(), type_axis(attr, param, diags)))
        .collect();
    let consts: Vec<Axis<i128>> = sig
        .consts
        .iter()
        .map(|param| (param.name.clone(), const_axis(attr, param, diags)))
        .collect();
    let warps: Vec<Option<u32>> = match &attr.num_warps {
        Some(list) => list.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    let count = types
        .iter()
        .map(|(_, vs)| vs.len())
        .chain(consts.iter().map(|(_, vs)| vs.len()))
        .fold(warps.len(), usize::saturating_mul);
    let unknown = Specialisation {
        types: types.iter().map(|(n, _)| (n.clone(), None)).collect(),
        consts: consts.iter().map(|(n, _)| (n.clone(), None)).collect(),
        num_warps: None,
        num_warps_varies: false,
    };
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
        return vec![unknown];
    }
    let mut specs = vec![Specialisation {
        types: Vec::new(),
        consts: Vec::new(),
        ..unknown
    }];
    for (name, values) in &types {
        specs = product(specs, values, |s, v| s.types.push((name.clone(), *v)));
    }
    for (name, values) in &consts {
        specs = product(specs, values, |s, v| s.consts.push((name.clone(), *v)));
    }
    let num_warps_varies = warps.len() > 1;
    specs = product(specs, &warps, |s, w| {
        s.num_warps = *w;
        s.num_warps_varies = num_warps_varies;
    });
    specs
}

/// Every specialisation of `specs` extended by every value of `values` (`add` records one).
fn product<V>(
    specs: Vec<Specialisation>,
    values: &[V],
    add: impl Fn(&mut Specialisation, &V),
) -> Vec<Specialisation> {
    let add = &add;
    specs
        .into_iter()
        .flat_map(|s| {
            values.iter().map(move |v| {
                let mut s = s.clone();
                add(&mut s, v);
                s
            })
        })
        .collect()
}

/// The element types the attribute lists for a type parameter (`[None]` after an error).
fn type_axis(attr: &KernelAttr, param: &TypeParam, diags: &mut Diagnostics) -> Vec<Option<Scalar>> {
    let Some(entry) = attr.consts.iter().find(|e| e.name == param.name) else {
        diags.error(
            param.loc,
            format!(
                "type parameter `{0}` has no element types: list the types to compile in the \
                 attribute, e.g. #[tile_kernel({0} = [f16, f32])]",
                param.name
            ),
        );
        return vec![None];
    };
    let mut values = Vec::new();
    for &(v, loc) in &entry.values {
        let AttrValue::Type(t) = v else {
            return vec![None];
        };
        if values.contains(&Some(t)) {
            diags.error(
                loc,
                format!("{} = {} is listed twice", param.name, t.name()),
            );
        } else {
            values.push(Some(t));
        }
    }
    if !entry.valid || values.is_empty() {
        return vec![None];
    }
    values
}

/// The integers the attribute lists for a const parameter (`[None]` after an error).
fn const_axis(attr: &KernelAttr, param: &ConstParam, diags: &mut Diagnostics) -> Vec<Option<i128>> {
    let Some((lo, hi)) = param.range else {
        return vec![None];
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
        return vec![None];
    };
    let mut values = Vec::new();
    let mut valid = entry.valid;
    for &(v, loc) in &entry.values {
        let AttrValue::Int(v) = v else {
            return vec![None];
        };
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
        return vec![None];
    }
    values
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
        assert_eq!(a.num_warps, Some(vec![8]));
        assert_eq!(a.consts.len(), 2);
        assert_eq!(a.consts[0].name, "BLOCK");
        let values: Vec<AttrValue> = a.consts[0].values.iter().map(|v| v.0).collect();
        assert_eq!(values, [AttrValue::Int(256), AttrValue::Int(1024)]);
        assert_eq!(a.consts[1].values[0].0, AttrValue::Int(64));
        let (a, errors) = attr(quote!());
        assert!(errors.is_empty());
        assert_eq!(a.num_warps, Some(vec![DEFAULT_NUM_WARPS]));
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
            async unsafe fn k<'a, T: Copy, const B: bool>(
                &self,
                x: &f32,
                y: Ptr<fp32>,
                x: i32,
            ) -> f32 {
            }
        ));
        assert_eq!(s.params.len(), 2);
        let all = errors.join("\n");
        for needle in [
            "cannot be `async`",
            "cannot be `unsafe`",
            "returns nothing",
            "no lifetime",
            "type parameter `T` takes its element types from the attribute, without bounds",
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

    #[test]
    fn type_and_warp_axes() {
        let (a, errors) = attr(quote!(T = [f16, bf16], num_warps = [4, 8], BLOCK = 64));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(a.num_warps, Some(vec![4, 8]));
        let types: Vec<AttrValue> = a.consts[0].values.iter().map(|v| v.0).collect();
        assert_eq!(
            types,
            [AttrValue::Type(Scalar::F16), AttrValue::Type(Scalar::BF16)]
        );
        let (s, errors) = sig(quote!(
            fn k<T, const BLOCK: usize>(x: Ptr<f32>) {}
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(s.types[0].name, "T");
        let mut diags = Diagnostics::default();
        let specs = specialisations(&a, &s, &mut diags);
        assert!(diags.is_empty());
        assert_eq!(specs.len(), 4);
        assert_eq!(specs[0].describe(), "T = f16, BLOCK = 64, num_warps = 4");
        assert_eq!(specs[3].describe(), "T = bf16, BLOCK = 64, num_warps = 8");
    }

    #[test]
    fn type_axis_errors() {
        let (a, errors) = attr(quote!(T = [f16, f64x], U = [f32]));
        assert!(
            errors[0].contains("`f64x` is not an element type"),
            "{errors:?}"
        );
        let (s, _) = sig(quote!(
            fn k<T, V, const B: usize>(x: Ptr<T>) {}
        ));
        let mut diags = Diagnostics::default();
        let specs = specialisations(&a, &s, &mut diags);
        let all: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        assert!(
            all[0].contains("`U` is not a const parameter of `k` (did you mean"),
            "{all:?}"
        );
        assert!(
            all[1].contains("type parameter `V` has no element types"),
            "{all:?}"
        );
        assert!(
            all[2].contains("const parameter `B` has no values"),
            "{all:?}"
        );
        assert_eq!(specs.len(), 1);

        let (a, _) = attr(quote!(T = [4], B = [f32], num_warps = [4, 4]));
        let mut diags = Diagnostics::default();
        specialisations(&a, &s, &mut diags);
        let all: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        assert!(
            all[0].contains("`T` is a type parameter: list element types"),
            "{all:?}"
        );
        assert!(
            all[1].contains("the values of `B` must be integer literals"),
            "{all:?}"
        );
        let (_, errors) = attr(quote!(num_warps = [4, 4]));
        assert!(
            errors[0].contains("num_warps = 4 is listed twice"),
            "{errors:?}"
        );
    }

    #[test]
    fn types_substitute_in_parameters_and_body() {
        let f: syn::ItemFn = syn::parse2(quote!(
            fn k<T>(x: Ptr<T>) {
                store(x, load(x).to::<T>() + T::MAX);
            }
        ))
        .unwrap();
        let typed = substitute_types(&f, &[("T".to_string(), Scalar::BF16)]);
        let text = typed.to_token_stream().to_string();
        assert!(text.contains("x : Ptr < bf16 >"), "{text}");
        assert!(text.contains("to :: < bf16 > () + bf16 :: MAX"), "{text}");
        assert!(text.starts_with("fn k < T >"), "{text}");
    }
}
