//! Which variants get an amdgpu entry: the Ampere body when it renders no NVIDIA-only
//! instruction (`crate::lower::Ctx::nvidia_only`) and plans for AMD change nothing, named as its
//! PTX entry; else a body planned for AMD.

use proc_macro2::TokenStream;
use quote::quote;

/// The expansion's text of `#[tile_kernel(attr)] item` (no `compile_error!`).
fn expansion(attr: TokenStream, item: TokenStream) -> String {
    let out = crate::expand::tile_kernel(attr, item).to_string();
    assert!(
        !out.contains("compile_error"),
        "{}",
        &out[..out.len().min(2000)]
    );
    out
}

/// The NVIDIA-only instructions of the first specialisation's bodies (Ampere, then Hopper).
fn nvidia_only(attr: TokenStream, item: TokenStream) -> Vec<Vec<&'static str>> {
    let kernels = super::ok(attr, item);
    let kernel = &kernels[0];
    let variants = crate::expand::prepare(kernel.clone(), crate::expand::BodySet::All)
        .expect("layouts inferred");
    variants
        .iter()
        .map(|v| {
            crate::lower::lower_kernel(&v.kernel, &v.facts)
                .expect("lowered")
                .nvidia_only
        })
        .collect()
}

/// (One warp: the reduction needs no shared memory, which is where plans for AMD could differ.)
#[test]
fn kernels_without_nvidia_only_instructions_have_an_amdgpu_entry() {
    let out = expansion(
        quote!(num_warps = 1, BLOCK = [256]),
        quote!(
            fn scale<const BLOCK: usize>(x: Ptr<f32>, y: Ptr<f16>, n: i32) {
                let offs = program_id(0) * BLOCK + arange(0, BLOCK);
                let v = load(x + offs, offs < n, 0.0);
                let t = v.to::<f16>();
                store(y + offs, t, offs < n);
                let r = v.sum(0);
                store(x, exp2(r));
            }
        ),
    );
    // One device entry for both targets, the body written once: `__tile_kernel_entry!` makes it
    // `extern "ptx-kernel"` on nvptx64 and `extern "gpu-kernel"` on amdgpu.
    let entry = |name: &str| {
        format!(
            "# [cfg (any (target_arch = \"nvptx64\" , target_arch = \"amdgpu\"))] :: tessera :: \
             __tile_kernel_entry ! {{ # [no_mangle] # [allow (unused , non_snake_case , clippy \
             :: all)] fn {name} ("
        )
    };
    assert!(out.contains(&entry("scale")), "no entry for both devices");
    assert!(!out.contains("\"ptx-kernel\""), "a PTX-only entry too");
    // The variant for unaligned arguments too, under the name of its PTX entry.
    assert!(
        out.contains(&entry("scale__unaligned")),
        "no unaligned entry"
    );
    // The launcher's handle says nothing keeps it off AMD.
    assert!(out.contains("nvidia_only : & []"), "no nvidia_only");
    // The host build is neither device's.
    assert!(
        out.contains("# [cfg (not (any (target_arch = \"nvptx64\" , target_arch = \"amdgpu\")))]")
    );
}

/// The text of the item of `out` whose function is `"abi" fn name (`, to the next `#[cfg`.
fn item<'a>(out: &'a str, abi: &str, name: &str) -> &'a str {
    let at = out
        .find(&format!("\"{abi}\" fn {name} ("))
        .unwrap_or_else(|| panic!("no {abi} entry"));
    let end = out[at..].find("# [cfg").map_or(out.len(), |e| at + e);
    &out[at..end]
}

