//! The probe kernels against CPU references on the test device (the GPU when present, else the
//! emulator; see `support`), and on the emulator the transpose's bank-conflict report.

mod support;

use support::{device, run_in_buffers, Buffer, Rng, TestDevice};
use tessera::dtype::{bf16, f16, f8e4m3, pack_s8x4};
use tessera::launch::LaunchConfig;
use tessera_kernels::probes::*;
use tessera_kernels::TRANSPOSE32;

/// A launch of `grid` blocks of `block` threads with `shared_bytes` of dynamic shared memory.
fn config(grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid,
        block,
        shared_bytes,
    }
}

/// The launch of the tensor-core tile probes: a warp per 16 × 8 tile, 768 bytes of shared
/// memory.
fn tile_config(tiles: usize) -> LaunchConfig {
    config([tiles as u32, 1, 1], [32, 1, 1], 768)
}

/// `x` rounded to f16: its bits and its value.
fn to_f16(x: f32) -> (u16, f32) {
    let h = f16::from_f32(x);
    (h.to_bits(), h.to_f32())
}

/// `x` rounded to bf16: its bits and its value.
fn to_bf16(x: f32) -> (u16, f32) {
    let h = bf16::from_f32(x);
    (h.to_bits(), h.to_f32())
}

/// `n` draws of `scale · rng.next_f32()` rounded to a 16-bit float by `round`: their values,
/// and their bits packed two to a word.
fn rounded_halves(
    rng: &mut Rng,
    n: usize,
    scale: f32,
    round: impl Fn(f32) -> (u16, f32),
) -> (Vec<f32>, Vec<u32>) {
    let (bits, values): (Vec<u16>, Vec<f32>) =
        (0..n).map(|_| round(rng.next_f32() * scale)).unzip();
    (values, halves_to_words(&bits))
}

/// The operands of the 16-bit tile probes, drawn from `seed` by [`rounded_halves`]: `tiles`
/// 16 × 16 tiles of A, then 128 elements a tile of B.
fn tile_operands(
    seed: u64,
    tiles: usize,
    scale: f32,
    round: impl Fn(f32) -> (u16, f32) + Copy,
) -> [(Vec<f32>, Vec<u32>); 2] {
    let mut rng = Rng(seed);
    let a = rounded_halves(&mut rng, tiles * 256, scale, round);
    [a, rounded_halves(&mut rng, tiles * 128, scale, round)]
}

/// Element `(r, n)` of tile `t` of a tensor-core product, `got`, against the exact sum of its
/// `terms`: within 1e-5 plus the device's tensor-core slack for their magnitudes.
fn assert_dot_close(
    gpu: &TestDevice,
    got: f64,
    terms: impl Iterator<Item = f64> + Clone,
    (t, r, n): (usize, usize, usize),
) {
    let want: f64 = terms.clone().sum();
    let magnitude: f64 = terms.map(f64::abs).sum();
    assert!(
        (got - want).abs() <= 1e-5 + gpu.mma_slack(magnitude),
        "tile {t} ({r},{n}): {got} vs {want}"
    );
}

fn halves_to_words(h: &[u16]) -> Vec<u32> {
    h.chunks(2)
        .map(|p| p[0] as u32 | (p[1] as u32) << 16)
        .collect()
}

#[test]
fn mma_f16_tile_matches_cpu_with_ragged_rows() {
    let gpu = device();
    let tiles = 3;
    let [(a, a_words), (b, b_words)] = tile_operands(10, tiles, 2.0, to_f16);
    for m_valid in [16u32, 11, 1] {
        let [da, db] = [&a_words, &b_words].map(|w| Buffer::from_u32(gpu.device(), w));
        let dd = Buffer::filled(gpu.device(), tiles * 128, 0xdead_beef);
        let args = (da.ptr(), db.ptr(), dd.ptr(), m_valid);
        gpu.launch(MMA_F16_TILE, tile_config(tiles), args).unwrap();
        let d = dd.to_u32();
        for t in 0..tiles {
            for r in 0..16 {
                for n in 0..8 {
                    let got = d[t * 128 + r * 8 + n];
                    if r as u32 >= m_valid {
                        assert_eq!(
                            got, 0xdead_beef,
                            "m_valid {m_valid} tile {t} row {r} stored"
                        );
                        continue;
                    }
                    let terms = (0..16)
                        .map(|k| a[t * 256 + r * 16 + k] as f64 * b[t * 128 + k * 8 + n] as f64);
                    let got = f32::from_bits(got) as f64;
                    assert_dot_close(gpu, got, terms, (t, r, n));
                }
            }
        }
    }
}

