//! Warp collectives: the rendezvous of a warp's lanes (the last arriving lane computes every
//! lane's result under the CTA lock) and the results of `shfl`, `ldmatrix`/`stmatrix` and `mma`,
//! from the fragment layouts of the PTX ISA.

use std::panic::Location;
use std::sync::atomic::Ordering;

use super::collective::{Collective, MmaKind, PendingCollective, PAYLOAD_WORDS};
use super::cta::{raise, shared_word_index, Cta, SyncState, ThreadCtx};
use super::error::{EmulatorError, Site};
use super::report::SharedAccessKind;
use crate::device::float::canonicalize_nan_f32;
use crate::device::shfl::shfl_source;
use crate::dtype::{bf16, f16};

impl Cta {
    /// A warp-collective operation: waits until every lane of `mask` has executed the same
    /// operation, then computes all lanes' results at once and returns this lane's.
    pub(crate) fn warp_collective(
        &self,
        ctx: &ThreadCtx<'_>,
        kind: Collective,
        mask: u32,
        payload: [u32; PAYLOAD_WORDS],
        site: &'static Location<'static>,
    ) -> [u32; 4] {
        // An error of this lane's collective.
        let lane_error = |message: String| EmulatorError::WarpCollective {
            thread: ctx.thread_ref(),
            op: kind.ptx(),
            message,
        };
        let lane = ctx.lane();
        let warp = ctx.warp();
        let bit = 1u32 << lane;
        if mask & bit == 0 {
            raise(lane_error(format!(
                "membermask {mask:#010x} does not contain the executing lane {lane} (at {}:{})",
                site.file(),
                site.line()
            )));
        }
        let lanes = self.warp_lanes(warp);
        if mask & !lanes != 0 {
            raise(lane_error(format!(
                "membermask {mask:#010x} names lanes that do not exist: warp {warp} has \
                     lanes {lanes:#010x} (the block has {} threads)",
                self.threads
            )));
        }
        let mut st = self.unwind_if_aborted(self.lock());
        self.mark_sync_used();
        let w = warp as usize;
        let index = match st.warps[w].pending.iter().position(|p| p.mask == mask) {
            Some(i) => {
                let other = st.warps[w].pending[i].kind;
                if other != kind {
                    let message = format!(
                        "lane {lane} executes {} while lanes {:#010x} of the same membermask \
                         {mask:#010x} execute {} (divergent warp-collective operations)",
                        kind.ptx(),
                        st.warps[w].pending[i].arrived,
                        other.ptx()
                    );
                    self.fail(st, lane_error(message));
                }
                i
            }
            None => {
                if let Some(p) = st.warps[w].pending.iter().find(|p| p.mask & bit != 0) {
                    let message = format!(
                        "lane {lane} executes {} with membermask {mask:#010x} while lanes \
                         {:#010x} wait for it in {} with membermask {:#010x}",
                        kind.ptx(),
                        p.arrived,
                        p.kind.ptx(),
                        p.mask
                    );
                    self.fail(st, lane_error(message));
                }
                st.warps[w].pending.push(PendingCollective {
                    kind,
                    mask,
                    arrived: 0,
                    site,
                    payloads: [[0; PAYLOAD_WORDS]; 32],
                });
                st.warps[w].pending.len() - 1
            }
        };
        let pending = &mut st.warps[w].pending[index];
        pending.arrived |= bit;
        pending.payloads[lane as usize] = payload;
        if pending.arrived == mask {
            let pending = st.warps[w].pending.swap_remove(index);
            match complete_collective(self, &mut st, warp, &pending) {
                Ok(results) => {
                    for l in 0..32 {
                        if l != lane && mask & (1 << l) != 0 {
                            st.warps[w].mailbox[l as usize] = Some(results[l as usize]);
                        }
                    }
                    st.blocked -= mask.count_ones() - 1;
                    results[lane as usize]
                }
                Err(error) => self.fail(st, error),
            }
        } else {
            let (st, result) = self.block_until(st, |st| st.warps[w].mailbox[lane as usize].take());
            drop(st);
            result
        }
    }
}

/// Row and column of element `i` (0..8) of the m16n8k16 f16/bf16 A fragment of lane
/// (`g` = groupID, `t` = threadID_in_group); element `i` is half `i % 2` of register `i / 2`.
pub(crate) fn mma16816_a(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if i < 2 || (4..6).contains(&i) {
        g
    } else {
        g + 8
    };
    let col = t * 2 + (i & 1) + if i >= 4 { 8 } else { 0 };
    (row, col)
}