/// A dot's Ampere body uses `mma.sync` (and `ldmatrix`): the amdgpu entry gets a body of its
/// own, planned for AMD, whose dot is `v_mfma` calls and whose conversions read without
/// `ldmatrix`; EXPLAIN names the instruction.
/// The expansion `out` gives its variant `name` an amdgpu body of its own: nothing keeps it off
/// AMD (the handle's `nvidia_only` empty), the host function runs that body while the emulator
/// emulates amdgpu, and EXPLAIN lists its entry.
fn assert_has_own_amdgpu_body(out: &str, name: &str) {
    assert!(
        out.contains("nvidia_only : & []"),
        "the handle's nvidia_only"
    );
    assert!(
        out.contains(":: tessera :: emulator :: EmulatedTarget :: Amdgpu"),
        "the host function's amdgpu body"
    );
    assert!(
        out.contains(&format!("entry {name} (amdgpu)")),
        "EXPLAIN's amdgpu entry"
    );
}

/// `mm`: one 64 × 64 f16 dot of a tile with itself, under the attribute `attr`.
fn square_dot(attr: TokenStream) -> (TokenStream, TokenStream) {
    let item = quote!(
        fn mm(a: Ptr<f16>, c: Ptr<f32>) {
            let r = arange(0, 64);
            let offs = r.expand_dims(1) * 64 + r.expand_dims(0);
            let t = load(a + offs);
            store(c + offs, dot(t, t));
        }
    );
    (attr, item)
}

#[test]
fn dots_get_an_amdgpu_body_of_mfma() {
    let dot = square_dot(quote!(num_warps = 4));
    let bodies = nvidia_only(dot.0.clone(), dot.1.clone());
    assert_eq!(bodies[0], ["ldmatrix", "mma.sync"]);
    assert_eq!(bodies[1], ["wgmma"]);
    let out = expansion(dot.0, dot.1);
    let (ptx, amd) = (
        item(&out, "ptx-kernel", "mm"),
        item(&out, "gpu-kernel", "mm"),
    );
    assert!(
        ptx.contains("mma_m16n8k16_f16_f32"),
        "the PTX body's mma.sync"
    );
    assert!(
        amd.contains("mfma_f32_32x32x8_f16"),
        "the amdgpu body's mfma"
    );
    assert!(
        !amd.contains("mma_m16n8") && !amd.contains("ldmatrix"),
        "NVIDIA code for AMD"
    );
    // Nothing keeps the variant off AMD; EXPLAIN shows the amdgpu plan.
    assert_has_own_amdgpu_body(&out, "mm");
    assert!(out.contains("v_mfma_f32_32x32x8f16 ×"), "EXPLAIN's mfma");
    // Beside the amdgpu kernel, in amdgpu builds, the marker of its block size (4 warps: 128
    // threads), which the build helper turns into the kernel's workgroup bound.
    let marker = format!(
        "static {}128__mm : u8",
        crate::expand::ptx_entries::WORKGROUP_SIZE_MARKER
    );
    let at = out.find(&marker).expect("the workgroup-size marker");
    assert!(
        out[..at].ends_with("# [cfg (target_arch = \"amdgpu\")] # [no_mangle] # [used] # [allow (non_upper_case_globals)] "),
        "{}",
        &out[at.saturating_sub(200)..at]
    );
}

/// A kernel for sm_90a alone among NVIDIA's targets (`targets = [sm_90a]`) has the Hopper body
/// (`wgmma`) in the sm_90a PTX alone and an amdgpu kernel planned from the same source: the
/// host function runs the amdgpu body while the emulator emulates amdgpu; in an amdgpu build
/// the macro plans the Hopper body it replaces and the AMD one (not Ampere's).
#[test]
fn hopper_only_kernels_get_an_amdgpu_body_of_mfma() {
    let dot = square_dot(quote!(num_warps = 4, targets = [sm_90a]));
    // Its variants (aligned and `unaligned`): Hopper bodies alone, `wgmma` in each.
    let bodies = nvidia_only(dot.0.clone(), dot.1.clone());
    assert!(
        !bodies.is_empty() && bodies.iter().all(|b| b.contains(&"wgmma")),
        "{bodies:?}"
    );
    let out = expansion(dot.0.clone(), dot.1.clone());
    let ptx = item(&out, "ptx-kernel", "mm");
    assert!(ptx.contains("wgmma"), "the sm_90a body's wgmma");
    assert!(!out.contains("mma_m16n8"), "an Ampere body");
    let amd = item(&out, "gpu-kernel", "mm");
    assert!(
        amd.contains("mfma_f32_32x32x8_f16"),
        "the amdgpu body's mfma"
    );
    assert!(!amd.contains("wgmma"), "NVIDIA code for AMD");
    assert!(out.contains("Sm90aOnly"), "the handle's PTX targets");
    assert_has_own_amdgpu_body(&out, "mm");
    // The amdgpu build's expansion: the amdgpu kernel, planned from the Hopper variant's.
    let kernels = super::ok(dot.0, dot.1);
    let variants = crate::expand::prepare(kernels[0].clone(), crate::expand::BodySet::Amdgpu)
        .expect("layouts inferred");
    assert!(
        !variants.is_empty()
            && variants
                .iter()
                .all(|v| v.kernel.target == crate::ir::Target::Hopper),
        "an amdgpu build plans the Hopper variants"
    );
}

