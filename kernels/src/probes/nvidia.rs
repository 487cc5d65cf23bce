//! Probes of NVIDIA's instructions: `mma.sync` on f16, bf16 and s8 tiles (staged by `cp.async`
//! or vector loads, fragments by `ldmatrix`), the matrix loads and stores (`ldmatrix`,
//! `stmatrix`), named barriers. Not built for amdgpu, whose device layer has none of them.

use tessera::device::*;
use tessera::Ptr;

tessera::device_kernel! {
    /// One warp per block multiplies one 16×16 f16 tile by one 16×8 f16 tile into f32:
    /// `d[b] = a[b] · bm[b]` for block `b`, with `a` row-major 16×16, `bm` row-major 16×8
    /// (k × n) and `d` row-major 16×8 f32, where only the first `m_valid` rows of A exist (a
    /// ragged M edge): rows `>= m_valid` are zero-filled in shared memory without reading global
    /// memory (`cp.async.cg` with `src-size = 0`) and their D rows are not stored. Stages A and B
    /// with `cp.async.cg` (16 bytes per lane), loads the A fragment with `ldmatrix.x4`, the B
    /// fragment with `ldmatrix.x2.trans`, multiplies with `mma.sync.m16n8k16` f16 → f32.
    /// Launch: block (32, 1, 1), 768 bytes of dynamic shared memory.
    pub fn mma_f16_tile(a: Ptr<u32>, bm: Ptr<u32>, d: Ptr<f32>, m_valid: u32) => MMA_F16_TILE {
        let lane = lane_id();
        let tile = block_idx_x() as isize;
        let a = a.offset(tile * 128); // 16x16 halves = 128 words
        let bm = bm.offset(tile * 64); // 16x8 halves = 64 words
        let base = dynamic_shared_base();
        // A: 512 bytes = 32 chunks of 16 (two per row); B: 256 bytes = 16 chunks.
        cp_async_cg_zfill(base + 16 * lane, a.offset(4 * lane as isize), lane / 2 < m_valid);
        if lane < 16 {
            cp_async_cg(base + 512 + 16 * lane, bm.offset(4 * lane as isize));
        }
        cp_async_wait_all();
        sync_threads();
        let a_frag = ldmatrix_x4(base + (lane % 16) * 32 + (lane / 16) * 16);
        let b_frag = ldmatrix_x2_trans(base + 512 + (lane % 16) * 16);
        let acc = mma_m16n8k16_f16_f32(a_frag, b_frag, [0.0; 4]);
        let (g, t) = (lane / 4, lane % 4);
        let d = d.offset(tile * 128);
        st_global_v2(d.offset((g * 8 + 2 * t) as isize), g < m_valid, [acc[0], acc[1]]);
        st_global_v2(d.offset(((g + 8) * 8 + 2 * t) as isize), g + 8 < m_valid, [acc[2], acc[3]]);
    }
}

tessera::device_kernel! {
    /// As [`mma_f16_tile`] with bf16 inputs (`mma.sync.m16n8k16` bf16 → f32), B given
    /// transposed: `bt` row-major 8×16 (n × k), loaded with `ldmatrix.x2` (no `.trans`).
    /// Launch: block (32, 1, 1), 768 bytes of dynamic shared memory.
    pub fn mma_bf16_tile(a: Ptr<u32>, bt: Ptr<u32>, d: Ptr<f32>) => MMA_BF16_TILE {
        let lane = lane_id();
        let tile = block_idx_x() as isize;
        let a = a.offset(tile * 128);
        let bt = bt.offset(tile * 64);
        let base = dynamic_shared_base();
        cp_async_ca::<16, u32>(base + 16 * lane, a.offset(4 * lane as isize));
        cp_async_commit_group();
        if lane < 16 {
            cp_async_ca::<16, u32>(base + 512 + 16 * lane, bt.offset(4 * lane as isize));
        }
        cp_async_commit_group();
        cp_async_wait_group::<0>();
        sync_threads();
        let a_frag = ldmatrix_x4(base + (lane % 16) * 32 + (lane / 16) * 16);
        let b_frag = ldmatrix_x2(base + 512 + (lane % 8) * 32 + ((lane / 8) % 2) * 16);
        let acc = mma_m16n8k16_bf16_f32(a_frag, b_frag, [0.0; 4]);
        store_c_fragment(d.offset(tile * 128), lane, acc);
    }
}

