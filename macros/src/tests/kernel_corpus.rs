//! The `#[tile_kernel]` functions of `kernels/src`, read from their source files, for tests that
//! run the whole macro on every real kernel: each with the calls of its `#[tile_fn]` helpers
//! (from any file of `kernels/src`) inlined, as the macro's resumed expansion has them.

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

/// Every `#[tile_kernel(..)]` function under `kernels/src`, in file order.
pub fn kernel_sources() -> Vec<KernelSource> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut out = Vec::new();
    let mut helpers = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("kernel source");
        let parsed = syn::parse_file(&text).expect("kernel source parses");
        collect(&parsed.items, &file, &mut out, &mut helpers);
    }
    for kernel in &mut out {
        let uses = split_uses(kernel.attr.clone()).expect("`uses` of a kernel");
        kernel.item = inline_calls(kernel.item.clone(), &uses, &helpers).expect("helpers inline");
        kernel.attr = uses.rest;
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("kernels/src") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn collect(
    items: &[syn::Item],
    file: &Path,
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
                    collect(inner, file, out, helpers);
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
/// generated code before and after a change of the compiler; does nothing without the variable).
#[test]
fn dump_kernel_expansions() {
    let Ok(dir) = std::env::var("TESSERA_DUMP_DIR") else {
        return;
    };
    std::fs::create_dir_all(&dir).expect("dump directory");
    for k in kernel_sources() {
        let tokens = crate::expand::tile_kernel(k.attr.clone(), k.item.clone());
        std::fs::write(format!("{dir}/{}.rs", k.name), tokens.to_string()).expect("write dump");
    }
}
