//! `hopper_matmul_f16`: C = A·B on the Hopper runtime layer (sm_90a): TMA loads into
//! 128-byte-swizzled shared memory through a 4-stage `mbarrier` pipeline, `wgmma` from shared
//! memory for both operands, f32 accumulation, f16 output.
//!
//! One CTA computes a 128 × 128 tile of C with two consumer warpgroups (threads 0–255), each a
//! 64 × 128 half (`wgmma.m64n128k16`, 64 f32 registers per thread), and one producer warp
//! (threads 256–287) whose lane 0 issues the TMA loads; its other lanes exit. Per K step of 64
//! a stage holds A (128 × 64, one TMA box of 16 KiB) and B (64 × 128 as two 64 × 64 boxes of
//! 8 KiB), both in the NVMMA layout with the 128-byte swizzle, the layout TMA writes and the
//! wgmma descriptors read ([`A_OPERAND`], [`B_OPERAND`]; `tessera_layout::plan::wgmma` derives
//! them, the tests check they agree).
//!
//! Pipeline: stage `s` has a *full* barrier (1 arrival: the producer's `arrive.expect_tx` of
//! the stage's bytes; the TMA copies complete its transactions) and an *empty* barrier (2
//! arrivals: thread 0 of each consumer warpgroup once its `wgmma`s on the stage are retired).
//! K tile `t` uses stage `t mod 4`, phase `t / 4` of its full barrier; the consumers release it
//! as phase `t / 4` of the empty barrier. The producer fills tiles 0–3 at once and tile `t ≥ 4`
//! after phase `t / 4 - 1` of the stage's empty barrier. The consumers only wait on full
//! barriers and arrive on empty ones, so every thread of a warpgroup executes every `wgmma`
//! together, as `wgmma.mma_async.sync.aligned` requires: in iteration `t` they release tile
//! `t - 1` once `wgmma.wait_group 1` has retired it, while the `wgmma`s of tile `t` run.
//!
//! TMA zero-fills what lies outside A and B, so ragged M, N and K need no masks in the main
//! loop; the epilogue stores only rows below M and columns below N. TMA needs 16-byte aligned
//! rows: K and N must be multiples of 8, A, B and C 16-byte aligned.
//!
//! The kernel is built for the host (emulator) always and for nvptx64 only with
//! `-C target-cpu=sm_90a` (`wgmma` needs sm_90a): `TESSERA_SM=sm_90a` for the tests' PTX.
//! Its SASS (`ptxas -arch=sm_90a -v` on that PTX, then `cuobjdump -sass`) should show `HGMMA`
//! and `UTMALDG`, no stack frame and no `STL`/`LDL`.

use tessera::device::*;
use tessera::{f16, Ptr};

/// Rows of C per CTA.
pub const HOPPER_BLOCK_M: u32 = 128;
/// Columns of C per CTA.
pub const HOPPER_BLOCK_N: u32 = 128;
/// K per pipeline stage.
pub const HOPPER_BLOCK_K: u32 = 64;
/// Pipeline stages.
pub const HOPPER_STAGES: u32 = 4;
/// Threads of the two consumer warpgroups.
const CONSUMER_THREADS: u32 = 256;
/// Threads per CTA: two consumer warpgroups and one producer warp.
pub const HOPPER_THREADS: u32 = CONSUMER_THREADS + 32;

/// A (row-major M × K) box: 64 elements of K (128 bytes) × 128 rows.
pub const A_BOX: [u32; 2] = [HOPPER_BLOCK_M, HOPPER_BLOCK_K];
/// B (row-major K × N) box: 64 rows of K × 64 elements of N (128 bytes); two per stage.
pub const B_BOX: [u32; 2] = [HOPPER_BLOCK_K, 64];

const A_TILE_BYTES: u32 = HOPPER_BLOCK_M * HOPPER_BLOCK_K * 2;
const B_BOX_BYTES: u32 = B_BOX[0] * B_BOX[1] * 2;
const STAGE_BYTES: u32 = A_TILE_BYTES + 2 * B_BOX_BYTES;

