//! Support of the generated tests: the run's seed, one checked expansion (no panic,
//! no internal error, every error on the case's own tokens), and the tally of a run with the
//! known bug classes that are counted apart (never as passing) until their fixes land.

use crate::expand::tile_kernel;
use crate::frontend::analyze;
use proc_macro2::{Span, TokenStream, TokenTree};
use std::cell::RefCell;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;
use std::time::Duration;

/// Environment variable: the seed of a run to replay (decimal). Unset, the clock picks one.
pub const SEED_ENV: &str = "TESSERA_GEN_SEED";

/// The seed of this run: `TESSERA_GEN_SEED`, else the clock's nanoseconds.
pub fn seed() -> u64 {
    match std::env::var(SEED_ENV) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_ENV}={text:?} is not a decimal u64")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    }
}

/// Writes a line to the real stderr, past the test harness's capture.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// What one expansion did.
pub enum Outcome {
    /// The text did not lex (a mutation made an unbalanced or invalid token): not a case.
    Unlexable,
    /// Rejected with these errors, each on the case's own tokens.
    Rejected(Vec<String>),
    /// Accepted by the checker and expanded to a module.
    Expanded,
    /// Something the macro must never do.
    Failure(Failure),
}

pub enum Failure {
    Panic(String),
    /// An "internal error"; `accepted` says whether the checker had accepted the kernel.
    InternalError {
        message: String,
        accepted: bool,
    },
    /// An error whose span is not inside the case's tokens (`0..0` is the call site).
    SpanOutside {
        message: String,
        span: (u32, u32),
    },
}

impl Failure {
    pub fn describe(&self) -> String {
        match self {
            Failure::Panic(m) => format!("panic: {m}"),
            Failure::InternalError { message, accepted } => {
                format!("internal error (checker accepted: {accepted}): {message}")
            }
            Failure::SpanOutside { message, span } => {
                format!("error outside the kernel's tokens (bytes {span:?}): {message}")
            }
        }
    }
}

/// A bug class found by the generators, counted apart until its fix lands: a case whose failure
/// description contains every string of `signature` is excluded (reported, never counted as
/// passing).
pub struct KnownBug {
    pub name: &'static str,
    pub signature: &'static [&'static str],
}

/// Known bug classes, counted apart. Remove an entry once its fix lands.
pub const KNOWN_BUGS: &[KnownBug] = &[];

thread_local! {
    /// The message of the last panic on this thread while `CAPTURING` (else the default hook).
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
    static CAPTURING: RefCell<bool> = const { RefCell::new(false) };
}

