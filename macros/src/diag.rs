//! Locations in the user's code and the collected diagnostics.
//!
//! Nothing in the front end panics or stops at the first problem: each stage reports into a
//! [`Diagnostics`] and carries on with a placeholder, so one expansion shows several errors. At the
//! end they become one combined `syn::Error`, each on the span of the user's code it is about.

use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;

/// A piece of the user's code: the spans of its first and last tokens (the error underlines the
/// whole range), and an id unique to the syntax node. The id lets the same diagnostic, found while
/// checking several specialisations of a kernel, be reported once.
#[derive(Clone, Copy, Debug)]
pub struct Loc {
    pub first: Span,
    pub last: Span,
    pub id: u32,
}

impl Loc {
    /// A `syn::Error` underlining this piece of code.
    pub fn error(&self, message: &str) -> syn::Error {
        let mut first = Punct::new('#', Spacing::Alone);
        first.set_span(self.first);
        let mut last = Punct::new('#', Spacing::Alone);
        last.set_span(self.last);
        let range: TokenStream = [TokenTree::Punct(first), TokenTree::Punct(last)]
            .into_iter()
            .collect();
        syn::Error::new_spanned(range, message)
    }
}

/// Hands out [`Loc`]s with fresh ids.
#[derive(Clone, Debug, Default)]
pub struct LocIds {
    next: u32,
}

impl LocIds {
    /// The location of a syntax node (its first and last tokens).
    pub fn of(&mut self, node: &impl ToTokens) -> Loc {
        let mut tokens = node.to_token_stream().into_iter();
        let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
        let last = tokens.last().map_or(first, |t| t.span());
        self.range(first, last)
    }

    /// The location of one span.
    pub fn at(&mut self, span: Span) -> Loc {
        self.range(span, span)
    }

    /// The location from `first` to `last`.
    pub fn range(&mut self, first: Span, last: Span) -> Loc {
        self.next += 1;
        Loc {
            first,
            last,
            id: self.next,
        }
    }
}

/// One error: where and what.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub loc: Loc,
    pub message: String,
}

/// The errors found so far, in the order found, without repeats of the same message on the
/// same node.
#[derive(Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn error(&mut self, loc: Loc, message: impl Into<String>) {
        let message = message.into();
        if !self
            .list
            .iter()
            .any(|d| d.loc.id == loc.id && d.message == message)
        {
            self.list.push(Diagnostic { loc, message });
        }
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.list.len()
    }

    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.list.iter()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }
}

/// All diagnostics as one `syn::Error` (its `to_compile_error` emits one `compile_error!` each);
/// `None` when there are none.
pub fn combine(diagnostics: &[Diagnostic]) -> Option<syn::Error> {
    let mut errors = diagnostics.iter().map(|d| d.loc.error(&d.message));
    let mut combined = errors.next()?;
    for e in errors {
        combined.combine(e);
    }
    Some(combined)
}

/// Adds `error` to the errors found so far (a syntax pass that reports as it walks).
pub fn push_error(errors: &mut Option<syn::Error>, error: syn::Error) {
    match errors {
        Some(errors) => errors.combine(error),
        None => *errors = Some(error),
    }
}

/// The closest of `candidates` to `name` by edit distance, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance (insertions, deletions, substitutions), case-insensitive.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("exp", "exp"), 0);
        assert_eq!(edit_distance("exp", "exp2"), 1);
        assert_eq!(edit_distance("arnage", "arange"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn suggestions() {
        let ops = ["arange", "exp", "exp2", "load", "store"];
        assert_eq!(did_you_mean("arnge", ops), Some("arange"));
        assert_eq!(did_you_mean("lod", ops), Some("load"));
        assert_eq!(did_you_mean("frobnicate", ops), None);
    }

    #[test]
    fn repeated_errors_are_reported_once() {
        let mut ids = LocIds::default();
        let loc = ids.at(Span::call_site());
        let mut d = Diagnostics::default();
        d.error(loc, "a");
        d.error(loc, "a");
        d.error(loc, "b");
        assert_eq!(d.len(), 2);
        let combined = combine(&d.into_vec()).unwrap();
        assert_eq!(combined.into_iter().count(), 2);
    }
}
