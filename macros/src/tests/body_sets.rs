//! A device build told its target (`TESSERA_EXPAND_TARGET`, [`BodySet`]) compiles the same
//! device code as a build of every target's bodies: for kernels of the library that have each
//! kind of body (a `dot` with Ampere, Hopper and AMD bodies and TMA copies, an sm_90a-only
//! kernel, a conversion planned apart for AMD, a kernel with one body), the device items each
//! target's `cfg` keeps are the same tokens, in the same order; and a restricted expansion
//! compiled for another target meets its `compile_error!`.

use super::kernel_corpus::kernel_sources;
use crate::expand::{expand_kernel_for, BodySet};
use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// A target as `cfg` sees it.
struct CfgTarget {
    arch: &'static str,
    features: &'static [&'static str],
}

const SM80: CfgTarget = CfgTarget {
    arch: "nvptx64",
    features: &[],
};
const SM90A: CfgTarget = CfgTarget {
    arch: "nvptx64",
    features: &["sm_90a"],
};
const AMDGPU: CfgTarget = CfgTarget {
    arch: "amdgpu",
    features: &[],
};
const HOST: CfgTarget = CfgTarget {
    arch: "x86_64",
    features: &[],
};

/// Whether the `cfg` predicate `meta` holds for `target` (`all`, `any`, `not`, `target_arch`,
/// `target_feature`: what the expansion writes).
fn holds(meta: &syn::Meta, target: &CfgTarget) -> bool {
    match meta {
        syn::Meta::List(list) => {
            let args: Vec<syn::Meta> = list
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .expect("cfg arguments")
                .into_iter()
                .collect();
            let name = list.path.get_ident().expect("cfg operator").to_string();
            match name.as_str() {
                "all" => args.iter().all(|m| holds(m, target)),
                "any" => args.iter().any(|m| holds(m, target)),
                "not" => !holds(&args[0], target),
                other => panic!("cfg operator {other}"),
            }
        }
        syn::Meta::NameValue(nv) => {
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(value),
                ..
            }) = &nv.value
            else {
                panic!("cfg value");
            };
            let name = nv.path.get_ident().expect("cfg name").to_string();
            match name.as_str() {
                "target_arch" => value.value() == target.arch,
                "target_feature" => target.features.contains(&value.value().as_str()),
                other => panic!("cfg name {other}"),
            }
        }
        syn::Meta::Path(path) => panic!("cfg {}", quote::quote!(#path)),
    }
}

/// The items under `#[cfg(..)]` that `target` keeps, at any depth of `tokens`, as text in order:
/// each `#[cfg(P)]` with the token trees after it up to the next `;` or brace-delimited group
/// (one macro call or item).
fn kept_items(tokens: &TokenStream, target: &CfgTarget, out: &mut Vec<String>) {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        let cfg = match (&trees[i], trees.get(i + 1)) {
            (TokenTree::Punct(p), Some(TokenTree::Group(g)))
                if p.as_char() == '#' && g.delimiter() == Delimiter::Bracket =>
            {
                syn::parse2::<syn::Meta>(g.stream())
                    .ok()
                    .filter(|m| m.path().is_ident("cfg"))
            }
            _ => None,
        };
        let Some(cfg) = cfg else {
            if let TokenTree::Group(g) = &trees[i] {
                kept_items(&g.stream(), target, out);
            }
            i += 1;
            continue;
        };
        let syn::Meta::List(list) = &cfg else {
            panic!("cfg without a predicate");
        };
        let predicate: syn::Meta = syn::parse2(list.tokens.clone()).expect("cfg predicate");
        let mut end = i + 2;
        while end < trees.len() {
            let done = match &trees[end] {
                TokenTree::Punct(p) => p.as_char() == ';',
                TokenTree::Group(g) => g.delimiter() == Delimiter::Brace,
                _ => false,
            };
            end += 1;
            if done {
                break;
            }
        }
        if holds(&predicate, target) {
            let item: TokenStream = trees[i + 2..end].iter().cloned().collect();
            out.push(item.to_string());
        }
        i = end;
    }
}

fn kept(tokens: &TokenStream, target: &CfgTarget) -> Vec<String> {
    let mut out = Vec::new();
    kept_items(tokens, target, &mut out);
    out
}

