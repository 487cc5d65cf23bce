//! Generated malformed kernels through the whole expansion, in-process: every `#[tile_kernel]`
//! of the kernel library (`kernels/tiled`) is cut out with `syn`, mutated at the token and
//! syntax level (deleted, duplicated and swapped tokens, edge-value literals, identifiers
//! renamed to keywords, raw identifiers and launcher names, operation names swapped, arguments
//! dropped or repeated, attributes and empty statements inserted, shape operations on scalars,
//! ...), and expanded.
//! For each case: no panic, no "internal error" in the output, and every error underlines the
//! kernel's own tokens (never the call site, which rustc shows as the attribute).
//!
//! Each case starts from the kernel's first specialisation (every list of values in its
//! attribute cut to its first value; `requires` and `targets` kept): the mutations reach the
//! front end, inference and lowering as they would with every specialisation, and a case costs
//! one expansion instead of one per specialisation (an attention kernel has 64).
//!
//! The run is seeded: `TESSERA_GEN_SEED` replays one, else the clock picks it; the seed, the
//! number of cases and the time are printed. A failing case prints its source.

use super::generator::{self, Tally, SEED_ENV};
use super::kernel_corpus::kernel_sources;
use proc_macro2::{Delimiter, Group, Literal, Punct, Spacing, TokenStream, TokenTree};
use std::time::Instant;
use tessera_test_support::Rng;

/// Cases per run: a few thousand, see the printed time.
const CASES: usize = 2000;

/// Literals a mutation may put in place of another: zero, negative, past `i32`/`u32`/`u64`,
/// not powers of two, float overflow and underflow, other literal kinds.
const EDGE_LITERALS: &[&str] = &[
    "0",
    "-1",
    "1",
    "3",
    "6",
    "48",
    "100",
    "1000",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "18446744073709551616",
    "1e400",
    "-1e400",
    "1e-400",
    "0.0",
    "-0.0",
    "1.5",
    "0u8",
    "300u8",
    "-1i8",
    "1u64",
    "7usize",
    "1.0f16",
    "2.5f64",
    "true",
    "false",
    "\"text\"",
    "'c'",
    "b'x'",
    "0x7fff_ffff",
    "1_0_2_4",
    "1 << 40",
    "(1 << 31)",
];

/// Identifiers a mutation may put in place of another (besides the kernel module's items,
/// `crate::expand::MODULE_ITEMS`): keywords, raw identifiers, the names the expansion's
/// functions define (`device`, `module`, `consts`, `grid`, ...), float constants, operation and
/// type names, and plain new names.
const EDGE_IDENTS: &[&str] = &[
    "device",
    "module",
    "consts",
    "grid",
    "args",
    "spec",
    "tessera",
    "core",
    "std",
    "r#type",
    "r#match",
    "r#fn",
    "r#loop",
    "self",
    "Self",
    "super",
    "crate",
    "_",
    "type",
    "match",
    "loop",
    "while",
    "return",
    "break",
    "continue",
    "async",
    "unsafe",
    "mut",
    "let",
    "fn",
    "in",
    "as",
    "if",
    "else",
    "for",
    "NAN",
    "INFINITY",
    "NEG_INFINITY",
    "MAX",
    "MIN",
    "EPSILON",
    "f32",
    "f16",
    "bf16",
    "f64",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u32",
    "u64",
    "bool",
    "f8e4m3",
    "f8e5m2",
    "Ptr",
    "usize",
    "isize",
    "char",
    "str",
    "x",
    "y",
    "undefined_name",
    "BLOCK",
    "N",
];

/// The operations of the language, for swapping one for another.
const OPS: &[&str] = &[
    "program_id",
    "num_programs",
    "arange",
    "full",
    "zeros",
    "cdiv",
    "load",
    "store",
    "where_",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "abs",
    "maximum",
    "minimum",
    "fma",
    "to",
    "expand_dims",
    "broadcast_to",
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "dot",
    "trans",
    "reshape",
    "join",
    "split",
    "gather",
    "convert_layout",
    "step_by",
];

