//! Which shared-memory words `wgmma`s in flight read, so that overwriting an operand before its
//! `wgmma` is retired is an error, never a silently right answer: the emulator reads a `wgmma`'s
//! operands when its warpgroup issues it, the GPU at any time until `wgmma.wait_group` retires it.
//!
//! Per 4-byte word: 0, or the issue number `n` of the last `wgmma` that read it (the threads of
//! every warpgroup issue the same sequence of `wgmma`s, so `n` names the same instruction in
//! each) and the set of warpgroups that read it at `n`. A thread of warpgroup `g` may write the
//! word when `g` is its only reader and the thread has retired `n` (its own `wgmma.wait_group`
//! returns only once the collective's reads are done); any other write needs a barrier first:
//! a completing barrier clears every word whose readers have each retired `n` (in correct code
//! a thread of each reader waited before arriving). Checked: `st.shared`, `stmatrix` and the
//! issue of `cp.async` (the copy may land at once); TMA copies are not checked. A write that
//! comes before another warpgroup's `wgmma` has read the word at all is an ordinary race with
//! that read, which this check does not see.

use std::sync::atomic::Ordering;

use super::cta::Cta;

/// Bits of a word's state holding the issue number; the warpgroup set is above them.
const ISSUE_BITS: u32 = 56;
const ISSUE_MASK: u64 = (1 << ISSUE_BITS) - 1;

/// The readers of a word: (warpgroup set, issue number), or `None` for no `wgmma` in flight.
fn decode(state: u64) -> Option<(u64, u64)> {
    (state != 0).then_some((state >> ISSUE_BITS, state & ISSUE_MASK))
}

impl Cta {
    /// Warpgroup `g`'s `wgmma` number `issue` reads `word`.
    pub(crate) fn wgmma_read(&self, g: u32, issue: u64, word: usize) {
        let cell = &self.wgmma_words[word];
        let readers = match decode(cell.load(Ordering::Relaxed)) {
            Some((set, n)) if n == issue => set | 1 << g,
            _ => 1 << g,
        };
        cell.store(readers << ISSUE_BITS | issue, Ordering::Relaxed);
        self.wgmma_reads_live.store(true, Ordering::Relaxed);
    }

    /// A thread of warpgroup `g` retired every `wgmma` up to `issue`.
    pub(crate) fn wgmma_retired(&self, g: u32, issue: u64) {
        if let Some(r) = self.wgmma_retired.get(g as usize) {
            r.fetch_max(issue, Ordering::Relaxed);
        }
    }

    /// The last `wgmma` some thread of warpgroup `g` has retired (0 for none).
    pub(crate) fn warpgroup_retired(&self, g: u32) -> u64 {
        self.wgmma_retired
            .get(g as usize)
            .map_or(0, |r| r.load(Ordering::Relaxed))
    }

    /// The warpgroups of reader set `set`.
    fn readers(&self, set: u64) -> impl Iterator<Item = u32> {
        (0..self.wgmma_retired.len() as u32).filter(move |g| set & 1 << g != 0)
    }

    /// Whether a thread of warpgroup `writer_group` that has retired its `wgmma`s up to
    /// `writer_retired` may write `[word, word + words)`: `Err` names the `wgmma` still reading.
    pub(crate) fn check_wgmma_write(
        &self,
        writer_group: u32,
        writer_retired: u64,
        word: usize,
        words: usize,
    ) -> Result<(), String> {
        if !self.wgmma_reads_live.load(Ordering::Relaxed) {
            return Ok(());
        }
        for (k, cell) in self.wgmma_words[word..word + words].iter().enumerate() {
            let Some((set, n)) = decode(cell.load(Ordering::Relaxed)) else {
                continue;
            };
            if set == 1 << writer_group && writer_retired >= n {
                cell.store(0, Ordering::Relaxed);
                continue;
            }
            let readers: Vec<String> = self.readers(set).map(|g| g.to_string()).collect();
            let fix = if set == 1 << writer_group {
                "retire it first (wgmma.wait_group)"
            } else {
                "retire it in the reading warpgroups (wgmma.wait_group) and bar.sync before the write"
            };
            return Err(format!(
                "writes shared byte offset {}, which wgmma #{n} of warpgroup {} may still be \
                 reading: {fix}",
                4 * (word + k),
                readers.join(" and ")
            ));
        }
        Ok(())
    }

    /// A barrier completed: words whose readers have all retired their `wgmma` are free.
    pub(crate) fn publish_retired_wgmma_reads(&self) {
        if !self.wgmma_reads_live.load(Ordering::Relaxed) {
            return;
        }
        let mut live = false;
        for cell in self.wgmma_words.iter() {
            let Some((set, n)) = decode(cell.load(Ordering::Relaxed)) else {
                continue;
            };
            let retired = self.readers(set).all(|g| self.warpgroup_retired(g) >= n);
            if retired {
                cell.store(0, Ordering::Relaxed);
            } else {
                live = true;
            }
        }
        self.wgmma_reads_live.store(live, Ordering::Relaxed);
    }

    /// A new block: no `wgmma` reads, nothing retired.
    pub(crate) fn reset_wgmma_reads(&self) {
        for cell in self.wgmma_words.iter() {
            cell.store(0, Ordering::Relaxed);
        }
        for r in self.wgmma_retired.iter() {
            r.store(0, Ordering::Relaxed);
        }
        self.wgmma_reads_live.store(false, Ordering::Relaxed);
    }
}
