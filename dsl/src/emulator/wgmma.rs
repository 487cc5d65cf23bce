//! `wgmma.mma_async` of a warpgroup (4 warps, 128 threads), its fences and commit groups.
//!
//! `wgmma.mma_async` is a warpgroup collective: the 128 threads (warps `4g .. 4g + 4`)
//! rendezvous, every one issuing the same instruction (shape, descriptors) from the same site;
//! the last to arrive reads A and B once, from shared memory through their matrix descriptors
//! ([`MatrixDescriptor::address`]) or A from the 128 threads' registers (the mma-v3
//! dot-operand layout, `k_width` 2). Divergent instructions are an error, and a thread that
//! never arrives leaves its warpgroup blocked, which the CTA's deadlock check reports naming
//! the warpgroup and the site. Each thread then computes its own accumulator fragment: the
//! mma-v3 layout (`NvidiaMma` version 3, warps `[4, 1]`, instruction `[16, N, 16]`) over the
//! `64 × N` tile.
//! `D = A·B (+ C when scale-d)`, exact products summed in f64 and rounded once.
//!
//! The result is held back as the GPU does: the accumulator records the issue number of the
//! `wgmma` that wrote it, and reading its registers before a `wgmma.wait_group` has retired
//! that `wgmma`'s commit group is an error. Accumulating into an accumulator that is still in
//! flight is the accumulator chaining the PTX ISA allows. Registers touched by the thread
//! (creating or reading the accumulator) need a `wgmma.fence` before the next `wgmma` on them.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::Location;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tessera_layout::families::{DotOperand, MmaParent, NvidiaMma};
use tessera_layout::plan::wgmma::{Major, MatrixDescriptor};
use tessera_layout::{Label, LinearLayout};

use super::cta::{with_thread, Cta, ThreadCtx};
use super::error::EmulatorError;
use super::mbarrier::async_error;
use super::SHARED_WINDOW_BASE;
use crate::device::canonicalize_nan_f32;
use crate::{bf16, f16, f8e4m3, f8e5m2};
pub(crate) use tessera_layout::plan::wgmma_dot::WgmmaInput;

/// Threads of a warpgroup.
pub(crate) const WARPGROUP_THREADS: u32 = 128;

/// The `wgmma` state of one thread.
#[derive(Default)]
pub(crate) struct WgmmaThread {
    /// `wgmma.fence` executed so far.
    fences: u64,
    /// `wgmma.mma_async` issued so far (issue numbers start at 1).
    issued: u64,
    /// Committed, not yet retired groups: the last issue number each covers, oldest first.
    groups: VecDeque<u64>,
    /// Every `wgmma` up to this issue number has completed.
    retired: u64,
}

/// What the emulator knows about one accumulator's registers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AccumulatorState {
    /// Issue number of the last `wgmma` that writes the registers (0: none).
    written_by: u64,
    /// `Some(f)`: the thread accessed the registers when it had executed `f` fences.
    accessed_at_fence: Option<u64>,
}

/// The value of an element of `input` from its bits (the low `input.bits()` bits of `bits`).
fn to_f64(input: WgmmaInput, bits: u16) -> f64 {
    match input {
        WgmmaInput::F16 => f16::from_bits(bits).to_f32() as f64,
        WgmmaInput::Bf16 => bf16::from_bits(bits).to_f32() as f64,
        WgmmaInput::E4m3 => f8e4m3::from_bits(bits as u8).to_f32() as f64,
        WgmmaInput::E5m2 => f8e5m2::from_bits(bits as u8).to_f32() as f64,
        WgmmaInput::S8 => bits as u8 as i8 as f64,
    }
}

/// Where A comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OperandA {
    /// A `64 × K` operand in shared memory (K = 16, or 32 for 8-bit types); `trans`: M-major.
    Shared { descriptor: u64, trans: bool },
    /// This thread's 4 registers of the `64 × 16` A fragment (16-bit types only).
    Registers([u32; 4]),
}

/// `wgmma.fence.sync.aligned`.
pub(crate) fn fence() {
    with_thread(|t| t.local.borrow_mut().wgmma.fences += 1)
}