/// Method calls appended after a value: shape operations on whatever rank it has (scalars
/// included), casts, reductions on axes that may not exist.
const SUFFIXES: &[&str] = &[
    ".sum(0)",
    ".sum(1)",
    ".sum(0).sum(0)",
    ".max(2)",
    ".argmax(0)",
    ".trans()",
    ".trans([1, 0])",
    ".trans([0, 0])",
    ".reshape([2, 2])",
    ".reshape([])",
    ".expand_dims(0)",
    ".expand_dims(7)",
    ".broadcast_to([4])",
    ".broadcast_to([3, 4])",
    ".to::<i32>()",
    ".to::<bool>()",
    ".to::<f16>()",
    ".to::<u8>()",
    " as i64",
    " as bool",
    ".split()",
    ".split().0",
    ".convert_layout(L)",
    ".exp()",
    ".load()",
    "[0]",
    ".0",
    "?",
    ".gather(x, 0)",
];

/// Calls wrapped around a value.
const WRAPPERS: &[&str] = &[
    "exp(#)",
    "trans(#)",
    "join(#, #)",
    "dot(#, #)",
    "gather(#, #, 0)",
    "where_(#, #, #)",
    "load(#)",
    "full([3], #)",
    "full([], #)",
    "zeros::<f32>(#)",
    "arange(0, #)",
    "cdiv(#, 0)",
    "(#).reshape([1])",
    "split(#)",
    "convert_layout(#, L)",
    "maximum(#, 1.0)",
    "fma(#, #, #)",
    "-(#)",
    "!(#)",
    "{ # }",
    "(#, #)",
    "[#]",
    "&#",
    "*#",
    "#.#",
    "if true { # } else { 0 }",
];

/// Statements inserted between statements.
const STATEMENTS: &[&str] = &[
    ";",
    ";;",
    "#[inline] let z = 1;",
    "#[allow(unused)]",
    "#![allow(unused)]",
    "let _ = 0;",
    "let z;",
    "let mut z = zeros::<f32>([3]);",
    "store(x, 1);",
    "for i in 0..0 {}",
    "for i in (0..4).step_by(0) {}",
    "if false {}",
    "{}",
    "let (a, b) = (1, 2);",
    "let z = arange(0, 0);",
    "let z = arange(4, 0);",
    "let z = full([1, 1, 1, 1, 1, 1, 1], 0);",
    "z = 1;",
    "unsafe {}",
    "println!(\"x\");",
    "use core::f32;",
    "static S: i32 = 0;",
];

/// Attribute arguments a mutation may append.
const ATTR_ARGS: &[&str] = &[
    "num_warps = 3",
    "num_warps = 0",
    "num_warps = 32",
    "num_warps = -1",
    "num_warps = 1.5",
    "BLOCK = [0]",
    "BLOCK = [3, 5]",
    "BLOCK = []",
    "BLOCK = [1 << 31]",
    "X = 4",
    "BLOCK = 16, BLOCK = 32",
    "num_warps",
    "= 4",
    "device = 1",
    "grid = [2]",
    "r#type = 1",
];

/// The token trees of `ts`, with groups kept as trees.
fn trees(ts: &TokenStream) -> Vec<TokenTree> {
    ts.clone().into_iter().collect()
}

fn lex(text: &str) -> Vec<TokenTree> {
    trees(&text.parse().expect("mutation fragments lex"))
}

/// The paths (index per nesting level) of every token tree at every depth.
fn paths(ts: &TokenStream) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for (i, tree) in trees(ts).iter().enumerate() {
        out.push(vec![i]);
        if let TokenTree::Group(g) = tree {
            for mut inner in paths(&g.stream()) {
                inner.insert(0, i);
                out.push(inner);
            }
        }
    }
    out
}

/// `ts` with the token list that holds `path`'s last index edited by `edit(list, index)`.
fn edit_at(
    ts: &TokenStream,
    path: &[usize],
    edit: &mut dyn FnMut(&mut Vec<TokenTree>, usize),
) -> TokenStream {
    let mut list = trees(ts);
    if path.len() == 1 {
        edit(&mut list, path[0]);
    } else if let TokenTree::Group(g) = &list[path[0]] {
        let inner = edit_at(&g.stream(), &path[1..], edit);
        let mut group = Group::new(g.delimiter(), inner);
        group.set_span(g.span());
        list[path[0]] = TokenTree::Group(group);
    }
    list.into_iter().collect()
}

