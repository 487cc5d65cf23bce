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
    // Built for the device: its files lie in the triple's directory (a build script's or proc
    // macro's dependencies, host artifacts of the same build, do not).
    assert!(artifact.is_for_target("nvptx64-nvidia-cuda"));
    let mut host = artifact.clone();
    host.filenames = vec![dir
        .join("release/deps/libitoa-0.rlib")
        .display()
        .to_string()];
    assert!(!host.is_for_target("nvptx64-nvidia-cuda"));
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
        &device_rustflags(Sm::SM_90A, &["-Cdebuginfo=0".to_string()]),
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
            "-Zmir-enable-passes=-GVN",
            "-Cdebuginfo=0"
        ]
    );
    let units = env
        .iter()
        .find(|(key, _)| *key == "CARGO_PROFILE_RELEASE_CODEGEN_UNITS");
    assert_eq!(units.and_then(|(_, v)| v.as_deref()), Some("1".as_ref()));
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
    let ptx = PtxBuild::new("/nonexistent/kernel-crate")
        .out_dir(std::env::temp_dir())
        .cargo_directives(false)
        .build()
        .unwrap_err();
    let amd = CodeObjectBuild::new("/nonexistent/kernel-crate")
        .out_dir(std::env::temp_dir())
        .cargo_directives(false)
        .build()
        .unwrap_err();
    for err in [ptx, amd] {
        assert!(
            err.to_string().contains("/nonexistent/kernel-crate"),
            "{err}"
        );
    }
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

fn sms(names: &[&str]) -> Vec<Sm> {
    names.iter().map(|name| Sm::parse(name).unwrap()).collect()
}