/// `wgmma.commit_group.sync.aligned`: closes the group of `wgmma`s issued since the last one.
pub(crate) fn commit_group() {
    with_thread(|t| {
        let mut local = t.local.borrow_mut();
        let last = local.wgmma.issued;
        local.wgmma.groups.push_back(last);
    })
}

/// `wgmma.wait_group.sync.aligned n`: retires all but the `n` most recent committed groups.
pub(crate) fn wait_group(n: u32) {
    with_thread(|t| {
        let mut local = t.local.borrow_mut();
        let w = &mut local.wgmma;
        while w.groups.len() > n as usize {
            if let Some(last) = w.groups.pop_front() {
                w.retired = w.retired.max(last);
            }
        }
        t.cta.wgmma_retired(t.linear / WARPGROUP_THREADS, w.retired);
    })
}

impl WgmmaThread {
    /// Every `wgmma` of this thread up to this issue number has completed.
    pub(crate) fn retired(&self) -> u64 {
        self.retired
    }
}

/// The state of a new accumulator: its registers were just written by the thread.
pub(crate) fn new_accumulator() -> Cell<AccumulatorState> {
    with_thread(|t| {
        Cell::new(AccumulatorState {
            written_by: 0,
            accessed_at_fence: Some(t.local.borrow().wgmma.fences),
        })
    })
}

/// A read or write of an accumulator's registers by the thread: an error while the `wgmma`
/// that writes them has not been retired by a `wgmma.wait_group`.
pub(crate) fn access_accumulator(state: &Cell<AccumulatorState>) {
    with_thread(|t| {
        let (retired, groups, fences) = {
            let local = t.local.borrow();
            let w = &local.wgmma;
            (w.retired, w.groups.clone(), w.fences)
        };
        let s = state.get();
        if s.written_by > retired {
            let why = match groups.iter().position(|&last| last >= s.written_by) {
                Some(i) => format!(
                    "its commit group is {} groups from the newest: wgmma.wait_group {} or lower \
                     retires it",
                    groups.len() - 1 - i,
                    groups.len() - 1 - i
                ),
                None => "it is not committed yet (wgmma.commit_group)".to_string(),
            };
            async_error(
                t,
                "wgmma.mma_async",
                format!(
                    "accumulator registers read while wgmma #{} that writes them is in flight; \
                     {why}",
                    s.written_by
                ),
            );
        }
        state.set(AccumulatorState {
            written_by: 0,
            accessed_at_fence: Some(fences),
        });
    })
}

/// `wgmma.mma_async.sync.aligned.m64n{N}k{K}.{f32|s32}.{ty}.{ty}`: `acc` is the bits of this
/// thread's `N / 2` registers (f32, or i32 for `s8`: the s32 sum wraps), updated at once; the
/// state records the instruction until it is retired. The 128 threads of the warpgroup
/// rendezvous ([`Cta::warpgroup_mma`]) and the operands are read once, when the last of them
/// arrives.
#[track_caller]
pub(crate) fn mma(
    input: WgmmaInput,
    acc: &mut [u32],
    state: &Cell<AccumulatorState>,
    a: OperandA,
    b_descriptor: u64,
    trans_b: bool,
    scale_d: bool,
) {
    super::target::nvidia_instruction("wgmma.mma_async");
    let site = Location::caller();
    let n = 2 * acc.len() as u32;
    let op = "wgmma.mma_async.sync.aligned";
    let (warp, lane, fences) = with_thread(|t| {
        let group = t.linear / WARPGROUP_THREADS;
        if (group + 1) * WARPGROUP_THREADS > t.cta.threads {
            async_error(
                t,
                op,
                format!(
                    "the block's {} threads do not fill warpgroup {group} (128 threads)",
                    t.cta.threads
                ),
            );
        }
        (t.warp() % 4, t.lane(), t.local.borrow().wgmma.fences)
    });
    let s = state.get();
    if s.accessed_at_fence == Some(fences) {
        with_thread(|t| {
            async_error(
                t,
                op,
                "the accumulator registers were accessed after the last wgmma.fence: a \
                 wgmma.fence must separate them from the next wgmma.mma_async"
                    .to_string(),
            )
        });
    }
    let (a_shared, a_registers) = match a {
        OperandA::Shared { descriptor, trans } => (Some((descriptor, trans)), [0; 4]),
        OperandA::Registers(regs) => (None, regs),
    };
    let issue = MmaIssue {
        input,
        n,
        a_shared,
        b_descriptor,
        trans_b,
    };
    let operands = with_thread(|t| t.cta.warpgroup_mma(t, issue, a_registers, site));
    let layout = accumulator_layout(n);
    for (i, d) in acc.iter_mut().enumerate() {
        let [row, col, ..] = apply(&layout, i as u32, lane, warp);
        let products = (0..input.instr_k() as usize)
            .map(|k| operands.a[row as usize][k] * operands.b[col as usize][k]);
        *d = if input.is_integer() {
            // Exact integer products (|a·b| ≤ 2¹⁴), summed in i64 and wrapped to 32 bits.
            let start = if scale_d { *d as i32 as i64 } else { 0 };
            products.fold(start, |sum, p| sum + p as i64) as i32 as u32
        } else {
            let start = if scale_d {
                f32::from_bits(*d) as f64
            } else {
                0.0
            };
            canonicalize_nan_f32(products.fold(start, |sum, p| sum + p) as f32).to_bits()
        };
    }
    let issued = with_thread(|t| {
        let mut local = t.local.borrow_mut();
        local.wgmma.issued += 1;
        local.wgmma.issued
    });
    state.set(AccumulatorState {
        written_by: issued,
        accessed_at_fence: None,
    });
}

