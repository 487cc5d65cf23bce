//! `macro_rules!` expansion for the kernel corpus: the kernel library stamps several
//! `#[tile_kernel]`s from one body with a declarative macro (the attention, benchmark and softmax kernels), and the
//! corpus must see those kernels as rustc does.
//!
//! What rustc's `macro_rules!` does, restricted to what a corpus macro uses: arms tried in order;
//! matchers of literal tokens, delimited groups, fragments `$x:ident`, `$x:tt` and `$x:literal`,
//! and repetitions `$( … ) sep? *|+|?` matched greedily without backtracking (as rustc does);
//! transcribers with `$x` and `$( … ) sep? *`. Anything else is a panic naming the macro, so a new
//! kind of corpus macro fails the corpus tests loudly instead of dropping its kernels.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use std::collections::HashMap;

/// One `macro_rules!` definition: its name and its arms (matcher, transcriber).
pub struct MacroRules {
    pub name: String,
    arms: Vec<(Vec<Matcher>, TokenStream)>,
}

enum Matcher {
    Token(String),
    Group(Delimiter, Vec<Matcher>),
    Fragment(String, Fragment),
    Repeat(Vec<Matcher>, Option<String>, char),
}

#[derive(Clone, Copy)]
enum Fragment {
    Ident,
    Tt,
    Literal,
}

#[derive(Clone)]
enum Binding {
    One(TokenTree),
    Many(Vec<Binding>),
}

type Bindings = HashMap<String, Binding>;

impl MacroRules {
    /// The definition `macro_rules! name { (matcher) => { transcriber }; … }`.
    pub fn parse(name: String, body: TokenStream) -> MacroRules {
        let tokens: Vec<TokenTree> = body.into_iter().collect();
        let mut arms = Vec::new();
        let mut at = 0;
        while at < tokens.len() {
            let (
                TokenTree::Group(matcher),
                Some(TokenTree::Punct(eq)),
                Some(TokenTree::Punct(gt)),
                Some(TokenTree::Group(transcriber)),
            ) = (
                &tokens[at],
                tokens.get(at + 1),
                tokens.get(at + 2),
                tokens.get(at + 3),
            )
            else {
                panic!("macro `{name}`: an arm is not `(matcher) => {{ transcriber }}`");
            };
            assert!(
                eq.as_char() == '=' && gt.as_char() == '>',
                "macro `{name}`: `=>` expected"
            );
            arms.push((parse_matcher(&name, matcher.stream()), transcriber.stream()));
            at += 4;
            if matches!(tokens.get(at), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
                at += 1;
            }
        }
        MacroRules { name, arms }
    }

    /// The expansion of `name! { input }`, from the first arm whose matcher takes all of `input`.
    pub fn expand(&self, input: TokenStream) -> TokenStream {
        let input: Vec<TokenTree> = input.into_iter().collect();
        for (matcher, transcriber) in &self.arms {
            let mut bindings = Bindings::new();
            if match_all(matcher, &input, &mut bindings) {
                return transcribe(&self.name, transcriber.clone(), &bindings, &[]);
            }
        }
        panic!(
            "macro `{}`: no arm matches `{}`",
            self.name,
            TokenStream::from_iter(input)
        );
    }
}

/// A piece of a matcher or a transcriber: `$x` (with its fragment kind in a matcher), a
/// repetition `$( … ) sep? op`, a delimited group, or any other token.
enum Piece {
    Var(String, Option<String>),
    Repeat(Group, Option<String>, char),
    Group(Group),
    Token(TokenTree),
}

fn pieces(name: &str, stream: TokenStream) -> Vec<Piece> {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let dollar = matches!(&tokens[at], TokenTree::Punct(p) if p.as_char() == '$');
        match (&tokens[at], tokens.get(at + 1)) {
            (_, Some(TokenTree::Ident(var))) if dollar => {
                let kind = match (tokens.get(at + 2), tokens.get(at + 3)) {
                    (Some(TokenTree::Punct(colon)), Some(TokenTree::Ident(kind)))
                        if colon.as_char() == ':' =>
                    {
                        Some(kind.to_string())
                    }
                    _ => None,
                };
                at += if kind.is_some() { 4 } else { 2 };
                out.push(Piece::Var(var.to_string(), kind));
            }
            (_, Some(TokenTree::Group(group)))
                if dollar && group.delimiter() == Delimiter::Parenthesis =>
            {
                let (separator, op, used) = repetition_operator(name, &tokens[at + 2..]);
                out.push(Piece::Repeat(group.clone(), separator, op));
                at += 2 + used;
            }
            (TokenTree::Group(group), _) => {
                out.push(Piece::Group(group.clone()));
                at += 1;
            }
            (token, _) => {
                out.push(Piece::Token(token.clone()));
                at += 1;
            }
        }
    }
    out
}