/// The comma-separated items of a token list (top level only).
fn split_commas(list: &[TokenTree]) -> Vec<Vec<TokenTree>> {
    let mut items = vec![Vec::new()];
    for t in list {
        match t {
            TokenTree::Punct(p) if p.as_char() == ',' => items.push(Vec::new()),
            other => items
                .last_mut()
                .expect("one item at least")
                .push(other.clone()),
        }
    }
    items
}

fn join_commas(items: &[Vec<TokenTree>]) -> Vec<TokenTree> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(TokenTree::Punct(Punct::new(',', Spacing::Alone)));
        }
        out.extend(item.iter().cloned());
    }
    out
}

/// One mutation of a token stream at a random place; its name says which.
fn mutate(rng: &mut Rng, ts: &TokenStream) -> (TokenStream, &'static str) {
    let all = paths(ts);
    if all.is_empty() {
        return (lex(rng.pick(STATEMENTS)).into_iter().collect(), "insert");
    }
    let path = all[rng.index(all.len())].clone();
    let kind = rng.below(12);
    let mut name = "";
    let out = edit_at(ts, &path, &mut |list, i| {
        name = match kind {
            0 => {
                list.remove(i);
                "delete token"
            }
            1 => {
                list.insert(i, list[i].clone());
                "duplicate token"
            }
            2 => {
                let j = if i + 1 < list.len() { i + 1 } else { 0 };
                list.swap(i, j);
                "swap tokens"
            }
            3 => {
                list.splice(i..=i, lex(rng.pick(EDGE_LITERALS)));
                "edge literal"
            }
            4 => match &list[i] {
                TokenTree::Ident(id) if OPS.contains(&id.to_string().as_str()) => {
                    list.splice(i..=i, lex(rng.pick(OPS)));
                    "swap operation"
                }
                _ => {
                    let idents: Vec<&str> = (crate::expand::MODULE_ITEMS.iter())
                        .chain(EDGE_IDENTS)
                        .copied()
                        .collect();
                    list.splice(i..=i, lex(rng.pick(&idents)));
                    "rename identifier"
                }
            },
            5 => {
                let p = rng.pick(&[
                    '+', '-', '*', '/', '%', '&', '|', '^', '<', '>', '=', '!', '.', ',', ';', ':',
                    '#',
                ]);
                list[i] = TokenTree::Punct(Punct::new(p, Spacing::Alone));
                "replace by punctuation"
            }
            6 => match &list[i] {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
                    let mut items = split_commas(&trees(&g.stream()));
                    let a = rng.index(items.len());
                    let what = match rng.below(3) {
                        0 => {
                            items.remove(a);
                            "drop argument"
                        }
                        1 => {
                            items.insert(a, items[a].clone());
                            "duplicate argument"
                        }
                        _ => {
                            let b = rng.index(items.len());
                            items.swap(a, b);
                            "swap arguments"
                        }
                    };
                    let group = Group::new(
                        Delimiter::Parenthesis,
                        join_commas(&items).into_iter().collect(),
                    );
                    list[i] = TokenTree::Group(group);
                    what
                }
                _ => {
                    list.remove(i);
                    "delete token"
                }
            },
            7 => {
                let at = (i + 1).min(list.len());
                list.splice(at..at, lex(rng.pick(SUFFIXES)));
                "append method"
            }
            8 => {
                let wrapped = rng.pick(WRAPPERS).replace('#', &list[i].to_string());
                list.splice(i..=i, lex(&wrapped));
                "wrap in call"
            }
            9 => {
                let at = list
                    .iter()
                    .enumerate()
                    .skip(i)
                    .find(|(_, t)| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
                    .map_or(list.len(), |(k, _)| k + 1);
                list.splice(at..at, lex(rng.pick(STATEMENTS)));
                "insert statement"
            }
            10 => {
                let literal = match rng.below(4) {
                    0 => Literal::i64_unsuffixed(rng.below(1 << 20) as i64),
                    1 => Literal::f64_unsuffixed(rng.below(1000) as f64 / 7.0),
                    2 => Literal::u64_suffixed(rng.next_u64()),
                    _ => Literal::i128_unsuffixed(-(rng.next_u64() as i128)),
                };
                list[i] = TokenTree::Literal(literal);
                "random literal"
            }
            _ => {
                let g = Group::new(
                    rng.pick(&[Delimiter::Parenthesis, Delimiter::Bracket, Delimiter::Brace]),
                    list[i].clone().into(),
                );
                list[i] = TokenTree::Group(g);
                "regroup token"
            }
        };
    });
    (out, name)
}