/// What every thread of a warpgroup must issue alike for one `wgmma.mma_async`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MmaIssue {
    input: WgmmaInput,
    n: u32,
    /// A's descriptor and `trans` when A is in shared memory; `None`: A from registers.
    a_shared: Option<(u64, bool)>,
    b_descriptor: u64,
    trans_b: bool,
}

impl MmaIssue {
    fn describe(&self) -> String {
        let a = match self.a_shared {
            Some((d, trans)) => format!("A descriptor {d:#018x} (trans {})", trans as u8),
            None => "A from registers".to_string(),
        };
        format!(
            "m64n{}k{}, {a}, B descriptor {:#018x} (trans {})",
            self.n,
            self.input.instr_k(),
            self.b_descriptor,
            self.trans_b as u8
        )
    }
}

/// The operands of one warpgroup `wgmma`, read from shared memory at the rendezvous:
/// `a[row][k]` of `64 × K`, `b[col][k]` of `N × K`.
pub(crate) struct MmaOperands {
    a: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
}

/// A `wgmma.mma_async` some threads of a warpgroup have arrived at.
struct PendingMma {
    issue: MmaIssue,
    site: &'static Location<'static>,
    /// Bit `i`: thread `i` of the warpgroup has arrived.
    arrived: u128,
    /// The A registers of each thread (A from registers).
    a_registers: Box<[[u32; 4]; 128]>,
}

/// The `wgmma` rendezvous of one warpgroup.
#[derive(Default)]
pub(crate) struct WarpgroupState {
    pending: Option<PendingMma>,
    /// Rendezvous completed so far.
    generation: u64,
    /// The operands of the last completed rendezvous.
    operands: Option<Arc<MmaOperands>>,
}

/// The waits of warpgroups stuck in a `wgmma` rendezvous, for the deadlock report.
pub(crate) fn describe_warpgroup_waits(warpgroups: &[WarpgroupState]) -> Vec<String> {
    warpgroups
        .iter()
        .enumerate()
        .filter_map(|(g, w)| {
            let p = w.pending.as_ref()?;
            Some(format!(
                "warpgroup {g} (threads {}..{}): {} threads wait in wgmma.mma_async at {}:{}:{}; \
                 threads {} never arrived (wgmma is a warpgroup collective)",
                g as u32 * WARPGROUP_THREADS,
                (g as u32 + 1) * WARPGROUP_THREADS,
                p.arrived.count_ones(),
                p.site.file(),
                p.site.line(),
                p.site.column(),
                missing_threads(g as u32, p.arrived)
            ))
        })
        .collect()
}

