//! EXPLAIN tells the truth: for every kernel of the kernel library (`kernels/tiled`), every
//! specialisation and both alignment policies, what the explain text reports for each conversion, gather and dot is what
//! the lowered tokens do. The check is structural: the plan stored on each op (the one the
//! explain text prints) against the device calls in the code generated for that op.

use super::analyze_desugared;
use super::kernel_corpus::kernel_sources;
use crate::infer::explain::{gather_text, plan_text};
use crate::infer::pipeline::LoopPipeline;
use crate::infer::{explain, infer_with, AlignmentPolicy, Inference};
use crate::ir::{DotCode, OpKind, Target};
use crate::lower::{lower_kernel, Facts};
use proc_macro2::{TokenStream, TokenTree};
use tessera_layout::plan::conversion::ConversionPlan;
use tessera_layout::plan::conversion_code::ConversionCode;
use tessera_layout::plan::gather_code::GatherKind;
use tessera_layout::plan::movement::Step;
use tessera_layout::plan::wave::Lanes;

/// The device calls of a token stream, by kind.
#[derive(Debug, Default, PartialEq, Eq)]
struct Calls {
    shuffles: usize,
    /// Shuffles of a 64-lane AMD wave (`wave_shfl_idx_b32`).
    wave_shuffles: usize,
    barriers: usize,
    shared_stores: usize,
    shared_loads: usize,
    ldmatrix: usize,
    /// `mma` instruction names, in order.
    mma: Vec<String>,
    /// `cp.async` copies and `cp.async.wait_group`s (pipelined loops).
    async_copies: usize,
    async_waits: usize,
    /// TMA boxes and `mbarrier` waits (pipelined loops copying by TMA).
    tma_copies: usize,
    mbarrier_waits: usize,
}

impl Calls {
    fn of(tokens: &TokenStream) -> Calls {
        let mut calls = Calls::default();
        calls.count(tokens);
        calls
    }

    /// Counts the calls of the device's code: of `__device_or_host!({ device } { host })`, the
    /// first block.
    fn count(&mut self, tokens: &TokenStream) {
        let mut device_only = false;
        for tt in tokens.clone() {
            match tt {
                TokenTree::Group(g) if device_only => {
                    device_only = false;
                    let device = g.stream().into_iter().find_map(|tt| match tt {
                        TokenTree::Group(block) => Some(block.stream()),
                        _ => None,
                    });
                    self.count(&device.unwrap_or_default());
                }
                TokenTree::Ident(i) if i == "__device_or_host" => device_only = true,
                TokenTree::Group(g) => self.count(&g.stream()),
                TokenTree::Ident(i) => {
                    let name = i.to_string();
                    match name.as_str() {
                        "shfl_idx_b32" => self.shuffles += 1,
                        "wave_shfl_idx_b32" => self.wave_shuffles += 1,
                        "sync_threads" => self.barriers += 1,
                        n if n.starts_with("st_shared_v")
                            || n == "st_shared_b16"
                            || n == "st_shared_b8" =>
                        {
                            self.shared_stores += 1
                        }
                        n if n.starts_with("ld_shared_v") => self.shared_loads += 1,
                        n if n.starts_with("ldmatrix_x") => self.ldmatrix += 1,
                        n if n.starts_with("mma_m16n8")
                            || n.starts_with("wgmma_m64n")
                            || n.starts_with("mfma_f32_")
                            || n.starts_with("mfma_i32_") =>
                        {
                            self.mma.push(name)
                        }
                        "cp_async_cg_zfill" | "cp_async_ca_zfill" => self.async_copies += 1,
                        "cp_async_wait_group" => self.async_waits += 1,
                        "tma_load_2d" | "tma_load_3d" | "tma_load_4d" => self.tma_copies += 1,
                        "mbarrier_wait_parity" => self.mbarrier_waits += 1,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
}

/// The initialisers `{ … }` of `let __<stem>N: … = { … };` in `tokens`, in token order.
fn let_blocks(tokens: &TokenStream, stem: &str, out: &mut Vec<TokenStream>) {
    let tts: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, tt) in tts.iter().enumerate() {
        match tt {
            TokenTree::Group(g) => let_blocks(&g.stream(), stem, out),
            TokenTree::Ident(l) if l == "let" => {
                let named = matches!(tts.get(i + 1), Some(TokenTree::Ident(n))
                    if n.to_string().strip_prefix("__").and_then(|s| s.strip_prefix(stem))
                        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())));
                if !named {
                    continue;
                }
                let eq = tts[i..]
                    .iter()
                    .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == '='));
                if let Some(TokenTree::Group(g)) = eq.and_then(|e| tts.get(i + e + 1)) {
                    out.push(g.stream());
                }
            }
            _ => {}
        }
    }
}

