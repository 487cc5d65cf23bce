//! Probe kernels: small, real kernels that exercise the rest of the runtime layer, so that every
//! wrapper is assembled by ptxas in CI, checked against CPU references on the emulator, and can
//! be run on a GPU through the same handles to compare GPU and emulator outputs bit for bit.

use tessera::device::*;
use tessera::dtype::{bf16, f16, f8e4m3, f8e5m2};
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
    /// Every conversion of the runtime layer on `n` input words (one thread each), with `x` the
    /// word as f32: `out[12i..12i + 12]` =
    /// `[f16(x) | bf16(x) << 16, e4m3(x) | e5m2(x) << 8, i32_rn(x), u32_rz(x),
    ///   f32(f16(w_lo16)), f32(bf16(w_lo16)), f16(e4m3(w_lo8)) | f16(e5m2(w_lo8)) << 16,
    ///   f32(i32(w)), i32_rz(x), u32_rn(x), f32(u32(w)), e4m3x2(x, -x) | e5m2x2(x, 2x) << 16]`.
    /// Run on a GPU and on the emulator, the outputs must be identical (the emulator's
    /// conversions are meant to be bit-exact).
    pub fn convert_probe(input: Ptr<u32>, out: Ptr<u32>, n: u32) => CONVERT_PROBE {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i >= n {
            return;
        }
        let w = ld_global_v1(input.offset(i as isize), true, 0u32);
        let x = f32::from_bits(w);
        let narrow = [
            f32_to_f16(x).to_bits() as u32 | (f32_to_bf16(x).to_bits() as u32) << 16,
            f32_to_f8e4m3(x).to_bits() as u32 | (f32_to_f8e5m2(x).to_bits() as u32) << 8,
            f32_to_i32_rn(x) as u32,
            f32_to_u32_rz(x),
        ];
        let e4 = f8e4m3x2_to_f16x2([f8e4m3(w as u8), f8e4m3(0)])[0];
        let e5 = f8e5m2x2_to_f16x2([f8e5m2(w as u8), f8e5m2(0)])[0];
        let widen = [
            f16_to_f32(f16(w as u16)).to_bits(),
            bf16_to_f32(bf16(w as u16)).to_bits(),
            e4.to_bits() as u32 | (e5.to_bits() as u32) << 16,
            i32_to_f32(w as i32).to_bits(),
        ];
        let p4 = f32x2_to_f8e4m3x2(x, -x);
        let p5 = f32x2_to_f8e5m2x2(x, 2.0 * x);
        let rest = [
            f32_to_i32_rz(x) as u32,
            f32_to_u32_rn(x),
            u32_to_f32(w).to_bits(),
            u32::from_le_bytes([p4[0].to_bits(), p4[1].to_bits(), p5[0].to_bits(), p5[1].to_bits()]),
        ];
        let o = out.offset(12 * i as isize);
        st_global_v4(o, true, narrow);
        st_global_v4(o.offset(4), true, widen);
        st_global_v4(o.offset(8), true, rest);
    }
}

