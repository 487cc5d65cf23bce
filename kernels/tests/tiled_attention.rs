//! Flash attention forward (`tessera_kernels::tiled::attention`) against an f64 CPU reference on
//! the test device (the GPU when present, else the emulator; see `support`): two heads, sequence
//! lengths 1, 17, 64 and 130 (one partial key block, exactly one, and ragged blocks past one),
//! head dimensions 64 and 128, causal and not, f16 and bf16 on the first compiled warp count of
//! each head dimension, and two cases on the second (see [`SECOND_WARPS`]).
//!
//! **Tolerance.** The reference is exact softmax attention in f64 of the already-rounded inputs.
//! The kernel rounds twice: the probabilities `p = exp2(s − m)` (in `[0, 1]`) to `T` before
//! `p · v`, and the output to `T`. With `u` the unit roundoff of `T` (2⁻¹¹ for f16, 2⁻⁸ for bf16),
//! the first changes `o = Σ pⱼ vⱼ / l` by at most `u · Σ pⱼ |vⱼ| / l`, the second by `u · |o|`;
//! the f32 scores, exponentials and sums add a few 2⁻²⁴ relative, covered by doubling the first
//! term and an absolute `1e-5` (plus the tensor cores' truncation slack on a GPU). A wrong mask,
//! a missed key block or a wrong rescaling moves an output by a whole probability-weighted value
//! (≈ 10⁻² and more at these sizes), far outside the bound.

mod support;

use support::{device, device_and_module, draws, Float, TestDevice};
use tessera::emulator::{with_target, EmulatedTarget};
use tessera::launch::DeviceElement;
use tessera::tensor::{Tensor, TensorRef};
use tessera::{bf16, f16};
use tessera_kernels::tiled::attention::{
    tile_attention_d128_w4, tile_attention_d128_w8, tile_attention_d64,
};
use tessera_test_support::attention::attention_row;

/// Heads (`BH`) of every case.
const HEADS: usize = 2;
/// Sequence lengths: one key, a partial block, one whole block, ragged blocks past one.
const SEQS: [usize; 4] = [1, 17, 64, 130];
/// Value written into the output before the launch, and into guard elements past its end.
const GUARD: f32 = 99.0;
/// Guard elements past the output's end.
const GUARDS: usize = 8;

/// `n` values uniform in `[-scale, scale)` from the seeded test RNG, rounded to `T`.
fn values<T: Float>(seed: u64, n: usize, scale: f32) -> Vec<T> {
    draws(seed, n, |rng| T::from_f32(rng.next_f32() * scale))
}

/// Softmax attention in f64 of `[HEADS, seq, d]` tensors: the output, and per output element
/// the bound `Σⱼ pⱼ |vⱼ| / l` of the probability-rounding error (see the module docs).
fn reference<T: Float>(
    (q, k, v): (&[T], &[T], &[T]),
    seq: usize,
    d: usize,
    causal: bool,
) -> (Vec<f64>, Vec<f64>) {
    let (mut out, mut spread) = (vec![0f64; q.len()], vec![0f64; q.len()]);
    for h in 0..HEADS {
        let at =
            |x: usize, row: usize, col: usize| [q, k, v][x][(h * seq + row) * d + col].to_f64();
        for i in 0..seq {
            let keys = if causal { i + 1 } else { seq };
            for (c, (want, bound)) in attention_row(at, i, keys, d).into_iter().enumerate() {
                let o = (h * seq + i) * d + c;
                (out[o], spread[o]) = (want, bound);
            }
        }
    }
    (out, spread)
}

