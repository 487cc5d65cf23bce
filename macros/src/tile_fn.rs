//! Helper functions of the tile language: `#[tile_fn]` on a function, `uses = [name, …]` in a
//! kernel's attribute, and each call of a helper in the kernel inlined as a block before the
//! body is read.
//!
//! A proc macro sees only the item it is attached to, so a kernel cannot read a helper's body
//! by itself. `#[tile_fn] fn name(…) { … }` therefore expands to a `macro_rules!` that hands
//! the helper's tokens back ([`helper_macro`]), imported under the helper's own name with the
//! helper's visibility (a `pub` helper's macro is `#[macro_export]`ed, so kernels of other
//! crates fetch it through that import as kernels of its own crate do). A kernel
//! whose `uses` names helpers it has not been given expands to a call of the first missing one
//! ([`fetch`]), carrying its own attribute and item along; that macro appends the helper and
//! calls `tessera::__tile_kernel_resume!`, which expands the kernel again with one helper more,
//! until all are there. Then [`inline_calls`] replaces each call `name::<G…>(args…)` by
//!
//! ```text
//! { let p0_in_name = arg0; let p1_in_name = arg1; …body…; tail }
//! ```
//!
//! with every name the helper binds renamed (`x` → `x_in_name`) so that its locals and the
//! kernel's cannot meet, and its generic parameters replaced by the call's turbofish. The rest
//! of the front end sees an ordinary kernel body.

use crate::diag::push_error;
use crate::frontend::rejected;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use std::collections::BTreeSet;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

/// A helper as `#[tile_fn]` handed it over: its name and function.
pub struct Helper {
    pub name: String,
    pub function: syn::ItemFn,
}

impl Helper {
    /// The helper `function` defines, without its `#[tile_fn]` (or `#[tessera::tile_fn]`)
    /// attribute.
    pub fn new(mut function: syn::ItemFn) -> Helper {
        function.attrs.retain(|a| {
            a.path()
                .segments
                .last()
                .is_none_or(|s| s.ident != "tile_fn")
        });
        Helper {
            name: function.sig.ident.to_string(),
            function,
        }
    }
}

/// The kernel's `uses = [a, path::b]`, and the rest of its attribute.
pub struct Uses {
    pub paths: Vec<syn::Path>,
    pub rest: TokenStream,
}

impl Uses {
    fn names(&self) -> impl Iterator<Item = String> + '_ {
        self.paths.iter().map(last_name)
    }
}

fn last_name(path: &syn::Path) -> String {
    path.segments
        .last()
        .map_or_else(String::new, |s| s.ident.to_string())
}

/// Splits `uses = [..]` off the kernel's attribute. An attribute that does not parse as a list
/// of `key = value` entries is left whole for the attribute's own parser to report.
pub fn split_uses(attr: TokenStream) -> Result<Uses, syn::Error> {
    let parser = Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
    let Ok(entries) = syn::parse::Parser::parse2(parser, attr.clone()) else {
        return Ok(Uses {
            paths: Vec::new(),
            rest: attr,
        });
    };
    let mut paths = Vec::new();
    let mut rest = Punctuated::<syn::Meta, syn::Token![,]>::new();
    for entry in entries {
        match &entry {
            syn::Meta::NameValue(nv) if nv.path.is_ident("uses") => {
                let syn::Expr::Array(list) = &nv.value else {
                    return Err(syn::Error::new_spanned(
                        &nv.value,
                        "`uses` lists the #[tile_fn] helpers the kernel calls: `uses = [name, …]`",
                    ));
                };
                for elem in &list.elems {
                    match elem {
                        syn::Expr::Path(p) if p.qself.is_none() => paths.push(p.path.clone()),
                        other => {
                            return Err(syn::Error::new_spanned(
                                other,
                                "expected the name (or path) of a #[tile_fn] helper",
                            ))
                        }
                    }
                }
            }
            _ => rest.push(entry),
        }
    }
    let mut seen = BTreeSet::new();
    for path in &paths {
        if !seen.insert(last_name(path)) {
            return Err(syn::Error::new_spanned(
                path,
                format!("`{}` is listed twice in `uses`", last_name(path)),
            ));
        }
    }
    Ok(Uses {
        paths,
        rest: rest.into_token_stream(),
    })
}