/// The threads of warpgroup `g` not in `arrived`, as a short list.
fn missing_threads(g: u32, arrived: u128) -> String {
    let missing: Vec<String> = (0..WARPGROUP_THREADS)
        .filter(|i| arrived & (1 << i) == 0)
        .map(|i| (g * WARPGROUP_THREADS + i).to_string())
        .collect();
    if missing.len() > 8 {
        format!("{}, … ({} in all)", missing[..8].join(", "), missing.len())
    } else {
        missing.join(", ")
    }
}

impl Cta {
    /// The rendezvous of a warpgroup's 128 threads at one `wgmma.mma_async`: waits until every
    /// thread has issued the same instruction; the last to arrive reads the operands, which all
    /// of them then use. Divergent instructions are an error; a thread that never arrives
    /// leaves the others blocked, which the deadlock check reports.
    pub(crate) fn warpgroup_mma(
        &self,
        ctx: &ThreadCtx<'_>,
        issue: MmaIssue,
        a_registers: [u32; 4],
        site: &'static Location<'static>,
    ) -> Arc<MmaOperands> {
        let op = "wgmma.mma_async.sync.aligned";
        let error = |message: String| EmulatorError::AsyncOperation {
            thread: ctx.thread_ref(),
            op,
            message,
        };
        let group = ctx.linear / WARPGROUP_THREADS;
        let index = ctx.linear % WARPGROUP_THREADS;
        let mut st = self.unwind_if_aborted(self.lock());
        self.mark_sync_used();
        let g = group as usize;
        let state = &mut st.warpgroups[g];
        match &mut state.pending {
            Some(p) if p.issue != issue || p.site != site => {
                let message = format!(
                    "warpgroup {group}: thread {} issues {} at {}:{} while threads {} of the \
                     warpgroup wait in {} at {}:{} (every thread of a warpgroup must execute \
                     the same wgmma convergently)",
                    ctx.linear,
                    issue.describe(),
                    site.file(),
                    site.line(),
                    p.arrived.count_ones(),
                    p.issue.describe(),
                    p.site.file(),
                    p.site.line()
                );
                self.fail(st, error(message));
            }
            Some(_) => {}
            None => {
                state.pending = Some(PendingMma {
                    issue,
                    site,
                    arrived: 0,
                    a_registers: Box::new([[0; 4]; 128]),
                })
            }
        }
        let Some(pending) = state.pending.as_mut() else {
            unreachable!("the pending wgmma was just set")
        };
        pending.arrived |= 1 << index;
        pending.a_registers[index as usize] = a_registers;
        if pending.arrived == u128::MAX {
            let Some(pending) = state.pending.take() else {
                unreachable!("the pending wgmma was just set")
            };
            let issue_number = ctx.local.borrow().wgmma.issued + 1;
            match self.read_operands(&pending, group, issue_number) {
                Ok(operands) => {
                    let operands = Arc::new(operands);
                    let state = &mut st.warpgroups[g];
                    state.generation += 1;
                    state.operands = Some(operands.clone());
                    st.blocked -= WARPGROUP_THREADS - 1;
                    operands
                }
                Err(message) => self.fail(st, error(message)),
            }
        } else {
            let generation = state.generation;
            let (st, operands) = self.block_until(st, |st| {
                let state = &st.warpgroups[g];
                match &state.operands {
                    Some(operands) if state.generation != generation => Some(operands.clone()),
                    _ => None,
                }
            });
            drop(st);
            operands
        }
    }