tessera::device_kernel! {
    /// One warp per block: `d[b] = c[b] + a[b] · bt[b]ᵀ` over s8 → s32 with
    /// `mma.sync.m16n8k32`: `a` row-major 16×32 bytes, `bt` row-major 8×32 bytes (n × k), `c`
    /// and `d` row-major 16×8 i32. Fragments come from `ldmatrix.x4` / `ldmatrix.x2` (8-bit data
    /// viewed as 16-bit pairs), staged with predicated 16-byte global loads and shared stores.
    /// Launch: block (32, 1, 1), 768 bytes of dynamic shared memory.
    pub fn mma_s8_tile(a: Ptr<u32>, bt: Ptr<u32>, c: Ptr<i32>, d: Ptr<i32>) => MMA_S8_TILE {
        let lane = lane_id();
        let tile = block_idx_x() as isize;
        let base = dynamic_shared_base();
        let va = ld_global_v4(a.offset(tile * 128 + 4 * lane as isize), true, [0u32; 4]);
        st_shared_v4(base + 16 * lane, va);
        let vb = ld_global_v4(bt.offset(tile * 64 + 4 * (lane % 16) as isize), lane < 16, [0u32; 4]);
        if lane < 16 {
            st_shared_v4(base + 512 + 16 * lane, vb);
        }
        sync_warp(FULL_MASK);
        let a_frag = ldmatrix_x4(base + (lane % 16) * 32 + (lane / 16) * 16);
        let b_frag = ldmatrix_x2(base + 512 + (lane % 8) * 32 + ((lane / 8) % 2) * 16);
        let (g, t) = (lane / 4, lane % 4);
        let c = c.offset(tile * 128);
        let c_lo = ld_global_v2(c.offset((g * 8 + 2 * t) as isize), true, [0; 2]);
        let c_hi = ld_global_v2(c.offset(((g + 8) * 8 + 2 * t) as isize), true, [0; 2]);
        let acc = mma_m16n8k32_s8_s32(a_frag, b_frag, [c_lo[0], c_lo[1], c_hi[0], c_hi[1]]);
        let d = d.offset(tile * 128);
        st_global_v2(d.offset((g * 8 + 2 * t) as isize), true, [acc[0], acc[1]]);
        st_global_v2(d.offset(((g + 8) * 8 + 2 * t) as isize), true, [acc[2], acc[3]]);
    }
}

/// Stores an m16n8 accumulator fragment into a row-major 16×8 f32 tile: `c0, c1` at row `g`,
/// columns `2t, 2t + 1`; `c2, c3` at row `g + 8` (one 64-bit store each).
#[inline(always)]
#[track_caller]
unsafe fn store_c_fragment(d: Ptr<f32>, lane: u32, acc: [f32; 4]) {
    let (g, t) = (lane / 4, lane % 4);
    st_global_v2(d.offset((g * 8 + 2 * t) as isize), true, [acc[0], acc[1]]);
    st_global_v2(
        d.offset(((g + 8) * 8 + 2 * t) as isize),
        true,
        [acc[2], acc[3]],
    );
}