/// Row (k) and column (n) of element `i` (0..4) of the m16n8k16 f16/bf16 B fragment.
pub(crate) fn mma16816_b(g: usize, t: usize, i: usize) -> (usize, usize) {
    (t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 }, g)
}

/// Row and column of element `i` (0..4) of the m16n8 C/D fragment (f32 and s32).
pub(crate) fn mma_c(g: usize, t: usize, i: usize) -> (usize, usize) {
    (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1))
}

/// Row and column of element `i` (0..16) of the m16n8k32 s8 A fragment; element `i` is byte
/// `i % 4` of register `i / 4`.
pub(crate) fn mma16832_a(g: usize, t: usize, i: usize) -> (usize, usize) {
    let row = if i < 4 || (8..12).contains(&i) {
        g
    } else {
        g + 8
    };
    (row, t * 4 + (i & 3) + if i >= 8 { 16 } else { 0 })
}

/// Row (k) and column (n) of element `i` (0..8) of the m16n8k32 s8 B fragment.
pub(crate) fn mma16832_b(g: usize, t: usize, i: usize) -> (usize, usize) {
    (t * 4 + (i & 3) + if i >= 4 { 16 } else { 0 }, g)
}

fn half(reg: u32, i: usize) -> u16 {
    (reg >> (16 * (i % 2))) as u16
}

fn byte(reg: u32, i: usize) -> i8 {
    (reg >> (8 * (i % 4))) as u8 as i8
}

