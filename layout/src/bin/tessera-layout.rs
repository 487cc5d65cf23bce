//! `tessera-layout`: look at layouts and at what the planner does with them.
//!
//! ```text
//! tessera-layout show LAYOUT [--json]
//! tessera-layout convert A B [--bits N] [--vendor nvidia|amd] [--json]
//! tessera-layout swizzle A B [--bits N] [--vendor nvidia|amd] [--json]
//! tessera-layout conflicts DIST SHARED --bits N [--vendor nvidia|amd] [--side load|store] [--json]
//! tessera-layout svg LAYOUT [--bits N] [--access DIST] [-o FILE]
//! tessera-layout mfma M N K [--input f16|bf16|i8|f8e4m3|f8e5m2] [--warps W] [--json]
//! ```
//!
//! A layout argument is a file or inline JSON `{"layout": SPEC, "shape": [d0, d1, ...]}`, SPEC in
//! the schema of `test-support/oracle/README.md` (plus `shared_linear`: `{"offset": [[c0, c1, ...],
//! ...]}`). Element widths default to 32 bits. Wavefront counts are per phase of one warp
//! access (a 128-bit access is served in 4 phases): `conflicts` prints Lemma 9.4's count
//! (Triton's `bankConflictsMemDesc` + 1), `swizzle` the hardware count of its layouts. `mfma`
//! shows what a `dot` of `[M, K] × [K, N]` is on AMD GPUs: the instruction and waves
//! `#[tile_kernel]` chooses (`plan::mfma::choose_mfma`), the three layouts on 32-lane warps
//! (wave lane bit 5 as warp bit 0) and the planned instructions' registers.

#[cfg(feature = "spec")]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(not(feature = "spec"))]
fn main() {
    eprintln!("tessera-layout was built without the `spec` feature");
    std::process::exit(2);
}

#[cfg(feature = "spec")]
mod cli {
    use std::fmt::Write as _;
    use std::process::ExitCode;
    use tessera_layout::plan::bank::{bank_wavefronts_on, BankAccess, Side};
    use tessera_layout::plan::broadcast::Broadcast;
    use tessera_layout::plan::conversion::{plan_conversion_on, Conversion, ConversionPlan};
    use tessera_layout::plan::swizzle::{classic_xor_swizzle, optimal_swizzle_on, Swizzle};
    use tessera_layout::plan::Vendor;
    use tessera_layout::plan::{bases, tile_name};
    use tessera_layout::spec::{
        layout_from_spec, layout_to_dim_bases_json, parse_json, shape_from_json, Json,
    };
    use tessera_layout::svg::{distributed_svg, memory_svg};
    use tessera_layout::{Label, LinearLayout};

