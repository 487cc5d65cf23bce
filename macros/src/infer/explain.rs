//! The explain text: the kernel after inference, every value with its shape, dtype and layout
//! (`#k`, listed once with the family it came from and its bases), every conversion with its
//! plan and cost, every load and store with its vector width, and how each reduction, gather
//! and dot runs.

use super::anchors::Origin;
use super::layouts::bases_text;
use super::solve::plan_cost;
use super::{Inference, Note};
use crate::ir::{DotCode, Kernel, LayoutSlot, Op, OpKind, Region, Target, ValueId};
use std::fmt::{self, Write as _};
use tessera_layout::plan::conversion::ConversionPlan;
use tessera_layout::plan::conversion_code::ConversionCode;
use tessera_layout::plan::gather_code::GatherCode;
use tessera_layout::plan::movement::{step_wavefronts_on, Movement, Step};
use tessera_layout::plan::wave::Lanes;
use tessera_layout::plan::wgmma_dot::WgmmaOperand;
use tessera_layout::plan::Vendor;
use tessera_layout::LinearLayout;

/// Layouts in order of first appearance.
struct Numbering(Vec<LinearLayout>);

impl Numbering {
    fn of(&mut self, l: &LinearLayout) -> usize {
        match self.0.iter().position(|x| x == l) {
            Some(i) => i,
            None => {
                self.0.push(*l);
                self.0.len() - 1
            }
        }
    }
}

fn collect(kernel: &Kernel, region: &Region, n: &mut Numbering) {
    let visit = |v: ValueId, n: &mut Numbering| {
        if let LayoutSlot::Inferred(l) = &kernel.value(v).layout {
            n.of(l);
        }
    };
    for &a in &region.args {
        visit(a, n);
    }
    for op in &region.ops {
        for &r in &op.results {
            visit(r, n);
        }
        for r in &op.regions {
            collect(kernel, r, n);
        }
    }
}

impl Inference {
    fn value_text(&self, v: ValueId, n: &mut Numbering) -> String {
        let value = self.kernel.value(v);
        match &value.layout {
            LayoutSlot::Inferred(l) => format!("{v}: {} #{}", value.ty, n.of(l)),
            LayoutSlot::Fixed(p) => {
                let path: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
                format!("{v}: {} user({})", value.ty, path.join("::"))
            }
            _ => format!("{v}: {}", value.ty),
        }
    }

    fn origin_text(&self, l: &LinearLayout, n: &Numbering, depth: u32) -> String {
        match self.origins.get(l) {
            Some(o) => match o.family_text() {
                Some(t) => t,
                None => {
                    let Origin::Derived { what, from } = o else {
                        return String::new();
                    };
                    let source = match n.0.iter().position(|x| *x == **from) {
                        Some(i) => format!("#{i}"),
                        None if depth < 4 => self.origin_text(from, n, depth + 1),
                        None => "…".into(),
                    };
                    format!("{what} of {source}")
                }
            },
            None => "linear".into(),
        }
    }