/// The first helper of `uses` not yet among `helpers`.
fn next_missing<'a>(uses: &'a Uses, helpers: &[Helper]) -> Option<&'a syn::Path> {
    uses.paths
        .iter()
        .find(|p| !helpers.iter().any(|h| h.name == last_name(p)))
}

/// The expansion that fetches `helper`: a call of its macro with the kernel and the helpers
/// gathered so far, which comes back as `tessera::__tile_kernel_resume!` with `helper` added.
fn fetch(
    helper: &syn::Path,
    attr: &TokenStream,
    item: &TokenStream,
    helpers: &[Helper],
) -> TokenStream {
    let given = helpers.iter().map(|h| &h.function);
    quote! { #helper! { [#attr] [#item] #([#[tile_fn] #given])* } }
}

/// A kernel's expansion with the `helpers` gathered so far: a call of the next helper its
/// `uses` lists and it has not been given ([`fetch`]), or, with all of them, its body with their
/// calls inlined, expanded by `expand` (the expansion of a kernel without helpers).
pub fn expand_with(
    attr: TokenStream,
    item: TokenStream,
    helpers: &[Helper],
    expand: fn(TokenStream, TokenStream) -> TokenStream,
) -> TokenStream {
    let uses = match split_uses(attr.clone()) {
        Ok(uses) => uses,
        Err(error) => return rejected(&error, syn::parse2(item).ok().as_ref()),
    };
    if let Some(next) = next_missing(&uses, helpers) {
        return fetch(next, &attr, &item, helpers);
    }
    match inline_calls(item.clone(), &uses, helpers) {
        Ok(inlined) => expand(uses.rest, inlined),
        Err(error) => rejected(&error, syn::parse2(item).ok().as_ref()),
    }
}

/// The expansion of `tessera::__tile_kernel_resume!` (see [`expand_with`]).
pub fn resume(
    state: TokenStream,
    expand: fn(TokenStream, TokenStream) -> TokenStream,
) -> TokenStream {
    match ResumeState::parse(state) {
        Ok(state) => expand_with(state.attr, state.item, &state.helpers, expand),
        Err(error) => error.to_compile_error(),
    }
}

/// The state `tessera::__tile_kernel_resume!` receives: `[attr] [item] [helper]…`.
pub struct ResumeState {
    pub attr: TokenStream,
    pub item: TokenStream,
    pub helpers: Vec<Helper>,
}

impl ResumeState {
    pub fn parse(state: TokenStream) -> Result<ResumeState, syn::Error> {
        let mut groups = Vec::new();
        for tree in state {
            match tree {
                TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Bracket => {
                    groups.push(g.stream())
                }
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "tessera::__tile_kernel_resume! is called by #[tile_fn] helpers only",
                    ))
                }
            }
        }
        if groups.len() < 2 {
            return Err(syn::Error::new(
                Span::call_site(),
                "tessera::__tile_kernel_resume! is called by #[tile_fn] helpers only",
            ));
        }
        let mut groups = groups.into_iter();
        let attr = call_site_hygiene(groups.next().unwrap_or_default());
        let item = call_site_hygiene(groups.next().unwrap_or_default());
        let mut helpers = Vec::new();
        for tokens in groups {
            helpers.push(Helper::new(syn::parse2(call_site_hygiene(tokens))?));
        }
        Ok(ResumeState {
            attr,
            item,
            helpers,
        })
    }
}

/// `tokens` at their own places in the source, resolving names where this resumed expansion is
/// called (inside a helper's `macro_rules!`), as the names the expansion makes itself do. The
/// kernel's tokens come from its own source, a helper's from the `macro_rules!` that carried
/// them: left as they are, their hygiene would keep the locals the expansion binds at one
/// token apart from the uses it writes at another.
fn call_site_hygiene(tokens: TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(g) => {
                let mut group =
                    proc_macro2::Group::new(g.delimiter(), call_site_hygiene(g.stream()));
                group.set_span(g.span().resolved_at(Span::call_site()));
                TokenTree::Group(group)
            }
            mut other => {
                other.set_span(other.span().resolved_at(Span::call_site()));
                other
            }
        })
        .collect()
}

