//! The autotuning cache file: a versioned line format, one tuned choice per line.
//!
//! ```text
//! tessera-autotune-cache 1
//! KERNEL<TAB>FINGERPRINT<TAB>DEVICE<TAB>KEY<TAB>WINNER<TAB>MEDIAN_MS
//! tuned_matmul[T = f16]<TAB>8c1f0a9e3b2d4c57<TAB>NVIDIA H100 80GB HBM3 (sm_90, PTX sm_90a)<TAB>m=4096 n=4096 k=4096<TAB>BM = 128, BN = 128, BK = 64, GROUP = 8, num_warps = 8<TAB>0.2213
//! ```
//!
//! `FINGERPRINT` (16 hex digits) is the macro's hash of the kernel's source and its candidates:
//! an edited kernel does not reuse old choices. `WINNER` names the chosen candidate by its const
//! values; a line whose winner is no longer a candidate is ignored. Fields hold no tab or line
//! break (the writer replaces them with spaces).

use std::fmt;
use std::path::{Path, PathBuf};

/// The first line of a cache file of this version.
pub const CACHE_HEADER: &str = "tessera-autotune-cache 1";

/// One tuned choice.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheEntry {
    /// The kernel and its element types: `tuned_matmul[T = f16]`.
    pub kernel: String,
    /// The macro's hash of the kernel's source and candidates.
    pub fingerprint: u64,
    /// The device and the loaded PTX target (see `TuneTarget`).
    pub device: String,
    /// The key's values: `m=4096 n=4096 k=4096` (empty for `key = []`).
    pub key: String,
    /// The winner's const values: `BM = 128, num_warps = 8`.
    pub winner: String,
    /// The winner's median time when it was tuned.
    pub median_ms: f64,
}

impl CacheEntry {
    /// Whether `self` and `other` are the choice for the same kernel, device and key.
    fn same_slot(&self, other: &CacheEntry) -> bool {
        self.kernel == other.kernel
            && self.fingerprint == other.fingerprint
            && self.device == other.device
            && self.key == other.key
    }
}

/// Why a cache file cannot be used.
#[derive(Debug)]
pub enum CacheError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// The first line is not a cache header: not a Tessera autotuning cache.
    NotACache {
        /// The file.
        path: PathBuf,
    },
    /// A cache of another format version.
    Version {
        /// The file.
        path: PathBuf,
        /// Its first line.
        header: String,
    },
    /// A line does not have the format.
    Line {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            CacheError::NotACache { path } => write!(
                f,
                "{} is not a Tessera autotuning cache (its first line is not `{CACHE_HEADER}`)",
                path.display()
            ),
            CacheError::Version { path, header } => write!(
                f,
                "{} is an autotuning cache of another version (`{header}`; this program reads \
                 `{CACHE_HEADER}`)",
                path.display()
            ),
            CacheError::Line { path, line, reason } => {
                write!(f, "{} line {line}: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for CacheError {}

/// The entries of a cache file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheFile {
    /// The entries, in file order.
    pub entries: Vec<CacheEntry>,
}

impl CacheFile {
    /// Reads `path`; a missing file is an empty cache.
    pub fn read(path: &Path) -> Result<CacheFile, CacheError> {
        match std::fs::read_to_string(path) {
            Ok(text) => CacheFile::parse(path, &text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(CacheFile::default()),
            Err(error) => Err(CacheError::Io {
                path: path.to_path_buf(),
                error,
            }),
        }
    }

    /// Parses the text of the file `path` (named in errors).
    pub fn parse(path: &Path, text: &str) -> Result<CacheFile, CacheError> {
        let mut lines = text.lines();
        match lines.next() {
            Some(CACHE_HEADER) => {}
            Some(header) if header.starts_with("tessera-autotune-cache ") => {
                return Err(CacheError::Version {
                    path: path.to_path_buf(),
                    header: header.to_string(),
                })
            }
            _ => {
                return Err(CacheError::NotACache {
                    path: path.to_path_buf(),
                })
            }
        }
        let mut entries = Vec::new();
        for (index, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: String| CacheError::Line {
                path: path.to_path_buf(),
                line: index + 2,
                reason,
            };
            let fields: Vec<&str> = line.split('\t').collect();
            let [kernel, fingerprint, device, key, winner, median] = fields[..] else {
                return Err(bad(format!(
                    "{} tab-separated fields, expected 6 (kernel, fingerprint, device, key, \
                     winner, median ms)",
                    fields.len()
                )));
            };
            let fingerprint = u64::from_str_radix(fingerprint, 16)
                .map_err(|_| bad(format!("fingerprint `{fingerprint}` is not 16 hex digits")))?;
            let median_ms = median
                .parse::<f64>()
                .ok()
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .ok_or_else(|| bad(format!("median `{median}` is not a time in milliseconds")))?;
            if kernel.is_empty() || winner.is_empty() {
                return Err(bad("an empty kernel or winner".to_string()));
            }
            entries.push(CacheEntry {
                kernel: kernel.to_string(),
                fingerprint,
                device: device.to_string(),
                key: key.to_string(),
                winner: winner.to_string(),
                median_ms,
            });
        }
        Ok(CacheFile { entries })
    }

    /// The file's text.
    pub fn render(&self) -> String {
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        let mut text = format!("{CACHE_HEADER}\n");
        for e in &self.entries {
            text.push_str(&format!(
                "{}\t{:016x}\t{}\t{}\t{}\t{}\n",
                clean(&e.kernel),
                e.fingerprint,
                clean(&e.device),
                clean(&e.key),
                clean(&e.winner),
                e.median_ms
            ));
        }
        text
    }

    /// The entry for `kernel`, `fingerprint`, `device` and `key`, if any.
    pub fn find(
        &self,
        kernel: &str,
        fingerprint: u64,
        device: &str,
        key: &str,
    ) -> Option<&CacheEntry> {
        self.entries.iter().find(|e| {
            e.kernel == kernel && e.fingerprint == fingerprint && e.device == device && e.key == key
        })
    }

    /// Adds `entry`, replacing the entry of the same kernel, device and key.
    pub fn insert(&mut self, entry: CacheEntry) {
        match self.entries.iter_mut().find(|e| e.same_slot(&entry)) {
            Some(old) => *old = entry,
            None => self.entries.push(entry),
        }
    }

    /// Writes the cache to `path` (through a temporary file beside it, renamed over it, so a
    /// reader never sees half a file).
    pub fn write(&self, path: &Path) -> Result<(), CacheError> {
        let io = |error| CacheError::Io {
            path: path.to_path_buf(),
            error,
        };
        let mut temporary = path.as_os_str().to_os_string();
        temporary.push(format!(".tmp{}", std::process::id()));
        let temporary = PathBuf::from(temporary);
        std::fs::write(&temporary, self.render()).map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
    }
}
