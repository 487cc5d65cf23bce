//! The internal-error path from valid kernels: the grammar of `gen-tests` (random valid kernels,
//! which `gen-tests` also compiles and runs on the emulator) expanded in-process. Every kernel
//! it produces is valid by construction, so each must pass the checker and expand to a module:
//! no panic, no error of any kind, no "internal error".

use super::generator::{self, Outcome, Tally, SEED_ENV};
use std::time::Instant;

#[path = "../../../gen-tests/src/grammar.rs"]
#[allow(dead_code)] // The test renders kernels; the constants are for the evaluator.
mod grammar;

/// Kernels per run: about half a minute in a debug build (the expansion, with layout inference
/// and lowering, takes a few hundred milliseconds per kernel there).
const KERNELS: usize = 64;

#[test]
fn generated_valid_kernels_expand_without_errors() {
    let seed = generator::seed();
    generator::say(&format!(
        "generated_valid: seed {seed} ({SEED_ENV}={seed} replays it), {KERNELS} kernels"
    ));
    let start = Instant::now();
    let mut tally = Tally::default();
    let mut rejected = Vec::new();
    for index in 0..KERNELS {
        let kernel = grammar::kernel(seed, index);
        let attr = grammar::attribute(&kernel);
        let item = grammar::function(&kernel);
        let described = format!("kernel {index} (seed {seed}):\n#[tile_kernel({attr})]\n{item}");
        let outcome = generator::expand_checked(&attr, &item);
        match &outcome {
            Outcome::Rejected(errors) => rejected.push(format!("{errors:#?}\n{described}")),
            Outcome::Unlexable => rejected.push(format!("does not lex\n{described}")),
            _ => {}
        }
        tally.record(outcome, &described);
    }
    tally.report("generated_valid", seed, KERNELS, start.elapsed());
    assert!(
        rejected.is_empty(),
        "{} valid kernel(s) rejected; the first:\n{}",
        rejected.len(),
        rejected[0]
    );
}