/// `#[tile_fn]` on `function`: checks what a helper may be and expands to the macro that hands
/// it to kernels, imported under the helper's name with the helper's visibility.
pub fn helper_macro(attr: TokenStream, item: TokenStream) -> TokenStream {
    match check_helper(attr, item) {
        Ok(function) => {
            let name = &function.sig.ident;
            let vis = &function.vis;
            // A `pub` helper's macro is exported, so that kernels of other crates can fetch it
            // (through the re-export below): at the crate's root, where its name must be the
            // crate's only one, so it carries a hash of the helper's tokens.
            let (hidden, export) = if matches!(vis, syn::Visibility::Public(_)) {
                let hash = crate::fnv1a(function.to_token_stream().to_string().as_bytes());
                (
                    format_ident!("__tessera_tile_fn_{}_{:016x}", name, hash),
                    quote!(#[macro_export]),
                )
            } else {
                (format_ident!("__tessera_tile_fn_{}", name), quote!())
            };
            let docs = function.attrs.iter().filter(|a| a.path().is_ident("doc"));
            let signature = signature_check(&function);
            quote! {
                #signature
                #[doc(hidden)]
                #export
                macro_rules! #hidden {
                    ($($state:tt)*) => {
                        ::tessera::__tile_kernel_resume! { $($state)* [#[tile_fn] #function] }
                    };
                }
                #(#docs)*
                #[allow(unused_imports)]
                #vis use #hidden as #name;
            }
        }
        Err(error) => error.to_compile_error(),
    }
}

/// The helper's signature as a function rustc checks (its body never runs): the types written
/// must name real types (and use their imports), each `_` a type parameter of its own.
fn signature_check(function: &syn::ItemFn) -> TokenStream {
    let mut sig = function.sig.clone();
    sig.ident = format_ident!("__tessera_tile_fn_signature_{}", function.sig.ident);
    let mut fresh = InferredTypes::default();
    for input in &mut sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            // `Tensor<T, RANK>` is the language's, not a host type: rustc checks its element
            // type and rank.
            if let Some((element, rank)) = tensor_type(&t.ty) {
                let rank = match rank {
                    syn::GenericArgument::Type(ty) => quote!(#ty),
                    other => quote!(#other),
                };
                *t.ty = syn::parse_quote!(::core::marker::PhantomData<(#element, [(); #rank])>);
            }
            fresh.visit_type_mut(&mut t.ty);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &mut sig.output {
        fresh.visit_type_mut(ty);
    }
    for name in fresh.names {
        sig.generics.params.push(syn::parse_quote!(#name));
    }
    quote! {
        #[doc(hidden)]
        #[allow(
            dead_code,
            unused_variables,
            unused_mut,
            non_snake_case,
            clippy::too_many_arguments,
            clippy::empty_loop
        )]
        #sig {
            loop {}
        }
    }
}

/// Replaces each `_` in a type by a type parameter of its own (`__Inferred0`, …).
#[derive(Default)]
struct InferredTypes {
    names: Vec<syn::Ident>,
}

impl VisitMut for InferredTypes {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Infer(infer) = ty {
            let name = format_ident!("__Inferred{}", self.names.len(), span = infer.span());
            self.names.push(name.clone());
            *ty = syn::parse_quote!(#name);
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

fn check_helper(attr: TokenStream, item: TokenStream) -> Result<syn::ItemFn, syn::Error> {
    if let Some(first) = attr.into_iter().next() {
        return Err(syn::Error::new(
            first.span(),
            "#[tile_fn] takes no arguments (the kernel lists its helpers: `uses = [..]`)",
        ));
    }
    let function: syn::ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[tile_fn] applies to a function: `fn name(x: Ptr<f32>, n: i32) -> … { … }`",
        )
    })?;
    let sig = &function.sig;
    let qualifier = sig
        .constness
        .map(|t| t.span())
        .or(sig.asyncness.map(|t| t.span()))
        .or(sig.unsafety.map(|t| t.span()))
        .or(sig.abi.as_ref().map(|a| a.span()));
    if let Some(span) = qualifier {
        return Err(syn::Error::new(
            span,
            "a #[tile_fn] helper is a plain `fn` (it is inlined into the kernels that call it)",
        ));
    }
    if let Some(attr) = function.attrs.iter().find(|a| !a.path().is_ident("doc")) {
        return Err(syn::Error::new_spanned(
            attr,
            "only doc comments may be attached to a #[tile_fn] helper",
        ));
    }
    if let Some(w) = &sig.generics.where_clause {
        return Err(syn::Error::new_spanned(
            w,
            "a #[tile_fn] helper takes no `where` clause",
        ));
    }
    for param in &sig.generics.params {
        match param {
            syn::GenericParam::Type(t) if t.bounds.is_empty() && t.default.is_none() => {}
            syn::GenericParam::Const(c) if c.default.is_none() => {}
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "a #[tile_fn] helper's generic parameters are element types `T` and \
                     `const NAME: usize`, given by the call (`name::<T, 64>(..)`)",
                ))
            }
        }
    }
    for input in &sig.inputs {
        let ok = match input {
            syn::FnArg::Typed(t) => matches!(
                &*t.pat,
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none()
            ),
            syn::FnArg::Receiver(_) => false,
        };
        if !ok {
            return Err(syn::Error::new_spanned(
                input,
                "a #[tile_fn] parameter is a name and a type: `x: i32`",
            ));
        }
        if let syn::FnArg::Typed(t) = input {
            if names_tensor(&t.ty) && tensor_type(&t.ty).is_none() {
                return Err(syn::Error::new_spanned(
                    &t.ty,
                    "a tensor parameter of a #[tile_fn] helper is `Tensor<T, RANK>` (`T` an \
                     element type or `_`, `RANK` a number or a const parameter)",
                ));
            }
        }
    }
    Ok(function)
}

/// Replaces every call of a helper in `item` (a kernel) by the helper's body, inlined.
pub fn inline_calls(
    item: TokenStream,
    uses: &Uses,
    helpers: &[Helper],
) -> Result<TokenStream, syn::Error> {
    if helpers.is_empty() {
        return Ok(item);
    }
    let Ok(mut function) = syn::parse2::<syn::ItemFn>(item.clone()) else {
        // Not a function: the kernel's own checks say so.
        return Ok(item);
    };
    let listed: Vec<String> = uses.names().collect();
    let mut inliner = Inliner {
        helpers,
        listed: &listed,
        stack: Vec::new(),
        errors: None,
    };
    inliner.visit_block_mut(&mut function.block);
    match inliner.errors {
        Some(errors) => Err(errors),
        None => Ok(function.into_token_stream()),
    }
}

/// Walks a body and inlines the helper calls in it, innermost helpers first.
struct Inliner<'a> {
    helpers: &'a [Helper],
    /// The kernel's `uses`: the helpers a body may call.
    listed: &'a [String],
    /// The helpers being inlined, outermost first (a helper that calls itself is an error).
    stack: Vec<String>,
    errors: Option<syn::Error>,
}

impl<'a> Inliner<'a> {
    fn error(&mut self, error: syn::Error) {
        push_error(&mut self.errors, error);
    }

    /// The helper a call names, if it is one of the kernel's helpers.
    fn helper_of(&self, call: &syn::ExprCall) -> Option<(syn::PathSegment, &'a Helper)> {
        let syn::Expr::Path(p) = &*call.func else {
            return None;
        };
        if p.qself.is_some() || p.path.segments.len() != 1 {
            return None;
        }
        let segment = &p.path.segments[0];
        let name = segment.ident.to_string();
        if !self.listed.contains(&name) {
            return None;
        }
        let helper = self.helpers.iter().find(|h| h.name == name)?;
        Some((segment.clone(), helper))
    }

    /// `helper::<generics>(args)` as a block.
    fn inline(
        &mut self,
        call: &syn::ExprCall,
        segment: &syn::PathSegment,
        helper: &'a Helper,
    ) -> syn::Expr {
        let span = call.span();
        let invalid = || syn::parse_quote_spanned!(span=> { () });
        if self.stack.contains(&helper.name) {
            let chain = [self.stack.as_slice(), std::slice::from_ref(&helper.name)]
                .concat()
                .join(" → ");
            self.error(syn::Error::new(
                span,
                format!(
                    "helper `{}` calls itself ({chain}): helpers are inlined, so they cannot \
                     recurse",
                    helper.name
                ),
            ));
            return invalid();
        }
        let sig = &helper.function.sig;
        if call.args.len() != sig.inputs.len() {
            self.error(syn::Error::new(
                span,
                format!(
                    "helper `{}` takes {} argument{}, {} given",
                    helper.name,
                    sig.inputs.len(),
                    if sig.inputs.len() == 1 { "" } else { "s" },
                    call.args.len()
                ),
            ));
            return invalid();
        }
        let generics = match self.generic_args(segment, helper) {
            Ok(g) => g,
            Err(e) => {
                self.error(e);
                return invalid();
            }
        };
        // The helper's own calls first, each inlined with the helper on the stack.
        let mut body = helper.function.block.as_ref().clone();
        self.stack.push(helper.name.clone());
        self.visit_block_mut(&mut body);
        self.stack.pop();

        let params: Vec<Param> = sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                syn::FnArg::Typed(t) => match &*t.pat {
                    syn::Pat::Ident(p) => Some(Param {
                        name: p.ident.clone(),
                        mutable: p.mutability.is_some(),
                        tensor: tensor_type(&t.ty).is_some(),
                    }),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        // A tensor parameter stands for the kernel's tensor the call names: its name is
        // replaced by that name, so the body reads its sizes and strides.
        let mut tensors: Vec<(String, syn::Ident)> = Vec::new();
        for (param, arg) in params.iter().zip(&call.args) {
            if !param.tensor {
                continue;
            }
            match arg {
                syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                    let ident = p.path.segments[0].ident.clone();
                    tensors.push((param.name.to_string(), ident));
                }
                _ => {
                    self.error(syn::Error::new_spanned(
                        arg,
                        format!(
                            "helper `{}` takes `{}` as a tensor: pass a tensor parameter of the \
                             kernel by its name",
                            helper.name, param.name
                        ),
                    ));
                    return invalid();
                }
            }
        }
        let mut bound: BTreeSet<String> = params
            .iter()
            .filter(|p| !p.tensor)
            .map(|p| p.name.to_string())
            .collect();
        let mut bindings = BTreeSet::new();
        syn::visit::Visit::visit_block(&mut BindingNames(&mut bindings), &body);
        if let Some((name, _)) = tensors.iter().find(|(name, _)| bindings.contains(name)) {
            self.error(syn::Error::new(
                span,
                format!(
                    "helper `{}` binds `{name}`, the name of its tensor parameter: give the \
                     local another name",
                    helper.name
                ),
            ));
            return invalid();
        }
        bound.extend(bindings);
        let mut renamer = Renamer {
            helper: &helper.name,
            bound: &bound,
            tensors: &tensors,
            generics: &generics,
            errors: None,
        };
        renamer.visit_block_mut(&mut body);
        if let Some(e) = renamer.errors {
            self.error(e);
            return invalid();
        }
        let mut stmts: Vec<syn::Stmt> = Vec::new();
        for (param, arg) in params.iter().zip(&call.args) {
            if param.tensor {
                continue;
            }
            let name = renamed(&param.name, &helper.name);
            let mutability = param.mutable.then(|| quote!(mut));
            stmts
                .push(syn::parse_quote_spanned!(param.name.span()=> let #mutability #name = #arg;));
        }
        stmts.extend(body.stmts);
        syn::Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: syn::Block {
                brace_token: syn::token::Brace(span),
                stmts,
            },
        })
    }

    /// The call's turbofish matched with the helper's generic parameters.
    fn generic_args(
        &self,
        segment: &syn::PathSegment,
        helper: &Helper,
    ) -> Result<Vec<(String, Generic)>, syn::Error> {
        let params: Vec<&syn::GenericParam> = helper.function.sig.generics.params.iter().collect();
        let args: Vec<&syn::GenericArgument> = match &segment.arguments {
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::AngleBracketed(a) => a.args.iter().collect(),
            syn::PathArguments::Parenthesized(p) => {
                return Err(syn::Error::new_spanned(
                    p,
                    "unexpected parenthesised arguments",
                ))
            }
        };
        let names: Vec<String> = params
            .iter()
            .map(|p| match p {
                syn::GenericParam::Type(t) => t.ident.to_string(),
                syn::GenericParam::Const(c) => c.ident.to_string(),
                syn::GenericParam::Lifetime(l) => l.lifetime.to_string(),
            })
            .collect();
        if params.len() != args.len() {
            let spanned: &dyn ToTokens = if args.is_empty() {
                &segment.ident
            } else {
                &segment.arguments
            };
            return Err(syn::Error::new_spanned(
                spanned,
                format!(
                    "helper `{}` has {} generic parameter{}{}, the call gives {}: write `{}::<{}>(..)`",
                    helper.name,
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) },
                    args.len(),
                    helper.name,
                    names.join(", ")
                ),
            ));
        }
        names
            .into_iter()
            .zip(args)
            .map(|(name, arg)| Generic::of(arg).map(|g| (name, g)))
            .collect()
    }
}