#[test]
fn mma_bf16_tile_matches_cpu() {
    let gpu = device();
    let tiles = 2;
    let [(a, a_words), (bt, bt_words)] = tile_operands(11, tiles, 1.0, to_bf16);
    let [da, db] = [&a_words, &bt_words].map(|w| Buffer::from_u32(gpu.device(), w));
    let dd = Buffer::filled(gpu.device(), tiles * 128, 0);
    let args = (da.ptr(), db.ptr(), dd.ptr());
    gpu.launch(MMA_BF16_TILE, tile_config(tiles), args).unwrap();
    let d = dd.to_f32();
    for t in 0..tiles {
        for r in 0..16 {
            for n in 0..8 {
                let terms = (0..16)
                    .map(|k| a[t * 256 + r * 16 + k] as f64 * bt[t * 128 + n * 16 + k] as f64);
                assert_dot_close(gpu, d[t * 128 + r * 8 + n] as f64, terms, (t, r, n));
            }
        }
    }
}

#[test]
fn mma_s8_tile_matches_cpu_exactly() {
    let gpu = device();
    let tiles = 2;
    let mut rng = Rng(12);
    let a: Vec<i8> = (0..tiles * 512).map(|_| rng.next_u32() as i8).collect();
    let bt: Vec<i8> = (0..tiles * 256).map(|_| rng.next_u32() as i8).collect();
    let c: Vec<i32> = (0..tiles * 128)
        .map(|_| rng.next_u32() as i32 >> 8)
        .collect();
    let words = |v: &[i8]| {
        v.chunks(4)
            .map(|q| pack_s8x4([q[0], q[1], q[2], q[3]]))
            .collect::<Vec<_>>()
    };
    let [da, db] = [words(&a), words(&bt)].map(|w| Buffer::from_u32(gpu.device(), &w));
    let dc = Buffer::from_i32(gpu.device(), &c);
    let dd = Buffer::filled(gpu.device(), tiles * 128, 0);
    let args = (da.ptr(), db.ptr(), dc.ptr(), dd.ptr());
    gpu.launch(MMA_S8_TILE, tile_config(tiles), args).unwrap();
    let d = dd.to_i32();
    for t in 0..tiles {
        for r in 0..16 {
            for n in 0..8 {
                let want = c[t * 128 + r * 8 + n]
                    + (0..32)
                        .map(|k| a[t * 512 + r * 32 + k] as i32 * bt[t * 256 + n * 32 + k] as i32)
                        .sum::<i32>();
                assert_eq!(d[t * 128 + r * 8 + n], want, "tile {t} ({r},{n})");
            }
        }
    }
}

#[test]
fn transpose_is_correct_and_padding_removes_bank_conflicts() {
    let gpu = device();
    let mut reports = Vec::new();
    for n in gpu.cases(&[64u32], &[2048]) {
        let x: Vec<f32> = (0..n * n).map(|i| i as f32).collect();
        for padded in [0u32, 1] {
            let dx = Buffer::from_f32(gpu.device(), &x);
            let dout = Buffer::filled(gpu.device(), (n * n) as usize, 0);
            let report = gpu
                .launch(
                    TRANSPOSE32,
                    config([n / 32, n / 32, 1], [32, 8, 1], 32 * 33 * 4),
                    (dx.ptr(), dout.ptr(), n, padded),
                )
                .unwrap();
            let out = dout.to_f32();
            for r in 0..n {
                for c in 0..n {
                    assert_eq!(
                        out[(r * n + c) as usize],
                        x[(c * n + r) as usize],
                        "n {n} padded {padded} ({r},{c})"
                    );
                }
            }
            if n == 64 {
                reports.push(report);
            }
        }
    }
    let (Some(unpadded), Some(padded)) = (
        gpu.emulator_only(&reports[0], "transpose32: shared wavefronts, unpadded tile"),
        gpu.emulator_only(&reports[1], "transpose32: shared wavefronts, padded tile"),
    ) else {
        return;
    };
    // n = 64: 4 blocks x 8 warps x 4 iterations = 128 warp-wide stores and 128 loads.
    assert_eq!(unpadded.shared_accesses, 256);
    assert_eq!(padded.shared_accesses, 256);
    // Stores are row-contiguous (1 wavefront each) in both; column loads are 32-way
    // conflicts without padding and conflict free with it.
    assert_eq!(unpadded.shared_wavefronts, 128 + 128 * 32);
    assert_eq!(padded.shared_wavefronts, 256);
    assert_eq!(padded.shared_ideal_wavefronts, 256);
    assert_eq!(unpadded.shared_sites.len(), 2);
}