    fn note(&self, op: &Op, n: &mut Numbering) -> String {
        let key = op.results.first().copied();
        match (&op.kind, key.and_then(|k| self.notes.get(&k))) {
            (OpKind::Load { .. }, _) if self.kernel.ty(op.operands[0]).is_scalar() => {
                "[scalar: every thread reads the element, its value held by all]".into()
            }
            (OpKind::Store { .. }, _) if self.kernel.ty(op.operands[0]).is_scalar() => {
                "[scalar: stored once per program, by thread 0 (lane 0 of warp 0)]".into()
            }
            (OpKind::Load { .. } | OpKind::Store { .. }, _) => match self.access(op) {
                Some(a) => {
                    let p = &a.plan;
                    let mut s = format!(
                        "[vector {} × {} bits = {} bits along dim{}",
                        p.elements,
                        p.element_bits,
                        p.elements * p.element_bits,
                        p.dim
                    );
                    let _ = write!(
                        s,
                        "; contiguity {}, alignment {} B, {} consecutive registers",
                        p.facts.contiguity, p.facts.alignment, p.layout_elements
                    );
                    if let Some(m) = p.facts.mask_constancy {
                        let _ = write!(s, ", mask constancy {m}");
                    }
                    if !p.mask_uniform {
                        s.push_str(", a vector where its mask is all true, else per element");
                    }
                    s.push(']');
                    s
                }
                None => String::new(),
            },
            (OpKind::Convert { conversion }, _) => {
                let from = match &self.kernel.value(op.operands[0]).layout {
                    LayoutSlot::Inferred(l) => format!("#{}", n.of(l)),
                    _ => "user layout".into(),
                };
                let to = match &self.kernel.value(op.results[0]).layout {
                    LayoutSlot::Inferred(l) => format!("#{}", n.of(l)),
                    _ => "?".into(),
                };
                let weight = self
                    .conversions
                    .iter()
                    .find(|c| c.result == op.results[0])
                    .map_or(1, |c| c.weight);
                let in_loop = if weight > 1 {
                    format!(", in a loop (weight {weight})")
                } else {
                    String::new()
                };
                match conversion {
                    Some(c) => format!("[{from} -> {to}: {}{in_loop}]", plan_text(c)),
                    None => format!(
                        "[{from} -> {to}: from a layout only rustc knows (generic conversion)]"
                    ),
                }
            }
            (
                _,
                Some(Note::Reduce {
                    lanes,
                    warps,
                    waves,
                    cost,
                }),
            ) => {
                let (warp, warps_word) = if *waves {
                    ("wave (64 lanes)", "waves")
                } else {
                    ("warp", "warps")
                };
                if *warps > 0 && *lanes > 0 {
                    format!(
                        "[across {} {warps_word}: {lanes} shuffle rounds in each {warp}, then shared memory; cost {cost}]",
                        1u32 << warps
                    )
                } else if *warps > 0 {
                    format!(
                        "[across {} {warps_word}: in each thread, then shared memory; cost {cost}]",
                        1u32 << warps
                    )
                } else if *lanes > 0 {
                    format!("[within a {warp}: {lanes} shuffle rounds; cost {cost}]")
                } else {
                    "[within each thread]".into()
                }
            }
            (OpKind::Gather { code: Some(g), .. }, _) => gather_text(g),
            (
                OpKind::Scan {
                    plan: Some(plan), ..
                },
                _,
            ) => format!("[{plan}]"),
            (OpKind::Dot { plan: Some(code) }, _) => {
                let layout_of = |v: ValueId, n: &mut Numbering| match &self.kernel.value(v).layout {
                    LayoutSlot::Inferred(l) => format!("#{}", n.of(l)),
                    _ => "?".into(),
                };
                let (a, b, c) = (
                    layout_of(op.operands[0], n),
                    layout_of(op.operands[1], n),
                    layout_of(op.operands[2], n),
                );
                match code.as_ref() {
                    DotCode::MmaSync { plan, fallback } => {
                        let k_width = 32 / self.kernel.ty(op.operands[0]).dtype.bits();
                        let why = fallback
                            .as_ref()
                            .map(|r| format!("; not wgmma: {r}"))
                            .unwrap_or_default();
                        format!(
                            "[{} × {}, k_width {k_width}: a {a}, b {b}, acc {c}{why}]",
                            plan.kind.shape(),
                            plan.steps.len()
                        )
                    }
                    DotCode::Mfma(plan) => format!(
                        "[{} × {}, k_width {}: a {a}, b {b}, acc {c}]",
                        plan.instr,
                        plan.steps.len(),
                        plan.instr.k_width()
                    ),
                    DotCode::Wgmma(plan) => {
                        let operand = |o: &WgmmaOperand, mn: &str| {
                            format!(
                                "from shared ({}-byte swizzle, {}-major, {}-element stores)",
                                o.shared.swizzle_byte_width,
                                if o.trans() == 0 { "K" } else { mn },
                                o.store.access.elements.len()
                            )
                        };
                        format!(
                            "[{} × {}: {} block(s) of 64×{} per warpgroup, {} K step(s); a {}, b \
                             {}; {} B of shared memory; a {a}, b {b}, acc {c}]",
                            plan.shape,
                            plan.acc_registers.len() as u32 * plan.k_steps(),
                            plan.acc_registers.len(),
                            plan.shape.instr_n,
                            plan.k_steps(),
                            match plan.a_registers {
                                Some(_) =>
                                    "from registers (its layout holds the A fragments)".to_string(),
                                None => operand(&plan.a, "M"),
                            },
                            operand(&plan.b, "N"),
                            plan.shared_bytes
                        )
                    }
                }
            }
            _ => match key.and_then(|k| self.uniform_registers.get(&k)) {
                Some(g) => format!("[computed once per {g} registers: equal by constancy]"),
                None => String::new(),
            },
        }
    }