/// Runs one case: `$kernel` at `$consts` (a `Consts` value with `BM`) on random `[HEADS, seq, d]`
/// tensors of `$t` (`$case` is `(seq, d, causal)`), checked against [`reference`] and the
/// guards. `[f16, bf16]` runs it on both element types; `bf16 if COND` on bf16 where `COND`
/// holds, else on f16. The tensors are launched as `[1, HEADS, seq, d]`: contiguous, or with
/// `interleaved` views of `[1, seq, HEADS, d]` storage (heads interleaved row by row, as a fused
/// projection's output is), transposed.
macro_rules! check_case {
    ($gpu:expr, $kernel:ident, [f16, bf16], $($case:tt)*) => {{
        check_case!($gpu, $kernel, f16, $($case)*);
        check_case!($gpu, $kernel, bf16, $($case)*);
    }};
    ($gpu:expr, $kernel:ident, bf16 if $bf16:expr, $($case:tt)*) => {{
        if $bf16 {
            check_case!($gpu, $kernel, bf16, $($case)*);
        } else {
            check_case!($gpu, $kernel, f16, $($case)*);
        }
    }};
    ($gpu:expr, $kernel:ident, $t:ty, $consts:expr, $case:expr) => {
        check_case!($gpu, $kernel, $t, $consts, $case, contiguous)
    };
    ($gpu:expr, $kernel:ident, $t:ty, $consts:expr, $case:expr, $layout:ident) => {{
        let gpu: &TestDevice = $gpu;
        let (seq, d, causal): (usize, usize, bool) = $case;
        let interleaved = stringify!($layout) == "interleaved";
        let n = HEADS * seq * d;
        let q: Vec<$t> = values(11 + seq as u64, n, 2.0);
        let k: Vec<$t> = values(12 + seq as u64, n, 2.0);
        let v: Vec<$t> = values(13 + seq as u64, n, 1.0);
        let (device, module) = device_and_module();
        let stream = device.stream().unwrap();
        let store = |x: &[$t]| {
            let stored = if interleaved { swap_heads(x, seq, d, true) } else { x.to_vec() };
            let sizes = if interleaved { [1, seq, HEADS, d] } else { [1, HEADS, seq, d] };
            Tensor::from_slice(device, &stored, &sizes).unwrap()
        };
        let (tq, tk, tv) = (store(&q), store(&k), store(&v));
        let init: Vec<$t> = vec![<$t as Float>::from_f32(GUARD); n + GUARDS];
        let mut to = Tensor::from_slice(device, &init, &[n + GUARDS]).unwrap();
        let consts = $consts;
        let ctx = format!(
            "{} {} BH={HEADS} N={seq} D={d} causal={causal} {consts:?} {}",
            stringify!($kernel),
            stringify!($t),
            stringify!($layout),
        );
        {
            let o_stored = to.view_mut().slice(0, 0..n).unwrap();
            let mut o = if interleaved {
                o_stored.reshape(&[1, seq, HEADS, d]).unwrap().transpose(1, 2).unwrap()
            } else {
                o_stored.reshape(&[1, HEADS, seq, d]).unwrap()
            };
            $kernel::launch(
                &stream,
                module,
                consts,
                |c: &$kernel::Consts| (seq.div_ceil(c.BM) as u32, HEADS as u32),
                &as_heads(tq.view(), interleaved),
                &as_heads(tk.view(), interleaved),
                &as_heads(tv.view(), interleaved),
                &mut o,
                1.0 / (d as f32).sqrt(),
            )
            .unwrap_or_else(|err| panic!("{ctx}: {err}"));
        }
        stream.synchronize().unwrap();
        let got_stored = to.to_vec().unwrap();
        let got = if interleaved {
            swap_heads(&got_stored[..n], seq, d, false)
        } else {
            got_stored[..n].to_vec()
        };
        let (want, spread) = reference((&q, &k, &v), seq, d, causal);
        let u = <$t as Float>::UNIT_ROUNDOFF;
        for (i, (&w, &s)) in want.iter().zip(&spread).enumerate() {
            let g = got[i].to_f64();
            let tol = u * w.abs() + 2.0 * u * s + 1e-5 + gpu.mma_slack(s * d as f64);
            assert!(
                (g - w).abs() <= tol,
                "{ctx}: o[head {}, row {}, col {}] = {g}, want {w} (tolerance {tol:.2e})",
                i / (seq * d),
                i / d % seq,
                i % d
            );
        }
        assert!(
            got_stored[n..].iter().all(|x| x.to_f64() == GUARD as f64),
            "{ctx}: wrote past the end"
        );
    }};
}

