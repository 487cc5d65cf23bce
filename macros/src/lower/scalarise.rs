//! Scalarised register reads: the last step of lowering a body. A register array bound once
//! (`let a = …;`, not `mut`) and read at constant indices (`a[3]`) is destructured once, right
//! after its `let`, into one local per register read (`let [a__r0, a__r1, a__r2, a__r3, ..] =
//! a;`), and each read `a[k]` becomes `a__rk`.
//!
//! The code means the same: the registers are `Copy` values (elements, `Ptr`s, predicates,
//! packed words), read where they were read. What changes is rustc's work: a constant index is
//! an `Index` obligation in type checking and a bounds check in MIR (about 50 µs of type
//! checking each, measured on the nightly this repository pins, against 2 µs for a local), and
//! the kernels' bodies read their registers some 400,000 times in the attention crate alone.
//! LLVM turns both forms into the same registers: of the repository's PTX, the sm_90a dot
//! kernels came out byte for byte the same, other entries in another instruction order.
//!
//! Scope follows Rust's: a binding is visible after its `let` statement, in its block and the
//! blocks nested in it, until a `let` of the same name shadows it; the locals are inserted right
//! after the `let`, so they resolve as the array's name would at every read. Writes (`a[k] = x`)
//! only ever go to `let mut` arrays, which are left as they are, as are reads at indices that
//! are not literals.

use proc_macro2::{Delimiter, Group, Ident, Spacing, Span, TokenStream, TokenTree};
use quote::quote_spanned;
use std::collections::HashMap;

/// `body` with every constant-index read of an immutable register array replaced by a local
/// bound once after the array's `let` (module docs).
pub fn scalarise_reads(body: TokenStream) -> TokenStream {
    Scalariser::default().block(body.clone()).unwrap_or(body)
}

/// A `let NAME … = …;` binding, and the highest constant index read from it.
struct Binding {
    name: Ident,
    highest_read: Option<u32>,
}

/// The walk's state. Names are compared as strings, each made once: `proc_macro2` compares two
/// `Ident`s by making both texts anew.
#[derive(Default)]
struct Scalariser {
    bindings: Vec<Binding>,
    /// The bindings in scope by name, innermost last (indices into `bindings`).
    visible: HashMap<String, Vec<usize>>,
    /// The names bound in the open blocks, in order (to end their scope with the block).
    scope: Vec<String>,
}

impl Scalariser {
    /// Rewrites the statements of one token stream (a block, or any other group: only blocks
    /// hold `let` statements), inserting the locals of its bindings; `None` where it has no
    /// read to rewrite (the caller keeps the group as it came).
    fn block(&mut self, stream: TokenStream) -> Option<TokenStream> {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        let outer_scope = self.scope.len();
        let mut out: Vec<TokenTree> = Vec::with_capacity(tokens.len());
        let mut changed = false;
        // The binding declared by the `let` statement being read: in scope after its `;`.
        let mut declaring: Option<usize> = None;
        // Where each binding's locals go (a position in `out`), in order.
        let mut inserts: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Ident(kw)
                    if matches!(tokens.get(i + 1), Some(TokenTree::Ident(_)))
                        && statement_start(&tokens, i)
                        && kw == "let" =>
                {
                    declaring = plain_binding(&tokens[i + 1..]).map(|name| {
                        self.bindings.push(Binding {
                            name: name.clone(),
                            highest_read: None,
                        });
                        self.bindings.len() - 1
                    });
                    out.push(tokens[i].clone());
                }
                TokenTree::Punct(p) if p.as_char() == ';' => {
                    out.push(tokens[i].clone());
                    if let Some(b) = declaring.take() {
                        let name = self.bindings[b].name.to_string();
                        self.visible.entry(name.clone()).or_default().push(b);
                        self.scope.push(name);
                        inserts.push((out.len(), b));
                    }
                }
                TokenTree::Ident(ident) => {
                    let read = constant_index(tokens.get(i + 1))
                        .filter(|_| !after_path_or_field(&tokens, i))
                        .and_then(|k| {
                            let name = ident.to_string();
                            let b = *self.visible.get(&name)?.last()?;
                            Some((b, k, name))
                        });
                    match read {
                        Some((b, k, name)) => {
                            let highest = &mut self.bindings[b].highest_read;
                            *highest = Some(highest.map_or(k, |h| h.max(k)));
                            out.push(TokenTree::Ident(register_local(&name, k, ident.span())));
                            changed = true;
                            i += 1; // the index's brackets
                        }
                        None => out.push(tokens[i].clone()),
                    }
                }
                TokenTree::Group(g) => match self.block(g.stream()) {
                    Some(inner) => {
                        let mut group = Group::new(g.delimiter(), inner);
                        group.set_span(g.span());
                        out.push(TokenTree::Group(group));
                        changed = true;
                    }
                    None => out.push(tokens[i].clone()),
                },
                other => out.push(other.clone()),
            }
            i += 1;
        }
        for &(at, b) in inserts.iter().rev() {
            if let Some(highest) = self.bindings[b].highest_read {
                let locals = destructure(&self.bindings[b].name, highest);
                out.splice(at..at, locals);
                changed = true;
            }
        }
        for name in self.scope.drain(outer_scope..) {
            if let Some(bindings) = self.visible.get_mut(&name) {
                bindings.pop();
            }
        }
        changed.then(|| out.into_iter().collect())
    }
}