/// The device calls a conversion's plan stands for.
fn expected_conversion_calls(c: &ConversionCode) -> Calls {
    let count = |f: &dyn Fn(&Step) -> usize| c.movement.steps.iter().map(f).sum::<usize>();
    match &c.plan {
        ConversionPlan::NoOp | ConversionPlan::RegisterPermutation(_) => Calls::default(),
        ConversionPlan::WarpShuffle(p) => {
            let n = (p.rounds.len() as u32 * p.shuffles_per_round) as usize;
            match c.lanes {
                Lanes::Warp => Calls {
                    shuffles: n,
                    ..Calls::default()
                },
                Lanes::Wave => Calls {
                    wave_shuffles: n,
                    ..Calls::default()
                },
            }
        }
        ConversionPlan::SharedMemory(_) => Calls {
            barriers: 2,
            shared_stores: count(&|s| match s {
                Step::Store(s) => s.access.chunks.len(),
                _ => 0,
            }),
            shared_loads: count(&|s| match s {
                Step::Load(s) => s.chunks.len(),
                _ => 0,
            }),
            ldmatrix: count(&|s| match s {
                Step::Ldmatrix(s) => s.chunks.len(),
                _ => 0,
            }),
            ..Calls::default()
        },
    }
}

/// The plan kind the explain text names for a conversion (a wave's shuffles, on AMD, are the
/// warp-shuffle plan on 64 lanes).
fn explained_kind(text: &str) -> &'static str {
    if text.starts_with("wave shuffle (64 lanes") {
        return "warp shuffle";
    }
    ConversionPlan::KINDS
        .into_iter()
        .find(|k| text.starts_with(k))
        .unwrap_or("?")
}