/// `t` as `[1, HEADS, seq, d]`: itself, or when `interleaved` (`[1, seq, HEADS, d]` storage) its
/// dimensions 1 and 2 swapped.
fn as_heads<T: DeviceElement>(t: TensorRef<'_, T>, interleaved: bool) -> TensorRef<'_, T> {
    if interleaved {
        t.transpose(1, 2).unwrap()
    } else {
        t
    }
}

/// Rows of `d` values moved between `[HEADS, seq, d]` and `[seq, HEADS, d]` orders: into the
/// second (`to_interleaved`) or back into the first.
fn swap_heads<T: Copy>(x: &[T], seq: usize, d: usize, to_interleaved: bool) -> Vec<T> {
    let mut out = x.to_vec();
    for h in 0..HEADS {
        for i in 0..seq {
            let (heads_first, interleaved) = ((h * seq + i) * d, (i * HEADS + h) * d);
            let (from, to) = if to_interleaved {
                (heads_first, interleaved)
            } else {
                (interleaved, heads_first)
            };
            out[to..to + d].copy_from_slice(&x[from..from + d]);
        }
    }
    out
}

/// Cases of the second warp count of each head dimension (the first runs every sequence length,
/// causal and not, f16 and bf16): `(seq, causal, bf16)`, the ragged multi-block length causal in
/// f16 and one whole block non-causal in bf16, to keep the emulator run short.
const SECOND_WARPS: [(usize, bool, bool); 2] = [(130, true, false), (64, false, true)];

/// The constants of an attention specialisation: its `BM × 64` blocks over `D`, `CAUSAL` and
/// `num_stages` as given, and any other field (`num_warps` where the kernel lists several).
macro_rules! attention_consts {
    ($kernel:ident { BM: $bm:expr, D: $d:expr $(, $field:ident: $value:expr)* }, $causal:expr, $num_stages:expr) => {
        $kernel::Consts {
            BM: $bm,
            BN: 64,
            D: $d,
            CAUSAL: usize::from($causal),
            num_stages: $num_stages,
            $($field: $value,)*
        }
    };
}

fn d64(causal: bool, num_warps: u32, num_stages: u32) -> tile_attention_d64::Consts {
    attention_consts!(
        tile_attention_d64 {
            BM: 128,
            D: 64,
            num_warps: num_warps
        },
        causal,
        num_stages
    )
}

fn d128_w4(causal: bool, num_stages: u32) -> tile_attention_d128_w4::Consts {
    attention_consts!(
        tile_attention_d128_w4 { BM: 64, D: 128 },
        causal,
        num_stages
    )
}

fn d128_w8(causal: bool, num_stages: u32) -> tile_attention_d128_w8::Consts {
    attention_consts!(
        tile_attention_d128_w8 { BM: 128, D: 128 },
        causal,
        num_stages
    )
}

#[test]
fn attention_d64_matches_f64_reference() {
    let gpu = device();
    for seq in SEQS {
        for causal in [false, true] {
            let c = d64(causal, 4, 1);
            check_case!(gpu, tile_attention_d64, [f16, bf16], c, (seq, 64, causal));
        }
    }
    for (seq, causal, bf16_data) in SECOND_WARPS {
        let c = d64(causal, 8, 1);
        check_case!(gpu, tile_attention_d64, bf16 if bf16_data, c, (seq, 64, causal));
    }
}

#[test]
fn attention_d128_matches_f64_reference() {
    let gpu = device();
    for seq in SEQS {
        for causal in [false, true] {
            let w4 = d128_w4(causal, 1);
            check_case!(
                gpu,
                tile_attention_d128_w4,
                [f16, bf16],
                w4,
                (seq, 128, causal)
            );
        }
    }
    for (seq, causal, bf16_data) in SECOND_WARPS {
        let w8 = d128_w8(causal, 1);
        check_case!(gpu, tile_attention_d128_w8, bf16 if bf16_data, w8, (seq, 128, causal));
    }
}

/// The software-pipelined specialisations (`num_stages` 2 at `D = 64`, 4 and 3 at `D = 128`) on both
/// emulated bodies: sm_90a (`k` and `v` copied by TMA into rings read by `wgmma`) and
/// sm_80 (`mma.sync`). Trip counts 1 (`seq` 17: below the stages), 3 (`seq` 130: ragged, past
/// the prologue), causal and not, and up to 5 (`seq` 320, causal: the rings wrap around, so a
/// slot still read by the deferred `p · v` would be overwritten if the rings were one slot short).
#[test]
fn pipelined_attention_matches_f64_reference() {
    let gpu = device();
    for target in [EmulatedTarget::Sm90a, EmulatedTarget::Sm80] {
        with_target(target, || {
            for (seq, causal) in [(17, false), (130, true), (130, false), (320, true)] {
                let c = d64(causal, 4, 2);
                check_case!(gpu, tile_attention_d64, f16, c, (seq, 64, causal));
                let c = d64(causal, 8, 2);
                check_case!(gpu, tile_attention_d64, bf16, c, (seq, 64, causal));
                let w4 = d128_w4(causal, 3);
                check_case!(gpu, tile_attention_d128_w4, bf16, w4, (seq, 128, causal));
                let w8 = d128_w8(causal, 4);
                check_case!(gpu, tile_attention_d128_w8, f16, w8, (seq, 128, causal));
            }
        });
    }
}

/// The amdgpu bodies (`v_mfma` on waves of two warps: `32x32x8` where each wave gets a 32-row
/// tile, `16x16x16` for 64 rows on 4 waves; `p` from the first dot's transposed accumulator in
/// registers; the pipelined specialisations run unpipelined there) on the emulator.
#[test]
fn attention_on_amdgpu_matches_f64_reference() {
    let gpu = device();
    with_target(EmulatedTarget::Amdgpu, || {
        for (seq, causal) in [(17, false), (130, true), (200, false)] {
            let c = d64(causal, 4, 1);
            check_case!(gpu, tile_attention_d64, [f16, bf16], c, (seq, 64, causal));
            let c = d64(causal, 8, 2);
            check_case!(gpu, tile_attention_d64, f16, c, (seq, 64, causal));
            let w4 = d128_w4(causal, 1);
            check_case!(gpu, tile_attention_d128_w4, bf16, w4, (seq, 128, causal));
            let w8 = d128_w8(causal, 1);
            check_case!(gpu, tile_attention_d128_w8, f16, w8, (seq, 128, causal));
        }
    });
}

/// Heads interleaved row by row (`[1, seq, HEADS, d]` storage viewed as `[1, HEADS, seq, d]`):
/// the strides the kernel reads from its tensors, not a contiguous layout, on both bodies.
#[test]
fn attention_of_transposed_views_matches_f64_reference() {
    let gpu = device();
    for target in [EmulatedTarget::Sm90a, EmulatedTarget::Sm80] {
        with_target(target, || {
            let c = d64(true, 4, 2);
            check_case!(
                gpu,
                tile_attention_d64,
                f16,
                c,
                (130, 64, true),
                interleaved
            );
            let w4 = d128_w4(false, 1);
            check_case!(
                gpu,
                tile_attention_d128_w4,
                bf16,
                w4,
                (70, 128, false),
                interleaved
            );
        });
    }
}

/// Tensors the kernels cannot serve are refused before anything runs, naming the condition:
/// another head dimension than the compiled one, `k` and `v` of other lengths, an output of
/// another shape, a causal launch with fewer keys than queries, and a scale that is not
/// positive.
#[test]
fn attention_refuses_tensors_it_cannot_serve() {
    let (device, module) = device_and_module();
    let stream = device.stream().unwrap();
    let zeros = |sizes: &[usize]| Tensor::<f16>::zeros(device, sizes).unwrap();
    let (q, k, v) = (
        zeros(&[2, 3, 40, 64]),
        zeros(&[2, 3, 40, 64]),
        zeros(&[2, 3, 40, 64]),
    );
    let mut o = zeros(&[2, 3, 40, 64]);
    let consts = d64(true, 4, 1);
    let grid = (1u32, 6u32);
    let refused = |err: tessera::launch::LaunchError, condition: &str| {
        let message = err.to_string();
        assert!(
            message.contains(&format!("requirement `{condition}`")),
            "{message}"
        );
    };
    let wide = zeros(&[2, 3, 40, 128]);
    let err = tile_attention_d64::launch(&stream, module, consts, grid, &wide, &k, &v, &mut o, 1.0);
    refused(err.unwrap_err(), "q.size(3) == D");
    let longer = zeros(&[2, 3, 41, 64]);
    let err =
        tile_attention_d64::launch(&stream, module, consts, grid, &q, &k, &longer, &mut o, 1.0);
    refused(
        err.unwrap_err(),
        "v.size(0) == k.size(0) && v.size(1) == k.size(1) && v.size(2) == k.size(2)",
    );
    let mut fewer_heads = zeros(&[2, 2, 40, 64]);
    let err = tile_attention_d64::launch(
        &stream,
        module,
        consts,
        grid,
        &q,
        &k,
        &v,
        &mut fewer_heads,
        1.0,
    );
    refused(
        err.unwrap_err(),
        "o.size(0) == q.size(0) && o.size(1) == q.size(1) && o.size(2) == q.size(2)",
    );
    let (k_short, v_short) = (zeros(&[2, 3, 20, 64]), zeros(&[2, 3, 20, 64]));
    let err = tile_attention_d64::launch(
        &stream, module, consts, grid, &q, &k_short, &v_short, &mut o, 1.0,
    );
    refused(err.unwrap_err(), "CAUSAL == 0 || k.size(2) == q.size(2)");
    // The row maximum is taken before scaling: a scale that is not positive is refused.
    for scale in [0.0, -0.125, f32::NAN] {
        let err =
            tile_attention_d64::launch(&stream, module, consts, grid, &q, &k, &v, &mut o, scale);
        refused(err.unwrap_err(), "scale > 0.0");
    }
    // Not causal, 20 keys for 40 queries is cross-attention: it runs.
    let cross = d64(false, 4, 1);
    tile_attention_d64::launch(
        &stream, module, cross, grid, &q, &k_short, &v_short, &mut o, 1.0,
    )
    .unwrap();
    stream.synchronize().unwrap();
}