/// Whether the `let` at `i` starts a statement: first in its block, or after a `;`, a block or
/// an attribute (not `if let`, `while let` or a let chain).
fn statement_start(tokens: &[TokenTree], i: usize) -> bool {
    match i.checked_sub(1).map(|j| &tokens[j]) {
        None => true,
        Some(TokenTree::Punct(p)) => p.as_char() == ';',
        Some(TokenTree::Group(g)) => match g.delimiter() {
            Delimiter::Brace => true,
            Delimiter::Bracket => {
                matches!(i.checked_sub(2).map(|j| &tokens[j]), Some(TokenTree::Punct(p)) if p.as_char() == '#')
            }
            _ => false,
        },
        Some(_) => false,
    }
}

/// The name of `NAME = …` or `NAME: T = …` (what follows a `let`), when the pattern is a plain
/// identifier: not `mut`, `ref`, `_`, a tuple or an array pattern, and with an initialiser.
fn plain_binding(after_let: &[TokenTree]) -> Option<&Ident> {
    let TokenTree::Ident(name) = after_let.first()? else {
        return None;
    };
    if name == "mut" || name == "ref" || name == "_" {
        return None;
    }
    let has_initialiser = after_let[1..]
        .iter()
        .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
        .any(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone));
    match after_let.get(1)? {
        TokenTree::Punct(p) if matches!(p.as_char(), ':' | '=') && has_initialiser => Some(name),
        _ => None,
    }
}

/// `k` of a bracketed integer literal `[k]` or `[kusize]`.
fn constant_index(token: Option<&TokenTree>) -> Option<u32> {
    let TokenTree::Group(g) = token? else {
        return None;
    };
    if g.delimiter() != Delimiter::Bracket {
        return None;
    }
    let mut inner = g.stream().into_iter();
    let (Some(TokenTree::Literal(lit)), None) = (inner.next(), inner.next()) else {
        return None;
    };
    let text = lit.to_string();
    text.strip_suffix("usize").unwrap_or(&text).parse().ok()
}

/// Whether the identifier at `i` is a field (`x.name`) or the last segment of a path
/// (`m::name`): not a local.
fn after_path_or_field(tokens: &[TokenTree], i: usize) -> bool {
    let punct = |j: Option<usize>| match j.map(|j| &tokens[j]) {
        Some(TokenTree::Punct(p)) => Some((p.as_char(), p.spacing())),
        _ => None,
    };
    match punct(i.checked_sub(1)) {
        Some(('.', _)) => true,
        Some((':', _)) => punct(i.checked_sub(2)) == Some((':', Spacing::Joint)),
        _ => false,
    }
}

/// The local holding register `k` of the array `name`, with the read's span.
fn register_local(name: &str, k: u32, span: Span) -> Ident {
    Ident::new(&format!("{name}__r{k}"), span)
}

/// `let [a__r0, …, a__r{highest}, ..] = a;`
fn destructure(array: &Ident, highest: u32) -> TokenStream {
    let (span, name) = (array.span(), array.to_string());
    let locals = (0..=highest).map(|k| register_local(&name, k, span));
    quote_spanned!(span=> let [#(#locals,)* ..] = #array;)
}

#[cfg(test)]
mod tests {
    use super::scalarise_reads;
    use quote::quote;

    fn text(t: proc_macro2::TokenStream) -> String {
        t.to_string()
    }

    #[test]
    fn constant_reads_of_a_let_array_become_locals_bound_after_it() {
        let body = quote! {
            let a: [f32; 4] = f();
            let b = [a[2], a[0usize], a[i]];
        };
        let want = quote! {
            let a: [f32; 4] = f();
            let [a__r0, a__r1, a__r2, ..] = a;
            let b = [a__r2, a__r0, a[i]];
        };
        assert_eq!(text(scalarise_reads(body)), text(want));
    }

    #[test]
    fn mutable_arrays_fields_and_paths_are_left_alone() {
        let body = quote! {
            let mut o = [0u32; 2];
            o[1] = s.a[0] + m::a[1];
            let c = o[0];
        };
        assert_eq!(text(scalarise_reads(body.clone())), text(body));
    }

    #[test]
    fn reads_follow_rust_scopes_and_shadowing() {
        // The initialiser of a shadowing `let` reads the outer binding; a block's binding ends
        // with the block; `if let` binds nothing of the kind.
        let body = quote! {
            let w = g();
            { let w = [w[1]]; h(w[0]); }
            if let x = w { k(w[3]); }
            let v = w[1];
        };
        let want = quote! {
            let w = g();
            let [w__r0, w__r1, w__r2, w__r3, ..] = w;
            { let w = [w__r1]; let [w__r0, ..] = w; h(w__r0); }
            if let x = w { k(w__r3); }
            let v = w__r1;
        };
        assert_eq!(text(scalarise_reads(body)), text(want));
    }

    #[test]
    fn arrays_without_constant_reads_and_names_declared_later_are_unchanged() {
        let body = quote! {
            let q = a[0];
            let a = f();
            let z = a;
            #[allow(unused)] let e = [1, 2];
            e[j];
        };
        assert_eq!(text(scalarise_reads(body.clone())), text(body));
    }
}