    fn region(&self, out: &mut String, region: &Region, depth: usize, n: &mut Numbering) {
        let indent = "  ".repeat(depth);
        for op in &region.ops {
            out.push_str(&indent);
            let results: Vec<String> = op.results.iter().map(|&r| self.value_text(r, n)).collect();
            if !results.is_empty() {
                let _ = write!(out, "{} = ", results.join(", "));
            }
            out.push_str(&op.kind.name());
            let attributes = op_attributes(&op.kind);
            out.push_str(&attributes);
            let operands: Vec<String> = op.operands.iter().map(ValueId::to_string).collect();
            if !operands.is_empty() {
                let _ = write!(out, " {}", operands.join(", "));
            }
            for (i, r) in op.regions.iter().enumerate() {
                let args: Vec<String> = r.args.iter().map(|&a| self.value_text(a, n)).collect();
                if i > 0 {
                    out.push_str(op.kind.region_separator());
                }
                if args.is_empty() {
                    out.push_str(" {\n");
                } else {
                    let _ = writeln!(out, " ({}) {{", args.join(", "));
                }
                self.region(out, r, depth + 1, n);
                if !r.yields.is_empty() {
                    let ys: Vec<String> = r.yields.iter().map(ValueId::to_string).collect();
                    let _ = writeln!(out, "{indent}  yield {}", ys.join(", "));
                }
                let _ = write!(out, "{indent}}}");
            }
            let note = self.note(op, n);
            if !note.is_empty() {
                let _ = write!(out, "  {note}");
            }
            if let Some(name) = op
                .results
                .first()
                .and_then(|&r| self.kernel.value(r).name.as_deref())
            {
                let _ = write!(out, "  // {name}");
            }
            out.push('\n');
        }
    }
}

/// The attributes of an op as the IR prints them (`OpKind::attributes`), but a `convert`'s, whose
/// plan the note prints.
fn op_attributes(kind: &OpKind) -> String {
    match kind {
        OpKind::Convert { .. } => String::new(),
        _ => kind.attributes(),
    }
}

/// A gather's code in a few words with its cost: `[warp shuffle; cost 4]`.
pub fn gather_text(g: &GatherCode) -> String {
    match g.lanes {
        Lanes::Warp => format!("[{}; cost {}]", g.kind, g.cost),
        Lanes::Wave => format!(
            "[wave shuffle (64 lanes: warp bit 0 as lane bit 5, ds_bpermute); cost {}]",
            g.cost
        ),
    }
}

/// A conversion plan in a few words with its cost.
pub fn plan_text(c: &ConversionCode) -> String {
    match &c.plan {
        ConversionPlan::NoOp => "no-op (cost 0)".into(),
        ConversionPlan::RegisterPermutation(_) => "register permutation (cost 0)".into(),
        ConversionPlan::WarpShuffle(s) => {
            let what = match c.lanes {
                Lanes::Warp => "warp shuffle",
                Lanes::Wave => "wave shuffle (64 lanes: warp bit 0 as lane bit 5, ds_bpermute)",
            };
            let mut t = format!(
                "{what}: {} rounds × {} shuffles (vectors of {} elements), cost {}",
                s.rounds.len(),
                s.shuffles_per_round,
                1u32 << s.vector.len(),
                plan_cost(c)
            );
            if let Some(shared) = c.shared_cost {
                let _ = write!(t, " (shared memory: {shared})");
            }
            t
        }
        ConversionPlan::SharedMemory(_) => {
            let mut t = format!(
                "shared memory: {}; cost {}",
                shared_steps_text(&c.movement, c.vendor),
                plan_cost(c)
            );
            if c.shuffles_need_selects {
                let _ = write!(
                    t,
                    " (instead of warp shuffles: {} shuffles, but their lane-dependent register selects cost more)",
                    c.shuffle_cost.unwrap_or(0)
                );
            } else if let Some(s) = c.shuffle_cost {
                let _ = write!(t, " (warp shuffles: {s})");
            }
            t
        }
    }
}

