//! Autotuning: the run-time choice among a kernel's compiled specialisations, as Triton's
//! `@triton.autotune`.
//!
//! A kernel with `autotune(key = [m, n, k])` in its attribute gets a `launch_tuned` (see the
//! `tessera-macros` docs) that drives the kernel's [`Autotuner`]:
//!
//! * The first launch for a value of the key on a device times every candidate
//!   ([`TUNING_TIMING`]: warm-up launches, then timed launches with CUDA events after an L2
//!   flush, median) and launches the fastest; a candidate that cannot run (the driver's register
//!   or shared-memory limits, a failed launch) is skipped and listed in the [`Choice`].
//! * The winner is kept in memory per kernel (and element types), device (and loaded PTX
//!   target) and key value, and, when a cache file is set ([`CACHE_ENV`] or
//!   [`set_cache_file`]), in that file ([`CacheFile`]), so the next run skips tuning.
//! * On the emulator nothing is timed: the choice is always the **first candidate** (the
//!   candidates are the kept specialisations in the order of the attribute's lists, whatever the
//!   order of `configs`) — deterministic, and never cached.
//! * [`LOG_ENV`]`=1` (or [`set_log`]) prints every tuning's timings and every cache hit to stderr.
//! * [`set_time_on_emulator`]`(true)` makes the emulator tune as a GPU does, by host wall time
//!   (target [`EMULATOR_TIMED`]): a machine without a GPU then runs the tuning path itself —
//!   every candidate, the reset hook, the restoring of tensors updated in place — as tests do.
//!
//! Tuning runs the kernel many times on the caller's buffers. A kernel that only reads its
//! inputs and writes its outputs is unaffected; one that updates a buffer in place (reads what
//! it writes) must be launched with `launch_tuned_with` and a reset hook, which runs before each
//! candidate's timing and before the final launch, so the result the caller reads comes from
//! one launch of the winner on restored inputs (Triton's `reset_to_zero` / `restore_value`).

mod cache;
#[cfg(test)]
mod tests;

pub use cache::{CacheEntry, CacheError, CacheFile, CACHE_HEADER};

use super::{Device, LaunchError, LaunchReport, Module, TimingOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Environment variable: the path of the autotuning cache file (unset: memory only).
pub const CACHE_ENV: &str = "TESSERA_AUTOTUNE_CACHE";

/// Environment variable: `1` prints each tuning's timings and each cache hit to stderr.
pub const LOG_ENV: &str = "TESSERA_AUTOTUNE_LOG";

/// How each candidate is timed: 3 warm-up launches, then 10 launches each timed on its own with
/// CUDA events after a 256 MB L2 flush; the median decides.
pub const TUNING_TIMING: TimingOptions = TimingOptions {
    warmup: 3,
    repetitions: 10,
    l2_flush_bytes: 256_000_000,
};

/// The target name of tunings on the emulator under [`set_time_on_emulator`] (in the log, the
/// memory and the cache file).
pub const EMULATOR_TIMED: &str = "emulator (host wall time)";

/// Where a tuning happens: the emulator (never timed, unless [`set_time_on_emulator`]), or a GPU
/// named by its identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TuneTarget {
    /// The emulator.
    Emulator,
    /// `NVIDIA H100 80GB HBM3 (sm_90, PTX sm_90a)`: the device and the PTX target loaded, both
    /// of which change what is fastest.
    Gpu(String),
}

impl TuneTarget {
    /// The target of launches of `module` on `device`.
    pub fn of(device: &Device, module: &Module) -> TuneTarget {
        match device.compute_capability() {
            None => TuneTarget::Emulator,
            Some((major, minor)) => TuneTarget::Gpu(format!(
                "{} (sm_{major}{minor}, PTX {})",
                device.name(),
                module.target_name().unwrap_or("?")
            )),
        }
    }
}

/// Where a [`Choice`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChoiceSource {
    /// The emulator's fixed rule: the first candidate.
    Emulator,
    /// Tuned earlier in this process.
    Memory,
    /// Read from the cache file.
    File,
    /// Timed now.
    Timed,
}

/// One candidate's outcome in a tuning: its median time, or why it did not run.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateResult {
    /// The candidate's const values: `BM = 64, num_warps = 4`.
    pub candidate: &'static str,
    /// Its median time in milliseconds, or why it did not run.
    pub outcome: Result<f64, String>,
}

/// The candidate chosen for a launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Its index among the tuner's candidates.
    pub index: usize,
    /// Its const values: `BM = 64, num_warps = 4`.
    pub candidate: &'static str,
    /// How it was chosen.
    pub source: ChoiceSource,
    /// Every candidate's outcome when the choice was [`Timed`](ChoiceSource::Timed) now, else
    /// empty.
    pub results: Vec<CandidateResult>,
}

/// What a generated `launch_tuned` reports: the launch of the chosen candidate, and the choice.
#[derive(Debug)]
pub struct TunedLaunch {
    /// The launch of the chosen candidate.
    pub report: LaunchReport,
    /// The choice.
    pub choice: Choice,
}