#[test]
fn convert_probe_matches_the_host_conversions() {
    let gpu = device();
    let mut rng = Rng(13);
    let mut input: Vec<u32> = (0..1000).map(|_| rng.next_u32()).collect();
    input.extend([
        0x7fc0_0000,
        0xffc0_0000,
        0x7f80_0000,
        0xff80_0000,
        0,
        0x8000_0000,
        0x477f_f000,
        0x43e0_0000,
        0x43e8_0000,
        0x4780_0000,
        0x0000_7e01,
        0x0000_7c00,
        0x0000_007f,
        0x0000_00ff,
        0x0000_007c,
        0x0000_00fd,
        0x4f00_0000,
        0xcf00_0001,
        0x3f00_0000,
        0x3fc0_0000,
    ]);
    let n = input.len() as u32;
    let din = Buffer::from_u32(gpu.device(), &input);
    let dout = Buffer::filled(gpu.device(), 12 * n as usize, 0);
    gpu.launch(
        CONVERT_PROBE,
        config([n.div_ceil(128), 1, 1], [128, 1, 1], 0),
        (din.ptr(), dout.ptr(), n),
    )
    .unwrap();
    let out = dout.to_u32();
    for (i, &w) in input.iter().enumerate() {
        let want = convert_reference(w);
        assert_eq!(&out[12 * i..12 * i + 12], &want, "input {w:#010x}");
    }
}

/// Element (r, c) of matrix m of the 128-word test input of the matrix probes.
fn probe_element(x: &[u32], m: usize, r: usize, c: usize) -> u32 {
    (x[m * 32 + r * 4 + c / 2] >> (16 * (c % 2))) & 0xffff
}

#[test]
fn ldmatrix_probe_gives_the_ptx_fragments() {
    let gpu = device();
    let x: Vec<u32> = (0..128u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x5555)
        .collect();
    let dx = Buffer::from_u32(gpu.device(), &x);
    let dout = Buffer::filled(gpu.device(), 32 * 12, 0);
    let report = gpu
        .launch(
            LDMATRIX_PROBE,
            config([1, 1, 1], [32, 1, 1], 2048),
            (dx.ptr(), dout.ptr()),
        )
        .unwrap();
    let out = dout.to_u32();
    let pair = |lo: u32, hi: u32| lo | hi << 16;
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        let w = &out[12 * lane..12 * lane + 12];
        let direct = |m| {
            pair(
                probe_element(&x, m, g, 2 * t),
                probe_element(&x, m, g, 2 * t + 1),
            )
        };
        let trans = |m| {
            pair(
                probe_element(&x, m, 2 * t, g),
                probe_element(&x, m, 2 * t + 1, g),
            )
        };
        assert_eq!(w[0], direct(0), "x1 lane {lane}");
        assert_eq!(w[1], trans(1), "x1.trans lane {lane}");
        for m in 0..4 {
            assert_eq!(w[2 + m], trans(m), "x4.trans lane {lane} matrix {m}");
        }
        assert_eq!(&w[6..8], &x[2 * lane..2 * lane + 2], "v2 copy lane {lane}");
        assert_eq!(
            &w[8..10],
            &x[64 + 2 * lane..64 + 2 * lane + 2],
            "v2 copy lane {lane}"
        );
    }
    if let Some(report) = gpu.emulator_only(&report, "ldmatrix_probe: cp.async shared site") {
        assert!(report
            .shared_sites
            .iter()
            .any(|s| s.kind == tessera::emulator::SharedAccessKind::CpAsync));
    }
}

#[test]
fn shuffle_probe_matches_cuda_semantics() {
    let gpu = device();
    let dout = Buffer::filled(gpu.device(), 64 * 12, 0);
    gpu.launch(
        SHUFFLE_PROBE,
        config([1, 1, 1], [64, 1, 1], 0),
        (dout.ptr(),),
    )
    .unwrap();
    let out = dout.to_u32();
    for t in 0..64u32 {
        let w = &out[12 * t as usize..12 * t as usize + 12];
        let want = shuffle_reference(t);
        assert_eq!(w, &want, "thread {t}");
    }
}

#[test]
fn stmatrix_probe_round_trips() {
    let gpu = device();
    let x: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let dx = Buffer::from_u32(gpu.device(), &x);
    let dout = Buffer::filled(gpu.device(), 3 * 128, 0);
    let launch = config([1, 1, 1], [32, 1, 1], 2048);
    let args = (dx.ptr(), dout.ptr());
    // `stmatrix` is sm_90: the probe is an entry of the PTX only when it was built for sm_90
    // (TESSERA_SM=sm_90); its host build always exists.
    if gpu.has_entry(STMATRIX_PROBE.name) == Some(false) {
        if gpu.is_gpu() {
            let target = support::ptx_target().unwrap_or("?");
            gpu.skip(&format!(
                "stmatrix_probe: not in the {target} PTX (build with TESSERA_SM=sm_90 to run it)"
            ));
            return;
        }
        run_in_buffers(STMATRIX_PROBE, launch, args).unwrap();
    } else {
        gpu.launch(STMATRIX_PROBE, launch, args).unwrap();
    }
    let out = dout.to_u32();
    for k in 0..3 {
        assert_eq!(&out[128 * k..128 * (k + 1)], &x[..], "round trip {k}");
    }
}

