//! The `#[tile_kernel]` functions of the kernel library (`kernels/src` and the family crates of
//! `kernels/tiled`), read from their source files, for tests that run the whole macro on every
//! real kernel: each with the calls of its `#[tile_fn]` helpers (from any of those files)
//! inlined, as the macro's resumed expansion has them. The kernels a `macro_rules!` of the
//! library stamps are read from its expansion ([`super::macro_rules`]).

use super::macro_rules::MacroRules;
use crate::tile_fn::{inline_calls, split_uses, Helper};
use proc_macro2::TokenStream;
use quote::ToTokens;
use std::path::{Path, PathBuf};

/// One kernel: where it is written, and the attribute's arguments and the function the macro
/// receives.
pub struct KernelSource {
    pub file: PathBuf,
    pub name: String,
    pub attr: TokenStream,
    pub item: TokenStream,
}

/// Every `#[tile_kernel(..)]` function under `kernels/src` and `kernels/tiled`, in file order.
pub fn kernel_sources() -> Vec<KernelSource> {
    let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let mut files = Vec::new();
    rust_files(&kernels.join("src"), &mut files);
    rust_files(&kernels.join("tiled"), &mut files);
    files.sort();
    let parsed: Vec<(PathBuf, syn::File)> = files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).expect("kernel source");
            (file, syn::parse_file(&text).expect("kernel source parses"))
        })
        .collect();
    let mut macros = Vec::new();
    for (_, file) in &parsed {
        macro_definitions(&file.items, &mut macros);
    }
    let mut out = Vec::new();
    let mut helpers = Vec::new();
    for (path, file) in &parsed {
        collect(&file.items, path, &macros, &mut out, &mut helpers);
    }
    for kernel in &mut out {
        let uses = split_uses(kernel.attr.clone()).expect("`uses` of a kernel");
        kernel.item = inline_calls(kernel.item.clone(), &uses, &helpers).expect("helpers inline");
        kernel.attr = uses.rest;
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a directory of kernel sources") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `macro_rules!` definitions among `items` (and their inline modules).
fn macro_definitions(items: &[syn::Item], out: &mut Vec<MacroRules>) {
    for item in items {
        match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                let name = m.ident.as_ref().expect("a macro_rules! name").to_string();
                out.push(MacroRules::parse(name, m.mac.tokens.clone()));
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    macro_definitions(inner, out);
                }
            }
            _ => {}
        }
    }
}

fn collect(
    items: &[syn::Item],
    file: &Path,
    macros: &[MacroRules],
    out: &mut Vec<KernelSource>,
    helpers: &mut Vec<Helper>,
) {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if f.attrs.iter().any(|a| is_attr(a, "tile_fn")) {
                    helpers.push(Helper::new(f.clone()));
                    continue;
                }
                let Some(at) = f.attrs.iter().position(|a| is_attr(a, "tile_kernel")) else {
                    continue;
                };
                let attr = match &f.attrs[at].meta {
                    syn::Meta::List(list) => list.tokens.clone(),
                    _ => TokenStream::new(),
                };
                let mut function = f.clone();
                function.attrs.remove(at);
                out.push(KernelSource {
                    file: file.to_path_buf(),
                    name: f.sig.ident.to_string(),
                    attr,
                    item: function.into_token_stream(),
                });
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(inner, file, macros, out, helpers);
                }
            }
            syn::Item::Macro(m) => {
                let called = m.mac.path.segments.last().map(|s| s.ident.to_string());
                if let Some(rules) = macros.iter().find(|r| Some(&r.name) == called.as_ref()) {
                    let expansion = rules.expand(m.mac.tokens.clone());
                    let expanded: syn::File = syn::parse2(expansion)
                        .unwrap_or_else(|e| panic!("`{}!` expands to items: {e}", rules.name));
                    collect(&expanded.items, file, macros, out, helpers);
                }
            }
            _ => {}
        }
    }
}

fn is_attr(attr: &syn::Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
}

/// Writes the expansion of every kernel to `$TESSERA_DUMP_DIR/<name>.rs` (for comparing the
/// generated code before and after a change of the compiler), and to
/// `$TESSERA_DUMP_DIR/expansions.tsv` each kernel's expansion time and size in tokens (what the
/// README's table of build costs quotes; run it with `--release`, as cargo builds the macro for
/// release builds). Does nothing without the variable.
#[test]
fn dump_kernel_expansions() {
    let Ok(dir) = std::env::var("TESSERA_DUMP_DIR") else {
        return;
    };
    std::fs::create_dir_all(&dir).expect("dump directory");
    let mut table = String::from("kernel\tfile\texpansion_ms\ttokens\n");
    for k in kernel_sources() {
        let start = std::time::Instant::now();
        let tokens = crate::expand::tile_kernel(k.attr.clone(), k.item.clone());
        let millis = start.elapsed().as_secs_f64() * 1e3;
        let file = k.file.file_name().map(|f| f.to_string_lossy().into_owned());
        table += &format!(
            "{}\t{}\t{millis:.0}\t{}\n",
            k.name,
            file.unwrap_or_default(),
            token_count(tokens.clone())
        );
        std::fs::write(format!("{dir}/{}.rs", k.name), tokens.to_string()).expect("write dump");
    }
    std::fs::write(format!("{dir}/expansions.tsv"), table).expect("write table");
}

/// The tokens of `tokens`, those inside groups included.
fn token_count(tokens: TokenStream) -> usize {
    tokens
        .into_iter()
        .map(|tree| match tree {
            proc_macro2::TokenTree::Group(group) => 1 + token_count(group.stream()),
            _ => 1,
        })
        .sum()
}

/// The kernels that `macro_rules!` stamp are in the corpus, each with its own name, and no kernel
/// is read twice.
#[test]
fn stamped_kernels_are_read_from_their_expansions() {
    let names: Vec<String> = kernel_sources().into_iter().map(|k| k.name).collect();
    for stamped in [
        "tile_attention_d64",
        "tile_attention_d128_w8",
        "tile_softmax",
        "bench_softmax_w8",
        "tuned_matmul",
    ] {
        assert!(
            names.iter().any(|n| n == stamped),
            "{stamped} missing: {names:?}"
        );
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "a kernel read twice: {names:?}");
}