fn parse_matcher(name: &str, stream: TokenStream) -> Vec<Matcher> {
    let matcher = |piece| match piece {
        Piece::Var(var, kind) => {
            let fragment = match kind.as_deref() {
                Some("ident") => Fragment::Ident,
                Some("tt") => Fragment::Tt,
                Some("literal") => Fragment::Literal,
                other => panic!("macro `{name}`: `${var}` of kind {other:?} is not expanded here"),
            };
            Matcher::Fragment(var, fragment)
        }
        Piece::Repeat(group, separator, op) => {
            Matcher::Repeat(parse_matcher(name, group.stream()), separator, op)
        }
        Piece::Group(group) => {
            Matcher::Group(group.delimiter(), parse_matcher(name, group.stream()))
        }
        Piece::Token(token) => Matcher::Token(token.to_string()),
    };
    pieces(name, stream).into_iter().map(matcher).collect()
}

/// After `$( … )`: an optional separator token and the operator `*`, `+` or `?`; returns them and
/// how many tokens they take.
fn repetition_operator(name: &str, rest: &[TokenTree]) -> (Option<String>, char, usize) {
    let operator = |t: Option<&TokenTree>| match t {
        Some(TokenTree::Punct(p)) if matches!(p.as_char(), '*' | '+' | '?') => Some(p.as_char()),
        _ => None,
    };
    if let Some(op) = operator(rest.first()) {
        return (None, op, 1);
    }
    match (rest.first(), operator(rest.get(1))) {
        (Some(separator), Some(op)) => (Some(separator.to_string()), op, 2),
        _ => panic!("macro `{name}`: `$( … )` without `*`, `+` or `?`"),
    }
}

/// Whether `matchers` take all of `input`, binding fragments into `bindings`.
fn match_all(matchers: &[Matcher], input: &[TokenTree], bindings: &mut Bindings) -> bool {
    match_prefix(matchers, input, bindings) == Some(input.len())
}

/// How many tokens of `input` `matchers` take (greedy repetitions, no backtracking), or `None`.
fn match_prefix(
    matchers: &[Matcher],
    input: &[TokenTree],
    bindings: &mut Bindings,
) -> Option<usize> {
    let mut at = 0;
    for matcher in matchers {
        match matcher {
            Matcher::Token(text) => {
                let token = input.get(at)?;
                if !matches!(token, TokenTree::Group(_)) && token.to_string() == *text {
                    at += 1;
                } else {
                    return None;
                }
            }
            Matcher::Group(delimiter, inner) => match input.get(at)? {
                TokenTree::Group(g) if g.delimiter() == *delimiter => {
                    let tokens: Vec<TokenTree> = g.stream().into_iter().collect();
                    if !match_all(inner, &tokens, bindings) {
                        return None;
                    }
                    at += 1;
                }
                _ => return None,
            },
            Matcher::Fragment(var, fragment) => {
                let token = input.get(at)?;
                let fits = match fragment {
                    Fragment::Tt => true,
                    Fragment::Ident => matches!(token, TokenTree::Ident(_)),
                    Fragment::Literal => matches!(token, TokenTree::Literal(_)),
                };
                if !fits {
                    return None;
                }
                bindings.insert(var.clone(), Binding::One(token.clone()));
                at += 1;
            }
            Matcher::Repeat(inner, separator, kind) => {
                let mut rounds: Vec<Bindings> = Vec::new();
                loop {
                    let mut start = at;
                    if let (Some(separator), false) = (separator, rounds.is_empty()) {
                        match input.get(at) {
                            Some(t)
                                if !matches!(t, TokenTree::Group(_))
                                    && t.to_string() == *separator =>
                            {
                                start += 1
                            }
                            _ => break,
                        }
                    }
                    let mut round = Bindings::new();
                    match match_prefix(inner, &input[start..], &mut round) {
                        Some(used) if used > 0 => {
                            rounds.push(round);
                            at = start + used;
                        }
                        _ => break,
                    }
                    if *kind == '?' {
                        break;
                    }
                }
                if *kind == '+' && rounds.is_empty() {
                    return None;
                }
                for var in repeated_vars(inner) {
                    let each = rounds.iter().map(|r| r[&var].clone()).collect();
                    bindings.insert(var, Binding::Many(each));
                }
            }
        }
    }
    Some(at)
}

fn repeated_vars(matchers: &[Matcher]) -> Vec<String> {
    let mut out = Vec::new();
    for matcher in matchers {
        match matcher {
            Matcher::Fragment(var, _) => out.push(var.clone()),
            Matcher::Group(_, inner) | Matcher::Repeat(inner, _, _) => {
                out.extend(repeated_vars(inner))
            }
            Matcher::Token(_) => {}
        }
    }
    out
}