/// A dot `mfma_choice` refuses (one warp: half a wave) keeps its variant NVIDIA-only: no amdgpu
/// entry, the handle names the Ampere body's instructions for the launcher's error on a code
/// object.
#[test]
fn dots_without_an_mfma_have_no_amdgpu_entry() {
    let out = expansion(
        quote!(num_warps = 1),
        quote!(
            fn mm(a: Ptr<f16>, c: Ptr<f32>) {
                let r = arange(0, 32);
                let offs = r.expand_dims(1) * 32 + r.expand_dims(0);
                let t = load(a + offs);
                store(c + offs, dot(t, t));
            }
        ),
    );
    assert!(out.contains("\"ptx-kernel\" fn mm"), "no PTX entry");
    assert!(!out.contains("gpu-kernel"), "an amdgpu entry");
    assert!(!out.contains("__tile_kernel_entry"), "an amdgpu entry");
    assert!(out.contains("\"mma.sync\"]"), "the handle's nvidia_only");
}

/// i8 and f8 dots have an amdgpu entry: i8 by gfx942's i8 `mfma` (8 bytes a lane, i32
/// accumulator), f8 by the f8 one (8 elements a lane: gfx950's, or two f16 ones on the widened
/// halves elsewhere); `EXPLAIN` names both.
#[test]
fn i8_and_f8_dots_have_an_amdgpu_entry() {
    for (ty, acc, function, explained) in [
        (
            "i8",
            "i32",
            "mfma_i32_16x16x32_i8",
            "v_mfma_i32_16x16x32_i8 (gfx90a: 2 × v_mfma_i32_16x16x16i8) × 2, k_width 8",
        ),
        (
            "f8e4m3",
            "f32",
            "mfma_f32_16x16x32_f8e4m3",
            "v_mfma_f32_16x16x32_fp8_fp8 (gfx950; gfx942, gfx90a: 2 × v_mfma_f32_16x16x16f16 on \
             f8e4m3 widened to f16) × 2, k_width 8",
        ),
    ] {
        let (t, a) = (
            syn::parse_str::<syn::Type>(ty).unwrap(),
            syn::parse_str::<syn::Type>(acc).unwrap(),
        );
        let out = expansion(
            quote!(num_warps = 4),
            quote!(
                fn mm(a: Ptr<#t>, c: Ptr<#a>) {
                    let r = arange(0, 32);
                    let offs = r.expand_dims(1) * 32 + r.expand_dims(0);
                    let t = load(a + offs);
                    store(c + offs, dot(t, t));
                }
            ),
        );
        let amd = item(&out, "gpu-kernel", "mm");
        assert!(amd.contains(function), "{ty}: no {function}");
        assert!(!amd.contains("mma_m16n8"), "{ty}: NVIDIA code for AMD");
        assert!(
            out.contains("nvidia_only : & []"),
            "{ty}: the handle's nvidia_only"
        );
        let at = out.find("v_mfma").unwrap_or(0);
        assert!(
            out.contains(explained),
            "{ty}: EXPLAIN: {}",
            &out[at..(at + 200).min(out.len())]
        );
    }
}