/// The stores and loads of a shared-memory movement: per thread, the instructions and their
/// width, and the wavefronts of warp 0's accesses on `vendor`'s bank model.
fn shared_steps_text(m: &Movement, vendor: Vendor) -> String {
    let wavefronts = |step: &Step| -> u32 { step_wavefronts_on(vendor, step, 0).iter().sum() };
    let model = match vendor {
        Vendor::Nvidia => "",
        Vendor::Amd => " of LDS, wavefronts on AMD's bank phases",
    };
    let mut parts = vec![format!("{} B{model}", m.shared_bytes)];
    for step in &m.steps {
        let text = match step {
            Step::Store(s) => format!(
                "store {} × {}-bit{}",
                s.access.chunks.len(),
                s.access.bytes() * 8,
                if s.access.stride * 8 != m.element_bits {
                    " (one element per word)"
                } else {
                    ""
                }
            ),
            Step::Load(s) => format!("load {} × {}-bit", s.chunks.len(), (s.bytes() * 8).max(32)),
            Step::Ldmatrix(s) => format!(
                "load {} × ldmatrix.x{}{}",
                s.chunks.len(),
                s.matrices,
                if s.transposed { ".trans" } else { "" }
            ),
            _ => continue,
        };
        parts.push(format!("{text} ({} wavefronts)", wavefronts(step)));
    }
    parts.join(", ")
}

impl fmt::Display for Inference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = &self.kernel;
        write!(
            f,
            "layout inference: kernel {} [num_warps={}",
            k.name, k.num_warps
        )?;
        if k.target != Target::Ampere {
            write!(f, ", target={}", k.target.sm())?;
        }
        for (name, v) in &k.consts {
            write!(f, ", {name}={v}")?;
        }
        writeln!(f, "]")?;
        if self.assumptions.is_empty() {
            let what = match self.policy {
                super::AlignmentPolicy::Aligned => "nothing",
                super::AlignmentPolicy::Natural => {
                    "nothing (the variant for arguments that break the alignment assumptions)"
                }
            };
            writeln!(f, "assumed at launch: {what}")?;
        } else {
            let list: Vec<String> = self.assumptions.iter().map(ToString::to_string).collect();
            writeln!(
                f,
                "assumed at launch (the launcher checks): {}",
                list.join(", ")
            )?;
        }
        let mut n = Numbering(Vec::new());
        for p in &k.params {
            if let LayoutSlot::Inferred(l) = &k.value(p.value).layout {
                n.of(l);
            }
        }
        collect(k, &k.body, &mut n);
        let mut code = String::new();
        self.region(&mut code, &k.body, 1, &mut n);
        writeln!(f, "layouts:")?;
        for (i, l) in n.0.iter().enumerate() {
            writeln!(f, "  #{i} {}", self.origin_text(l, &n, 0))?;
            writeln!(f, "     {}", bases_text(l))?;
        }
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| format!("{} {}", self.value_text(p.value, &mut n), p.name))
            .collect();
        writeln!(f, "code ({}):", params.join(", "))?;
        f.write_str(&code)?;
        let mut kinds: Vec<(&'static str, usize)> = Vec::new();
        for c in &self.conversions {
            let kind = c
                .conversion
                .as_ref()
                .map_or("user layout", |c| c.plan.kind());
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, count)) => *count += 1,
                None => kinds.push((kind, 1)),
            }
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, c)| format!("{c} {k}")).collect();
        for p in &self.pipelines {
            writeln!(f, "pipeline: {}", p.text())?;
        }
        writeln!(
            f,
            "summary: {} conversion{}{}, {} rematerialised op{}, total cost {}",
            self.conversions.len(),
            if self.conversions.len() == 1 { "" } else { "s" },
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            },
            self.rematerialised,
            if self.rematerialised == 1 { "" } else { "s" },
            self.cost
        )
    }
}