impl VisitMut for Inliner<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        if let syn::Expr::Call(call) = expr {
            if let Some((segment, helper)) = self.helper_of(call) {
                *expr = self.inline(call, &segment, helper);
            }
        }
    }
}

/// What a generic parameter of a helper stands for at one call: a name (an element type, or
/// one of the kernel's parameters) or a constant expression.
enum Generic {
    Name(syn::Ident),
    Value(Box<syn::Expr>),
}

impl Generic {
    fn of(arg: &syn::GenericArgument) -> Result<Generic, syn::Error> {
        match arg {
            syn::GenericArgument::Type(syn::Type::Path(p))
                if p.qself.is_none() && p.path.get_ident().is_some() =>
            {
                Ok(Generic::Name(p.path.segments[0].ident.clone()))
            }
            syn::GenericArgument::Const(syn::Expr::Path(p))
                if p.qself.is_none() && p.path.get_ident().is_some() =>
            {
                Ok(Generic::Name(p.path.segments[0].ident.clone()))
            }
            syn::GenericArgument::Const(e) => Ok(Generic::Value(Box::new(e.clone()))),
            other => Err(syn::Error::new_spanned(
                other,
                "a helper's generic argument is an element type, a const parameter of the \
                 kernel, a literal or a `{ block }`",
            )),
        }
    }