/// A set whose PTX for each target is the target's name.
fn set_of(names: &'static [&'static str]) -> PtxSet {
    let targets: Vec<(Sm, &'static str)> = names
        .iter()
        .map(|name| (Sm::parse(name).unwrap(), *name))
        .collect();
    PtxSet::new(targets.leak())
}

#[test]
fn a_target_runs_on_its_capability_and_newer_an_arch_specific_one_only_on_its_own() {
    assert!(Sm::SM_80.runs_on((8, 0)));
    assert!(Sm::SM_80.runs_on((9, 0)));
    assert!(Sm::SM_80.runs_on((12, 0)));
    assert!(!Sm::SM_90.runs_on((8, 9)));
    assert!(Sm::SM_90.runs_on((10, 0)));
    assert!(Sm::SM_90A.runs_on((9, 0)));
    assert!(!Sm::SM_90A.runs_on((10, 0)));
    assert!(!Sm::SM_90A.runs_on((8, 9)));
    assert!(Sm::SM_90A.is_arch_specific() && !Sm::SM_90.is_arch_specific());
    assert_eq!(Sm::named("sm_90a"), Some(Sm::SM_90A));
    assert_eq!(Sm::named("sm_9"), None);
    assert_eq!(Sm::named("sm_90ab"), None);
}

#[test]
fn the_best_ptx_is_the_newest_target_the_device_runs() {
    let default = set_of(&["sm_80", "sm_90a"]);
    let chosen = |set: &PtxSet, capability| set.best_for(capability).map(|(sm, _)| sm.name());
    assert_eq!(chosen(&default, (8, 0)), Some("sm_80"));
    assert_eq!(chosen(&default, (8, 6)), Some("sm_80"));
    assert_eq!(chosen(&default, (8, 9)), Some("sm_80"));
    assert_eq!(chosen(&default, (9, 0)), Some("sm_90a"));
    assert_eq!(chosen(&default, (10, 0)), Some("sm_80"));
    assert_eq!(default.best_for((9, 0)), Some((Sm::SM_90A, "sm_90a")));

    let hopper_both = set_of(&["sm_80", "sm_90", "sm_90a"]);
    assert_eq!(chosen(&hopper_both, (9, 0)), Some("sm_90a"));
    assert_eq!(chosen(&hopper_both, (10, 0)), Some("sm_90"));
    assert_eq!(chosen(&hopper_both, (8, 9)), Some("sm_80"));

    let ampere_family = set_of(&["sm_80", "sm_86", "sm_89"]);
    assert_eq!(chosen(&ampere_family, (8, 0)), Some("sm_80"));
    assert_eq!(chosen(&ampere_family, (8, 6)), Some("sm_86"));
    assert_eq!(chosen(&ampere_family, (8, 9)), Some("sm_89"));
    assert_eq!(chosen(&ampere_family, (9, 0)), Some("sm_89"));

    let hopper_only = set_of(&["sm_90a"]);
    for capability in [(8, 0), (8, 6), (8, 9), (10, 0)] {
        assert_eq!(chosen(&hopper_only, capability), None, "{capability:?}");
    }
    assert_eq!(chosen(&set_of(&["sm_100a"]), (10, 0)), Some("sm_100a"));
    assert_eq!(chosen(&set_of(&[]), (9, 0)), None);
}

#[test]
fn the_emulator_takes_the_oldest_target() {
    let set = set_of(&["sm_80", "sm_90a"]);
    assert_eq!(set.for_emulator(), Some((Sm::SM_80, "sm_80")));
    assert_eq!(set.get(Sm::SM_90A), Some("sm_90a"));
    assert_eq!(set.get(Sm::SM_90), None);
    assert_eq!(set.sms(), [Sm::SM_80, Sm::SM_90A]);
    assert!(set_of(&[]).is_empty() && set_of(&[]).for_emulator().is_none());
}

#[test]
fn targets_are_listed_oldest_first_each_once_and_tessera_sm_takes_a_list() {
    let build = PtxBuild::new(".").sms([Sm::SM_90A, Sm::SM_80, Sm::SM_90, Sm::SM_80]);
    assert_eq!(build.sms, [Sm::SM_80, Sm::SM_90, Sm::SM_90A]);
    assert_eq!(PtxBuild::new(".").sms, Sm::DEFAULT_TARGETS);
    assert_eq!(PtxBuild::new(".").sm(Sm::SM_90).sms, [Sm::SM_90]);
    assert_eq!(
        parse_sm_list("sm_90a, sm_80").unwrap(),
        sms(&["sm_80", "sm_90a"])
    );
    assert_eq!(parse_sm_list("sm_86").unwrap(), sms(&["sm_86"]));
    let err = parse_sm_list("sm_80,sm_70").unwrap_err();
    assert!(err.to_string().contains("`sm_70`"), "{err}");
}

/// The set file as `include_ptx!` includes it: a slice of `(name, include_str!(path))` pairs
/// in the build's order, which `PtxSet::targets_named` turns into `(Sm, PTX)` pairs.
#[test]
fn the_set_file_lists_every_target_with_its_ptx_file() {
    let dir = std::env::temp_dir().join(format!("tessera-ptx-set-{}", std::process::id()));
    let files = [
        (Sm::SM_80, dir.join("k/sm_80.ptx")),
        (Sm::SM_90A, dir.join("k/sm_90a.ptx")),
    ];
    let path = write_ptx_set(&dir, "k", &files).unwrap();
    assert_eq!(path, dir.join("k.ptx-set.rs"));
    let text = std::fs::read_to_string(&path).unwrap();
    let expected = format!(
        "&[\n    (\"sm_80\", include_str!({:?})),\n    (\"sm_90a\", include_str!({:?})),\n]",
        files[0].1.display().to_string(),
        files[1].1.display().to_string()
    );
    assert_eq!(text, expected);
    assert_eq!(
        std::fs::read_to_string(write_ptx_set(&dir, "empty", &[]).unwrap()).unwrap(),
        "&[\n]"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    const NAMED: &[(&str, &str)] = &[("sm_80", "ptx a"), ("sm_90a", "ptx b")];
    const TARGETS: [(Sm, &str); NAMED.len()] = PtxSet::targets_named(NAMED);
    let set = PtxSet::new(&TARGETS);
    assert_eq!(set.targets(), [(Sm::SM_80, "ptx a"), (Sm::SM_90A, "ptx b")]);
}

#[test]
fn rustup_toolchain_list_gives_names() {
    let list = "stable-x86_64-unknown-linux-gnu (default)\nnightly-x86_64-unknown-linux-gnu (active)\n1.95.0-x86_64-unknown-linux-gnu\n";
    assert_eq!(
        parse_toolchain_list(list),
        [
            "stable-x86_64-unknown-linux-gnu",
            "nightly-x86_64-unknown-linux-gnu",
            "1.95.0-x86_64-unknown-linux-gnu"
        ]
    );
    assert!(parse_toolchain_list("no installed toolchains\n").is_empty());
}

#[test]
fn device_toolchain_is_the_pin_or_its_compiler_under_another_name() {
    let installed = [
        "stable-x86_64-unknown-linux-gnu".to_string(),
        "nightly-x86_64-unknown-linux-gnu".to_string(),
    ];
    // rustc -V of each installed toolchain; `None`: not installed.
    let versions = |pinned_installed: bool, nightly: &'static str| {
        move |name: &str| match name {
            DEVICE_TOOLCHAIN if pinned_installed => Some(DEVICE_RUSTC_VERSION.to_string()),
            "stable-x86_64-unknown-linux-gnu" => Some("rustc 1.95.0 (59807616e 2026-04-14)".into()),
            "nightly" | "nightly-x86_64-unknown-linux-gnu" => Some(nightly.to_string()),
            _ => None,
        }
    };
    // The pin installed: taken.
    assert_eq!(
        choose_toolchain(None, &installed, versions(true, "rustc 1.99.0-nightly")),
        ToolchainChoice::Installed {
            name: DEVICE_TOOLCHAIN.into(),
            why: "the pinned device toolchain".into()
        }
    );
    // Not installed, but `nightly` is the same compiler: `nightly`.
    match choose_toolchain(None, &installed, versions(false, DEVICE_RUSTC_VERSION)) {
        ToolchainChoice::Installed { name, why } => {
            assert_eq!(name, "nightly-x86_64-unknown-linux-gnu");
            assert!(why.contains(DEVICE_TOOLCHAIN), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // Not installed, and no installed compiler is the pinned one: install the pin.
    assert_eq!(
        choose_toolchain(None, &installed, versions(false, "rustc 1.99.0-nightly")),
        ToolchainChoice::Install {
            name: DEVICE_TOOLCHAIN.into()
        }
    );
    // TESSERA_DEVICE_TOOLCHAIN: taken as it is when installed, else installed.
    assert_eq!(
        choose_toolchain(
            Some("nightly"),
            &installed,
            versions(true, "rustc 1.99.0-nightly")
        ),
        ToolchainChoice::Installed {
            name: "nightly".into(),
            why: format!("${DEVICE_TOOLCHAIN_ENV}")
        }
    );
    assert_eq!(
        choose_toolchain(
            Some("nightly-2030-01-01"),
            &installed,
            versions(false, DEVICE_RUSTC_VERSION)
        ),
        ToolchainChoice::Install {
            name: "nightly-2030-01-01".into()
        }
    );
}

/// The asm is written for the processors `asm_for` names among those built (none by default);
/// `TESSERA_AMDGPU_ASM` (`all`, `none` or names) overrides it.
#[test]
fn asm_is_written_for_the_processors_asked_for() {
    let built = ["gfx942".to_string(), "gfx90a".to_string()];
    let build = CodeObjectBuild::new("../kernels");
    assert!(build.effective_asm(&built, None).unwrap().is_empty());
    assert_eq!(build.effective_asm(&built, Some("all")).unwrap(), built);
    let build = build.asm_for(["gfx90a", "gfx1100"]);
    assert_eq!(build.effective_asm(&built, None).unwrap(), ["gfx90a"]);
    assert_eq!(build.effective_asm(&built, Some(" ")).unwrap(), ["gfx90a"]);
    assert_eq!(
        build.effective_asm(&built, Some("gfx942")).unwrap(),
        ["gfx942"]
    );
    assert!(build
        .effective_asm(&built, Some("none"))
        .unwrap()
        .is_empty());
    let err = build.effective_asm(&built, Some("sm_90a")).unwrap_err();
    assert!(err.to_string().contains("sm_90a"), "{err}");
}