/// Atomics are `atom` on NVIDIA and `core::sync::atomic` on amdgpu: a kernel of atomics gets the
/// shared device entry, and nothing keeps it off AMD.
#[test]
fn atomics_have_an_amdgpu_entry() {
    let atomic = (
        quote!(num_warps = 4),
        quote!(
            fn count(bins: Ptr<i32>, x: Ptr<i32>) {
                let v = load(x + arange(0, 128));
                atomic_add(bins + v, 1, v >= 0, "relaxed");
            }
        ),
    );
    let out = expansion(atomic.0.clone(), atomic.1.clone());
    assert!(
        out.contains("__tile_kernel_entry"),
        "no shared device entry"
    );
    assert!(
        out.contains("nvidia_only : & []"),
        "the handle's nvidia_only"
    );
    assert_eq!(nvidia_only(atomic.0, atomic.1), [Vec::<&str>::new()]);
}

/// A conversion the Ampere plans read by `ldmatrix` (a warp's `f16` transpose): the amdgpu
/// entry gets a body of its own, planned for AMD (shared memory read by vector loads), and the
/// host function runs it while the emulator emulates amdgpu.
#[test]
fn ldmatrix_conversions_get_an_amdgpu_body_planned_without_it() {
    let transpose = (
        quote!(num_warps = 1),
        quote!(
            fn tr(x: Ptr<f16>, y: Ptr<f16>) {
                let r = arange(0, 32);
                let t = load(x + r.expand_dims(1) * 32 + r.expand_dims(0));
                store(y + r.expand_dims(1) * 32 + r.expand_dims(0), t.trans());
            }
        ),
    );
    // Both variants' (aligned and unaligned) Ampere bodies read by ldmatrix.
    assert_eq!(
        nvidia_only(transpose.0.clone(), transpose.1.clone()),
        [vec!["ldmatrix"], vec!["ldmatrix"]],
    );
    let out = expansion(transpose.0, transpose.1);
    assert!(!out.contains("__tile_kernel_entry"), "one body for both");
    let (ptx, amd) = (
        item(&out, "ptx-kernel", "tr"),
        item(&out, "gpu-kernel", "tr"),
    );
    assert!(ptx.contains("ldmatrix_x"), "the PTX body reads by ldmatrix");
    assert!(!amd.contains("ldmatrix"), "the amdgpu body has an ldmatrix");
    assert!(
        amd.contains("ld_shared_v"),
        "the amdgpu body's vector loads"
    );
    assert_has_own_amdgpu_body(&out, "tr");
    // EXPLAIN prices the amdgpu body's conversion on AMD's LDS phases, the PTX body's not.
    assert_eq!(
        out.matches("of LDS, wavefronts on AMD's bank phases")
            .count(),
        2,
        "the aligned and unaligned amdgpu bodies' conversions"
    );
}