fn check(inference: &Inference, what: &str) {
    let text = explain(inference);
    check_pipelines(inference, &text, what);
    let body = lower_kernel(&inference.kernel, &Facts::default())
        .unwrap_or_else(|e| panic!("{what}: lowering failed: {e}"))
        .body;
    let (mut converts, mut gathers, mut dots) = (Vec::new(), Vec::new(), Vec::new());
    inference.kernel.walk(&mut |op| match &op.kind {
        OpKind::Convert {
            conversion: Some(c),
        } => converts.push(c.clone()),
        OpKind::Gather { .. } => gathers.push(op.clone()),
        OpKind::Dot { .. } => dots.push(op.clone()),
        _ => {}
    });
    // Conversions: the explain line of each, and the calls of its code.
    let mut blocks = Vec::new();
    let_blocks(&body, "cvt", &mut blocks);
    assert_eq!(blocks.len(), converts.len(), "{what}: conversions lowered");
    for (c, block) in converts.iter().zip(&blocks) {
        let line = plan_text(c);
        assert!(text.contains(&line), "{what}: explain lacks `{line}`");
        assert_eq!(explained_kind(&line), c.plan.kind(), "{what}: `{line}`");
        let calls = Calls::of(block);
        assert_eq!(calls, expected_conversion_calls(c), "{what}: `{line}`");
        assert_eq!(
            line.contains("ldmatrix"),
            calls.ldmatrix > 0,
            "{what}: `{line}`"
        );
    }
    // Gathers: shuffles or shared memory, as the note says.
    let mut blocks = Vec::new();
    let_blocks(&body, "gather", &mut blocks);
    let mut at = 0;
    for op in &gathers {
        let OpKind::Gather { code: Some(g), .. } = &op.kind else {
            panic!("{what}: a gather without its plan");
        };
        let line = gather_text(g);
        assert!(text.contains(&line), "{what}: explain lacks `{line}`");
        let calls = Calls::of(&blocks[at]);
        at += 1;
        let shuffles = g.kind == GatherKind::WarpShuffle;
        let (warp, wave) = (calls.shuffles > 0, calls.wave_shuffles > 0);
        assert_eq!(warp || wave, shuffles, "{what}: gather `{line}`");
        assert_eq!(wave, g.lanes == Lanes::Wave, "{what}: gather `{line}`");
        assert_eq!(calls.shared_loads > 0, !shuffles, "{what}: gather `{line}`");
        assert_eq!(
            calls.shared_stores > 0,
            !shuffles,
            "{what}: gather `{line}`"
        );
    }
    assert_eq!(at, blocks.len(), "{what}: gathers lowered");
    // Dots: each explain line names the instruction and count of the stored plan, and the code
    // issues those instructions, one call per step, and no other `mma`.
    let mut expected = Vec::new();
    let mut wgmma_blocks = Vec::new();
    let_blocks(&body, "wgmma", &mut wgmma_blocks);
    let mut wgmma_at = 0;
    for op in &dots {
        let OpKind::Dot { plan: Some(code) } = &op.kind else {
            panic!("{what}: a dot without its plan");
        };
        match code.as_ref() {
            DotCode::MmaSync { plan, .. } => {
                let line = format!("[{} × {},", plan.kind.shape(), plan.steps.len());
                assert!(text.contains(&line), "{what}: explain lacks `{line}`");
                let shape = plan.kind.shape();
                let name = format!("mma_m{}n{}k{}", shape.m, shape.n, shape.k);
                expected.extend(std::iter::repeat_n(name, plan.steps.len()));
            }
            DotCode::Mfma(plan) => {
                let line = format!("[{} × {},", plan.instr, plan.steps.len());
                assert!(text.contains(&line), "{what}: explain lacks `{line}`");
                let acc = if plan.instr.input.integer() {
                    "i32"
                } else {
                    "f32"
                };
                let name = format!("mfma_{acc}");
                expected.extend(std::iter::repeat_n(name, plan.steps.len()));
            }
            DotCode::Wgmma(plan) => {
                let count = plan.acc_registers.len() * plan.k_steps() as usize;
                let line = format!("[{} × {count}:", plan.shape);
                assert!(text.contains(&line), "{what}: explain lacks `{line}`");
                let (n, k) = (plan.shape.instr_n, plan.shape.input.instr_k());
                let name = format!("wgmma_m64n{n}k{k}");
                expected.extend(std::iter::repeat_n(name, count));
                // The block stores its operands as planned, behind barriers: both, or only `b`
                // where `a`'s registers hold the A fragments.
                let calls = Calls::of(&wgmma_blocks[wgmma_at]);
                wgmma_at += 1;
                let a_stores = match plan.a_registers {
                    Some(_) => 0,
                    None => plan.a.store.access.chunks.len(),
                };
                let stores = a_stores + plan.b.store.access.chunks.len();
                assert_eq!(calls.shared_stores, stores, "{what}: `{line}` stores");
                assert!(calls.barriers >= 2, "{what}: `{line}` barriers");
            }
        }
    }
    assert_eq!(wgmma_at, wgmma_blocks.len(), "{what}: wgmma dots lowered");
    let mut used: Vec<String> = Calls::of(&body)
        .mma
        .iter()
        .map(|call| call.split('_').take(2).collect::<Vec<_>>().join("_"))
        .collect();
    expected.sort_unstable();
    used.sort_unstable();
    assert_eq!(expected, used, "{what}: mma instructions");
}

/// Each thread (as many as the machine has cores, at most 4) takes the next kernel source until
/// none is left; the kernels' token streams cannot cross threads, so each reads the sources
/// itself. The conversion plans are shared (`infer::solve::search` keeps them per process).
#[test]
fn explain_matches_generated_code_for_every_kernel() {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let (sources, conversions, amdgpu) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| check_sources(&next)))
            .collect();
        // A failed check panics in its worker: its message is the test's.
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold((0, 0, 0), |(s, c, a), (ws, wc, wa)| {
                (s + ws, c + wc, a + wa)
            })
    });
    assert!(sources > 10, "kernels/tiled has the tile kernels");
    assert!(conversions > 0, "the kernels convert layouts");
    assert!(amdgpu > 0, "some kernels have an amdgpu body of their own");
}