/// Where the tuner keeps its choices beyond memory, and whether it prints: the process-wide
/// [`settings`], or given explicitly to [`Autotuner::choose_in`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TuneSettings {
    /// The cache file, if any.
    pub cache_file: Option<PathBuf>,
    /// Print timings and cache hits to stderr.
    pub log: bool,
    /// Tune on the emulator too, by host wall time ([`set_time_on_emulator`]), instead of
    /// taking the first candidate.
    pub time_emulator: bool,
}

/// `None`: not set by the API, the environment decides.
static CACHE_FILE: Mutex<Option<Option<PathBuf>>> = Mutex::new(None);
static LOG: Mutex<Option<bool>> = Mutex::new(None);
static TIME_EMULATOR: Mutex<bool> = Mutex::new(false);
/// Cache files already warned about (one warning per file and process).
static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section leaves the value whole, so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets the cache file for every tuner of the process (`None`: memory only), overriding
/// [`CACHE_ENV`].
pub fn set_cache_file(path: Option<PathBuf>) {
    *lock(&CACHE_FILE) = Some(path);
}

/// Turns the tuning log on or off for the process, overriding [`LOG_ENV`].
pub fn set_log(on: bool) {
    *lock(&LOG) = Some(on);
}

/// Makes every tuner of the process tune on the emulator as on a GPU, by host wall time
/// (`false`, the default: the emulator takes the first candidate). For running the tuning path
/// where there is no GPU; the choice then depends on the host's timings.
pub fn set_time_on_emulator(on: bool) {
    *lock(&TIME_EMULATOR) = on;
}

/// The process-wide settings: [`set_cache_file`] / [`set_log`] when called, else
/// [`CACHE_ENV`] (a non-empty path) and [`LOG_ENV`] (`1`, `true`, `yes` or `on`).
pub fn settings() -> TuneSettings {
    let cache_file = lock(&CACHE_FILE).clone().unwrap_or_else(|| {
        std::env::var_os(CACHE_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    let log = lock(&LOG).unwrap_or_else(|| {
        std::env::var(LOG_ENV).is_ok_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    });
    TuneSettings {
        cache_file,
        log,
        time_emulator: *lock(&TIME_EMULATOR),
    }
}

/// Prints a warning about cache file `path` once per process.
fn warn_once(path: &Path, message: String) {
    let mut warned = lock(&WARNED);
    if !warned.iter().any(|p| p == path) {
        warned.push(path.to_path_buf());
        eprintln!("tessera autotune: warning: {message}");
    }
}

/// One kernel's tuner (per assignment of element types): its candidates and the choices made.
/// The generated `launch_tuned` holds one in a `static` (`TUNER`).
pub struct Autotuner {
    kernel: &'static str,
    fingerprint: u64,
    key_names: &'static [&'static str],
    candidates: &'static [&'static str],
    /// (target, key) → the chosen candidate's index.
    chosen: Mutex<BTreeMap<(String, String), usize>>,
}

impl std::fmt::Debug for Autotuner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Autotuner")
            .field("kernel", &self.kernel)
            .field("key", &self.key_names)
            .field("candidates", &self.candidates)
            .finish()
    }
}