tessera::device_kernel! {
    /// Matrix-load probe, one warp (block (32, 1, 1), 2048 bytes of dynamic shared memory):
    /// stages `x` (four 8×8 b16 matrices, row-major, 128 words) into shared memory with
    /// `cp.async.ca` of 4 bytes (words 0..64) and 8 bytes (words 64..128), waits, passes named
    /// barriers 1 (all threads) and 2 (32 threads), then writes to `out[32 * 12]`, per lane `l`:
    /// `ldmatrix.x1` of matrix 0, `ldmatrix.x1.trans` of matrix 1, `ldmatrix.x4.trans` of all
    /// four (rows from lane `l`: matrix `l / 8`, row `l % 8`), and the 64-bit word at
    /// `2 l` of a copy of `x` made with `st.shared.v2` / `ld.shared.v2` (3 + 4 + 2 + 3 unused
    /// = 12 words).
    pub fn ldmatrix_probe(x: Ptr<u32>, out: Ptr<u32>) => LDMATRIX_PROBE {
        let lane = lane_id();
        let base = dynamic_shared_base();
        cp_async_ca::<4, u32>(base + 4 * lane, x.offset(lane as isize));
        cp_async_ca::<4, u32>(base + 128 + 4 * lane, x.offset(32 + lane as isize));
        cp_async_ca::<8, u32>(base + 256 + 8 * lane, x.offset(64 + 2 * lane as isize));
        cp_async_commit_group();
        cp_async_wait_group::<0>();
        barrier_sync(1);
        // A second copy of x through 64-bit shared stores and loads.
        let pair: [u32; 2] = ld_shared_v2(base + 8 * lane);
        st_shared_v2(base + 1024 + 8 * lane, pair);
        let pair2: [u32; 2] = ld_shared_v2(base + 256 + 8 * lane);
        st_shared_v2(base + 1280 + 8 * lane, pair2);
        barrier_sync_count(2, 32);
        let row = base + 16 * lane; // matrix lane / 8, row lane % 8 (rows are 16 bytes)
        let m0 = ldmatrix_x1(row);
        let m1 = ldmatrix_x1_trans(row + 128);
        let t4 = ldmatrix_x4_trans(row);
        let copy: [u32; 2] = ld_shared_v2(base + 1024 + 8 * lane);
        let o = out.offset(12 * lane as isize);
        st_global_v4(o, true, [m0[0], m1[0], t4[0], t4[1]]);
        st_global_v4(o.offset(4), true, [t4[2], t4[3], copy[0], copy[1]]);
        let copy2: [u32; 2] = ld_shared_v2(base + 1280 + 8 * lane);
        st_global_v4(o.offset(8), true, [copy2[0], copy2[1], 0, 0]);
    }
}

tessera::device_kernel! {
    /// `stmatrix` round trips (sm_90 on the GPU), one warp, block (32, 1, 1), 2048 bytes of
    /// dynamic shared memory. `x` holds four 8×8 b16 matrices (row-major, 128 words); every
    /// 128-word block of `out[384]` must equal `x`:
    /// block 0 via `ldmatrix.x4.trans` + `stmatrix.x4.trans`; block 1 via `ldmatrix.x4` +
    /// `stmatrix.x4`; block 2 via `x1` (matrix 0), `x1.trans` (matrix 1) and `x2` (matrices 2,
    /// 3) load/store pairs, with `x2.trans` storing matrices 2 and 3 once more on top.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
    pub fn stmatrix_probe(x: Ptr<u32>, out: Ptr<u32>) => STMATRIX_PROBE {
        let lane = lane_id();
        let base = dynamic_shared_base();
        let v = ld_global_v4(x.offset(4 * lane as isize), true, [0u32; 4]);
        st_shared_v4(base + 16 * lane, v);
        sync_warp(FULL_MASK);
        let row = 16 * lane; // matrix lane / 8, row lane % 8
        stmatrix_x4_trans(base + 512 + row, ldmatrix_x4_trans(base + row));
        stmatrix_x4(base + 1024 + row, ldmatrix_x4(base + row));
        stmatrix_x1(base + 1536 + row, ldmatrix_x1(base + row));
        stmatrix_x1_trans(base + 1536 + 128 + row, ldmatrix_x1_trans(base + 128 + row));
        stmatrix_x2(base + 1536 + 256 + row, ldmatrix_x2(base + 256 + row));
        stmatrix_x2_trans(base + 1536 + 256 + row, ldmatrix_x2_trans(base + 256 + row));
        sync_warp(FULL_MASK);
        for k in 0..3u32 {
            let w: [u32; 4] = ld_shared_v4(base + 512 * (k + 1) + 16 * lane);
            st_global_v4(out.offset((128 * k + 4 * lane) as isize), true, w);
        }
    }
}
