//! Collectives of an AMD wave (64 threads: warps `2w` and `2w + 1`): `v_mfma` (`emulator/mfma.rs`)
//! and `ds_bpermute` over the whole wave ([`wave_read`]).
//!
//! The 64 threads rendezvous, every one issuing the same operation from the same site, each with
//! a payload of words; the last to arrive computes every thread's result, which each then takes.
//! Divergent operations are an error, a wave the block's threads do not fill is an error, and a
//! thread that never arrives leaves its wave blocked, which the CTA's deadlock check reports
//! naming the wave and the site.

use std::panic::Location;
use std::sync::Arc;

use super::cta::{with_thread, Cta, ThreadCtx};
use super::error::EmulatorError;
use super::mfma::{self, MfmaInstr};

/// Threads of a wave.
pub(crate) const WAVE_THREADS: u32 = 64;

/// Words of a thread's payload (an `mfma`'s: 2 + 2 operand words, up to 16 accumulator words).
const PAYLOAD_WORDS: usize = 20;

/// Words of a thread's result (an `mfma`'s accumulator).
const RESULT_WORDS: usize = 16;

/// What a wave's threads rendezvous at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaveOp {
    /// `v_mfma`: payload `a` (2 words), `b` (2), `c`; result `d`.
    Mfma(MfmaInstr),
    /// `ds_bpermute_b32` over the wave: payload `[value, source lane]`; result: the source
    /// lane's value (lane `source mod 64`, as the instruction takes bits 2..8 of its address).
    Bpermute,
}

impl WaveOp {
    /// The ISA name on the emulator's messages.
    fn name(self) -> &'static str {
        match self {
            WaveOp::Mfma(instr) => mfma::name(instr),
            WaveOp::Bpermute => "ds_bpermute_b32 (wave)",
        }
    }

    /// What kind of collective it is, on the emulator's messages.
    fn kind(self) -> &'static str {
        match self {
            WaveOp::Mfma(_) => "mfma",
            WaveOp::Bpermute => "wave shuffle",
        }
    }

    /// Every thread's result from every thread's payload.
    fn compute(self, payloads: &[[u32; PAYLOAD_WORDS]; 64]) -> [[u32; RESULT_WORDS]; 64] {
        match self {
            WaveOp::Mfma(instr) => mfma::compute(instr, payloads),
            WaveOp::Bpermute => core::array::from_fn(|l| {
                let mut d = [0; RESULT_WORDS];
                d[0] = payloads[(payloads[l][1] % WAVE_THREADS) as usize][0];
                d
            }),
        }
    }
}

/// An operation some threads of a wave have arrived at, with their payloads.
struct PendingWave {
    op: WaveOp,
    site: &'static Location<'static>,
    arrived: u64,
    payloads: Box<[[u32; PAYLOAD_WORDS]; 64]>,
}

/// The rendezvous of one wave.
#[derive(Default)]
pub(crate) struct WaveState {
    pending: Option<PendingWave>,
    /// Rendezvous completed so far.
    generation: u64,
    /// Every thread's result of the last completed rendezvous.
    results: Option<Arc<[[u32; RESULT_WORDS]; 64]>>,
}

/// `ds_bpermute_b32` over this thread's wave: `value` of wave lane `source` (`0..64`).
#[track_caller]
pub(crate) fn wave_read(source: u32, value: u32) -> u32 {
    let op = WaveOp::Bpermute;
    super::target::amd_instruction(op.name());
    let site = Location::caller();
    let mut payload = [0u32; PAYLOAD_WORDS];
    payload[0] = value;
    payload[1] = source;
    with_thread(|t| t.cta.wave_collective(t, op, payload, site))[0]
}

/// The waves stuck in a rendezvous, for the deadlock report.
pub(crate) fn describe_wave_waits(waves: &[WaveState]) -> Vec<String> {
    waves
        .iter()
        .enumerate()
        .filter_map(|(w, s)| {
            let p = s.pending.as_ref()?;
            let missing: Vec<String> = (0..64)
                .filter(|i| p.arrived & (1 << i) == 0)
                .take(8)
                .map(|i| (w as u32 * WAVE_THREADS + i).to_string())
                .collect();
            Some(format!(
                "wave {w} (threads {}..{}): {} threads wait in {} at {}:{}:{}; threads {}{} \
                 never arrived ({} is a wave collective)",
                w as u32 * WAVE_THREADS,
                (w as u32 + 1) * WAVE_THREADS,
                p.arrived.count_ones(),
                p.op.name(),
                p.site.file(),
                p.site.line(),
                p.site.column(),
                missing.join(", "),
                if 64 - p.arrived.count_ones() > 8 {
                    ", …"
                } else {
                    ""
                },
                p.op.kind(),
            ))
        })
        .collect()
}

impl Cta {
    /// The rendezvous of a wave's 64 threads at one operation: waits until every thread has
    /// issued the same one; the last to arrive computes all results.
    pub(crate) fn wave_collective(
        &self,
        ctx: &ThreadCtx<'_>,
        op: WaveOp,
        payload: [u32; PAYLOAD_WORDS],
        site: &'static Location<'static>,
    ) -> [u32; RESULT_WORDS] {
        let error = |message: String| EmulatorError::WarpCollective {
            thread: ctx.thread_ref(),
            op: op.name(),
            message,
        };
        let wave = ctx.linear / WAVE_THREADS;
        let index = ctx.linear % WAVE_THREADS;
        if (wave + 1) * WAVE_THREADS > self.threads {
            super::cta::raise(error(format!(
                "wave {wave} has {} of its 64 threads (the block has {}): a {} needs a whole \
                 wave, so a block of a kernel with one on AMD has an even number of warps",
                self.threads - wave * WAVE_THREADS,
                self.threads,
                op.kind()
            )));
        }
        let mut st = self.unwind_if_aborted(self.lock());
        self.mark_sync_used();
        let w = wave as usize;
        match &st.waves[w].pending {
            Some(p) if p.op != op || p.site != site => {
                let message = format!(
                    "wave {wave}: thread {} issues {} at {}:{} while {} threads of the wave wait \
                     in {} at {}:{} (every thread of a wave must execute the same {})",
                    ctx.linear,
                    op.name(),
                    site.file(),
                    site.line(),
                    p.arrived.count_ones(),
                    p.op.name(),
                    p.site.file(),
                    p.site.line(),
                    p.op.kind(),
                );
                self.fail(st, error(message));
            }
            Some(_) => {}
            None => {
                st.waves[w].pending = Some(PendingWave {
                    op,
                    site,
                    arrived: 0,
                    payloads: Box::new([[0; PAYLOAD_WORDS]; 64]),
                })
            }
        }
        let Some(pending) = st.waves[w].pending.as_mut() else {
            unreachable!("the pending operation was just set")
        };
        pending.arrived |= 1 << index;
        pending.payloads[index as usize] = payload;
        if pending.arrived == u64::MAX {
            let Some(pending) = st.waves[w].pending.take() else {
                unreachable!("the pending operation was just set")
            };
            let results = Arc::new(op.compute(&pending.payloads));
            let state = &mut st.waves[w];
            state.generation += 1;
            state.results = Some(results.clone());
            st.blocked -= WAVE_THREADS - 1;
            results[index as usize]
        } else {
            let generation = st.waves[w].generation;
            let (st, results) = self.block_until(st, |st| {
                let state = &st.waves[w];
                match &state.results {
                    Some(r) if state.generation != generation => Some(r.clone()),
                    _ => None,
                }
            });
            drop(st);
            results[index as usize]
        }
    }
}
