//! The Triton oracle: ground truth computed by Triton 3.6.0's own C++ (see `oracle/README.md` in
//! this crate, which is also the schema of the layout JSON), and the checkers that compare the
//! layout crate with it case by case.
//!
//! The files live in `test-support/oracle/`; `TESSERA_ORACLE_DIR` overrides the directory.
//! A case is dispatched on its id: `layout-*` ([`check_layout_case`]), `algebra-*`, `memory-*`,
//! `product-*` ([`check_algebra_case`]), `bank-*` ([`check_bank_case`]). A case of a kind we
//! cannot check is a mismatch, not a skip.

mod algebra;
mod bank;
mod layouts;

pub use algebra::check_algebra_case;
pub use bank::check_bank_case;
pub use layouts::{case_family, check_layout_case, compare_dim_bases};

use serde::Deserialize;
use std::path::PathBuf;
use tessera_layout::spec::Json;

/// The oracle directory: `$TESSERA_ORACLE_DIR`, else `oracle/` of this crate.
pub fn dir() -> PathBuf {
    match std::env::var_os("TESSERA_ORACLE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/oracle")),
    }
}

/// One oracle file: `{"triton_version", "seed", "cases": [...], "rejected_by_triton": [...]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleFile {
    pub triton_version: String,
    pub seed: u64,
    pub cases: Vec<Json>,
    pub rejected_by_triton: Vec<Json>,
}

impl OracleFile {
    /// Reads an oracle file's text; the error names the line, column and field.
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("not an oracle file: {e}"))
    }

    /// Reads the file at `path`.
    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads `name` (`layouts.json`, `algebra.json`, `bank_conflicts.json`) from [`dir`];
    /// panics with the path tried, so a missing oracle fails the test that needs it.
    pub fn load(name: &str) -> Self {
        Self::read(&dir().join(name)).unwrap_or_else(|e| panic!("{e} (set TESSERA_ORACLE_DIR)"))
    }
}

/// The id of a case (`?` if it has none).
pub fn case_id(case: &Json) -> &str {
    case.get("id").and_then(Json::as_str).unwrap_or("?")
}

/// Checks one case of any oracle file: `Ok(())` or the mismatch lines.
pub fn check_case(case: &Json) -> Result<(), Vec<String>> {
    let id = case_id(case);
    let kind = id.rsplit_once('-').map_or(id, |(kind, _)| kind);
    match kind {
        "layout" => check_layout_case(case),
        "algebra" | "memory" | "product" => check_algebra_case(case),
        "bank" => check_bank_case(case),
        _ => Err(vec![format!("{id}: unknown case kind \"{kind}\"")]),
    }
}

/// The group a case is counted in: its family for `layout-*` cases, else its kind.
pub fn case_group(case: &Json) -> String {
    match case_id(case).rsplit_once('-') {
        Some(("layout", _)) => case_family(case),
        Some((kind, _)) => kind.to_string(),
        None => "?".to_string(),
    }
}

/// Checks every case of a file: (cases that match, mismatch lines).
pub fn check_file(file: &OracleFile) -> (usize, Vec<String>) {
    let mut matched = 0;
    let mut lines = Vec::new();
    for case in &file.cases {
        match check_case(case) {
            Ok(()) => matched += 1,
            Err(mut m) => lines.append(&mut m),
        }
    }
    (matched, lines)
}
