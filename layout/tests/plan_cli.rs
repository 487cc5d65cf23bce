//! The `tessera-layout` binary on the seeds' 16×32 transpose: the exact `--json` of `swizzle`
//! and `conflicts`, and pictures that name what they show.

use std::process::Command;

const STORE: &str = r#"{"layout": {"family": "linear", "params": {"register": [[1, 0], [2, 0], [4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": [], "shape": [16, 32]}}, "shape": [16, 32]}"#;
const READ: &str = r#"{"layout": {"family": "linear", "params": {"register": [[0, 2], [0, 4], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": [], "shape": [16, 32]}}, "shape": [16, 32]}"#;
const CLASSIC: &str = r#"{"layout": {"family": "swizzled_shared", "params": {"vec": 1, "per_phase": 1, "max_phase": 16, "order": [1, 0]}}, "shape": [16, 32]}"#;

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera-layout"))
        .args(args)
        .output()
        .expect("run tessera-layout");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn swizzle_json_is_n_xor_2m() {
    let (ok, out, err) = run(&["swizzle", STORE, READ, "--json"]);
    assert!(ok, "{err}");
    let compact: String = out.split_whitespace().collect();
    assert_eq!(
        compact,
        r#"{"memory":{"family":"shared_linear","params":{"offset":[[0,1],[0,2],[0,4],[0,8],[0,16],[1,2],[2,4],[4,8],[8,16]]}},"vector_elements":1,"write_wavefronts":1,"read_wavefronts":1}"#
    );
    let (ok, out, _) = run(&["swizzle", STORE, READ]);
    assert!(ok);
    assert!(out.contains("offset(m, n) = 32·m + (n ⊕ 2m)"), "{out}");
    assert!(out.contains("full pass: 16 + 16 wavefronts"), "{out}");
    assert!(out.contains("read 2 wavefronts per phase"), "{out}");
}

#[test]
fn conflicts_of_the_classic_swizzle() {
    let (ok, out, err) = run(&["conflicts", READ, CLASSIC, "--bits", "32", "--json"]);
    assert!(ok, "{err}");
    assert_eq!(
        out.split_whitespace().collect::<String>(),
        r#"{"wavefronts":2}"#
    );
    let (ok, _, err) = run(&["conflicts", READ, CLASSIC]);
    assert!(!ok && err.contains("--bits"), "{err}");
    let (ok, _, err) = run(&["conflicts", READ, "{\"layout\": 3}", "--bits", "32"]);
    assert!(!ok && err.starts_with("error:"), "{err}");
}