/// Checks the kernel sources numbered by `next` (taken one at a time) for both alignment policies
/// and each NVIDIA target the kernel has a body for, and amdgpu where a kernel has a body of its
/// own there; returns how many sources it checked, the conversions it saw and the amdgpu bodies
/// it checked.
fn check_sources(next: &std::sync::atomic::AtomicUsize) -> (usize, usize, usize) {
    let sources = kernel_sources();
    let (mut checked, mut conversions, mut amdgpu) = (0, 0, 0);
    loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(source) = sources.get(i) else {
            return (checked, conversions, amdgpu);
        };
        checked += 1;
        // `Tensor` parameters desugared as the macro does before reading the kernel.
        let kernels = analyze_desugared(source.attr.clone(), source.item.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", source.file.display()));
        for kernel in kernels {
            // The NVIDIA bodies the expansion builds (`body_targets`: Hopper too for a kernel
            // with a `dot`, Hopper alone for `targets = [sm_90a]`), with both policies.
            let targets = crate::expand::variants::body_targets(&kernel);
            let policies = [AlignmentPolicy::Aligned, AlignmentPolicy::Natural];
            for (&target, policy) in targets
                .iter()
                .flat_map(|t| policies.iter().map(move |&p| (t, p)))
            {
                let mut k = kernel.clone();
                k.target = target;
                let inference = infer_with(&mut k, policy)
                    .unwrap_or_else(|e| panic!("{}: inference failed: {e}", source.name));
                let what = format!(
                    "{} {:?} {:?} {target:?}",
                    source.name, kernel.consts, policy
                );
                let (mut ldmatrix, mut dot) = (false, false);
                inference.kernel.walk(&mut |op| {
                    conversions += usize::from(matches!(op.kind, OpKind::Convert { .. }));
                    ldmatrix |= reads_by_ldmatrix(op);
                    dot |= matches!(op.kind, OpKind::Dot { .. });
                });
                check(&inference, &what);
                // The amdgpu body of a kernel whose first NVIDIA plans (Ampere's, else those of
                // `targets = [sm_90a]`) read by `ldmatrix` or that has a dot
                // (`expand::variants::amdgpu_variant`): explained truthfully, and without
                // `ldmatrix`. A dot that `mfma_choice` refuses leaves the kernel NVIDIA-only.
                if target == targets[0] && (ldmatrix || dot) {
                    let mut k = kernel.clone();
                    k.target = Target::Amdgpu;
                    let inference = match infer_with(&mut k, policy) {
                        Ok(inference) => inference,
                        Err(e) if dot && e.to_string().contains("no AMD matrix-core layout") => {
                            continue
                        }
                        Err(e) => panic!("{what}: amdgpu inference failed: {e}"),
                    };
                    inference.kernel.walk(&mut |op| {
                        assert!(
                            !reads_by_ldmatrix(op),
                            "{what}: ldmatrix planned for amdgpu"
                        );
                    });
                    check(&inference, &format!("{what} (amdgpu)"));
                    amdgpu += 1;
                }
            }
        }
    }
}

/// Whether `op` is a conversion whose plan reads shared memory by `ldmatrix`.
fn reads_by_ldmatrix(op: &crate::ir::Op) -> bool {
    matches!(&op.kind, OpKind::Convert { conversion: Some(c) }
        if c.movement.steps.iter().any(|s| matches!(s, Step::Ldmatrix(_))))
}

/// Pipelined loops: the explain line of each plan is printed, and the code lowered with the
/// plans issues each planned copy (or TMA box) twice (the prologue's issue and the steady
/// state's) and one `cp.async.wait_group` (or `mbarrier` wait) per pipelined loop; without plans
/// it issues none.
fn check_pipelines(inference: &Inference, text: &str, what: &str) {
    for p in &inference.pipelines {
        assert!(
            text.contains(&p.text()),
            "{what}: explain lacks `{}`",
            p.text()
        );
    }
    let facts = Facts {
        pipelines: inference.pipelines.clone(),
        ..Facts::default()
    };
    let body = lower_kernel(&inference.kernel, &facts)
        .unwrap_or_else(|e| panic!("{what}: pipelined lowering failed: {e}"))
        .body;
    let calls = Calls::of(&body);
    let pipelined: Vec<_> = inference
        .pipelines
        .iter()
        .filter(|p| !p.loads.is_empty())
        .collect();
    let (by_tma, by_cp_async): (Vec<&LoopPipeline>, Vec<&LoopPipeline>) =
        pipelined.iter().copied().partition(|p| p.uses_tma());
    let copies: usize = by_cp_async
        .iter()
        .flat_map(|p| &p.loads)
        .map(|l| l.copy.copies_per_thread())
        .sum();
    let boxes: usize = by_tma
        .iter()
        .flat_map(|p| &p.loads)
        .filter_map(|l| l.tma.as_ref())
        .map(|t| t.plan.boxes.len())
        .sum();
    assert_eq!(calls.async_copies, 2 * copies, "{what}: cp.async copies");
    assert_eq!(
        calls.async_waits,
        by_cp_async.len(),
        "{what}: cp.async waits"
    );
    assert_eq!(calls.tma_copies, 2 * boxes, "{what}: TMA boxes");
    assert_eq!(calls.mbarrier_waits, by_tma.len(), "{what}: mbarrier waits");
}
