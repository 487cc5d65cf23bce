//! The mma tile checks: `mma.sync` f16, bf16 and s8 tiles against an exact or bounded f64
//! reference, the GPU against the emulator bit for bit.

use super::*;

/// How an mma check's inputs relate to exactness.
#[derive(Clone, Copy, PartialEq)]
enum MmaInputs {
    /// Every product and partial sum is exact in f32: bit-exact everywhere.
    Exact,
    /// Random floats: within [`MMA_RELATIVE_BOUND`] everywhere.
    Random,
    /// Infinities and NaNs among exact values: the GPU bit-exact against the emulator (both give
    /// the canonical NaN 0x7fffffff), the CPU reference (host f64 sums, x86 NaN encodings) with
    /// any NaN matching any NaN.
    Specials,
}

/// Reference, bounds and comparisons of `tiles` 16×8 f32 tiles `D = A·B` (K = 16) with rows
/// `>= m_valid` not stored; `a(t, r, k)` and `b(t, k, n)` are the exact input values.
fn mma_f32_reference(
    tiles: usize,
    m_valid: usize,
    a: impl Fn(usize, usize, usize) -> f32,
    b: impl Fn(usize, usize, usize) -> f32,
    inputs: MmaInputs,
) -> (Vec<u32>, Compare, Compare) {
    let mut want = Vec::with_capacity(tiles * 128);
    let mut bounds = Vec::with_capacity(tiles * 128 + CANARY_WORDS);
    for t in 0..tiles {
        for r in 0..16 {
            for n in 0..8 {
                if r >= m_valid {
                    want.push(SENTINEL);
                    bounds.push(None);
                    continue;
                }
                // Products of f16/bf16 values are exact in f64; one rounding at the end.
                let (mut sum, mut magnitude) = (0f64, 0f64);
                for k in 0..16 {
                    let p = a(t, r, k) as f64 * b(t, k, n) as f64;
                    sum += p;
                    magnitude += p.abs();
                }
                want.push((sum as f32).to_bits());
                bounds.push(Some(MMA_RELATIVE_BOUND * magnitude));
            }
        }
    }
    bounds.extend([None; CANARY_WORDS]);
    let within = Compare::Within(Rc::new(bounds));
    let (vs_cpu, vs_emulator) = match inputs {
        MmaInputs::Exact => (Compare::Exact, Compare::Exact),
        MmaInputs::Random => (within.clone(), within),
        MmaInputs::Specials => (Compare::NanClass, Compare::Exact),
    };
    (canaried(want), vs_cpu, vs_emulator)
}

fn tile_label(tiles_words: usize) -> Label {
    Box::new(move |i| {
        if i >= tiles_words {
            format!("canary {}", i - tiles_words)
        } else {
            format!("tile {} row {} col {}", i / 128, i % 128 / 8, i % 8)
        }
    })
}

fn halves_to_words(h: &[u16]) -> Vec<u32> {
    h.chunks(2)
        .map(|p| p[0] as u32 | (p[1] as u32) << 16)
        .collect()
}

/// `mma_f16_tile`: `a` (tiles × 16×16 f16, row-major) times `b` (tiles × 16×8 f16, k × n).
fn mma_f16(a: Vec<u16>, b: Vec<u16>, m_valid: u32, inputs: MmaInputs) -> Check {
    let tiles = a.len() / 256;
    let reference = mma_f32_reference(
        tiles,
        m_valid as usize,
        |t, r, k| f16(a[t * 256 + r * 16 + k]).to_f32(),
        |t, k, n| f16(b[t * 128 + k * 8 + n]).to_f32(),
        inputs,
    );
    mma_half_tiles(MMA_F16_TILE, (&a, &b), reference, move |a, b, d| {
        (a, b, d, m_valid)
    })
}

/// `mma_bf16_tile`: `a` (tiles × 16×16 bf16) times `btᵀ` (`bt`: tiles × 8×16 bf16, n × k).
fn mma_bf16(a: Vec<u16>, bt: Vec<u16>, inputs: MmaInputs) -> Check {
    let tiles = a.len() / 256;
    let reference = mma_f32_reference(
        tiles,
        16,
        |t, r, k| bf16(a[t * 256 + r * 16 + k]).to_f32(),
        |t, k, n| bf16(bt[t * 128 + n * 16 + k]).to_f32(),
        inputs,
    );
    mma_half_tiles(MMA_BF16_TILE, (&a, &bt), reference, |a, b, d| (a, b, d))
}