    const USAGE: &str = "usage:
  tessera-layout show LAYOUT [--json]
  tessera-layout convert A B [--bits N] [--vendor nvidia|amd] [--json]
  tessera-layout swizzle A B [--bits N] [--vendor nvidia|amd] [--json]
  tessera-layout conflicts DIST SHARED --bits N [--vendor nvidia|amd] [--side load|store] [--json]
  tessera-layout svg LAYOUT [--bits N] [--access DIST] [-o FILE]
  tessera-layout mfma M N K [--input f16|bf16|i8|f8e4m3|f8e5m2] [--warps W] [--json]
LAYOUT: a file or inline JSON {\"layout\": SPEC, \"shape\": [d0, d1, ...]} (SPEC as in
test-support/oracle/README.md, or {\"family\": \"shared_linear\", \"params\": {\"offset\": [[c0, c1], ...]}}).";

    /// A layout read from the command line.
    struct Arg {
        layout: LinearLayout,
        spec: Json,
        shape: Vec<u32>,
        name: String,
    }

    impl Arg {
        fn is_memory(&self) -> bool {
            self.layout.in_index(Label::Offset).is_some()
        }
    }

    struct Options {
        positional: Vec<String>,
        json: bool,
        bits: Option<u32>,
        access: Option<String>,
        output: Option<String>,
        input: Option<String>,
        warps: Option<u32>,
        /// Whose shared-memory bank phases (`--vendor`, default NVIDIA's).
        vendor: Vendor,
        /// Which access `conflicts` counts (`--side`, default a load; AMD serves 128-bit loads
        /// and stores in different lane groups).
        side: Side,
    }

    impl Options {
        /// The two layouts `A B` of `convert` and `swizzle`, and the element width (default 32);
        /// `usage` is the error for another number of arguments.
        fn layout_pair(&self, usage: &str) -> Result<(Arg, Arg, u32), String> {
            let [pa, pb] = self.positional.as_slice() else {
                return Err(usage.into());
            };
            let bits = self.bits.unwrap_or(32);
            Ok((read_layout(pa)?, read_layout(pb)?, bits))
        }
    }

    fn parse_options(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            positional: Vec::new(),
            json: false,
            bits: None,
            access: None,
            output: None,
            input: None,
            warps: None,
            vendor: Vendor::Nvidia,
            side: Side::Read,
        };
        let mut i = 0;
        while i < args.len() {
            let value = |i: usize| {
                args.get(i + 1)
                    .cloned()
                    .ok_or_else(|| format!("{} needs a value", args[i]))
            };
            let number = |i: usize| -> Result<u32, String> {
                let v = value(i)?;
                v.parse()
                    .map_err(|_| format!("{}: `{v}` is not a number", args[i]))
            };
            match args[i].as_str() {
                "--json" => o.json = true,
                "--bits" => {
                    o.bits = Some(number(i)?);
                    i += 1;
                }
                "--access" => {
                    o.access = Some(value(i)?);
                    i += 1;
                }
                "--input" => {
                    o.input = Some(value(i)?);
                    i += 1;
                }
                "--warps" => {
                    o.warps = Some(number(i)?);
                    i += 1;
                }
                "--vendor" => {
                    o.vendor = match value(i)?.as_str() {
                        "nvidia" => Vendor::Nvidia,
                        "amd" => Vendor::Amd,
                        other => return Err(format!("--vendor: `{other}`: nvidia or amd")),
                    };
                    i += 1;
                }
                "--side" => {
                    o.side = match value(i)?.as_str() {
                        "load" => Side::Read,
                        "store" => Side::Write,
                        other => return Err(format!("--side: `{other}`: load or store")),
                    };
                    i += 1;
                }
                "-o" | "--output" => {
                    o.output = Some(value(i)?);
                    i += 1;
                }
                s if s.starts_with("--") => return Err(format!("unknown option {s}")),
                _ => o.positional.push(args[i].clone()),
            }
            i += 1;
        }
        Ok(o)
    }

    fn read_layout(arg: &str) -> Result<Arg, String> {
        let (text, name) = if arg.trim_start().starts_with('{') {
            (arg.to_string(), "inline layout".to_string())
        } else {
            let text =
                std::fs::read_to_string(arg).map_err(|e| format!("cannot read {arg}: {e}"))?;
            (text, arg.to_string())
        };
        let json = parse_json(&text).map_err(|e| format!("{name}: {e}"))?;
        let spec = json
            .get("layout")
            .ok_or_else(|| format!("{name}: expected {{\"layout\": SPEC, \"shape\": [...]}}"))?
            .clone();
        let shape = shape_from_json(
            json.get("shape")
                .ok_or_else(|| format!("{name}: missing \"shape\""))?,
            "shape",
        )
        .map_err(|e| format!("{name}: {e}"))?;
        let layout = layout_from_spec(&spec, &shape).map_err(|e| format!("{name}: {e}"))?;
        let family = spec
            .get("family")
            .and_then(Json::as_str)
            .unwrap_or("?")
            .to_string();
        let name = format!("{family} {shape:?}");
        Ok(Arg {
            layout,
            spec,
            shape,
            name,
        })
    }

    fn coords(layout: &LinearLayout, v: u64) -> String {
        let c: Vec<String> = (0..layout.num_out_dims())
            .map(|o| layout.coord(v, o).to_string())
            .collect();
        format!("({})", c.join(", "))
    }

    fn coords_json(layout: &LinearLayout, v: u64) -> Json {
        let c: Vec<u32> = (0..layout.num_out_dims())
            .map(|o| layout.coord(v, o))
            .collect();
        Json::u32_array(&c)
    }

    fn list(layout: &LinearLayout, vs: &[u64]) -> String {
        if vs.is_empty() {
            "∅".to_string()
        } else {
            vs.iter()
                .map(|&v| coords(layout, v))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }

    fn int(v: u64) -> Json {
        Json::Int(v as i64)
    }

    fn emit(json: bool, value: Json, text: String) {
        if json {
            println!("{}", value.to_pretty_string(2));
        } else {
            print!("{text}");
        }
    }

    // ------------------------------------------------------------------ show

    fn show(o: &Options) -> Result<(), String> {
        let [path] = o.positional.as_slice() else {
            return Err("show takes one LAYOUT".into());
        };
        let a = read_layout(path)?;
        let mut t = String::new();
        let kind = if a.is_memory() {
            "memory"
        } else {
            "distributed"
        };
        let _ = writeln!(
            t,
            "{} — {kind} layout of the tile {}",
            a.name,
            tile_name(&a.layout)
        );
        let _ = writeln!(t, "{}", a.layout);
        if !a.is_memory() {
            let b = Broadcast::of(&a.layout).map_err(|e| e.to_string())?;
            if b.is_trivial() {
                let _ = writeln!(t, "broadcast: none (every element held once)");
            } else {
                let _ = writeln!(
                    t,
                    "broadcast: register bits {:#b}, lane bits {:#b}, warp bits {:#b} repeat elements ({} copies each)",
                    b.register, b.lane, b.warp, b.copies()
                );
            }
        }
        let value = Json::object([
            ("layout", a.spec.clone()),
            ("shape", Json::u32_array(&a.shape)),
            ("bases", layout_to_dim_bases_json(&a.layout)),
        ]);
        emit(o.json, value, t);
        Ok(())
    }

    // ------------------------------------------------------------------ mfma

    fn mfma(o: &Options) -> Result<(), String> {
        use tessera_layout::plan::mfma::{choose_mfma, mfma_layouts, plan_mfma_dot, MfmaInput};
        let [m, n, k] = o.positional.as_slice() else {
            return Err("mfma takes M N K".into());
        };
        let size = |s: &String| {
            s.parse::<u32>()
                .map_err(|_| format!("mfma: `{s}` is not a tile size"))
        };
        let (m, n, k) = (size(m)?, size(n)?, size(k)?);
        let input = match o.input.as_deref().unwrap_or("f16") {
            "f16" => MfmaInput::F16,
            "bf16" => MfmaInput::Bf16,
            "i8" => MfmaInput::I8,
            "f8e4m3" => MfmaInput::F8E4m3,
            "f8e5m2" => MfmaInput::F8E5m2,
            other => {
                return Err(format!(
                    "--input: `{other}`: mfma takes f16, bf16, i8, f8e4m3 or f8e5m2"
                ))
            }
        };
        let warps = o.warps.unwrap_or(4);
        let dims = [u64::from(m), u64::from(n), u64::from(k)];
        let (instr, waves) = choose_mfma(input, dims, warps, None).map_err(|e| e.to_string())?;
        let layouts = mfma_layouts(instr, waves, [m, n, k]).map_err(|e| e.to_string())?;
        let [a, b, acc] = &layouts;
        let plan = plan_mfma_dot(instr, a, b, acc).map_err(|e| e.to_string())?;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "dot [{m}, {k}] × [{k}, {n}] on {warps} warps: {instr} × {} on waves {waves:?} \
             (a wave is warps 2w, 2w + 1: wave lane bit 5 = warp bit 0), accumulator transposed",
            plan.steps.len()
        );
        for (name, l) in [("a", a), ("b", b), ("acc", acc)] {
            let _ = writeln!(t, "{name} {}:\n{l}", tile_name(l));
        }
        for (i, s) in plan.steps.iter().enumerate() {
            let _ = writeln!(
                t,
                "mfma {i}: src0 = b registers {:?}, src1 = a registers {:?}, acc registers {:?}",
                s.src0, s.src1, s.c
            );
        }
        let value = Json::object([
            ("instruction", Json::String(instr.isa_name().into())),
            ("waves", Json::u32_array(&waves)),
            ("instructions", Json::Int(plan.steps.len() as i64)),
            ("a", layout_to_dim_bases_json(a)),
            ("b", layout_to_dim_bases_json(b)),
            ("acc", layout_to_dim_bases_json(acc)),
        ]);
        emit(o.json, value, t);
        Ok(())
    }

    // ------------------------------------------------------------------ conflicts

    /// Whose bank phases a count is on, for a title: "" for NVIDIA's, else ", on AMD's LDS
    /// phases" (half waves; 16 lanes at 64 bits; at 128 bits 8: `ds_write_b128` lanes 0–7, …,
    /// `ds_read_b128` lanes {0–3, 20–23}, …: `tessera_layout::plan::bank::phase_lanes`).
    fn vendor_note(vendor: Vendor) -> &'static str {
        match vendor {
            Vendor::Nvidia => "",
            Vendor::Amd => ", on AMD's LDS phases",
        }
    }

