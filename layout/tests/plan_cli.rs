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