/// Dynamic shared memory: room to align the stages to 1024 bytes (the 128-byte swizzle
/// period), the stages, and 2 barriers of 8 bytes per stage.
pub const HOPPER_SHARED_BYTES: u32 = 1024 + HOPPER_STAGES * STAGE_BYTES + 2 * 8 * HOPPER_STAGES;

/// How `wgmma` reads a tile: the descriptor at tile offset 0 and where each K step and each
/// 64-row (A) block starts, as `tessera_layout::plan::wgmma::plan_operand` plans it.
pub struct OperandDescriptors {
    /// `MatrixDescriptor::encode()` with start address 0.
    pub template: u64,
    /// Byte offset of K step `i` (16 elements) within the tile.
    pub k_step_bytes: u32,
    /// Byte offset between consecutive 64-row blocks (A) of the tile.
    pub mn_block_bytes: u32,
}

/// A: 128 × 64, K-major, 128-byte swizzle: SBO 1024 (8 rows of 128 bytes), LBO unused (16),
/// K steps 32 bytes apart inside the swizzled row, 64-row blocks 8 KiB apart.
pub const A_OPERAND: OperandDescriptors = OperandDescriptors {
    template: 1 << 62 | (1024 >> 4) << 32 | (16 >> 4) << 16,
    k_step_bytes: 32,
    mn_block_bytes: 64 * 128,
};

/// B: 64 × 128 (K × N), N-major, 128-byte swizzle: LBO 8 KiB (the second 64-column box), SBO
/// 1024 (8 K rows of 128 bytes), K steps of 16 rows 2 KiB apart.
pub const B_OPERAND: OperandDescriptors = OperandDescriptors {
    template: 1 << 62 | (1024 >> 4) << 32 | (B_BOX_BYTES as u64 >> 4) << 16,
    k_step_bytes: 16 * 128,
    mn_block_bytes: 0,
};

/// The descriptor of the operand at shared address `address` (bits 0–13: address >> 4).
#[inline(always)]
const fn descriptor(template: u64, address: u32) -> u64 {
    template | ((address as u64 >> 4) & 0x3fff)
}

/// `store(j, regs[2j], regs[2j + 1])` for every listed `j`, unrolled so that every register
/// index is a constant (a loop over the array would keep it in local memory).
macro_rules! for_each_pair {
    ($store:ident, $regs:ident, $($j:literal)*) => {
        $( $store($j, $regs[2 * $j], $regs[2 * $j + 1]); )*
    };
}

