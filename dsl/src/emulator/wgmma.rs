//! `wgmma.mma_async` of a warpgroup (4 warps, 128 threads), its fences and commit groups.
//!
//! Each thread computes its own accumulator fragment when it issues the instruction: the
//! fragment of `m64nNk16` is the mma-v3 layout (`NvidiaMma` version 3, warps `[4, 1]`,
//! instruction `[16, N, 16]`) over the `64 × N` tile, A and B come from shared memory through
//! their matrix descriptors ([`MatrixDescriptor::address`]), or A from the registers of the
//! thread's warp (the mma-v3 dot-operand layout, `k_width` 2, gathered with shuffles).
//! `D = A·B (+ C when scale-d)`, exact products summed in f64 and rounded once.
//!
//! The result is held back as the GPU does: the accumulator records the issue number of the
//! `wgmma` that wrote it, and reading its registers before a `wgmma.wait_group` has retired
//! that `wgmma`'s commit group is an error. Accumulating into an accumulator that is still in
//! flight is the accumulator chaining the PTX ISA allows. Registers touched by the thread
//! (creating or reading the accumulator) need a `wgmma.fence` before the next `wgmma` on them.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use tessera_layout::families::{DotOperand, MmaParent, NvidiaMma};
use tessera_layout::plan::wgmma::{Major, MatrixDescriptor};
use tessera_layout::{Label, LinearLayout};

use super::cta::{with_thread, ThreadCtx};
use super::mbarrier::async_error;
use super::ops::{self, ShflMode};
use super::SHARED_WINDOW_BASE;
use crate::device::canonicalize_nan_f32;
use crate::{bf16, f16};

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

/// The input types of `wgmma` (f32 accumulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WgmmaInput {
    F16,
    Bf16,
}

impl WgmmaInput {
    fn to_f64(self, bits: u16) -> f64 {
        match self {
            WgmmaInput::F16 => f16::from_bits(bits).to_f32() as f64,
            WgmmaInput::Bf16 => bf16::from_bits(bits).to_f32() as f64,
        }
    }
}

/// Where A comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OperandA {
    /// A `64 × 16` operand in shared memory; `trans`: M-major.
    Shared { descriptor: u64, trans: bool },
    /// This thread's 4 registers of the `64 × 16` A fragment.
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
    })
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

/// `wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{ty}.{ty}`: `acc` is this thread's `N / 2`
/// registers, updated at once; the state records the instruction until it is retired.
pub(crate) fn mma(
    input: WgmmaInput,
    acc: &mut [f32],
    state: &Cell<AccumulatorState>,
    a: OperandA,
    b_descriptor: u64,
    trans_b: bool,
    scale_d: bool,
) {
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
    // Operand A of this thread's warp: a[row][k] over the 64 rows (only the warp's 16 used).
    let mut a_tile = [[0f64; 16]; 64];
    match a {
        OperandA::Shared { descriptor, trans } => {
            let desc = decode(descriptor, "A");
            let major = if trans { Major::Mn } else { Major::K };
            for row in 16 * warp..16 * warp + 16 {
                for k in 0..16 {
                    let address = desc.address(major, 2, row, k);
                    a_tile[row as usize][k as usize] = input.to_f64(read_u16(address, "A"));
                }
            }
        }
        OperandA::Registers(regs) => {
            let layout = a_fragment_layout(n);
            for src in 0..32 {
                for (r, &reg) in regs.iter().enumerate() {
                    let (value, _) = ops::shfl(ShflMode::Idx, u32::MAX, reg, src, 0x1f);
                    for half in 0..2 {
                        let e = 2 * r as u32 + half;
                        let [row, k, ..] = apply(&layout, e, src, warp);
                        a_tile[row as usize][k as usize] =
                            input.to_f64((value >> (16 * half)) as u16);
                    }
                }
            }
        }
    }
    let b_desc = decode(b_descriptor, "B");
    let b_major = if trans_b { Major::Mn } else { Major::K };
    let layout = accumulator_layout(n);
    for (i, d) in acc.iter_mut().enumerate() {
        let [row, col, ..] = apply(&layout, i as u32, lane, warp);
        let mut sum = if scale_d { *d as f64 } else { 0.0 };
        for k in 0..16 {
            let b = input.to_f64(read_u16(b_desc.address(b_major, 2, col, k), "B"));
            sum += a_tile[row as usize][k as usize] * b;
        }
        *d = canonicalize_nan_f32(sum as f32);
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

/// The accumulator fragment of `m64nNk16`: (register, lane, warp) → (row, col) of `64 × N`.
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

fn decode(descriptor: u64, operand: &str) -> MatrixDescriptor {
    match MatrixDescriptor::decode(descriptor) {
        Ok(desc) => desc,
        Err(why) => with_thread(|t| {
            async_error(
                t,
                "wgmma.mma_async.sync.aligned",
                format!("matrix descriptor {descriptor:#018x} of {operand}: {why}"),
            )
        }),
    }
}

/// The 16-bit element at shared address `address` (the async proxy: not counted in the
/// wavefront report).
fn read_u16(address: u32, operand: &str) -> u16 {
    with_thread(|t: &ThreadCtx<'_>| {
        let end = SHARED_WINDOW_BASE as u64 + t.cta.shared_bytes as u64;
        if address < SHARED_WINDOW_BASE || address as u64 + 2 > end || !address.is_multiple_of(2) {
            async_error(
                t,
                "wgmma.mma_async.sync.aligned",
                format!(
                    "the descriptor of {operand} names shared address {address:#x}, outside the \
                     {} bytes of dynamic shared memory (or misaligned)",
                    t.cta.shared_bytes
                ),
            );
        }
        let word =
            t.cta.shared[((address - SHARED_WINDOW_BASE) / 4) as usize].load(Ordering::Relaxed);
        (word >> (8 * (address % 4))) as u16
    })
}