/// Appends or replaces an attribute argument.
fn mutate_attr(rng: &mut Rng, attr: &TokenStream) -> (TokenStream, &'static str) {
    if rng.below(2) == 0 {
        return mutate(rng, attr);
    }
    let mut items = split_commas(&trees(attr));
    let extra = lex(rng.pick(ATTR_ARGS));
    if items.len() > 1 && rng.below(2) == 0 {
        let a = rng.index(items.len());
        items[a] = extra;
        (
            join_commas(&items).into_iter().collect(),
            "replace attribute argument",
        )
    } else {
        items.push(extra);
        (
            join_commas(&items).into_iter().collect(),
            "add attribute argument",
        )
    }
}

/// The attribute `attr` of a library kernel with each list of values cut to its first value
/// (`T = [f16, bf16]` → `T = [f16]`), `requires` and `targets` as they are.
fn first_specialisation(attr: &TokenStream) -> TokenStream {
    use syn::punctuated::Punctuated;
    let parser = Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
    let entries = syn::parse::Parser::parse2(parser, attr.clone())
        .unwrap_or_else(|e| panic!("a library kernel's attribute parses: {e}: {attr}"));
    let entries = entries.into_iter().map(|meta| match meta {
        syn::Meta::NameValue(mut entry)
            if !entry.path.is_ident("requires") && !entry.path.is_ident("targets") =>
        {
            if let syn::Expr::Array(array) = &mut entry.value {
                let first = array.elems.first().cloned();
                array.elems = first.into_iter().collect();
            }
            syn::Meta::NameValue(entry)
        }
        other => other,
    });
    quote::quote!(#(#entries),*)
}

#[test]
fn first_specialisation_keeps_one_value_of_each_list() {
    let attr: TokenStream = "T = [f16, bf16], num_warps = [4, 8], BM = 128, \
                             requires = [a.size(0) == 4, b.size(0) == 4], targets = [sm_80, sm_90a]"
        .parse()
        .expect("an attribute");
    assert_eq!(
        first_specialisation(&attr).to_string(),
        "T = [f16] , num_warps = [4] , BM = 128 , requires = [a . size (0) == 4 , b . size (0) \
         == 4] , targets = [sm_80 , sm_90a]"
    );
}

#[test]
fn generated_malformed_kernels_expand_cleanly() {
    let sources = kernel_sources();
    assert!(
        sources.len() >= 20,
        "only {} kernels in kernels/src and kernels/tiled",
        sources.len()
    );
    let seed = generator::seed();
    generator::say(&format!(
        "generated_malformed: seed {seed} ({SEED_ENV}={seed} replays it); {} source kernels",
        sources.len()
    ));
    let mut rng = Rng::new(seed);
    let start = Instant::now();
    let mut tally = Tally::default();
    for case in 0..CASES {
        let source = &sources[rng.index(sources.len())];
        let mut attr = first_specialisation(&source.attr);
        let mut item = source.item.clone();
        let mut applied = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let (next, what) = if rng.below(8) == 0 {
                let (a, what) = mutate_attr(&mut rng, &attr);
                attr = a;
                (item.clone(), what)
            } else {
                mutate(&mut rng, &item)
            };
            item = next;
            applied.push(what);
        }
        // Re-lexed from text, so every span has a real position in the case's own source.
        let attr_text = attr.to_string();
        let item_text = item.to_string();
        let described = format!(
            "case {case} (seed {seed}) of `{}`, mutations {applied:?}:\n#[tile_kernel({attr_text})]\n{item_text}",
            source.name
        );
        let outcome = generator::expand_checked(&attr_text, &item_text);
        tally.record(outcome, &described);
    }
    let elapsed = start.elapsed();
    tally.report("generated_malformed", seed, CASES, elapsed);
}
