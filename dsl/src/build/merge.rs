//! One PTX module from the PTX of a kernel crate and of the kernel crates it depends on.
//!
//! rustc writes one `.s` file per crate: a kernel crate that uses the kernels of other crates
//! (the repository's `tessera-kernels` re-exports one crate per family of kernels) has their
//! entries in their files, not in its own. Each file is a whole PTX module (`.version`,
//! `.target`, `.address_size`, then declarations and entries); the merged module is the first
//! file followed by the others without their header. Names stay as they are, so a symbol that
//! two files define (an `.entry`, a `.func`, a `.global` …) cannot be merged: that is an error
//! naming both crates, not a module ptxas or the driver would refuse later. Declarations
//! (`.extern`, which every kernel file has for its dynamic shared memory) may repeat.

use std::collections::HashMap;

/// The PTX of one crate of the build: its Rust crate name and the text of its `.s` file.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CratePtx {
    pub(super) crate_name: String,
    pub(super) text: String,
}

impl CratePtx {
    /// Whether the module has a kernel entry (`.entry`, visible or not).
    pub(super) fn has_entry(&self) -> bool {
        self.text.lines().any(|line| entry_name(line).is_some())
    }
}

/// `parts[0]` followed by the other parts without their header lines (`.version`, `.target`,
/// `.address_size`), which must equal the first part's. Fails, naming the crates, when two parts
/// define the same symbol or their headers differ.
pub(super) fn merge_ptx(parts: &[CratePtx]) -> Result<String, String> {
    let Some((first, rest)) = parts.split_first() else {
        return Err("no PTX to merge".to_string());
    };
    let mut defined_by: HashMap<&str, &str> = HashMap::new();
    for part in parts {
        for line in part.text.lines() {
            let Some(symbol) = defined_symbol(line) else {
                continue;
            };
            if let Some(other) = defined_by.insert(symbol, &part.crate_name) {
                return Err(format!(
                    "the PTX of crates `{other}` and `{}` both define `{symbol}`: one module \
                     cannot hold both (give one of them another name)",
                    part.crate_name
                ));
            }
        }
    }
    let first_header = header(&first.text);
    let mut merged = first.text.clone();
    for part in rest {
        let part_header = header(&part.text);
        if part_header != first_header {
            return Err(format!(
                "the PTX of crate `{}` has the header {part_header:?}, that of `{}` {first_header:?}: \
                 they were not built for the same target",
                part.crate_name, first.crate_name
            ));
        }
        if !merged.ends_with('\n') {
            merged.push('\n');
        }
        merged.push_str(&format!("\n// entries of crate {}\n", part.crate_name));
        for line in part.text.lines().filter(|line| !is_header_line(line)) {
            merged.push_str(line);
            merged.push('\n');
        }
    }
    Ok(merged)
}

/// The header lines of a PTX module, in order.
fn header(text: &str) -> Vec<&str> {
    text.lines().filter(|line| is_header_line(line)).collect()
}

fn is_header_line(line: &str) -> bool {
    [".version", ".target", ".address_size"]
        .iter()
        .any(|directive| line.starts_with(directive))
}

/// The name of the kernel entry a top-level line opens (`.visible .entry name(` or `.entry name(`).
fn entry_name(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix(".visible .entry ")
        .or_else(|| line.strip_prefix(".entry "))?;
    name_before_paren(rest)
}

/// The symbol a top-level line defines: an entry, a function (`.func`, optionally with a return
/// parameter list before its name) or a module-scope variable (`.global`, `.const`, `.shared`);
/// `None` for declarations (`.extern`) and every other line.
fn defined_symbol(line: &str) -> Option<&str> {
    if line.starts_with(".extern") || line.starts_with(' ') || line.starts_with('\t') {
        return None;
    }
    if let Some(name) = entry_name(line) {
        return Some(name);
    }
    let rest = line
        .strip_prefix(".visible ")
        .or_else(|| line.strip_prefix(".weak "))
        .unwrap_or(line);
    if let Some(rest) = rest.strip_prefix(".func") {
        let rest = rest.trim_start();
        // `.func (.param .b32 func_retval0) name(`: skip the return parameters.
        let rest = match rest.strip_prefix('(') {
            Some(inner) => inner.split_once(')').map(|(_, after)| after.trim_start())?,
            None => rest,
        };
        return name_before_paren(rest).or_else(|| {
            let name = rest.split([' ', ';']).next()?;
            (!name.is_empty()).then_some(name)
        });
    }
    let mut words = rest.split_whitespace();
    if !matches!(words.next(), Some(".global" | ".const" | ".shared")) {
        return None;
    }
    // `.global .align 4 .b8 name[16] = {…};`: the first word that is not a directive or a number.
    words
        .filter(|word| !word.starts_with('.') && !word.chars().all(|c| c.is_ascii_digit()))
        .map(|word| word.split(['[', ';', '=']).next().unwrap_or(word))
        .find(|name| !name.is_empty())
}