/// Installs (once) a panic hook that records the message of panics on threads that expand a
/// generated case, and leaves every other panic to the previous hook.
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(|c| *c.borrow()) {
                let location = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let payload = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(format!("{payload}{location}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// `f()`, or the message it panicked with.
pub fn without_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    CAPTURING.with(|c| *c.borrow_mut() = true);
    let result = catch_unwind(AssertUnwindSafe(f));
    CAPTURING.with(|c| *c.borrow_mut() = false);
    result.map_err(|_| {
        PANIC_MESSAGE
            .with(|m| m.borrow_mut().take())
            .unwrap_or_default()
    })
}

/// The global byte range of a span in proc_macro2's source map (its `Debug` with the
/// `span-locations` feature is `bytes(lo..hi)`; each parsed string has its own range there).
fn global_range(span: Span) -> (u32, u32) {
    let text = format!("{span:?}");
    let inner = text
        .strip_prefix("bytes(")
        .and_then(|t| t.strip_suffix(')'))
        .expect("span-locations spans print as bytes(lo..hi)");
    let (lo, hi) = inner.split_once("..").expect("a range");
    (
        lo.parse().expect("a byte offset"),
        hi.parse().expect("a byte offset"),
    )
}

/// The smallest range holding every token's span of `ts`.
fn extent(ts: &TokenStream) -> Option<(u32, u32)> {
    let mut out: Option<(u32, u32)> = None;
    let mut widen = |(lo, hi): (u32, u32)| {
        out = Some(match out {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    };
    for tree in ts.clone() {
        widen(global_range(tree.span()));
        if let TokenTree::Group(g) = &tree {
            if let Some(inner) = extent(&g.stream()) {
                widen(inner);
            }
        }
    }
    out
}

/// Every `compile_error!{"message"}` of an expansion with the range from the start of its path
/// to the end of its argument group (the spans `syn::Error::to_compile_error` gives it).
fn compile_errors(ts: &TokenStream) -> Vec<(String, (u32, u32))> {
    let list: Vec<TokenTree> = ts.clone().into_iter().collect();
    let mut out = Vec::new();
    for (i, tree) in list.iter().enumerate() {
        match tree {
            TokenTree::Ident(id) if id == "compile_error" => {
                if let Some(TokenTree::Group(g)) = list.get(i + 2) {
                    let message = g.stream().to_string();
                    let (lo, _) = global_range(id.span());
                    let (_, hi) = global_range(g.span());
                    out.push((message, (lo, hi)));
                }
            }
            TokenTree::Group(g) => out.extend(compile_errors(&g.stream())),
            _ => {}
        }
    }
    out
}

/// Expands `#[tile_kernel(attr)] item` in-process and checks the expansion.
pub fn expand_checked(attr: &str, item: &str) -> Outcome {
    let (Ok(attr), Ok(item)) = (attr.parse::<TokenStream>(), item.parse::<TokenStream>()) else {
        return Outcome::Unlexable;
    };
    let inside: Vec<(u32, u32)> = [extent(&attr), extent(&item)]
        .into_iter()
        .flatten()
        .collect();
    // rustc hands an attribute macro only what its parser took as an item: for anything else
    // (a mutation that cut a body or a signature) only the absence of panics and internal
    // errors is checked, not where the errors are.
    let is_item = syn::parse2::<syn::Item>(item.clone()).is_ok();
    let output = match without_panic(|| tile_kernel(attr.clone(), item.clone())) {
        Ok(output) => output,
        Err(message) => return Outcome::Failure(Failure::Panic(message)),
    };
    let errors = compile_errors(&output);
    if errors.is_empty() {
        let text = output.to_string();
        if text.contains("internal error") {
            return Outcome::Failure(Failure::InternalError {
                message: "the expanded module mentions an internal error".to_string(),
                accepted: true,
            });
        }
        return Outcome::Expanded;
    }
    for (message, span) in &errors {
        if message.contains("internal error") {
            let accepted =
                without_panic(|| analyze(attr.clone(), item.clone()).is_ok()).unwrap_or(false);
            return Outcome::Failure(Failure::InternalError {
                message: message.clone(),
                accepted,
            });
        }
        let within = !is_item
            || inside
                .iter()
                .any(|&(lo, hi)| lo <= span.0 && span.1 <= hi && span.0 < span.1);
        if !within {
            return Outcome::Failure(Failure::SpanOutside {
                message: message.clone(),
                span: *span,
            });
        }
    }
    Outcome::Rejected(errors.into_iter().map(|(message, _)| message).collect())
}

/// The class of a failure: its description with numbers blanked, so the same message at other
/// places (or in other specialisations) counts once.
fn class_of(description: &str) -> String {
    let mut class = String::new();
    for c in description.chars() {
        if !c.is_ascii_digit() {
            class.push(c);
        } else if !class.ends_with('#') {
            class.push('#');
        }
    }
    class
}

/// Cases of one class: how many, and the first in full.
struct Class {
    name: String,
    count: usize,
    first: String,
}

fn count_in(classes: &mut Vec<Class>, name: String, described: &str) {
    match classes.iter_mut().find(|c| c.name == name) {
        Some(class) => class.count += 1,
        None => classes.push(Class {
            name,
            count: 1,
            first: described.to_string(),
        }),
    }
}

/// Counts of a run: cases by outcome, excluded ones by known bug, failures by class.
#[derive(Default)]
pub struct Tally {
    unlexable: usize,
    rejected: usize,
    expanded: usize,
    excluded: Vec<Class>,
    failures: Vec<Class>,
}

impl Tally {
    pub fn record(&mut self, outcome: Outcome, described: &str) {
        match outcome {
            Outcome::Unlexable => self.unlexable += 1,
            Outcome::Rejected(_) => self.rejected += 1,
            Outcome::Expanded => self.expanded += 1,
            Outcome::Failure(failure) => {
                let what = failure.describe();
                match KNOWN_BUGS
                    .iter()
                    .find(|b| b.signature.iter().all(|s| what.contains(s)))
                {
                    Some(bug) => count_in(&mut self.excluded, bug.name.to_string(), described),
                    None => count_in(&mut self.failures, class_of(&what), described),
                }
            }
        }
    }

    /// Cases that neither failed nor were excluded.
    pub fn passed(&self) -> usize {
        self.rejected + self.expanded
    }

    /// Prints the counts and time; fails the test with the first case of each failure class
    /// and the run's `seed`.
    pub fn report(&self, test: &str, seed: u64, cases: usize, elapsed: Duration) {
        let build = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        let total = |classes: &[Class]| classes.iter().map(|c| c.count).sum::<usize>();
        say(&format!(
            "{test}: {cases} cases in {:.1} s ({build} build): {} passed ({} expanded, {} \
             rejected with clean errors), {} not lexable (not counted), {} \
             excluded as known bugs (not counted as passing), {} failed",
            elapsed.as_secs_f64(),
            self.passed(),
            self.expanded,
            self.rejected,
            self.unlexable,
            total(&self.excluded),
            total(&self.failures),
        ));
        for class in &self.excluded {
            say(&format!(
                "{test}: excluded {} case(s) of the known bug {}",
                class.count, class.name
            ));
        }
        let failures: Vec<String> = self
            .failures
            .iter()
            .map(|c| format!("{} case(s): {}\n{}", c.count, c.name, c.first))
            .collect();
        assert!(
            failures.is_empty(),
            "{test}: {} failing case(s) in {} class(es) ({SEED_ENV}={seed} replays them); the \
             first of each:\n\n{}",
            total(&self.failures),
            failures.len(),
            failures.join("\n\n")
        );
    }
}
