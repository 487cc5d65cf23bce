use super::artifacts::*;
use super::error::{first_error, summarize_stderr};
use super::toolchain::*;
use super::*;
use crate::launch::ptx::target_name;

#[test]
fn sm_parsing_accepts_known_names_and_rejects_others() {
    assert_eq!(Sm::parse("sm_80").unwrap(), Sm::SM_80);
    assert_eq!(Sm::parse("90a").unwrap(), Sm::SM_90A);
    assert_eq!(Sm::parse(" SM_90 ").unwrap(), Sm::SM_90);
    assert_eq!(Sm::SM_90A.compute_capability(), (9, 0));
    assert_eq!(Sm::parse("sm_86").unwrap().compute_capability(), (8, 6));
    assert_eq!(Sm::parse("sm_120a").unwrap().compute_capability(), (12, 0));
    for bad in ["sm_75", "sm_9", "gfx90a", "", "sm_90b"] {
        let err = Sm::parse(bad).unwrap_err();
        assert!(
            err.to_string().contains("unknown SM target"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn artifact_json_selects_the_hashed_asm_file() {
    let dir = std::env::temp_dir().join(format!("tessera-build-test-{}", std::process::id()));
    let deps = dir.join("nvptx64-nvidia-cuda/release/deps");
    std::fs::create_dir_all(&deps).unwrap();
    // A stale PTX of an older build with another hash must not be picked.
    std::fs::write(deps.join("my_kernels-0000000000000000.s"), "stale").unwrap();
    std::fs::write(
        deps.join("my_kernels-1234abcd5678ef90.s"),
        ".target sm_80\n",
    )
    .unwrap();
    // Cargo's dep-info next to the uplifted library: absolute paths of the crate's and its
    // local dependencies' sources.
    let dep_info = dir.join("nvptx64-nvidia-cuda/release/libmy_kernels.d");
    std::fs::write(
        &dep_info,
        "/t/libmy_kernels.rlib: /k/src/lib.rs /k/src/a\\ b.rs /dsl/src/lib.rs\n",
    )
    .unwrap();
    let line = format!(
        r#"{{"reason":"compiler-artifact","package_id":"path+file:///k#my-kernels@0.1.0","manifest_path":"/k/Cargo.toml","target":{{"kind":["lib"],"crate_types":["lib"],"name":"my-kernels","src_path":"/k/src/lib.rs"}},"filenames":["{0}/libmy_kernels-1234abcd5678ef90.rlib","{0}/libmy_kernels-1234abcd5678ef90.rmeta"],"fresh":true}}"#,
        deps.display()
    );
    let stdout = format!("{{\"reason\":\"build-finished\",\"success\":true}}\nnot json\n{line}\n");
    let artifacts = parse_artifacts(&stdout);
    assert_eq!(artifacts.len(), 1);
    let artifact = &artifacts[0];
    assert!(artifact.is_lib() && artifact.is_path_package());
    assert_eq!(artifact.crate_name(), "my_kernels");
    assert_eq!(
        ptx_of_artifact(artifact).unwrap(),
        deps.join("my_kernels-1234abcd5678ef90.s")
    );
    assert_eq!(cargo_dep_info_of(artifact).unwrap(), dep_info);
    let no_sysroot = Path::new("/nonexistent-sysroot");
    let tracked = tracked_sources(&artifacts, artifact, no_sysroot, &dir);
    let expected = [
        "/dsl/src/lib.rs",
        "/k/Cargo.toml",
        "/k/src/a b.rs",
        "/k/src/lib.rs",
    ];
    assert_eq!(tracked, expected.map(PathBuf::from));
    // Without cargo's dep-info, every local package's src/ directory is tracked.
    std::fs::remove_file(&dep_info).unwrap();
    let tracked = tracked_sources(&artifacts, artifact, no_sysroot, &dir);
    assert_eq!(tracked, ["/k/Cargo.toml", "/k/src"].map(PathBuf::from));
    // Without the .s file the error names the exact file expected.
    std::fs::remove_file(deps.join("my_kernels-1234abcd5678ef90.s")).unwrap();
    let err = ptx_of_artifact(artifact).unwrap_err();
    assert!(err.contains("my_kernels-1234abcd5678ef90.s"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dep_info_and_ptx_target_parsing() {
    let text = "# env-dep:X=1\n/t/deps/k-1.d: /a/src/lib.rs /a/src/m.rs\n\n/a/src/lib.rs:\n";
    assert_eq!(
        parse_dep_info(text),
        vec![PathBuf::from("/a/src/lib.rs"), PathBuf::from("/a/src/m.rs")]
    );
    assert_eq!(parse_dep_info("no rules here"), Vec::<PathBuf>::new());
    let ptx = "//\n.version 7.0\n.target sm_90a\n.address_size 64\n";
    assert_eq!(target_name(ptx), Some("sm_90a"));
    assert_eq!(target_name(".target sm_80, debug\n"), Some("sm_80"));
    assert_eq!(target_name(".version 7.0\n"), None);
}

#[test]
fn outer_target_dir_is_found_from_out_dir() {
    assert_eq!(
        outer_target_dir(Path::new("/w/target/release/build/ex-0123/out")),
        Some(PathBuf::from("/w/target"))
    );
    assert_eq!(outer_target_dir(Path::new("/somewhere/else/out")), None);
}

#[test]
fn nested_build_gets_device_rustflags_and_no_host_settings() {
    let inherited = [
        "CARGO_CFG_UNIX",
        "CARGO_CFG_TARGET_FEATURE",
        "DEP_Z_INCLUDE",
        "PATH",
        "CARGO_HOME",
    ];
    let env = nested_cargo_env(
        Sm::SM_90A,
        &["-Cdebuginfo=0".to_string()],
        inherited.iter().map(|name| name.to_string()),
    );
    let flags = env
        .iter()
        .find(|(key, _)| *key == "CARGO_ENCODED_RUSTFLAGS")
        .and_then(|(_, value)| value.clone())
        .unwrap();
    assert_eq!(
        flags.to_str().unwrap().split('\u{1f}').collect::<Vec<_>>(),
        [
            "-Ctarget-cpu=sm_90a",
            "--emit=asm",
            "-Zunstable-options",
            "-Cpanic=immediate-abort",
            "-Cdebuginfo=0"
        ]
    );
    for removed in [
        "RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "TARGET",
        "OUT_DIR",
        "CARGO_CFG_UNIX",
        "CARGO_CFG_TARGET_FEATURE",
        "DEP_Z_INCLUDE",
    ] {
        assert!(
            env.iter()
                .any(|(key, value)| *key == removed && value.is_none()),
            "{removed}"
        );
    }
    for kept in ["PATH", "CARGO_HOME"] {
        assert!(env.iter().all(|(key, _)| key != kept), "{kept}");
    }
}

#[test]
fn missing_crate_dir_is_a_clear_error() {
    let err = PtxBuild::new("/nonexistent/kernel-crate")
        .out_dir(std::env::temp_dir())
        .cargo_directives(false)
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/kernel-crate"),
        "{err}"
    );
}

/// A nested build for a target without `std`: the root cause is the first error, followed by
/// enough later output (here 80 lines of follow-up errors) to push it out of the tail.
fn failing_no_std_log() -> String {
    let mut log = String::from(
        "   Compiling tessera-layout v0.1.0 (/w/layout)\n\
         \x20  Compiling my-kernels v0.1.0 (/w/kernels)\n\
         error[E0463]: can't find crate for `std`\n\
         \x20 |\n\
         \x20 = note: the `nvptx64-nvidia-cuda` target may not support the standard library\n\
         \x20 = note: `std` is required by `my_kernels` because it does not declare `#![no_std]`\n\
         \x20 = help: consider building the standard library from source with `cargo build -Zbuild-std`\n\
         \n",
    );
    for i in 0..40 {
        log.push_str(&format!(
            "error: cannot find macro `println` in this scope\n  --> src/lib.rs:{i}:5\n\n"
        ));
    }
    log.push_str("error: could not compile `my-kernels` (lib) due to 41 previous errors\n");
    log
}

#[test]
fn first_error_is_the_root_cause_with_its_notes() {
    let log = failing_no_std_log();
    let (index, block) = first_error(&log).unwrap();
    assert_eq!(index, 2);
    assert_eq!(block.len(), 5);
    assert_eq!(block[0], "error[E0463]: can't find crate for `std`");
    assert!(block[4].contains("-Zbuild-std"));
    assert_eq!(first_error("   Compiling x\nwarning: unused\n"), None);
}

#[test]
fn failed_build_message_shows_the_first_error_and_the_tail() {
    let err = BuildError::CargoFailed {
        status: "exit status: 101".into(),
        command: "cargo build".into(),
        stderr: failing_no_std_log(),
    };
    let text = err.to_string();
    let first = text.find("can't find crate for `std`").expect(&text);
    let last = text.find("due to 41 previous errors").expect(&text);
    assert!(first < last, "{text}");
    assert!(text.contains("does not declare `#![no_std]`"), "{text}");
    // A short log is shown whole, its first error once.
    let short = "error: linker failed\nerror: could not compile `k`\n";
    assert_eq!(summarize_stderr(short), short.trim_end());
}
