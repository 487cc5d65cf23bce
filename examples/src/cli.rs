//! The command-line endings both binaries share (`tessera-examples` includes this module as
//! `mod cli`, `tessera-parity` by its path).

use std::process::ExitCode;

/// `--help`: the usage on stdout, and success.
pub fn help(usage: &str) -> ExitCode {
    println!("{usage}");
    ExitCode::SUCCESS
}

/// Arguments that do not parse: the error and the usage on stderr, and exit status 2.
pub fn usage_error(err: &str, usage: &str) -> ExitCode {
    eprintln!("error: {err}\n{usage}");
    ExitCode::from(2)
}
