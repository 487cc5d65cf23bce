//! Compares our layouts with Triton's, case by case, on an oracle file (they ship in
//! `test-support/oracle/`, schema in its README):
//!
//! ```text
//! cargo run --release -p tessera-gpu-layout --example oracle -- test-support/oracle/layouts.json
//! ```
//!
//! A bare file name (`layouts.json`) is looked up in the oracle directory (`TESSERA_ORACLE_DIR`,
//! else `test-support/oracle/`). Each case is dispatched on its id (see
//! [`tessera_test_support::oracle`]). One line is printed per mismatch (case, expected, got),
//! then `N/M cases match`; the exit status is non-zero unless every case matches. A case of a
//! kind we cannot check counts as a mismatch, not a skip.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tessera_test_support::oracle::{self, case_group, check_case, OracleFile};

fn run(path: &Path, by_family: bool) -> Result<bool, String> {
    let file = OracleFile::read(path)?;
    let mut matched = 0;
    let mut groups: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in &file.cases {
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
        let entry = groups.entry(case_group(case)).or_default();
        entry.0 += ok as usize;
        entry.1 += 1;
    }
    if by_family {
        for (name, (m, n)) in &groups {
            println!("  {name}: {m}/{n}");
        }
    }
    println!("{matched}/{} cases match", file.cases.len());
    Ok(matched == file.cases.len())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let by_family = args.iter().any(|a| a == "--by-family");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    if files.len() != 1 {
        eprintln!("usage: oracle [--by-family] FILE   (layouts.json, algebra.json or bank_conflicts.json)");
        return ExitCode::from(2);
    }
    let mut path = PathBuf::from(files[0]);
    if !path.exists() && path.components().count() == 1 {
        path = oracle::dir().join(&path);
    }
    match run(&path, by_family) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
