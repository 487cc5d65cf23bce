//! Which shared-memory words `cp.async` copies are writing, so that a read before the copy is
//! waited for (`cp.async.wait_group`) and made visible (`bar.sync`) is an error, never a silently
//! right (or stale) answer.
//!
//! Per 4-byte word of a CTA's shared memory: no copy; *in flight* (issued by thread `t`, not yet
//! waited for: reading it is an error for every thread); *landed* (thread `t` waited for it:
//! `t` may read it, other threads only after a barrier completes, which makes every landed word
//! visible). Words are tracked with atomics beside the shared words themselves.

use super::cta::Cta;
use std::sync::atomic::Ordering;

/// Tag of a landed word (the low bits hold `1 + issuing thread`).
const LANDED: u32 = 1 << 31;

impl Cta {
    /// Thread `issuer` issued a copy into `[dst_word, dst_word + words)`.
    pub(crate) fn cp_async_issued(&self, issuer: u32, dst_word: usize, words: usize) {
        for w in &self.async_words[dst_word..dst_word + words] {
            w.store(1 + issuer, Ordering::Relaxed);
        }
    }

    /// Thread `issuer`'s copy into `[dst_word, dst_word + words)` completed (its wait).
    pub(crate) fn cp_async_landed(&self, issuer: u32, dst_word: usize, words: usize) {
        for w in &self.async_words[dst_word..dst_word + words] {
            w.store(LANDED | (1 + issuer), Ordering::Relaxed);
        }
        self.async_landed.store(true, Ordering::Relaxed);
    }

    /// A barrier completed: every landed copy is visible to every thread.
    pub(crate) fn publish_landed_copies(&self) {
        if !self.async_landed.swap(false, Ordering::Relaxed) {
            return;
        }
        for w in self.async_words.iter() {
            if w.load(Ordering::Relaxed) & LANDED != 0 {
                w.store(0, Ordering::Relaxed);
            }
        }
    }

    /// A new block: no copies.
    pub(crate) fn reset_async_copies(&self) {
        for w in self.async_words.iter() {
            w.store(0, Ordering::Relaxed);
        }
        self.async_landed.store(false, Ordering::Relaxed);
    }

    /// Whether thread `reader` may read `[word, word + words)`: `Err` says which copy is not
    /// waited for or not yet made visible.
    pub(crate) fn check_async_read(
        &self,
        reader: u32,
        word: usize,
        words: usize,
    ) -> Result<(), String> {
        for (k, w) in self.async_words[word..word + words].iter().enumerate() {
            let state = w.load(Ordering::Relaxed);
            if state == 0 {
                continue;
            }
            let issuer = (state & !LANDED) - 1;
            let offset = 4 * (word + k);
            if state & LANDED == 0 {
                return Err(format!(
                    "reads shared byte offset {offset}, which a cp.async of thread {issuer} (linear \
                     id) is still writing: wait for its group (cp.async.wait_group) and bar.sync \
                     before reading"
                ));
            }
            if issuer != reader {
                return Err(format!(
                    "reads shared byte offset {offset}, copied by a cp.async of thread {issuer} \
                     (linear id) that thread waited for, but no bar.sync has made it visible to \
                     this thread"
                ));
            }
        }
        Ok(())
    }
}
