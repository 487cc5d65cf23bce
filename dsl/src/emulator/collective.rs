//! The warp-collective operations the emulator knows, and what a warp's pending collective and a
//! thread's outstanding `cp.async` copies hold.

use std::panic::Location;

/// Words of per-lane input a warp collective carries (mma: 4 A + 2 B + 4 C registers).
pub(crate) const PAYLOAD_WORDS: usize = 10;

pub(crate) use crate::device::shfl::ShflMode;

/// `mma.sync.aligned` variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaKind {
    /// `m16n8k16.row.col.f32.f16.f16.f32`
    F16F32,
    /// `m16n8k16.row.col.f32.bf16.bf16.f32`
    Bf16F32,
    /// `m16n8k32.row.col.s32.s8.s8.s32`
    S8S32,
}

/// A warp-collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Collective {
    Shfl(ShflMode),
    WarpSync,
    Ldmatrix { num: u32, trans: bool },
    Stmatrix { num: u32, trans: bool },
    Mma(MmaKind),
}

/// The PTX name of `$op` (`ldmatrix` or `stmatrix`) of `$num` 8×8 matrices, `.trans` or not.
macro_rules! matrix_ptx {
    ($op:literal, $num:expr, $trans:expr) => {
        match ($num, $trans) {
            (1, false) => concat!($op, ".sync.aligned.m8n8.x1.shared.b16"),
            (2, false) => concat!($op, ".sync.aligned.m8n8.x2.shared.b16"),
            (4, false) => concat!($op, ".sync.aligned.m8n8.x4.shared.b16"),
            (1, true) => concat!($op, ".sync.aligned.m8n8.x1.trans.shared.b16"),
            (2, true) => concat!($op, ".sync.aligned.m8n8.x2.trans.shared.b16"),
            _ => concat!($op, ".sync.aligned.m8n8.x4.trans.shared.b16"),
        }
    };
}

impl Collective {
    pub(crate) fn ptx(&self) -> &'static str {
        match self {
            Collective::Shfl(ShflMode::Up) => "shfl.sync.up.b32",
            Collective::Shfl(ShflMode::Down) => "shfl.sync.down.b32",
            Collective::Shfl(ShflMode::Bfly) => "shfl.sync.bfly.b32",
            Collective::Shfl(ShflMode::Idx) => "shfl.sync.idx.b32",
            Collective::WarpSync => "bar.warp.sync",
            Collective::Ldmatrix { num, trans } => matrix_ptx!("ldmatrix", num, trans),
            Collective::Stmatrix { num, trans } => matrix_ptx!("stmatrix", num, trans),
            Collective::Mma(MmaKind::F16F32) => "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            Collective::Mma(MmaKind::Bf16F32) => {
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
            }
            Collective::Mma(MmaKind::S8S32) => "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
        }
    }
}

/// One `cp.async` copy waiting for its group to complete.
pub(crate) struct CpAsyncCopy {
    /// Shared-window destination address.
    pub(crate) dst: u32,
    /// Global source address.
    pub(crate) src: u64,
    pub(crate) cp_size: u32,
    pub(crate) src_size: u32,
}

/// A warp collective some lanes of `mask` have arrived at.
pub(crate) struct PendingCollective {
    pub(crate) kind: Collective,
    pub(crate) mask: u32,
    pub(crate) arrived: u32,
    pub(crate) site: &'static Location<'static>,
    pub(crate) payloads: [[u32; PAYLOAD_WORDS]; 32],
}