    /// Reads A (`64 × K`, from shared memory or gathered from the threads' registers) and B
    /// (`N × K`) of a complete warpgroup `wgmma`, warpgroup `group`'s number `issue_number`,
    /// recording the words it reads until it is retired (`super::wgmma_reads`).
    fn read_operands(
        &self,
        p: &PendingMma,
        group: u32,
        issue_number: u64,
    ) -> Result<MmaOperands, String> {
        let issue = p.issue;
        let input = issue.input;
        let bytes = input.bits() / 8;
        let read = |address: u32, operand: &str| -> Result<u16, String> {
            let value = self.read_element(address, bytes, operand)?;
            self.wgmma_read(
                group,
                issue_number,
                ((address - SHARED_WINDOW_BASE) / 4) as usize,
            );
            Ok(value)
        };
        let mut a = vec![vec![0f64; input.instr_k() as usize]; 64];
        match issue.a_shared {
            Some((descriptor, trans)) => {
                let desc = decode(descriptor, "A")?;
                let major = if trans { Major::Mn } else { Major::K };
                for (row, a_row) in a.iter_mut().enumerate() {
                    for (k, a) in a_row.iter_mut().enumerate() {
                        let address = desc.address(major, bytes, row as u32, k as u32);
                        *a = to_f64(input, read(address, "A")?);
                    }
                }
            }
            None => {
                let layout = a_fragment_layout(issue.n);
                for (thread, regs) in p.a_registers.iter().enumerate() {
                    let (warp, lane) = (thread as u32 / 32, thread as u32 % 32);
                    for (r, &reg) in regs.iter().enumerate() {
                        for half in 0..2 {
                            let e = 2 * r as u32 + half;
                            let [row, k, ..] = apply(&layout, e, lane, warp);
                            a[row as usize][k as usize] =
                                to_f64(input, (reg >> (16 * half)) as u16);
                        }
                    }
                }
            }
        }
        let b_desc = decode(issue.b_descriptor, "B")?;
        let b_major = if issue.trans_b { Major::Mn } else { Major::K };
        let mut b = vec![vec![0f64; input.instr_k() as usize]; issue.n as usize];
        for (col, b_col) in b.iter_mut().enumerate() {
            for (k, b) in b_col.iter_mut().enumerate() {
                let address = b_desc.address(b_major, bytes, col as u32, k as u32);
                *b = to_f64(input, read(address, "B")?);
            }
        }
        Ok(MmaOperands { a, b })
    }

    /// The element of `bytes` (1 or 2) at shared address `address` (the async proxy: not
    /// counted in the wavefront report).
    fn read_element(&self, address: u32, bytes: u32, operand: &str) -> Result<u16, String> {
        let end = SHARED_WINDOW_BASE as u64 + self.shared_bytes as u64;
        if address < SHARED_WINDOW_BASE
            || address as u64 + bytes as u64 > end
            || !address.is_multiple_of(bytes)
        {
            return Err(format!(
                "the descriptor of {operand} names shared address {address:#x}, outside the {} \
                 bytes of dynamic shared memory (or misaligned)",
                self.shared_bytes
            ));
        }
        let word =
            self.shared[((address - SHARED_WINDOW_BASE) / 4) as usize].load(Ordering::Relaxed);
        Ok(((word >> (8 * (address % 4))) & (u32::MAX >> (32 - 8 * bytes))) as u16)
    }
}

/// The accumulator fragment of `m64nNkK` (any K): (register, lane, warp) → (row, col) of `64 × N`.
pub(crate) fn accumulator_layout(n: u32) -> LinearLayout {
    NvidiaMma::new(3, 0, &[4, 1], &[16, n, 16])
        .to_linear_layout(&[64, n])
        .expect("the mma-v3 layout of a 64 x N tile, N a power of two from 8 to 256")
}

/// The A fragment of `m64nNk16` from registers: (element, lane, warp) → (row, k) of `64 × 16`;
/// element `e` is half `e % 2` of register `e / 2`.
pub(crate) fn a_fragment_layout(n: u32) -> LinearLayout {
    let instr = [16, n, 16];
    let mma = NvidiaMma::new(3, 0, &[4, 1], &instr);
    DotOperand::new(0, 2, MmaParent::Nvidia(mma))
        .to_linear_layout(&[64, 16])
        .expect("the mma-v3 dot-operand layout of a 64 x 16 A tile")
}

fn apply(layout: &LinearLayout, register: u32, lane: u32, warp: u32) -> [u32; 6] {
    layout
        .apply(&[
            (Label::Register, register),
            (Label::Lane, lane),
            (Label::Warp, warp),
        ])
        .expect("register, lane and warp are inside the fragment")
}

fn decode(descriptor: u64, operand: &str) -> Result<MatrixDescriptor, String> {
    MatrixDescriptor::decode(descriptor)
        .map_err(|why| format!("matrix descriptor {descriptor:#018x} of {operand}: {why}"))
}
