//! The kernel's signature: runtime parameters, const and type parameters.

use crate::diag::{did_you_mean, Diagnostics, Loc, LocIds};
use crate::types::{DType, Scalar};
use proc_macro2::{Group, Ident, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{FnArg, GenericArgument, GenericParam, Pat, PathArguments, Type};

/// The kernel's signature.
#[derive(Debug)]
pub struct Signature {
    pub name: Ident,
    pub params: Vec<Param>,
    pub consts: Vec<ConstParam>,
    /// The type parameters (`T` in `fn k<T>`), each an element type per specialisation.
    pub types: Vec<TypeParam>,
}

impl Signature {
    /// The rank of tensor parameter `name`: how many of its desugared sizes (`name__size0`, …)
    /// the parameters hold; 0 when `name` is no tensor parameter.
    pub fn tensor_rank(&self, name: &str) -> usize {
        (0..)
            .take_while(|&d| {
                let size = crate::expand::tensor_params::scalar_name(name, "size", d);
                self.params.iter().any(|p| p.name == size)
            })
            .count()
    }
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

/// `tokens` with every identifier naming a type parameter of `types` replaced by
/// `replace(that identifier, its element type)`, inside groups too (each group keeps its span).
fn replace_type_params(
    tokens: TokenStream,
    types: &[(String, Scalar)],
    replace: &dyn Fn(&Ident, Scalar) -> TokenStream,
) -> TokenStream {
    let mut out = TokenStream::new();
    for tree in tokens {
        match tree {
            TokenTree::Ident(id) => match types.iter().find(|(n, _)| id == n) {
                Some(&(_, s)) => out.extend(replace(&id, s)),
                None => out.extend([TokenTree::Ident(id)]),
            },
            TokenTree::Group(g) => {
                let inner = replace_type_params(g.stream(), types, replace);
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            other => out.extend([other]),
        }
    }
    out
}

/// The parameter types of `function` as written, each type parameter replaced by
/// `spell(its element type in types)` (e.g. `Ptr<T>` → `Ptr<::tessera::f16>`): types the
/// generated code can name in any scope, that still use what the user's scope imported for
/// them (`Ptr`).
pub fn spelled_parameter_types(
    function: &syn::ItemFn,
    types: &[(String, Scalar)],
    spell: &dyn Fn(Scalar) -> TokenStream,
) -> Vec<TokenStream> {
    function
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(t) => Some(replace_type_params(
                t.ty.to_token_stream(),
                types,
                &|_, s| spell(s),
            )),
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The kernel with each type parameter replaced by its element type in `types` in the
/// parameters, the return type and the body (each name keeps its span, so errors stay on the
/// user's code); the generics are left as written.
pub fn substitute_types(function: &syn::ItemFn, types: &[(String, Scalar)]) -> syn::ItemFn {
    fn reparse<T: syn::parse::Parse + ToTokens>(node: &mut T, types: &[(String, Scalar)]) {
        let by_name = |id: &Ident, s: Scalar| {
            TokenStream::from(TokenTree::Ident(Ident::new(s.name(), id.span())))
        };
        if let Ok(new) = syn::parse2(replace_type_params(node.to_token_stream(), types, &by_name)) {
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