fn name_before_paren(text: &str) -> Option<&str> {
    let name = text.split('(').next()?.trim();
    (!name.is_empty() && !name.contains(' ')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(crate_name: &str, body: &str) -> CratePtx {
        CratePtx {
            crate_name: crate_name.to_string(),
            text: format!(
                "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.0\n.target sm_90a\n\
                 .address_size 64\n\n{body}"
            ),
        }
    }

    const DYNAMIC_SHARED: &str = ".extern .shared .align 16 .b8 tessera_dynamic_shared[];\n";

    #[test]
    fn the_merged_module_has_one_header_and_every_entry() {
        let a = part(
            "family_a",
            &format!("{DYNAMIC_SHARED}.visible .entry k_a(\n\t.param .u64 p\n)\n{{\n\tret;\n}}\n"),
        );
        let b = part(
            "family_b",
            &format!("{DYNAMIC_SHARED}.visible .entry k_b(\n\t.param .u64 p\n)\n{{\n\tret;\n}}\n"),
        );
        let merged = merge_ptx(&[a.clone(), b]).unwrap();
        for directive in [".version", ".target", ".address_size"] {
            let count = merged.lines().filter(|l| l.starts_with(directive)).count();
            assert_eq!(count, 1, "{directive} in\n{merged}");
        }
        assert!(
            merged.starts_with(&a.text),
            "the first part comes first, whole"
        );
        let entries: Vec<_> = merged.lines().filter_map(entry_name).collect();
        assert_eq!(entries, ["k_a", "k_b"]);
        assert_eq!(merged.matches(DYNAMIC_SHARED.trim_end()).count(), 2);
    }

    #[test]
    fn a_symbol_two_crates_define_is_refused_naming_both() {
        for (body_a, body_b, symbol) in [
            (".visible .entry k(\n)\n{\n}\n", ".entry k(\n)\n{\n}\n", "k"),
            (
                ".func (.param .b32 func_retval0) helper(\n)\n{\n}\n",
                ".visible .func helper(\n)\n{\n}\n",
                "helper",
            ),
            (
                ".global .align 4 .b8 table[16] = {0};\n",
                ".global .align 4 .b8 table[16];\n",
                "table",
            ),
        ] {
            let err = merge_ptx(&[part("a", body_a), part("b", body_b)]).unwrap_err();
            assert!(
                err.contains("`a`") && err.contains("`b`") && err.contains(&format!("`{symbol}`")),
                "{err}"
            );
        }
    }

    #[test]
    fn declarations_may_repeat_and_distinct_definitions_merge() {
        let a = part(
            "a",
            ".extern .func helper(\n);\n.func (.param .b32 func_retval0) f_a(\n)\n{\n}\n",
        );
        let b = part(
            "b",
            ".extern .func helper(\n);\n.global .align 8 .u64 counter;\n.visible .entry e(\n)\n{\n}\n",
        );
        let merged = merge_ptx(&[a, b]).unwrap();
        let defined: Vec<_> = merged.lines().filter_map(defined_symbol).collect();
        assert_eq!(defined, ["f_a", "counter", "e"]);
    }

    #[test]
    fn parts_for_other_targets_are_refused() {
        let a = part("a", "");
        let mut b = part("b", "");
        b.text = b.text.replace("sm_90a", "sm_80");
        let err = merge_ptx(&[a, b]).unwrap_err();
        assert!(err.contains("not built for the same target"), "{err}");
    }

    #[test]
    fn only_modules_with_an_entry_count_as_kernel_crates() {
        assert!(part("k", ".visible .entry k(\n)\n{\n}\n").has_entry());
        assert!(part("k", ".entry k(\n)\n{\n}\n").has_entry());
        assert!(!part("runtime", ".visible .func f(\n)\n{\n}\n").has_entry());
        assert!(!part("runtime", "\t// .entry in a comment\n").has_entry());
    }
}