/// Variants whose amdgpu bodies are the same (AMD code is not pipelined, so `num_stages` 1 and 2
/// of a matmul) have one amdgpu kernel: the first variant's. The second's handle names it
/// (`amdgpu_entry`), its host function calls it while the emulator emulates amdgpu, and EXPLAIN
/// says so; each has its own PTX entry (pipelined or not). The launch asks each target for its
/// own body's shared memory (the pipelined sm_90a body's ring is more than the amdgpu body's).
#[test]
fn variants_with_the_same_amdgpu_body_share_one_amdgpu_kernel() {
    let out = expansion(
        quote!(
            num_warps = 4,
            num_stages = [1, 2],
            BM = 64,
            BN = 64,
            BK = 32
        ),
        quote!(
            fn mm<const BM: usize, const BN: usize, const BK: usize>(
                a: Ptr<f16>,
                b: Ptr<f16>,
                c: Ptr<f32>,
                k: i32,
            ) {
                let rm = arange(0, BM);
                let rn = arange(0, BN);
                let rk = arange(0, BK);
                let mut a_ptrs = a + rm.expand_dims(1) * k + rk.expand_dims(0);
                let mut b_ptrs = b + rk.expand_dims(1) * BN + rn.expand_dims(0);
                let mut acc = zeros::<f32>([BM, BN]);
                for _ in 0..k / BK {
                    acc = dot(load(a_ptrs), load(b_ptrs), acc);
                    a_ptrs += BK;
                    b_ptrs += BK * BN;
                }
                store(c + rm.expand_dims(1) * BN + rn.expand_dims(0), acc);
            }
        ),
    );
    let (one, two) = (
        "mm__BM_64__BN_64__BK_32__num_stages_1",
        "mm__BM_64__BN_64__BK_32__num_stages_2",
    );
    for name in [one, two] {
        assert!(
            out.contains(&format!("\"ptx-kernel\" fn {name} (")),
            "no PTX entry {name}"
        );
    }
    assert!(
        item(&out, "gpu-kernel", one).contains("mfma_f32_32x32x8_f16"),
        "the first variant's amdgpu kernel"
    );
    assert!(
        !out.contains(&format!("\"gpu-kernel\" fn {two} (")),
        "a second copy of the same amdgpu kernel"
    );
    let amdgpu_entries: Vec<&str> = out
        .match_indices("amdgpu_entry : ")
        .map(|(at, _)| {
            let rest = &out[at + "amdgpu_entry : ".len()..];
            rest[..rest.find('}').unwrap()]
                .trim()
                .trim_end_matches(',')
                .trim()
        })
        .collect();
    assert_eq!(
        amdgpu_entries,
        [
            ":: core :: option :: Option :: None",
            ":: core :: option :: Option :: None",
            ":: core :: option :: Option :: Some (\"mm__BM_64__BN_64__BK_32__num_stages_1\")",
            ":: core :: option :: Option :: Some (\"mm__BM_64__BN_64__BK_32__num_stages_1__unaligned\")",
        ],
        "the handles' amdgpu entries (aligned and unaligned variants of each)"
    );
    // The second variant's host function runs the first's while emulating amdgpu.
    let host = &out[out
        .find(&format!("pub unsafe fn {two} ("))
        .expect("the host function")..];
    let host = &host[..host.find("# [cfg").unwrap_or(host.len())];
    assert!(
        host.contains(&format!("unsafe {{ {one} (a , b , c , k ,")),
        "the host function's amdgpu branch: {host}"
    );
    assert!(
        out.contains(&format!(
            "amdgpu: runs the code object's kernel {one} (the same amdgpu body)"
        )),
        "EXPLAIN"
    );
    // Shared memory per target: the pipelined sm_90a body's ring (TMA) is larger than the
    // amdgpu body's, which the AMD launch asks for alone.
    let shared: Vec<(u32, u32, u32)> = out
        .match_indices("target_shared_bytes : :: tessera :: tile :: TargetSharedBytes { ")
        .map(|(at, m)| {
            let rest = &out[at + m.len()..];
            let n = |field: &str| -> u32 {
                let from = rest.find(&format!("{field} : ")).unwrap() + field.len() + 3;
                rest[from..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            (n("sm80"), n("sm90a"), n("amdgpu"))
        })
        .collect();
    assert_eq!(shared.len(), 4);
    let (unpipelined, pipelined) = (shared[0], shared[2]);
    assert_eq!(unpipelined.2, pipelined.2, "one amdgpu body: {shared:?}");
    assert!(pipelined.1 > pipelined.2, "{shared:?}");
}

/// A sum whose warps run along the axis: on AMD the two warps of a wave combine by a butterfly
/// across the wave (`wave_bfly` of mask 32, `ds_bpermute` over 64 lanes), so with two warps the amdgpu
/// body needs no shared memory, where the PTX body goes through it; with four warps the waves
/// still meet in shared memory. EXPLAIN counts the reduction on waves.
#[test]
fn reductions_across_the_warps_of_a_wave_are_butterflies_on_amd() {
    for (warps, shared, explained) in [
        (
            2u32,
            false,
            "[within a wave (64 lanes): 6 shuffle rounds; cost",
        ),
        (
            4,
            true,
            "[across 2 waves: 6 shuffle rounds in each wave (64 lanes), then shared memory; cost",
        ),
    ] {
        let out = expansion(
            quote!(num_warps = #warps, BLOCK = [256]),
            quote!(
                fn total<const BLOCK: usize>(x: Ptr<f32>, y: Ptr<f32>, n: i32) {
                    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
                    let v = load(x + offs, offs < n, 0.0);
                    store(y, v.sum(0));
                }
            ),
        );
        let (ptx, amd) = (
            item(&out, "ptx-kernel", "total"),
            item(&out, "gpu-kernel", "total"),
        );
        assert!(!ptx.contains("wave_bfly"), "{warps} warps: a wave in PTX");
        assert!(
            ptx.contains("st_shared_elem"),
            "{warps} warps: PTX partials"
        );
        assert!(
            amd.contains("wave_bfly"),
            "{warps} warps: no wave butterfly"
        );
        assert_eq!(
            amd.contains("st_shared_elem"),
            shared,
            "{warps} warps: the amdgpu body's shared memory"
        );
        assert_has_own_amdgpu_body(&out, "total");
        assert!(out.contains(explained), "{warps} warps: EXPLAIN");
    }
}

/// A conversion whose elements cross between the two warps of a wave (a 16 × 16 f32 transpose
/// on two warps) goes through shared memory on NVIDIA and is a shuffle of the 64-lane wave on
/// AMD (cheaper than its LDS round trip), which EXPLAIN says.
#[test]
fn conversions_within_a_wave_are_wave_shuffles_on_amd() {
    let out = expansion(
        quote!(num_warps = 2),
        quote!(
            fn tr(x: Ptr<f32>, y: Ptr<f32>) {
                let r = arange(0, 16);
                let t = load(x + r.expand_dims(1) * 16 + r.expand_dims(0));
                store(y + r.expand_dims(1) * 16 + r.expand_dims(0), t.trans());
            }
        ),
    );
    let (ptx, amd) = (
        item(&out, "ptx-kernel", "tr"),
        item(&out, "gpu-kernel", "tr"),
    );
    assert!(ptx.contains("st_shared_v"), "the PTX body's shared memory");
    assert!(!ptx.contains("wave_shfl"), "a wave shuffle in PTX");
    assert!(amd.contains("wave_shfl_idx_b32"), "no wave shuffle");
    assert!(
        !amd.contains("st_shared_v"),
        "the amdgpu body's shared memory"
    );
    assert_has_own_amdgpu_body(&out, "tr");
    assert!(
        out.contains("wave shuffle (64 lanes: warp bit 0 as lane bit 5, ds_bpermute): 4 rounds"),
        "EXPLAIN"
    );
}

/// A cumsum whose warps run along the axis: the level whose partner is in the other warp of a
/// wave is a butterfly of the wave on AMD (`wave_bfly` over wave lane bit 5), so with two warps
/// the amdgpu body needs no shared memory, where the PTX body goes through it.
#[test]
fn scans_across_the_warps_of_a_wave_are_butterflies_on_amd() {
    let out = expansion(
        quote!(num_warps = 2),
        quote!(
            fn prefix(x: Ptr<f32>, y: Ptr<f32>) {
                let offs = arange(0, 256);
                store(y + offs, load(x + offs).cumsum(0));
            }
        ),
    );
    let (ptx, amd) = (
        item(&out, "ptx-kernel", "prefix"),
        item(&out, "gpu-kernel", "prefix"),
    );
    assert!(
        ptx.contains("st_shared_elem"),
        "the PTX body's shared level"
    );
    assert!(!ptx.contains("wave_bfly"), "a wave in PTX");
    assert!(amd.contains("wave_bfly"), "no wave butterfly");
    assert!(
        !amd.contains("st_shared_elem"),
        "the amdgpu body's shared memory"
    );
    assert_has_own_amdgpu_body(&out, "prefix");
    assert!(out.contains("1 wave-shuffle level(s)"), "EXPLAIN");
}