/// The kernels checked: each kind of body the expansion makes.
const KERNELS: [&str; 4] = [
    "tile_matmul",
    "tile_matmul_f8_grouped",
    "tile_transpose_warp",
    "tile_softmax",
];

#[test]
fn a_build_told_its_target_compiles_the_same_device_code() {
    let sources = kernel_sources();
    for name in KERNELS {
        let kernel = sources
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("kernel {name} in the library"));
        // `tile_matmul` at bf16 and 1 and 3 stages (unpipelined, and pipelined by `cp.async`
        // and by TMA), not at each of its 8 specialisations: the check expands it four times.
        let attr = kernel
            .attr
            .to_string()
            .replace("T = [f16 , bf16]", "T = [bf16]")
            .replace("num_stages = [1 , 2 , 3 , 4]", "num_stages = [1 , 3]");
        assert!(
            name != "tile_matmul"
                || attr.contains("T = [bf16] , num_warps = 4 , num_stages = [1 , 3]"),
            "tile_matmul's attribute is no longer narrowed: {attr}"
        );
        let attr: TokenStream = attr.parse().expect("the attribute re-lexes");
        let expand = |set| expand_kernel_for(attr.clone(), kernel.item.clone(), set);
        let every = expand(BodySet::All);
        assert!(
            !every.to_string().contains("compile_error"),
            "{name}: {every}"
        );
        for (set, target, what) in [
            (BodySet::Nvptx, SM80, "sm_80"),
            (BodySet::NvptxSm90a, SM90A, "sm_90a"),
            (BodySet::Amdgpu, AMDGPU, "amdgpu"),
        ] {
            let restricted = expand(set);
            let want = kept(&every, &target);
            let got = kept(&restricted, &target);
            assert!(
                !want.is_empty() || name == "tile_matmul_f8_grouped",
                "{name}: no item for {what}"
            );
            assert!(
                want == got,
                "{name}: the {what} items of a build told {set:?} differ from a build of all \
                 ({} items against {})",
                got.len(),
                want.len()
            );
            // Compiled for the host (or another device), the restricted expansion stops.
            let on_host = kept(&restricted, &HOST);
            assert!(
                on_host.iter().any(|item| item.contains("compile_error")),
                "{name}: no compile_error for a {set:?} expansion built for the host"
            );
            assert!(
                !kept(&restricted, &target)
                    .iter()
                    .any(|item| item.contains("compile_error")),
                "{name}: a {set:?} expansion stops its own target"
            );
        }
    }
}

#[test]
fn the_expand_target_names_a_body_set() {
    assert_eq!(BodySet::parse(None), Ok(BodySet::All));
    assert_eq!(BodySet::parse(Some("")), Ok(BodySet::All));
    assert_eq!(BodySet::parse(Some("nvptx64")), Ok(BodySet::Nvptx));
    assert_eq!(
        BodySet::parse(Some("nvptx64-sm_90a")),
        Ok(BodySet::NvptxSm90a)
    );
    assert_eq!(BodySet::parse(Some("amdgpu")), Ok(BodySet::Amdgpu));
    let error = BodySet::parse(Some("sm_90a")).expect_err("not a target");
    assert!(
        error.contains("TESSERA_EXPAND_TARGET=\"sm_90a\" is not a target")
            && error.contains("`nvptx64`, `nvptx64-sm_90a` or `amdgpu`"),
        "{error}"
    );
}

/// The build helper (`tessera::build`, which cannot share a constant with a proc-macro crate)
/// sets the variable this crate reads, with the values it parses.
#[test]
fn the_build_helper_sets_the_variable_the_macro_reads() {
    let helper = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dsl/src/build/toolchain.rs"
    ))
    .expect("the build helper's toolchain.rs");
    let name = crate::expand::variants::EXPAND_TARGET_ENV;
    assert!(
        helper.contains(&format!("pub const EXPAND_TARGET_ENV: &str = \"{name}\";")),
        "the build helper names another variable than {name}"
    );
    for value in ["nvptx64", "nvptx64-sm_90a", "amdgpu"] {
        assert!(
            helper.contains(&format!("\"{value}\"")),
            "the build helper never sets {value}"
        );
        assert!(BodySet::parse(Some(value)).is_ok());
    }
}
