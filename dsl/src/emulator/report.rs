//! [`EmulatorReport`] and the shared-memory bank model.

use std::collections::HashMap;
use std::fmt;
use std::panic::Location;

/// Number of shared-memory banks.
pub const BANKS: u32 = 32;
/// Width of one bank word in bytes.
pub const BANK_WORD_BYTES: u32 = 4;

/// Which kind of instruction touched shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SharedAccessKind {
    /// `ld.shared.v{1,2,4}.b32`
    Load,
    /// `st.shared.v{1,2,4}.b32`
    Store,
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`
    Ldmatrix,
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`
    Stmatrix,
    /// The shared-memory side of `cp.async` (a store of 4, 8 or 16 bytes per lane).
    CpAsync,
    /// The shared-memory side of a TMA copy (`cp.async.bulk.tensor`: one box from one thread).
    Tma,
}

/// Wavefront statistics of shared-memory accesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WavefrontStats {
    /// Warp-wide accesses (one per warp per executed instruction instance).
    pub accesses: u64,
    /// Wavefronts under the bank model (see [`wavefronts`]).
    pub wavefronts: u64,
    /// The fewest wavefronts that could move the same distinct words: `ceil(words / 32)`.
    pub ideal_wavefronts: u64,
}

impl WavefrontStats {
    fn add(&mut self, other: WavefrontStats) {
        self.accesses += other.accesses;
        self.wavefronts += other.wavefronts;
        self.ideal_wavefronts += other.ideal_wavefronts;
    }
}

/// Shared-memory statistics of one call site of the runtime layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSiteReport {
    /// Source file of the runtime-layer call (`#[track_caller]` location).
    pub file: &'static str,
    /// Line of the call.
    pub line: u32,
    /// Column of the call.
    pub column: u32,
    /// Instruction kind.
    pub kind: SharedAccessKind,
    /// Totals for this site.
    pub stats: WavefrontStats,
}

/// What an emulated launch measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmulatorReport {
    /// Blocks run.
    pub blocks: u64,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Warp-wide shared-memory accesses (all kinds).
    pub shared_accesses: u64,
    /// Shared-memory wavefronts (all kinds), under the bank model of [`wavefronts`].
    pub shared_wavefronts: u64,
    /// The conflict-free lower bound of `shared_wavefronts`.
    pub shared_ideal_wavefronts: u64,
    /// Per call site breakdown, sorted by file, line, column and kind.
    pub shared_sites: Vec<SharedSiteReport>,
}

impl EmulatorReport {
    /// Adds another report (e.g. the next launch of the same kernel) into this one.
    pub fn merge(&mut self, other: &EmulatorReport) {
        self.blocks += other.blocks;
        self.threads_per_block = self.threads_per_block.max(other.threads_per_block);
        self.shared_accesses += other.shared_accesses;
        self.shared_wavefronts += other.shared_wavefronts;
        self.shared_ideal_wavefronts += other.shared_ideal_wavefronts;
        for site in &other.shared_sites {
            match self.shared_sites.iter_mut().find(|s| {
                (s.file, s.line, s.column, s.kind) == (site.file, site.line, site.column, site.kind)
            }) {
                Some(s) => s.stats.add(site.stats),
                None => self.shared_sites.push(site.clone()),
            }
        }
        self.shared_sites
            .sort_by_key(|s| (s.file, s.line, s.column, s.kind));
    }

    /// Shared-memory wavefronts divided by the ideal count (1.0 = conflict free; 0 accesses → 1.0).
    pub fn bank_conflict_factor(&self) -> f64 {
        if self.shared_ideal_wavefronts == 0 {
            1.0
        } else {
            self.shared_wavefronts as f64 / self.shared_ideal_wavefronts as f64
        }
    }
}

impl fmt::Display for EmulatorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} blocks x {} threads; shared memory: {} accesses, {} wavefronts (ideal {})",
            self.blocks,
            self.threads_per_block,
            self.shared_accesses,
            self.shared_wavefronts,
            self.shared_ideal_wavefronts
        )?;
        for s in &self.shared_sites {
            writeln!(
                f,
                "  {}:{}:{} {:?}: {} accesses, {} wavefronts (ideal {})",
                s.file,
                s.line,
                s.column,
                s.kind,
                s.stats.accesses,
                s.stats.wavefronts,
                s.stats.ideal_wavefronts
            )?;
        }
        Ok(())
    }
}

/// Wavefronts of one warp-wide shared-memory access under the bank model: 32 banks of 4-byte
/// words; word `w` (byte address / 4) lives in bank `w % 32`; the access needs as many
/// wavefronts as the largest number of *distinct* words it touches in any one bank (lanes that
/// touch the same word share it: broadcast). Returns `(wavefronts, ideal)` where
/// `ideal = ceil(distinct words / 32)`. `words` may contain duplicates; it is sorted in place.
pub fn wavefronts(words: &mut Vec<u32>) -> (u64, u64) {
    words.sort_unstable();
    words.dedup();
    if words.is_empty() {
        return (0, 0);
    }
    let max = u64::from(tessera_layout::plan::bank::busiest_bank(
        words.iter().copied(),
    ));
    let ideal = (words.len() as u64).div_ceil(BANKS as u64);
    (max, ideal)
}

/// Per-site accumulator keyed by call-site identity (pointer of the `Location`) and kind.
#[derive(Default)]
pub(crate) struct SiteTable {
    sites: HashMap<(usize, SharedAccessKind), (&'static Location<'static>, WavefrontStats)>,
}

impl SiteTable {
    /// Records one warp-wide access of `words` at `site`.
    pub(crate) fn record(
        &mut self,
        site: &'static Location<'static>,
        kind: SharedAccessKind,
        words: &mut Vec<u32>,
    ) {
        let (wavefronts, ideal) = wavefronts(words);
        self.add(site, kind, wavefronts, ideal);
    }

    /// Records one warp-wide access of `words` at `site` that took `counted` wavefronts (counted
    /// by the caller's bank model; the ideal is that of [`wavefronts`]).
    pub(crate) fn record_counted(
        &mut self,
        site: &'static Location<'static>,
        kind: SharedAccessKind,
        counted: u64,
        words: &mut Vec<u32>,
    ) {
        let (_, ideal) = wavefronts(words);
        self.add(site, kind, counted, ideal);
    }

    fn add(
        &mut self,
        site: &'static Location<'static>,
        kind: SharedAccessKind,
        wavefronts: u64,
        ideal: u64,
    ) {
        let entry = self
            .sites
            .entry((site as *const Location as usize, kind))
            .or_insert((site, WavefrontStats::default()));
        entry.1.add(WavefrontStats {
            accesses: 1,
            wavefronts,
            ideal_wavefronts: ideal,
        });
    }

    /// Moves everything into `report` (merging sites with equal file, line, column and kind).
    pub(crate) fn drain_into(&mut self, report: &mut EmulatorReport) {
        let mut partial = EmulatorReport::default();
        for ((_, kind), (loc, stats)) in self.sites.drain() {
            partial.shared_accesses += stats.accesses;
            partial.shared_wavefronts += stats.wavefronts;
            partial.shared_ideal_wavefronts += stats.ideal_wavefronts;
            partial.shared_sites.push(SharedSiteReport {
                file: loc.file(),
                line: loc.line(),
                column: loc.column(),
                kind,
                stats,
            });
        }
        report.merge(&partial);
    }
}