#[test]
fn geometry_probe_reports_every_index() {
    let gpu = device();
    let (grid, block) = ([3u32, 2, 2], [8u32, 5, 2]);
    let threads = 80u32;
    let total = 12 * threads;
    let dout = Buffer::filled(gpu.device(), 16 * total as usize, 0);
    gpu.launch(GEOMETRY_PROBE, config(grid, block, 0), (dout.ptr(),))
        .unwrap();
    let out = dout.to_u32();
    for g in 0..total {
        let (b, t) = (g / threads, g % threads);
        let tid = [t % 8, t / 8 % 5, t / 40];
        let ctaid = [b % 3, b / 3 % 2, b / 6];
        let want = [
            tid[0],
            tid[1],
            tid[2],
            ctaid[0],
            ctaid[1],
            ctaid[2],
            8,
            5,
            2,
            3,
            2,
            2,
            t % 32,
            t / 32,
            t,
            0x600d,
        ];
        assert_eq!(
            &out[16 * g as usize..16 * g as usize + 16],
            &want,
            "thread {g}"
        );
    }
}

/// `mfma_probe` as AMD code (the emulator emulating amdgpu; no NVIDIA GPU runs it) against the
/// products written out from the CDNA3 ISA's fragment definitions (`mfma_reference`), bit for
/// bit: inputs of small integers, so every partial sum is exact in f32. Emulating an NVIDIA
/// GPU, its first `mfma` stops the launch.
#[test]
fn mfma_probe_gives_the_isa_products_as_amd_code() {
    use tessera::emulator::{with_target, EmulatedTarget, EmulatorError};
    let gpu = device();
    if gpu.is_gpu() {
        gpu.skip("mfma_probe: AMD code, which the emulator runs in AMD mode");
        return;
    }
    // Element `i` of lane `l`'s A (operand 0) or B (operand 1) fragment: -8..=8.
    let element = |l: u32, operand: u32, i: u32, salt: u32| {
        ((l * 7 + operand * 11 + i * 3 + salt * 5) % 17) as i32 - 8
    };
    // Word `4l + 2·operand + j` of lane `l`'s fragments.
    let words = |pack: &dyn Fn(u32, u32, u32) -> u32| -> Vec<u32> {
        (0..256u32).map(|w| pack(w / 4, w % 4 / 2, w % 2)).collect()
    };
    let f16s = words(&|l, op, j| {
        let h = |i| f16::from_f32(element(l, op, i, 0) as f32).to_bits() as u32;
        h(2 * j) | h(2 * j + 1) << 16
    });
    let bf16s = words(&|l, op, j| {
        let h = |i| bf16::from_f32(element(l, op, i, 1) as f32).to_bits() as u32;
        h(2 * j) | h(2 * j + 1) << 16
    });
    let i8s = words(&|l, op, j| {
        u32::from_le_bytes(std::array::from_fn(|b| {
            element(l, op, 4 * j + b as u32, 2) as i8 as u8
        }))
    });
    // f8: the bytes of small integers in e4m3 (exact in e5m2 too: read as e5m2 they are other
    // values, still of few bits, so the sums stay exact).
    let f8s = words(&|l, op, j| {
        u32::from_le_bytes(std::array::from_fn(|b| {
            f8e4m3::from_f32(element(l, op, 4 * j + b as u32, 3) as f32).to_bits()
        }))
    });
    let (df16, dbf16, di8, df8) = (
        Buffer::from_u32(gpu.device(), &f16s),
        Buffer::from_u32(gpu.device(), &bf16s),
        Buffer::from_u32(gpu.device(), &i8s),
        Buffer::from_u32(gpu.device(), &f8s),
    );
    let dout = Buffer::filled(gpu.device(), 64 * MFMA_PROBE_WORDS, 0);
    let launch = || {
        run_in_buffers(
            MFMA_PROBE,
            config([1, 1, 1], [64, 1, 1], 0),
            (df16.ptr(), dbf16.ptr(), di8.ptr(), df8.ptr(), dout.ptr()),
        )
    };
    with_target(EmulatedTarget::Amdgpu, launch).unwrap();
    let (out, want) = (dout.to_u32(), mfma_reference(&f16s, &bf16s, &i8s, &f8s));
    for l in 0..64 {
        let lane = l * MFMA_PROBE_WORDS..(l + 1) * MFMA_PROBE_WORDS;
        assert_eq!(out[lane.clone()], want[lane], "lane {l}");
    }
    let refused = with_target(EmulatedTarget::Sm80, launch).unwrap_err();
    assert!(
        matches!(refused, EmulatorError::AmdInstruction { .. }),
        "{refused}"
    );
}