    fn expr(&self) -> syn::Expr {
        match self {
            Generic::Name(ident) => syn::parse_quote!(#ident),
            // `{ W / 2 }` (a const argument must be braced) stands for `(W / 2)`.
            Generic::Value(e) => match &**e {
                syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                    syn::Stmt::Expr(inner, None) => syn::parse_quote!((#inner)),
                    _ => syn::parse_quote!((#e)),
                },
                _ => syn::parse_quote!((#e)),
            },
        }
    }
}

/// One parameter of a helper: its name, `mut`, and whether it is a tensor (`Tensor<T, RANK>`).
struct Param {
    name: syn::Ident,
    mutable: bool,
    tensor: bool,
}

/// The element type and rank of a `Tensor<T, RANK>` type (its last path segment `Tensor`).
fn tensor_type(ty: &syn::Type) -> Option<(&syn::GenericArgument, &syn::GenericArgument)> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Tensor" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 2 => {
            Some((&a.args[0], &a.args[1]))
        }
        _ => None,
    }
}

/// Whether `ty` names `Tensor` (any arguments).
fn names_tensor(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Tensor"))
}

fn renamed(ident: &syn::Ident, helper: &str) -> syn::Ident {
    syn::Ident::new(&format!("{ident}_in_{helper}"), ident.span())
}

/// The names a block binds with `let` and `for` (the same name bound twice is one name: the
/// renaming keeps Rust's shadowing as it is).
struct BindingNames<'a>(&'a mut BTreeSet<String>);

impl syn::visit::Visit<'_> for BindingNames<'_> {
    fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
}

/// Renames the names a helper binds, replaces its generic parameters, and reports names it uses
/// without binding them.
struct Renamer<'a> {
    helper: &'a str,
    bound: &'a BTreeSet<String>,
    /// Each tensor parameter's name and the kernel's tensor the call passes for it.
    tensors: &'a [(String, syn::Ident)],
    generics: &'a [(String, Generic)],
    errors: Option<syn::Error>,
}

impl Renamer<'_> {
    fn generic(&self, ident: &syn::Ident) -> Option<&Generic> {
        let name = ident.to_string();
        self.generics
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, g)| g)
    }

    fn error(&mut self, error: syn::Error) {
        push_error(&mut self.errors, error);
    }
}

