//! Probe kernels: small, real kernels that exercise the rest of the runtime layer, so that every
//! wrapper is compiled for its targets in CI (assembled by ptxas; in the AMD code objects),
//! checked against CPU references on the emulator, and can be run on a GPU through the same
//! handles to compare GPU and emulator outputs bit for bit.
//!
//! * here: the probes of what every target has (conversions, shuffles, the thread geometry),
//!   built for nvptx64, amdgpu and the host;
//! * [`nvidia`]: NVIDIA's instructions (`mma.sync`, `ldmatrix`, `stmatrix`, `cp.async`), not
//!   built for amdgpu (the device layer has no such functions there);
//! * [`amd`]: AMD's matrix cores (`v_mfma`), not built for nvptx64.

use tessera::device::*;
use tessera::dtype::{bf16, f16, f8e4m3, f8e5m2};
use tessera::Ptr;

#[cfg(not(target_arch = "nvptx64"))]
pub mod amd;
#[cfg(not(target_arch = "amdgpu"))]
pub mod nvidia;

#[cfg(not(target_arch = "nvptx64"))]
pub use amd::*;
#[cfg(not(target_arch = "amdgpu"))]
pub use nvidia::*;

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
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
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
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
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