/// The check of a 16-bit mma tile kernel: the operands' halves `a` (tiles × 16×16) and `b`
/// uploaded as words, `args(a, b, d)` the kernel's arguments, the tiles × 16×8 f32 results `d`
/// against `(reference, vs_cpu, vs_emulator)`.
fn mma_half_tiles<A: KernelArgs + 'static>(
    kernel: Kernel<A>,
    (a, b): (&[u16], &[u16]),
    (reference, vs_cpu, vs_emulator): (Vec<u32>, Compare, Compare),
    args: impl Fn(Ptr<u32>, Ptr<u32>, Ptr<f32>) -> A + 'static,
) -> Check {
    let tiles = a.len() / 256;
    let (aw, bw) = (halves_to_words(a), halves_to_words(b));
    let run: Run = Box::new(move |device, module| {
        let (da, db, out) = (
            device.upload(&aw)?,
            device.upload(&bw)?,
            output(device, tiles * 128)?,
        );
        let config =
            LaunchConfig::linear(count_u32(tiles, kernel.name)?, 32).with_shared_bytes(768);
        let args = args(da.ptr(), db.ptr(), out.ptr().cast());
        device.launch(module, kernel, config, args)?;
        out.download()
    });
    Check {
        kernel: kernel.name,
        run,
        reference,
        vs_cpu,
        vs_emulator,
        f32_words: true,
        label: tile_label(tiles * 128),
        breakdown: None,
    }
}

/// `mma_s8_tile`: `d = c + a · btᵀ` over s8 → s32, wrapping; always bit-exact.
fn mma_s8(a: Vec<i8>, bt: Vec<i8>, c: Vec<i32>) -> Check {
    let tiles = a.len() / 512;
    let mut want = Vec::with_capacity(tiles * 128);
    for t in 0..tiles {
        for r in 0..16 {
            for n in 0..8 {
                let mut acc = c[t * 128 + r * 8 + n];
                for k in 0..32 {
                    let p = a[t * 512 + r * 32 + k] as i32 * bt[t * 256 + n * 32 + k] as i32;
                    acc = acc.wrapping_add(p);
                }
                want.push(acc as u32);
            }
        }
    }
    let words = |v: &[i8]| {
        v.chunks(4)
            .map(|q| pack_s8x4([q[0], q[1], q[2], q[3]]))
            .collect::<Vec<_>>()
    };
    let (aw, bw) = (words(&a), words(&bt));
    let cw: Vec<u32> = c.iter().map(|&x| x as u32).collect();
    let run: Run = Box::new(move |device, module| {
        let (da, db, dc) = (
            device.upload(&aw)?,
            device.upload(&bw)?,
            device.upload(&cw)?,
        );
        let out = output(device, tiles * 128)?;
        let config =
            LaunchConfig::linear(count_u32(tiles, "mma_s8_tile")?, 32).with_shared_bytes(768);
        device.launch(
            module,
            MMA_S8_TILE,
            config,
            (da.ptr(), db.ptr(), dc.ptr().cast(), out.ptr().cast()),
        )?;
        out.download()
    });
    Check::exact(
        MMA_S8_TILE.name,
        run,
        canaried(want),
        false,
        tile_label(tiles * 128),
    )
}

/// A small integer in [-8, 8]: products and sums of 16 of them are exact in every format.
fn small_int(rng: &mut Rng) -> f32 {
    rng.signed_range(-8, 8) as f32
}

/// `len` f16 bit patterns from `element`.
fn f16_bits(rng: &mut Rng, len: usize, element: impl Fn(&mut Rng) -> u16) -> Vec<u16> {
    (0..len).map(|_| element(rng)).collect()
}

fn small_f16(rng: &mut Rng) -> u16 {
    f16::from_f32(small_int(rng)).to_bits()
}

fn small_bf16(rng: &mut Rng) -> u16 {
    bf16::from_f32(small_int(rng)).to_bits()
}

/// f16, small integers: every product and sum is an exact integer; rows `>= m_valid` absent.
pub(super) fn mma_f16_small(m_valid: u32) -> Check {
    let mut rng = Rng(100 + m_valid as u64);
    let a = f16_bits(&mut rng, 8 * 256, small_f16);
    let b = f16_bits(&mut rng, 8 * 128, small_f16);
    mma_f16(a, b, m_valid, MmaInputs::Exact)
}

/// f16 subnormals `k · 2^-24` (|k| ≤ 15) times small integers: exact too.
pub(super) fn mma_f16_subnormal() -> Check {
    let mut rng = Rng(110);
    // f16 bits 0x000k are k · 2^-24; bit 15 is the sign.
    let a = f16_bits(&mut rng, 8 * 256, |rng| {
        rng.signed_range(0, 15) as u16 | ((rng.next_u32() % 2) as u16 * 0x8000)
    });
    let b = f16_bits(&mut rng, 8 * 128, small_f16);
    mma_f16(a, b, 16, MmaInputs::Exact)
}