impl VisitMut for Renamer<'_> {
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        p.ident = renamed(&p.ident, self.helper);
    }

    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        match expr {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
                let segment = &p.path.segments[0];
                if !segment.arguments.is_none() {
                    syn::visit_mut::visit_expr_path_mut(self, p);
                    return;
                }
                let ident = segment.ident.clone();
                if let Some((_, tensor)) = self.tensors.iter().find(|(n, _)| ident == n) {
                    p.path.segments[0].ident = tensor.clone();
                } else if let Some(generic) = self.generic(&ident) {
                    *expr = generic.expr();
                } else if self.bound.contains(&ident.to_string()) {
                    p.path.segments[0].ident = renamed(&ident, self.helper);
                } else {
                    self.error(syn::Error::new(
                        ident.span(),
                        format!(
                            "`{ident}` is neither a parameter of helper `{}` nor defined in it: \
                             a helper sees only its arguments (pass `{ident}` as one)",
                            self.helper
                        ),
                    ));
                }
            }
            // Sizes, strides and the pointer are read from tensor parameters alone.
            syn::Expr::MethodCall(m)
                if ["size", "stride", "ptr"].contains(&m.method.to_string().as_str())
                    && matches!(&*m.receiver, syn::Expr::Path(p)
                        if p.path.get_ident().is_some_and(|i| self.bound.contains(&i.to_string()))) =>
            {
                let receiver = quote::ToTokens::to_token_stream(&m.receiver).to_string();
                self.error(syn::Error::new(
                    m.method.span(),
                    format!(
                        "`{receiver}.{}(..)` in helper `{}`: `{receiver}` is not a tensor \
                         parameter of the helper; declare it `{receiver}: Tensor<_, RANK>` to \
                         read its sizes, strides and pointer",
                        m.method, self.helper
                    ),
                ));
            }
            // The operation a call names is not a variable; `convert_layout`'s layout is a
            // `const` item, not a value.
            syn::Expr::Call(call) => {
                if let syn::Expr::Path(f) = &mut *call.func {
                    syn::visit_mut::visit_path_arguments_mut(
                        self,
                        &mut f
                            .path
                            .segments
                            .last_mut()
                            .expect("a path has a segment")
                            .arguments,
                    );
                }
                let is_convert =
                    matches!(&*call.func, syn::Expr::Path(f) if f.path.is_ident("convert_layout"));
                let count = call.args.len();
                for (i, arg) in call.args.iter_mut().enumerate() {
                    if is_convert && i + 1 == count && count == 2 {
                        continue;
                    }
                    self.visit_expr_mut(arg);
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, expr),
        }
    }

    /// Element types and const parameters in type position (`zeros::<T>`, `x as T`,
    /// `T::MAX`, a nested helper's turbofish).
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if path.leading_colon.is_none() {
            if let Some(first) = path.segments.first_mut() {
                if let Some(Generic::Name(name)) = self.generic(&first.ident) {
                    first.ident = name.clone();
                }
            }
        }
        syn::visit_mut::visit_path_mut(self, path);
    }

    fn visit_generic_argument_mut(&mut self, arg: &mut syn::GenericArgument) {
        if let syn::GenericArgument::Type(syn::Type::Path(p)) = arg {
            if let Some(ident) = p.path.get_ident() {
                if let Some(Generic::Value(e)) = self.generic(ident) {
                    *arg = syn::GenericArgument::Const(syn::parse_quote!({ #e }));
                    return;
                }
            }
        }
        syn::visit_mut::visit_generic_argument_mut(self, arg);
    }
}