/// `transcriber` with each `$x` replaced by its binding at the repetition indices `path`.
fn transcribe(
    name: &str,
    transcriber: TokenStream,
    bindings: &Bindings,
    path: &[usize],
) -> TokenStream {
    let mut out = TokenStream::new();
    for piece in pieces(name, transcriber) {
        match piece {
            Piece::Var(var, _) => {
                let binding = lookup(bindings, &var, path)
                    .unwrap_or_else(|| panic!("macro `{name}`: `${var}` is not bound here"));
                let Binding::One(token) = binding else {
                    panic!("macro `{name}`: `${var}` is repeated but used outside `$( … )`");
                };
                out.extend([token.clone()]);
            }
            Piece::Repeat(group, separator, _) => {
                let rounds = rounds_of(name, bindings, group.stream(), path)
                    .unwrap_or_else(|| panic!("macro `{name}`: `$( … )` repeats no variable"));
                for round in 0..rounds {
                    if let (Some(separator), true) = (&separator, round > 0) {
                        out.extend(separator.parse::<TokenStream>().expect("separator"));
                    }
                    let inner_path: Vec<usize> = path.iter().copied().chain([round]).collect();
                    out.extend(transcribe(name, group.stream(), bindings, &inner_path));
                }
            }
            Piece::Group(group) => {
                let inner = transcribe(name, group.stream(), bindings, path);
                let mut copy = Group::new(group.delimiter(), inner);
                copy.set_span(group.span());
                out.extend([TokenTree::Group(copy)]);
            }
            Piece::Token(token) => out.extend([token]),
        }
    }
    out
}

/// The binding of `var` at the repetition indices `path` (as deep as the binding goes).
fn lookup<'a>(bindings: &'a Bindings, var: &str, path: &[usize]) -> Option<&'a Binding> {
    let mut binding = bindings.get(var)?;
    for &i in path {
        match binding {
            Binding::Many(each) => binding = each.get(i)?,
            Binding::One(_) => break,
        }
    }
    Some(binding)
}

/// How many times `$( stream )` repeats: the length of the repeated variables it uses.
fn rounds_of(
    name: &str,
    bindings: &Bindings,
    stream: TokenStream,
    path: &[usize],
) -> Option<usize> {
    let mut rounds = None;
    for piece in pieces(name, stream) {
        match piece {
            Piece::Var(var, _) => {
                if let Some(Binding::Many(each)) = lookup(bindings, &var, path) {
                    rounds = Some(each.len());
                }
            }
            Piece::Group(group) | Piece::Repeat(group, ..) => {
                rounds = rounds.or(rounds_of(name, bindings, group.stream(), path));
            }
            Piece::Token(_) => {}
        }
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::MacroRules;
    use quote::quote;

    fn rules(body: proc_macro2::TokenStream) -> MacroRules {
        MacroRules::parse("m".into(), body)
    }

    #[test]
    fn fragments_and_doc_repetitions_expand_as_rustc_does() {
        let m = rules(quote! {
            ($(#[doc = $doc:tt])* $name:ident, n = $n:tt) => {
                $(#[doc = $doc])*
                fn $name() -> [u8; 2] { $n }
            };
        });
        let got = m.expand(quote! {
            /// one
            /// two
            f, n = [1, 2]
        });
        let want = quote! {
            /// one
            /// two
            fn f() -> [u8; 2] { [1, 2] }
        };
        assert_eq!(got.to_string(), want.to_string());
    }

    #[test]
    fn arms_are_tried_in_order_and_trailing_repetitions_take_the_rest() {
        let m = rules(quote! {
            (one $x:literal) => { single($x) };
            ($name:ident, $($rest:tt)*) => { many($name; $($rest)*) };
        });
        assert_eq!(
            m.expand(quote! { one 3 }).to_string(),
            quote! { single(3) }.to_string()
        );
        assert_eq!(
            m.expand(quote! { g, a = [1], b(c) }).to_string(),
            quote! { many(g; a = [1], b(c)) }.to_string()
        );
    }

    #[test]
    fn separators_repeat_between_rounds() {
        let m = rules(quote! { ($($x:ident),+) => { [$($x);*] }; });
        assert_eq!(
            m.expand(quote! { a, b, c }).to_string(),
            quote! { [a; b; c] }.to_string()
        );
    }

    #[test]
    #[should_panic(expected = "no arm matches")]
    fn input_no_arm_takes_is_a_panic() {
        rules(quote! { ($x:ident) => { $x }; }).expand(quote! { 1 });
    }
}