impl Autotuner {
    /// The tuner of `kernel` (name and element types, `k[T = f16]`) with the macro's
    /// `fingerprint` of its source and candidates, the key's parameter names and the candidates'
    /// descriptions (`BM = 64, num_warps = 4`), in the order the emulator's rule reads them.
    pub const fn new(
        kernel: &'static str,
        fingerprint: u64,
        key_names: &'static [&'static str],
        candidates: &'static [&'static str],
    ) -> Autotuner {
        Autotuner {
            kernel,
            fingerprint,
            key_names,
            candidates,
            chosen: Mutex::new(BTreeMap::new()),
        }
    }

    /// The kernel (and element types) this tuner chooses for.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    /// The candidates, in order.
    pub fn candidates(&self) -> &'static [&'static str] {
        self.candidates
    }

    /// `m=4096 n=4096 k=4096` for the key's values (given in the key's order).
    pub fn key_text(&self, key: &[String]) -> String {
        let pairs: Vec<String> = self
            .key_names
            .iter()
            .zip(key)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        pairs.join(" ")
    }

    /// Forgets the choices made in this process (the cache file is untouched).
    pub fn forget(&self) {
        lock(&self.chosen).clear();
    }

    /// The choice for launches of `module` on `device` with key values `key`, with the
    /// process-wide [`settings`]; `measure(i)` times candidate `i` (its median in ms) when the
    /// choice is not known yet.
    pub fn choose(
        &self,
        device: &Device,
        module: &Module,
        key: &[String],
        measure: impl FnMut(usize) -> Result<f64, LaunchError>,
    ) -> Result<Choice, LaunchError> {
        self.choose_in(&TuneTarget::of(device, module), key, &settings(), measure)
    }

    /// [`choose`](Self::choose) for an explicit target and settings: the emulator takes the
    /// first candidate (unless `settings.time_emulator`: then it is the target
    /// [`EMULATOR_TIMED`]); a GPU takes the choice in memory, else in the cache file, else times
    /// every candidate, keeps the fastest that ran, remembers it and writes it to the file.
    pub fn choose_in(
        &self,
        target: &TuneTarget,
        key: &[String],
        settings: &TuneSettings,
        mut measure: impl FnMut(usize) -> Result<f64, LaunchError>,
    ) -> Result<Choice, LaunchError> {
        let choice = |index: usize, source, results| Choice {
            index,
            candidate: self.candidates[index],
            source,
            results,
        };
        if self.candidates.is_empty() {
            return Err(LaunchError::InvalidConfig {
                kernel: self.kernel.to_string(),
                reason: "autotune: the tuner has no candidate".to_string(),
            });
        }
        let device = match target {
            TuneTarget::Gpu(device) => device.as_str(),
            TuneTarget::Emulator if settings.time_emulator => EMULATOR_TIMED,
            TuneTarget::Emulator => return Ok(choice(0, ChoiceSource::Emulator, Vec::new())),
        };
        let key_text = self.key_text(key);
        let slot = (device.to_string(), key_text.clone());
        if let Some(&index) = lock(&self.chosen).get(&slot) {
            return Ok(choice(index, ChoiceSource::Memory, Vec::new()));
        }
        if let Some(path) = &settings.cache_file {
            if let Some(index) = self.cached_in_file(path, device, &key_text) {
                lock(&self.chosen).insert(slot, index);
                if settings.log {
                    eprintln!(
                        "tessera autotune: {} on {device}, {key_text}: {} (from {})",
                        self.kernel,
                        self.candidates[index],
                        path.display()
                    );
                }
                return Ok(choice(index, ChoiceSource::File, Vec::new()));
            }
        }
        let results: Vec<CandidateResult> = (0..self.candidates.len())
            .map(|i| CandidateResult {
                candidate: self.candidates[i],
                outcome: measure(i).map_err(|e| e.to_string()),
            })
            .collect();
        let best = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|ms| (i, *ms)))
            .fold(None, |best: Option<(usize, f64)>, (i, ms)| match best {
                Some((_, b)) if b <= ms => best,
                _ => Some((i, ms)),
            });
        if settings.log {
            eprintln!("tessera autotune: {} on {device}, {key_text}:", self.kernel);
            for (i, r) in results.iter().enumerate() {
                let mark = if best.is_some_and(|(b, _)| b == i) {
                    "  <- chosen"
                } else {
                    ""
                };
                match &r.outcome {
                    Ok(ms) => eprintln!("  {}: {ms:.4} ms{mark}", r.candidate),
                    Err(e) => eprintln!("  {}: skipped: {e}", r.candidate),
                }
            }
        }
        let Some((index, median_ms)) = best else {
            let failures: Vec<String> = results
                .iter()
                .map(|r| {
                    format!(
                        "[{}] {}",
                        r.candidate,
                        r.outcome.as_ref().err().map_or("", |e| e)
                    )
                })
                .collect();
            return Err(LaunchError::InvalidConfig {
                kernel: self.kernel.to_string(),
                reason: format!(
                    "autotune ({key_text}): no candidate ran: {}",
                    failures.join("; ")
                ),
            });
        };
        lock(&self.chosen).insert(slot, index);
        if let Some(path) = &settings.cache_file {
            self.save(path, device, &key_text, index, median_ms);
        }
        Ok(choice(index, ChoiceSource::Timed, results))
    }

    /// The candidate the cache file holds for this kernel, device and key; a file that cannot be
    /// read is warned about and ignored.
    fn cached_in_file(&self, path: &Path, device: &str, key: &str) -> Option<usize> {
        match CacheFile::read(path) {
            Ok(file) => {
                let entry = file.find(self.kernel, self.fingerprint, device, key)?;
                self.candidates.iter().position(|c| *c == entry.winner)
            }
            Err(err) => {
                warn_once(
                    path,
                    format!("the autotuning cache is ignored and not written: {err}"),
                );
                None
            }
        }
    }

    /// Adds the choice to the cache file (re-read first, so choices other processes wrote are
    /// kept); a file that cannot be read or written is warned about and left alone.
    fn save(&self, path: &Path, device: &str, key: &str, index: usize, median_ms: f64) {
        let result = CacheFile::read(path).and_then(|mut file| {
            file.insert(CacheEntry {
                kernel: self.kernel.to_string(),
                fingerprint: self.fingerprint,
                device: device.to_string(),
                key: key.to_string(),
                winner: self.candidates[index].to_string(),
                median_ms,
            });
            file.write(path)
        });
        if let Err(err) = result {
            warn_once(
                path,
                format!("the autotuning cache is ignored and not written: {err}"),
            );
        }
    }
}