fn compute_mma(kind: MmaKind, payloads: &[[u32; PAYLOAD_WORDS]; 32]) -> [[u32; 4]; 32] {
    let mut out = [[0u32; 4]; 32];
    match kind {
        MmaKind::F16F32 | MmaKind::Bf16F32 => {
            let to_f32 = |bits: u16| -> f32 {
                match kind {
                    MmaKind::F16F32 => f16(bits).to_f32(),
                    _ => bf16(bits).to_f32(),
                }
            };
            let mut a = [[0f32; 16]; 16];
            let mut b = [[0f32; 8]; 16];
            let mut c = [[0f32; 8]; 16];
            for (lane, p) in payloads.iter().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for i in 0..8 {
                    let (r, k) = mma16816_a(g, t, i);
                    a[r][k] = to_f32(half(p[i / 2], i));
                }
                for i in 0..4 {
                    let (k, n) = mma16816_b(g, t, i);
                    b[k][n] = to_f32(half(p[4 + i / 2], i));
                }
                for i in 0..4 {
                    let (r, n) = mma_c(g, t, i);
                    c[r][n] = f32::from_bits(p[6 + i]);
                }
            }
            for (lane, o) in out.iter_mut().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for (i, o) in o.iter_mut().enumerate() {
                    let (r, n) = mma_c(g, t, i);
                    // Products of f16/bf16 are exact in f64; one rounding at the end. A NaN
                    // result is the canonical 0x7fffffff, whatever the NaN inputs were (as
                    // measured on sm_90; f64 arithmetic on the host would keep a payload).
                    let mut acc = c[r][n] as f64;
                    for k in 0..16 {
                        acc += a[r][k] as f64 * b[k][n] as f64;
                    }
                    *o = canonicalize_nan_f32(acc as f32).to_bits();
                }
            }
        }
        MmaKind::S8S32 => {
            let mut a = [[0i32; 32]; 16];
            let mut b = [[0i32; 8]; 32];
            let mut c = [[0i32; 8]; 16];
            for (lane, p) in payloads.iter().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for i in 0..16 {
                    let (r, k) = mma16832_a(g, t, i);
                    a[r][k] = byte(p[i / 4], i) as i32;
                }
                for i in 0..8 {
                    let (k, n) = mma16832_b(g, t, i);
                    b[k][n] = byte(p[4 + i / 4], i) as i32;
                }
                for i in 0..4 {
                    let (r, n) = mma_c(g, t, i);
                    c[r][n] = p[6 + i] as i32;
                }
            }
            for (lane, o) in out.iter_mut().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for (i, o) in o.iter_mut().enumerate() {
                    let (r, n) = mma_c(g, t, i);
                    let mut acc = c[r][n];
                    for k in 0..32 {
                        acc = acc.wrapping_add(a[r][k] * b[k][n]);
                    }
                    *o = acc as u32;
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Completion of warp collectives (called by the last arriving lane, CTA lock held)
// ---------------------------------------------------------------------------------------------

fn collective_error(
    cta: &Cta,
    st: &SyncState,
    warp: u32,
    lane: u32,
    op: &'static str,
    message: String,
) -> EmulatorError {
    EmulatorError::WarpCollective {
        thread: cta.thread_ref(st, warp * 32 + lane),
        op,
        message,
    }
}

/// Computes every lane's result of a completed warp collective.
// Lane, matrix and element indices index several arrays at once; plain ranges read best.
#[allow(clippy::needless_range_loop)]
pub(crate) fn complete_collective(
    cta: &Cta,
    st: &mut SyncState,
    warp: u32,
    p: &PendingCollective,
) -> Result<[[u32; 4]; 32], EmulatorError> {
    let mut out = [[0u32; 4]; 32];
    match p.kind {
        Collective::WarpSync => {}
        Collective::Shfl(mode) => {
            for lane in 0..32u32 {
                if p.mask & (1 << lane) == 0 {
                    continue;
                }
                let [_, b, c, ..] = p.payloads[lane as usize];
                let (src, pval) = shfl_source(mode, lane, b, c);
                if p.mask & (1 << src) == 0 {
                    return Err(collective_error(
                        cta,
                        st,
                        warp,
                        lane,
                        p.kind.ptx(),
                        format!(
                            "lane {lane} reads lane {src}, which is not in membermask {:#010x} \
                             (the value would be undefined on the GPU)",
                            p.mask
                        ),
                    ));
                }
                out[lane as usize] = [p.payloads[src as usize][0], pval as u32, 0, 0];
            }
        }
        Collective::Ldmatrix { num, trans } | Collective::Stmatrix { num, trans } => {
            let store = matches!(p.kind, Collective::Stmatrix { .. });
            let op = p.kind.ptx();
            let site = Site(p.site);
            // Row r of matrix m starts at the address given by lane 8m + r (16 bytes = 8 b16).
            let mut rows = [[0usize; 8]; 4];
            let mut words = Vec::with_capacity(128);
            for m in 0..num as usize {
                for (r, row) in rows[m].iter_mut().enumerate() {
                    let lane = (8 * m + r) as u32;
                    let addr = p.payloads[lane as usize][0];
                    *row = shared_word_index(
                        cta,
                        cta.thread_ref(st, warp * 32 + lane),
                        addr,
                        16,
                        16,
                        op,
                        site,
                    )?;
                    if store {
                        // The warp's writes: its warpgroup's retirement stands for each lane's.
                        let g = warp / 4;
                        let retired = cta.warpgroup_retired(g);
                        if let Err(message) = cta.check_wgmma_write(g, retired, *row, 4) {
                            return Err(EmulatorError::AsyncOperation {
                                thread: cta.thread_ref(st, warp * 32 + lane),
                                op,
                                message,
                            });
                        }
                    } else {
                        let reader = warp * 32 + lane;
                        if let Err(message) = cta.check_async_read(reader, *row, 4) {
                            let thread = cta.thread_ref(st, reader);
                            return Err(EmulatorError::AsyncOperation {
                                thread,
                                op,
                                message,
                            });
                        }
                    }
                    let w = addr / 4;
                    words.extend(w..w + 4);
                }
            }
            let kind = if store {
                SharedAccessKind::Stmatrix
            } else {
                SharedAccessKind::Ldmatrix
            };
            st.sites.record(p.site, kind, &mut words);
            // Element (r, c) of matrix m: halfword c of row r.
            let element_word = |m: usize, r: usize, c: usize| -> (usize, u32) {
                (rows[m][r] + c / 2, 16 * (c as u32 % 2))
            };
            for lane in 0..32usize {
                let (g, t) = (lane / 4, lane % 4);
                for m in 0..num as usize {
                    for j in 0..2usize {
                        // Fragment element j of register m: row g, column 2t + j of the matrix,
                        // or of its transpose with .trans.
                        let (r, c) = if trans {
                            (2 * t + j, g)
                        } else {
                            (g, 2 * t + j)
                        };
                        let (word, shift) = element_word(m, r, c);
                        if store {
                            let value = (p.payloads[lane][1 + m] >> (16 * j)) & 0xffff;
                            let cell = &cta.shared[word];
                            let old = cell.load(Ordering::Relaxed);
                            let new = (old & !(0xffff << shift)) | (value << shift);
                            cell.store(new, Ordering::Relaxed);
                        } else {
                            let value =
                                (cta.shared[word].load(Ordering::Relaxed) >> shift) & 0xffff;
                            out[lane][m] |= value << (16 * j);
                        }
                    }
                }
            }
        }
        Collective::Mma(kind) => out = compute_mma(kind, &p.payloads),
    }
    Ok(out)
}