    fn access_text(layout: &LinearLayout, acc: &BankAccess) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "  vector: {} element{} per lane ({} bits), registers {:?}; {} phase{} of {} lanes",
            acc.vector.elements,
            if acc.vector.elements == 1 { "" } else { "s" },
            acc.vector.bits,
            acc.vector.registers,
            acc.phases,
            if acc.phases == 1 { "" } else { "s" },
            32 / acc.phases.min(32)
        );
        let _ = writeln!(
            t,
            "  {} wavefront{} per phase (Lemma 9.4: 2^dim(span(segment) ∩ span(lanes)); {} conflict{}){}",
            acc.wavefronts,
            if acc.wavefronts == 1 { "" } else { "s" },
            acc.conflicts(),
            if acc.conflicts() == 1 { "" } else { "s" },
            if acc.exact_wavefronts != acc.wavefronts {
                format!(
                    "; on the hardware {} (sub-word elements in one bank's different words)",
                    acc.exact_wavefronts
                )
            } else {
                String::new()
            }
        );
        if !acc.conflict_basis.is_empty() {
            let _ = writeln!(
                t,
                "  conflicting directions (same bank, different line): {}",
                list(layout, &acc.conflict_basis)
            );
        }
        let _ = writeln!(
            t,
            "  {} instruction{} per thread → {} wavefronts per warp",
            acc.instructions,
            if acc.instructions == 1 { "" } else { "s" },
            acc.total_wavefronts()
        );
        t
    }

    fn conflicts(o: &Options) -> Result<(), String> {
        let [dist, shared] = o.positional.as_slice() else {
            return Err("conflicts takes DIST SHARED --bits N".into());
        };
        let bits = o.bits.ok_or("conflicts needs --bits N")?;
        let (d, s) = (read_layout(dist)?, read_layout(shared)?);
        let acc = bank_wavefronts_on(o.vendor, o.side, &s.layout, &d.layout, bits)
            .map_err(|e| e.to_string())?;
        let mut t = format!(
            "{} {} {}, {bits}-bit elements{}:\n",
            d.name,
            if o.side == Side::Read {
                "loading from"
            } else {
                "storing to"
            },
            s.name,
            vendor_note(o.vendor)
        );
        t.push_str(&access_text(&d.layout, &acc));
        emit(
            o.json,
            Json::object([("wavefronts", int(acc.wavefronts as u64))]),
            t,
        );
        Ok(())
    }

    // ------------------------------------------------------------------ swizzle

    /// `offset(m, n) = C·m + (n ⊕ k·m)` when a rank-2 memory layout has that shape.
    fn formula(memory: &LinearLayout) -> Option<String> {
        if memory.num_out_dims() != 2 {
            return None;
        }
        let offsets = bases(memory, Label::Offset);
        let (rb, cb) = (memory.out_bits_at(0), memory.out_bits_at(1));
        let cols = 1u64 << cb;
        let col_unit = |b: u32| 1u64 << (rb + b);
        if offsets.len() as u32 != rb + cb || (0..cb).any(|b| offsets[b as usize] != col_unit(b)) {
            return None;
        }
        let masks: Vec<u64> = (0..rb)
            .map(|j| {
                let v = offsets[(cb + j) as usize];
                ((v & ((1 << rb) - 1)) == 1 << j).then_some(v >> rb)
            })
            .collect::<Option<Vec<u64>>>()?;
        if masks.iter().all(|&m| m == 0) {
            return Some(format!("offset(m, n) = {cols}·m + n (unswizzled)"));
        }
        let k = masks[0];
        if (0..rb as usize).all(|j| masks[j] == (k << j) & (cols - 1)) {
            let km = if k == 1 {
                "m".to_string()
            } else {
                format!("{k}m")
            };
            return Some(format!(
                "offset(m, n) = {cols}·m + (n ⊕ {km})   (m = dim0, n = dim1)"
            ));
        }
        let f: Vec<String> = masks.iter().map(|m| m.to_string()).collect();
        Some(format!(
            "offset(m, n) = {cols}·m + (n ⊕ f(m)), f linear with f(2^j) = [{}]",
            f.join(", ")
        ))
    }

    fn side(name: &str, acc: &BankAccess) -> String {
        format!(
            "{name}: {} wavefront{} per phase × {} phase{} × {} instructions = {} wavefronts per warp (vector {} element{}, {} bits)",
            acc.exact_wavefronts,
            if acc.exact_wavefronts == 1 { "" } else { "s" },
            acc.phases,
            if acc.phases == 1 { "" } else { "s" },
            acc.instructions,
            acc.total_wavefronts(),
            acc.vector.elements,
            if acc.vector.elements == 1 { "" } else { "s" },
            acc.vector.bits
        )
    }

    fn swizzle_text(
        a: &Arg,
        b: &Arg,
        bits: u32,
        s: &Swizzle,
        vendor: Vendor,
    ) -> Result<String, String> {
        let mut t = String::new();
        let l = &s.memory;
        let _ = writeln!(
            t,
            "optimal swizzle: write {} → read {}, {bits}-bit elements{}",
            a.name,
            b.name,
            vendor_note(vendor)
        );
        let _ = writeln!(t, "memory layout (offset → tile):\n{l}");
        if let Some(f) = formula(l) {
            let _ = writeln!(t, "  {f}");
        }
        let _ = writeln!(
            t,
            "  Vec: V = {} ({} element{}){}",
            list(l, &s.vector),
            s.vector_elements(),
            if s.vector_elements() == 1 { "" } else { "s" },
            if s.word_fill.is_empty() {
                String::new()
            } else {
                format!(
                    "; word filled with {} ({:?} registers)",
                    list(l, &s.word_fill),
                    s.fill_side.unwrap()
                )
            }
        );
        let _ = writeln!(t, "  Bank: {}", list(l, &s.bank));
        let _ = writeln!(t, "  Seg:  {}", list(l, &s.segment));
        let _ = writeln!(t, "{}", side("write", &s.write));
        let _ = writeln!(t, "{}", side("read ", &s.read));
        let _ = writeln!(
            t,
            "Lemma 9.5 bound per phase: write {}, read {}{}",
            s.optimum.0,
            s.optimum.1,
            if s.conflict_free_achievable() {
                " (conflict-free achievable, achieved)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            t,
            "full pass: {} + {} wavefronts",
            s.write.total_wavefronts(),
            s.read.total_wavefronts()
        );
        if let Some(classic) = classic_xor_swizzle(&a.layout, bits).map_err(|e| e.to_string())? {
            let w = bank_wavefronts_on(vendor, Side::Write, &classic, &a.layout, bits)
                .map_err(|e| e.to_string())?;
            let r = bank_wavefronts_on(vendor, Side::Read, &classic, &b.layout, bits)
                .map_err(|e| e.to_string())?;
            let way = |n: u32| {
                if n > 1 {
                    format!(" ({n}-way conflicts)")
                } else {
                    String::new()
                }
            };
            let _ = writeln!(
                t,
                "classic XOR swizzle{}:\n  write {} wavefront{} per phase{}, read {} wavefront{} per phase{} → {} + {} wavefronts",
                formula(&classic).map(|f| format!(" {f}")).unwrap_or_default(),
                w.exact_wavefronts,
                if w.exact_wavefronts == 1 { "" } else { "s" },
                way(w.exact_wavefronts),
                r.exact_wavefronts,
                if r.exact_wavefronts == 1 { "" } else { "s" },
                way(r.exact_wavefronts),
                w.total_wavefronts(),
                r.total_wavefronts()
            );
        }
        Ok(t)
    }

    fn swizzle_json(s: &Swizzle) -> Json {
        let offsets: Vec<Json> = bases(&s.memory, Label::Offset)
            .iter()
            .map(|&v| coords_json(&s.memory, v))
            .collect();
        Json::object([
            (
                "memory",
                Json::object([
                    ("family", Json::String("shared_linear".into())),
                    ("params", Json::object([("offset", Json::Array(offsets))])),
                ]),
            ),
            ("vector_elements", int(s.vector_elements() as u64)),
            ("write_wavefronts", int(s.write.exact_wavefronts as u64)),
            ("read_wavefronts", int(s.read.exact_wavefronts as u64)),
        ])
    }

    fn swizzle(o: &Options) -> Result<(), String> {
        let (a, b, bits) = o.layout_pair("swizzle takes A B")?;
        let s =
            optimal_swizzle_on(o.vendor, &a.layout, &b.layout, bits).map_err(|e| e.to_string())?;
        let text = swizzle_text(&a, &b, bits, &s, o.vendor)?;
        emit(o.json, swizzle_json(&s), text);
        Ok(())
    }

    // ------------------------------------------------------------------ convert

    fn convert_text(a: &Arg, b: &Arg, bits: u32, c: &Conversion) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "convert {} → {}, {bits}-bit elements: {}",
            a.name,
            b.name,
            c.plan.kind()
        );
        match (c.shuffle_cost, c.shared_cost) {
            (Some(sh), Some(sm)) => {
                let _ = writeln!(
                    t,
                    "  cost: {sh} shuffles vs {sm} for shared memory (wavefronts + barrier)"
                );
            }
            (None, Some(sm)) => {
                let _ = writeln!(t, "  cost: shared memory {sm} (wavefronts + barrier); no warp-shuffle plan (elements cross warps)");
            }
            _ => {}
        }
        match &c.plan {
            ConversionPlan::NoOp => {
                let _ = writeln!(t, "  every position of B already holds its element in A");
            }
            ConversionPlan::RegisterPermutation(p) => {
                let _ = writeln!(
                    t,
                    "  B register bit k takes A register {:?} (XOR of the set bits){}",
                    p.from_register,
                    if p.is_thread_uniform() {
                        String::new()
                    } else {
                        format!(
                            "; lane bits add {:?}, warp bits {:?}",
                            p.from_lane, p.from_warp
                        )
                    }
                );
            }
            ConversionPlan::WarpShuffle(p) => {
                let l = &b.layout;
                let _ = writeln!(
                    t,
                    "  V (A register bit, B register bit): {:?} → {} element{} per shuffle",
                    p.vector,
                    1 << p.vector.len(),
                    if p.vector.is_empty() { "" } else { "s" }
                );
                let _ = writeln!(t, "  S = span(V ∪ C ∪ G): {}", list(l, &p.exchange_basis));
                let _ = writeln!(t, "  R: {}", list(l, &p.round_basis));
                let _ = writeln!(
                    t,
                    "  {} rounds × {} shuffle{} = {} shuffles per warp",
                    p.rounds.len(),
                    p.shuffles_per_round,
                    if p.shuffles_per_round == 1 { "" } else { "s" },
                    p.shuffles()
                );
                for (i, r) in p.rounds.iter().enumerate() {
                    let fmt = |v: &[Option<u32>]| {
                        v.iter()
                            .map(|x| x.map_or("-".to_string(), |x| x.to_string()))
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    let _ = writeln!(
                        t,
                        "  round {i}: source lane per lane: {}",
                        fmt(&r.source_lane)
                    );
                    let _ = writeln!(
                        t,
                        "           send A register:     {}",
                        fmt(&r.send_register)
                    );
                    let _ = writeln!(
                        t,
                        "           into B register:     {}",
                        fmt(&r.receive_register)
                    );
                }
            }
            ConversionPlan::SharedMemory(p) => {
                let s = &p.swizzle;
                let _ = writeln!(t, "  memory layout:\n{}", s.memory);
                if let Some(f) = formula(&s.memory) {
                    let _ = writeln!(t, "  {f}");
                }
                let _ = writeln!(t, "  {}", side("store", &s.write));
                let _ = writeln!(t, "  {}", side("load ", &s.read));
                if !p.store_owners.is_trivial() {
                    let _ = writeln!(
                        t,
                        "  stores once: lanes {:#b} / warps {:#b} / registers {:#b} hold copies and skip",
                        p.store_owners.lane, p.store_owners.warp, p.store_owners.register
                    );
                }
            }
        }
        t
    }

    fn convert_json(c: &Conversion) -> Json {
        let mut members: Vec<(String, Json)> =
            vec![("plan".into(), Json::String(c.plan.kind().replace(' ', "_")))];
        members.push((
            "shuffle_cost".into(),
            c.shuffle_cost.map_or(Json::Null, |v| int(v as u64)),
        ));
        members.push((
            "shared_cost".into(),
            c.shared_cost.map_or(Json::Null, |v| int(v as u64)),
        ));
        match &c.plan {
            ConversionPlan::NoOp => {}
            ConversionPlan::RegisterPermutation(p) => {
                members.push(("from_register".into(), Json::u32_array(&p.from_register)));
                members.push(("from_lane".into(), Json::u32_array(&p.from_lane)));
                members.push(("from_warp".into(), Json::u32_array(&p.from_warp)));
            }
            ConversionPlan::WarpShuffle(p) => {
                let opt = |v: &[Option<u32>]| {
                    Json::Array(
                        v.iter()
                            .map(|x| x.map_or(Json::Null, |x| int(x as u64)))
                            .collect(),
                    )
                };
                members.push((
                    "vector".into(),
                    Json::Array(
                        p.vector
                            .iter()
                            .map(|&(a, b)| Json::u32_array(&[a, b]))
                            .collect(),
                    ),
                ));
                members.push(("shuffles".into(), int(p.shuffles() as u64)));
                members.push((
                    "rounds".into(),
                    Json::Array(
                        p.rounds
                            .iter()
                            .map(|r| {
                                Json::object([
                                    ("source_lane", opt(&r.source_lane)),
                                    ("send_register", opt(&r.send_register)),
                                    ("receive_register", opt(&r.receive_register)),
                                ])
                            })
                            .collect(),
                    ),
                ));
            }
            ConversionPlan::SharedMemory(p) => {
                let s = swizzle_json(&p.swizzle);
                members.push(("swizzle".into(), s));
                members.push((
                    "write_vector_elements".into(),
                    int(p.write().vector.elements as u64),
                ));
                members.push((
                    "read_vector_elements".into(),
                    int(p.read().vector.elements as u64),
                ));
            }
        }
        Json::Object(members)
    }

    fn convert(o: &Options) -> Result<(), String> {
        let (a, b, bits) = o.layout_pair("convert takes A B")?;
        let c =
            plan_conversion_on(o.vendor, &a.layout, &b.layout, bits).map_err(|e| e.to_string())?;
        let mut text = convert_text(&a, &b, bits, &c);
        if o.vendor == Vendor::Amd {
            text.push_str("  (shared memory swizzled and priced on AMD's LDS phases)\n");
        }
        emit(o.json, convert_json(&c), text);
        Ok(())
    }

    // ------------------------------------------------------------------ svg

    fn svg(o: &Options) -> Result<(), String> {
        let [path] = o.positional.as_slice() else {
            return Err("svg takes one LAYOUT".into());
        };
        let a = read_layout(path)?;
        let text = if a.is_memory() {
            let bits = o.bits.unwrap_or(32);
            let access = o.access.as_deref().map(read_layout).transpose()?;
            let title = match &access {
                Some(d) => format!("{} — {bits}-bit elements, accessed by {}", a.name, d.name),
                None => format!("{} — {bits}-bit elements", a.name),
            };
            memory_svg(&a.layout, bits, access.as_ref().map(|d| &d.layout), &title)
        } else {
            distributed_svg(&a.layout, &a.name)
        }
        .map_err(|e| e.to_string())?;
        match &o.output {
            Some(file) => {
                std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))?
            }
            None => print!("{text}"),
        }
        Ok(())
    }

    pub fn main() -> ExitCode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let Some((command, rest)) = args.split_first() else {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        };
        let options = match parse_options(rest) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e}\n{USAGE}");
                return ExitCode::from(2);
            }
        };
        let result = match command.as_str() {
            "show" => show(&options),
            "convert" => convert(&options),
            "swizzle" => swizzle(&options),
            "conflicts" => conflicts(&options),
            "svg" => svg(&options),
            "mfma" => mfma(&options),
            "-h" | "--help" | "help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => Err(format!("unknown command `{other}`")),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        }
    }
}