#[test]
fn convert_and_show() {
    let (ok, out, err) = run(&["convert", STORE, READ, "--json"]);
    assert!(ok, "{err}");
    assert!(out.contains(r#""plan": "warp_shuffle""#), "{out}");
    assert!(out.contains(r#""shuffles": 16"#), "{out}");
    let (ok, out, _) = run(&["show", READ]);
    assert!(ok && out.contains("   lane=16 -> (0, 1)"), "{out}");
}

#[test]
fn pictures_label_what_they_show() {
    let (ok, out, err) = run(&["svg", READ]);
    assert!(ok, "{err}");
    assert!(out.starts_with("<svg") && out.trim_end().ends_with("</svg>"));
    // 512 cells, each labelled with a lane and a register.
    assert_eq!(out.matches("<title>").count(), 512);
    assert!(out.contains(">L16<") && out.contains(">r15<"));
    let (ok, out, err) = run(&["svg", CLASSIC, "--bits", "32", "--access", READ]);
    assert!(ok, "{err}");
    assert!(out.contains("at most 2 → 2 wavefronts per phase"), "{out}");
}

/// `mfma`: the instruction and waves `#[tile_kernel]` chooses for AMD, and the plan's count.
#[test]
fn mfma_shows_the_amd_instruction_waves_and_plan() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tessera-layout"))
            .args(args)
            .output()
            .expect("run tessera-layout");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // 4 warps = 2 waves along M, 32x32x8: 2 tiles along N x 4 K steps per wave.
    let (ok, text, _) = run(&["mfma", "64", "64", "32"]);
    assert!(ok, "{text}");
    assert!(
        text.contains("v_mfma_f32_32x32x8f16 × 8 on waves [2, 1]"),
        "{text}"
    );
    assert_eq!(text.matches("mfma 7: src0").count(), 1, "{text}");
    // 8 warps on a 32-row tile: 16x16x16 on bf16.
    let (ok, text, _) = run(&["mfma", "32", "64", "32", "--input", "bf16", "--warps", "8"]);
    assert!(ok, "{text}");
    assert!(text.contains("v_mfma_f32_16x16x16bf16_1k"), "{text}");
    // i8: gfx942's K = 16 instruction (8 bytes a lane), 2 tiles along N x 2 K steps per wave.
    let (ok, text, _) = run(&["mfma", "64", "64", "32", "--input", "i8"]);
    assert!(ok, "{text}");
    assert!(
        text.contains("v_mfma_i32_32x32x16_i8 (gfx90a: 2 × v_mfma_i32_32x32x8i8) × 4"),
        "{text}"
    );
    assert!(
        text.contains("mfma 0: src0 = b registers [0, 1, 2, 3, 4, 5, 6, 7]"),
        "{text}"
    );
    // An odd number of warps: refused, saying why.
    let (ok, _, err) = run(&["mfma", "64", "64", "32", "--warps", "1"]);
    assert!(!ok && err.contains("num_warps = 1 is odd"), "{err}");
}

/// A write/read pair of 128-bit f16 vectors (from a search over random pairs as in
/// `plan_swizzle.rs`) whose NVIDIA swizzle serves NVIDIA's quarter warps without conflict but
/// not `ds_read_b128`'s lane groups: `--vendor amd` plans the swizzle for AMD's LDS phases, and
/// `conflicts` counts on them.
const AMD_WRITE: &str = r#"{"layout": {"family": "linear", "params": {"register": [[8, 0], [0, 4], [0, 1], [0, 16], [0, 8]], "lane": [[4, 0], [16, 0], [2, 0], [1, 0], [0, 2]], "warp": [], "shape": [32, 32]}}, "shape": [32, 32]}"#;
const AMD_READ: &str = r#"{"layout": {"family": "linear", "params": {"register": [[4, 0], [0, 4], [8, 0], [0, 8], [16, 0]], "lane": [[0, 1], [0, 16], [1, 0], [0, 2], [2, 0]], "warp": [], "shape": [32, 32]}}, "shape": [32, 32]}"#;

/// The `"memory"` object of `swizzle --json`, as a layout argument of the CLI.
fn memory_argument(swizzle_json: &str) -> String {
    let compact: String = swizzle_json.split_whitespace().collect();
    let start = compact.find(r#""memory":"#).expect("a memory") + r#""memory":"#.len();
    let end = compact
        .find(r#","vector_elements""#)
        .expect("vector_elements");
    format!(
        r#"{{"layout": {}, "shape": [32, 32]}}"#,
        &compact[start..end]
    )
}

#[test]
fn vendor_amd_swizzles_and_counts_on_amd_lds_phases() {
    let swizzle = |vendor: &str| {
        let (ok, out, err) = run(&[
            "swizzle", AMD_WRITE, AMD_READ, "--bits", "16", "--vendor", vendor, "--json",
        ]);
        assert!(ok, "{err}");
        out
    };
    let (nvidia, amd) = (swizzle("nvidia"), swizzle("amd"));
    for out in [&nvidia, &amd] {
        let compact: String = out.split_whitespace().collect();
        assert!(
            compact.contains(r#""write_wavefronts":1,"read_wavefronts":1"#),
            "{out}"
        );
    }
    let (nvidia_memory, amd_memory) = (memory_argument(&nvidia), memory_argument(&amd));
    assert_ne!(nvidia_memory, amd_memory);
    let conflicts = |memory: &str, vendor: &str, side: &str, layout: &str| {
        let args = [
            "conflicts",
            layout,
            memory,
            "--bits",
            "16",
            "--vendor",
            vendor,
            "--side",
            side,
            "--json",
        ];
        let (ok, out, err) = run(&args);
        assert!(ok, "{err}");
        out.split_whitespace().collect::<String>()
    };
    // NVIDIA's memory: conflict-free for quarter warps, 2-way for ds_read_b128's groups.
    assert_eq!(
        conflicts(&nvidia_memory, "nvidia", "load", AMD_READ),
        r#"{"wavefronts":1}"#
    );
    assert_eq!(
        conflicts(&nvidia_memory, "amd", "load", AMD_READ),
        r#"{"wavefronts":2}"#
    );
    assert_eq!(
        conflicts(&amd_memory, "amd", "load", AMD_READ),
        r#"{"wavefronts":1}"#
    );
    assert_eq!(
        conflicts(&amd_memory, "amd", "store", AMD_WRITE),
        r#"{"wavefronts":1}"#
    );
    let (ok, out, _) = run(&[
        "swizzle", AMD_WRITE, AMD_READ, "--bits", "16", "--vendor", "amd",
    ]);
    assert!(ok && out.contains("on AMD's LDS phases"), "{out}");
    let (ok, _, err) = run(&["swizzle", AMD_WRITE, AMD_READ, "--vendor", "intel"]);
    assert!(
        !ok && err.contains("--vendor: `intel`: nvidia or amd"),
        "{err}"
    );
    let (ok, _, err) = run(&[
        "conflicts",
        AMD_READ,
        &amd_memory,
        "--bits",
        "16",
        "--side",
        "x",
    ]);
    assert!(!ok && err.contains("--side: `x`: load or store"), "{err}");
}