/// The host's reference of [`convert_probe`] for input word `w` (`x = f32::from_bits(w)`): its
/// 12 output words from the conversions of `tessera::dtype` and Rust's casts.
#[cfg(not(target_arch = "nvptx64"))]
pub fn convert_reference(w: u32) -> [u32; 12] {
    let x = f32::from_bits(w);
    [
        f16::from_f32(x).to_bits() as u32 | (bf16::from_f32(x).to_bits() as u32) << 16,
        f8e4m3::from_f32(x).to_bits() as u32 | (f8e5m2::from_f32(x).to_bits() as u32) << 8,
        x.round_ties_even() as i32 as u32,
        x as u32,
        f16(w as u16).to_f32().to_bits(),
        bf16(w as u16).to_f32().to_bits(),
        f8e4m3(w as u8).to_f16().to_bits() as u32
            | (f8e5m2(w as u8).to_f16().to_bits() as u32) << 16,
        (w as i32 as f32).to_bits(),
        x as i32 as u32,
        x.round_ties_even() as u32,
        (w as f32).to_bits(),
        u32::from_le_bytes([
            f8e4m3::from_f32(x).to_bits(),
            f8e4m3::from_f32(-x).to_bits(),
            f8e5m2::from_f32(x).to_bits(),
            f8e5m2::from_f32(2.0 * x).to_bits(),
        ]),
    ]
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
    /// Shuffle probe, one block of 64 threads: thread `t` with value `v = t * 3 + 1` (and the
    /// 64-bit `V = v * 0x1_0000_0001`) writes 12 words to `out[12t..]`: idx/bfly/up/down over
    /// the whole warp (source lane / offset `(t * 7) % 32`, 5, 1, 3), the same in segments of 8
    /// lanes (`shfl_c(8)`, `shfl_c_up(8)`), and a 64-bit `down` by 2 (two words).
    pub fn shuffle_probe(out: Ptr<u32>) => SHUFFLE_PROBE {
        let t = thread_idx_x();
        let v = t * 3 + 1;
        let big = v as u64 * 0x1_0000_0001;
        let r64 = shfl_down(FULL_MASK, big, 2, SHFL_C_FULL);
        let words = [
            shfl_idx(FULL_MASK, v, (t * 7) % 32, SHFL_C_FULL),
            shfl_bfly(FULL_MASK, v, 5, SHFL_C_FULL),
            shfl_up(FULL_MASK, v, 1, SHFL_C_UP),
            shfl_down(FULL_MASK, v, 3, SHFL_C_FULL),
            shfl_idx(FULL_MASK, v, (t * 7) % 32, shfl_c(8)),
            shfl_bfly(FULL_MASK, v, 5, shfl_c(8)),
            shfl_up(FULL_MASK, v, 1, shfl_c_up(8)),
            shfl_down(FULL_MASK, v, 3, shfl_c(8)),
            r64 as u32,
            (r64 >> 32) as u32,
            lane_id(),
            warp_id(),
        ];
        let o = out.offset(12 * t as isize);
        st_global_v4(o, true, [words[0], words[1], words[2], words[3]]);
        st_global_v4(o.offset(4), true, [words[4], words[5], words[6], words[7]]);
        st_global_v4(o.offset(8), true, [words[8], words[9], words[10], words[11]]);
    }
}

/// The host's reference of [`shuffle_probe`] for thread `t` (value `v(t) = 3t + 1`): its 12
/// output words, each the value of the lane the shuffle reads (its own where that lane is out
/// of range or outside its segment of 8), then the lane and the warp.
#[cfg(not(target_arch = "nvptx64"))]
pub fn shuffle_reference(t: u32) -> [u32; 12] {
    let v = |t: u32| t * 3 + 1;
    let (lane, base) = (t % 32, t / 32 * 32);
    let seg = base + lane / 8 * 8;
    let big_src = if lane + 2 < 32 { t + 2 } else { t };
    let big = v(big_src) as u64 * 0x1_0000_0001;
    [
        v(base + (t * 7) % 32),
        v(base + (lane ^ 5)),
        v(if lane >= 1 { t - 1 } else { t }),
        v(if lane + 3 < 32 { t + 3 } else { t }),
        v(seg + (t * 7) % 32 % 8),
        v(if (lane ^ 5) / 8 == lane / 8 {
            base + (lane ^ 5)
        } else {
            t
        }),
        v(if lane % 8 >= 1 { t - 1 } else { t }),
        v(if lane % 8 + 3 < 8 { t + 3 } else { t }),
        big as u32,
        (big >> 32) as u32,
        lane,
        t / 32,
    ]
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

tessera::device_kernel! {
    /// Geometry probe: every thread writes 16 words at `out[16 g]`, `g` its global linear id
    /// (`linear block id * threads per block + linear thread id`): `%tid.{x,y,z}`,
    /// `%ctaid.{x,y,z}`, `%ntid.{x,y,z}`, `%nctaid.{x,y,z}`, `%laneid`, the warp id, the linear
    /// thread id and `0x600d`.
    pub fn geometry_probe(out: Ptr<u32>) => GEOMETRY_PROBE {
        let linear_block =
            block_idx_x() + grid_dim_x() * (block_idx_y() + grid_dim_y() * block_idx_z());
        let threads = block_dim_x() * block_dim_y() * block_dim_z();
        let g = linear_block * threads + linear_thread_id();
        let o = out.offset(16 * g as isize);
        st_global_v4(o, true, [thread_idx_x(), thread_idx_y(), thread_idx_z(), block_idx_x()]);
        st_global_v4(o.offset(4), true, [block_idx_y(), block_idx_z(), block_dim_x(), block_dim_y()]);
        st_global_v4(o.offset(8), true, [block_dim_z(), grid_dim_x(), grid_dim_y(), grid_dim_z()]);
        st_global_v4(o.offset(12), true, [lane_id(), warp_id(), linear_thread_id(), 0x600d]);
    }
}
