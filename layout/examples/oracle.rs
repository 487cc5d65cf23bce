//! Compares our layouts with Triton's, case by case, on an oracle file of `shared/oracle/`:
//!
//! ```text
//! cargo run --release -p tessera-layout --example oracle -- shared/oracle/layouts.json
//! ```
//!
//! Each case is dispatched on its id: `layout-*` (families, [`check_layout_case`]),
//! `algebra-*`, `memory-*`, `product-*` (the algebra, [`check_algebra_case`]), `bank-*` (bank
//! conflicts of the planner). One line is printed per mismatch (case, expected, got), then
//! `N/M cases match`; the exit status is non-zero unless every case matches. A case of a kind we
//! cannot check counts as a mismatch, not a skip.

use std::collections::BTreeMap;
use std::process::ExitCode;
use tessera_layout::oracle_algebra::check_algebra_case;
use tessera_layout::plan::bank::check_bank_case;
use tessera_layout::spec::oracle::{case_family, check_layout_case};
use tessera_layout::spec::{array, field, parse_json, Json};

/// Checks one case of any oracle file: `Ok(())` or the mismatch lines.
fn check_case(case: &Json) -> Result<(), Vec<String>> {
    let id = case.get("id").and_then(Json::as_str).unwrap_or("?");
    let kind = id.rsplit_once('-').map_or(id, |(kind, _)| kind);
    match kind {
        "layout" => check_layout_case(case),
        "algebra" | "memory" | "product" => check_algebra_case(case),
        "bank" => check_bank_case(case),
        _ => Err(vec![format!("{id}: unknown case kind \"{kind}\"")]),
    }
}

/// The group a case is counted in: its family for `layout-*` cases, else its kind.
fn group(case: &Json) -> String {
    let id = case.get("id").and_then(Json::as_str).unwrap_or("?");
    match id.rsplit_once('-') {
        Some(("layout", _)) => case_family(case),
        Some((kind, _)) => kind.to_string(),
        None => "?".to_string(),
    }
}

fn run(path: &str, by_family: bool) -> Result<bool, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let root = parse_json(&text).map_err(|e| format!("{path}: {e}"))?;
    let cases = field(&root, "", "cases")
        .and_then(|v| array(v, "cases"))
        .map_err(|e| format!("{path}: {e}"))?;
    let mut matched = 0;
    let mut groups: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in cases {
        let ok = match check_case(case) {
            Ok(()) => true,
            Err(lines) => {
                for line in lines {
                    println!("{line}");
                }
                false
            }
        };
        matched += ok as usize;
        let entry = groups.entry(group(case)).or_default();
        entry.0 += ok as usize;
        entry.1 += 1;
    }
    if by_family {
        for (name, (m, n)) in &groups {
            println!("  {name}: {m}/{n}");
        }
    }
    println!("{matched}/{} cases match", cases.len());
    Ok(matched == cases.len())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let by_family = args.iter().any(|a| a == "--by-family");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    if files.len() != 1 {
        eprintln!("usage: oracle [--by-family] FILE   (layouts.json, algebra.json or bank_conflicts.json)");
        return ExitCode::from(2);
    }
    match run(files[0], by_family) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