/// f16 uniform in [-2, 2).
pub(super) fn mma_f16_uniform() -> Check {
    let mut rng = Rng(111);
    let uniform = |rng: &mut Rng| f16::from_f32(2.0 * rng.next_f32()).to_bits();
    let a = f16_bits(&mut rng, 64 * 256, uniform);
    let b = f16_bits(&mut rng, 64 * 128, uniform);
    mma_f16(a, b, 16, MmaInputs::Random)
}

/// Random finite f16 bit patterns: every exponent, subnormals and ±65504 included.
pub(super) fn mma_f16_any_exponent() -> Check {
    let mut rng = Rng(112);
    let finite = |rng: &mut Rng| loop {
        let h = rng.next_u32() as u16;
        if h & 0x7c00 != 0x7c00 {
            return h;
        }
    };
    let a = f16_bits(&mut rng, 64 * 256, finite);
    let b = f16_bits(&mut rng, 64 * 128, finite);
    mma_f16(a, b, 16, MmaInputs::Random)
}

/// ±inf, NaNs (two payloads and signs) and ±65504 among small integers (zeros included, so
/// inf·0 and inf − inf occur).
pub(super) fn mma_f16_specials() -> Check {
    const SPECIALS: [u16; 6] = [0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7bff, 0xfbff];
    let mut rng = Rng(113);
    let a = f16_bits(&mut rng, 8 * 256, |rng| {
        if rng.one_in(24) {
            SPECIALS[rng.next_u32() as usize % SPECIALS.len()]
        } else {
            small_f16(rng)
        }
    });
    let b = f16_bits(&mut rng, 8 * 128, |rng| {
        if rng.one_in(40) {
            SPECIALS[rng.next_u32() as usize % 2]
        } else {
            small_f16(rng)
        }
    });
    mma_f16(a, b, 16, MmaInputs::Specials)
}

pub(super) fn mma_bf16_small() -> Check {
    let mut rng = Rng(120);
    let a = f16_bits(&mut rng, 8 * 256, small_bf16);
    let bt = f16_bits(&mut rng, 8 * 128, small_bf16);
    mma_bf16(a, bt, MmaInputs::Exact)
}

pub(super) fn mma_bf16_uniform() -> Check {
    let mut rng = Rng(121);
    let uniform = |rng: &mut Rng| bf16::from_f32(rng.next_f32()).to_bits();
    let a = f16_bits(&mut rng, 64 * 256, uniform);
    let bt = f16_bits(&mut rng, 64 * 128, uniform);
    mma_bf16(a, bt, MmaInputs::Random)
}

/// bf16 with magnitudes from 2^-40 to 2^40 (products stay normal and finite in f32).
pub(super) fn mma_bf16_wide() -> Check {
    let mut rng = Rng(122);
    let wide = |rng: &mut Rng| {
        let scale = 2f32.powi(rng.signed_range(-40, 40));
        bf16::from_f32(rng.next_f32() * scale).to_bits()
    };
    let a = f16_bits(&mut rng, 64 * 256, wide);
    let bt = f16_bits(&mut rng, 64 * 128, wide);
    mma_bf16(a, bt, MmaInputs::Random)
}

pub(super) fn mma_s8_random() -> Check {
    let mut rng = Rng(130);
    let tiles = 16;
    let a: Vec<i8> = (0..tiles * 512).map(|_| rng.next_u32() as i8).collect();
    let bt: Vec<i8> = (0..tiles * 256).map(|_| rng.next_u32() as i8).collect();
    let c: Vec<i32> = (0..tiles * 128)
        .map(|_| rng.next_u32() as i32 >> 4)
        .collect();
    mma_s8(a, bt, c)
}

/// s8 extremes (-128, 127, -1, 0, 1, -127) with accumulators near the i32 limits, so that
/// many sums wrap.
pub(super) fn mma_s8_extremes() -> Check {
    const EXTREMES: [i8; 6] = [-128, 127, -1, 0, 1, -127];
    let mut rng = Rng(131);
    let tiles = 16;
    let a: Vec<i8> = (0..tiles * 512)
        .map(|_| EXTREMES[rng.next_u32() as usize % 3])
        .collect();
    let bt: Vec<i8> = (0..tiles * 256)
        .map(|_| EXTREMES[rng.next_u32() as usize % EXTREMES.len()])
        .collect();
    let c: Vec<i32> = (0..tiles * 128)
        .map(|_| match rng.next_u32() % 3 {
            0 => i32::MAX - rng.signed_range(0, 1 << 20),
            1 => i32::MIN + rng.signed_range(0, 1 << 20),
            _ => rng.next_u32() as i32,
        })
        .collect();
    mma_s8(a, bt, c)
}