tessera::device_kernel! {
    /// `c[m × n] = a[m × k] · b[k × n]`, f16 in, f32 accumulate, f16 out, row-major, through
    /// the tensor maps `a_map` (box [`A_BOX`]) and `b_map` (box [`B_BOX`]), both with the
    /// 128-byte swizzle (module docs). Launch: grid `(ceil(n / 128), ceil(m / 128))`,
    /// [`HOPPER_THREADS`] threads, [`HOPPER_SHARED_BYTES`] of dynamic shared memory.
    pub fn hopper_matmul_f16(
        a_map: Ptr<TensorMap>,
        b_map: Ptr<TensorMap>,
        c: Ptr<f16>,
        m: u32,
        n: u32,
        k: u32,
    ) => HOPPER_MATMUL_F16 {
        let tid = thread_idx_x();
        let warpgroup = tid / 128;
        let stages = (dynamic_shared_base() + 1023) & !1023;
        let barriers = stages + HOPPER_STAGES * STAGE_BYTES;
        let full = |s: u32| barriers + 8 * s;
        let empty = |s: u32| barriers + 8 * (HOPPER_STAGES + s);
        let row0 = block_idx_y() * HOPPER_BLOCK_M;
        let col0 = block_idx_x() * HOPPER_BLOCK_N;
        let k_tiles = k.div_ceil(HOPPER_BLOCK_K);

        if tid == 0 {
            for s in 0..HOPPER_STAGES {
                mbarrier_init(full(s), 1);
                mbarrier_init(empty(s), 2);
            }
            fence_mbarrier_init();
        }
        sync_threads();

        // The producer warp: lane 0 fills stage `t mod STAGES` with K tile `t` once the
        // consumers have released the tile `t - STAGES` it held; the other lanes exit.
        if tid >= CONSUMER_THREADS {
            if tid == CONSUMER_THREADS {
                prefetch_tensormap(a_map);
                prefetch_tensormap(b_map);
                for t in 0..k_tiles {
                    let s = t % HOPPER_STAGES;
                    if t >= HOPPER_STAGES {
                        mbarrier_wait_parity(empty(s), (t / HOPPER_STAGES - 1) % 2);
                    }
                    let a_tile = stages + s * STAGE_BYTES;
                    let b_tile = a_tile + A_TILE_BYTES;
                    let k0 = (t * HOPPER_BLOCK_K) as i32;
                    mbarrier_arrive_expect_tx(full(s), STAGE_BYTES);
                    tma_load_2d(a_tile, a_map, k0, row0 as i32, full(s));
                    tma_load_2d(b_tile, b_map, col0 as i32, k0, full(s));
                    tma_load_2d(b_tile + B_BOX_BYTES, b_map, (col0 + 64) as i32, k0, full(s));
                }
            }
            return;
        }

        // The consumer warpgroups: every thread runs every wgmma; thread 0 of each warpgroup
        // releases a stage once the warpgroup's wgmmas on it are retired.
        let mut acc = WgmmaAccumulator::<64>::zeroed();
        for t in 0..k_tiles {
            let s = t % HOPPER_STAGES;
            mbarrier_wait_parity(full(s), (t / HOPPER_STAGES) % 2);
            let a_tile = stages + s * STAGE_BYTES + warpgroup * A_OPERAND.mn_block_bytes;
            let b_tile = stages + s * STAGE_BYTES + A_TILE_BYTES;
            wgmma_fence();
            for step in 0..HOPPER_BLOCK_K / 16 {
                wgmma_m64n128k16_f16::<0, 1>(
                    &mut acc,
                    descriptor(A_OPERAND.template, a_tile + step * A_OPERAND.k_step_bytes),
                    descriptor(B_OPERAND.template, b_tile + step * B_OPERAND.k_step_bytes),
                    t > 0 || step > 0,
                );
            }
            wgmma_commit_group();
            // The wgmmas of tile t - 1 are retired: release its stage.
            wgmma_wait_group::<1, _>(&mut acc);
            if t > 0 && tid.is_multiple_of(128) {
                mbarrier_arrive(empty((t - 1) % HOPPER_STAGES));
            }
        }
        wgmma_wait_group::<0, _>(&mut acc);

        // Epilogue: register pair (2j, 2j + 1) holds columns (c, c + 1) of one row (the mma-v3
        // accumulator layout, module docs of `tessera::device::wgmma`).
        let regs = acc.registers();
        let (warp, lane) = ((tid / 32) % 4, tid % 32);
        let row_base = row0 + warpgroup * 64 + 16 * warp + lane / 4;
        let out = c.cast::<u32>();
        let store = |j: u32, lo: f32, hi: f32| {
            let row = row_base + 8 * (j % 2);
            let col = col0 + 8 * (j / 2) + 2 * (lane % 4);
            let bits = f16x2_bits(f32_to_f16(lo), f32_to_f16(hi));
            let index = (row as u64 * n as u64 + col as u64) / 2;
            st_global_v1(out.offset(index as isize), row < m && col < n, bits);
        };
        for_each_pair!(
            store, regs, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26
            27 28 29 30 31
        );
    }
}

/// Two f16 as one 32-bit word, `lo` in the low half.
#[inline(always)]
fn f16x2_bits(lo: f16, hi: f16) -> u32 {
    lo.to_bits() as u32 | (hi.to_bits() as u32) << 16
}
