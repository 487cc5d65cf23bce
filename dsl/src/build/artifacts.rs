//! Reading the nested cargo's output: its `compiler-artifact` messages, the PTX file of the
//! kernel crate's compilation, and the source files it depends on (rustc's dep-info).

use std::path::{Path, PathBuf};

/// One `compiler-artifact` message of `cargo --message-format=json`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Artifact {
    pub(super) package_id: String,
    pub(super) manifest_path: String,
    pub(super) target_name: String,
    pub(super) kinds: Vec<String>,
    pub(super) src_path: String,
    pub(super) filenames: Vec<String>,
}

impl Artifact {
    /// A library target: `lib`, `rlib`, or `cdylib` (what `cargo rustc --crate-type cdylib`
    /// reports for the crate it links, as the AMD build does).
    pub(super) fn is_lib(&self) -> bool {
        self.kinds
            .iter()
            .any(|kind| kind == "lib" || kind == "rlib" || kind == "cdylib")
    }

    /// The crate name: the target name with `-` replaced by `_`.
    pub(super) fn crate_name(&self) -> String {
        self.target_name.replace('-', "_")
    }

    /// Whether it was built for `triple` (cargo puts a cross build's outputs in
    /// `<target-dir>/<triple>/`; the build scripts and proc macros of the same build are host
    /// artifacts outside it).
    pub(super) fn is_for_target(&self, triple: &str) -> bool {
        self.filenames.iter().any(|file| {
            Path::new(file)
                .components()
                .any(|component| component.as_os_str() == triple)
        })
    }

    pub(super) fn is_path_package(&self) -> bool {
        self.package_id.starts_with("path+file://")
    }
}

/// The `compiler-artifact` messages in cargo's JSON output (other lines are skipped).
pub(super) fn parse_artifacts(stdout: &str) -> Vec<Artifact> {
    let field = |value: &serde_json::Value, key: &str| -> String {
        value
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let strings = |value: Option<&serde_json::Value>| -> Vec<String> {
        value
            .and_then(|v| v.as_array())
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message.get("reason").and_then(|r| r.as_str()) == Some("compiler-artifact")
        })
        .map(|message| {
            let target = message.get("target").cloned().unwrap_or_default();
            Artifact {
                package_id: field(&message, "package_id"),
                manifest_path: field(&message, "manifest_path"),
                target_name: field(&target, "name"),
                kinds: strings(target.get("kind")),
                src_path: field(&target, "src_path"),
                filenames: strings(message.get("filenames")),
            }
        })
        .collect()
}

/// `deps/lib<crate>-<hash>.rlib` (or `.rmeta`) → `deps/<crate>-<hash>.s`, which must exist.
pub(super) fn ptx_of_artifact(artifact: &Artifact) -> Result<PathBuf, String> {
    let crate_name = artifact.crate_name();
    let prefix = format!("lib{crate_name}-");
    for file in &artifact.filenames {
        let path = Path::new(file);
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let Some(hash) = stem.strip_prefix(&prefix) else {
            continue;
        };
        let ptx = path.with_file_name(format!("{crate_name}-{hash}.s"));
        return if ptx.is_file() {
            Ok(ptx)
        } else {
            Err(format!(
                "{} does not exist (was --emit=asm dropped?)",
                ptx.display()
            ))
        };
    }
    Err(format!(
        "no `lib{crate_name}-<hash>.rlib` among the artifact's files {:?}",
        artifact.filenames
    ))
}

/// The files listed in a Makefile-style dep-info file (`out: dep dep ...`; `\ ` escapes a space).
pub(super) fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let Some(first_rule) = text
        .lines()
        .find(|line| !line.starts_with('#') && line.contains(": "))
    else {
        return Vec::new();
    };
    let mut deps = Vec::new();
    let mut current = String::new();
    let mut chars = first_rule
        .split_once(": ")
        .map_or("", |(_, deps)| deps)
        .chars()
        .peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    deps.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        deps.push(PathBuf::from(current));
    }
    deps
}

/// Cargo's own dep-info of the kernel crate: for `<dir>/deps/lib<crate>-<hash>.rlib`, the file
/// `<dir>/lib<crate>.d` cargo writes next to the uplifted library. It lists, with absolute paths,
/// every source file of the crate and of all its local (path) dependencies.
pub(super) fn cargo_dep_info_of(artifact: &Artifact) -> Option<PathBuf> {
    let prefix = format!("lib{}-", artifact.crate_name());
    artifact.filenames.iter().find_map(|file| {
        let path = Path::new(file);
        path.file_stem()?.to_str()?.strip_prefix(&prefix)?;
        let deps_dir = path.parent()?;
        Some(
            deps_dir
                .parent()?
                .join(format!("lib{}.d", artifact.crate_name())),
        )
    })
}

/// The toolchain's sysroot, canonical: where the sources of `core` and its dependencies lie,
/// which `-Zbuild-std` builds (resolved once, then asked about many files).
pub(super) struct Sysroot(PathBuf);

impl Sysroot {
    pub(super) fn new(sysroot: &Path) -> Self {
        Sysroot(canonical_or_same(sysroot))
    }

    /// Whether `path` lies in the sysroot.
    pub(super) fn contains(&self, path: &Path) -> bool {
        canonical_or_same(path).starts_with(&self.0)
    }
}

fn canonical_or_same(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// What the PTX depends on, for `cargo:rerun-if-changed`: the manifest of every local package
/// in the build (not the sysroot's `core`), every source file cargo's dep-info lists for the
/// kernel crate (its own and its local dependencies'), and the kernel crate's
/// `.cargo/config.toml`; sorted and deduplicated. Without a usable dep-info file, each local
/// package's `src/` directory is tracked instead (cargo scans directories recursively).
pub(super) fn tracked_sources(
    artifacts: &[Artifact],
    kernel_artifact: &Artifact,
    sysroot: &Path,
    crate_dir: &Path,
) -> Vec<PathBuf> {
    let sysroot = Sysroot::new(sysroot);
    let local_manifests: Vec<PathBuf> = artifacts
        .iter()
        .filter(|artifact| {
            artifact.is_path_package() && !sysroot.contains(Path::new(&artifact.manifest_path))
        })
        .map(|artifact| PathBuf::from(&artifact.manifest_path))
        .collect();
    let listed = cargo_dep_info_of(kernel_artifact)
        .and_then(|dep_info| std::fs::read_to_string(dep_info).ok())
        .map(|text| parse_dep_info(&text))
        .unwrap_or_default();
    let mut files = local_manifests.clone();
    if !listed.is_empty() && listed.iter().all(|file| file.is_absolute()) {
        files.extend(listed.into_iter().filter(|file| !sysroot.contains(file)));
    } else {
        files.extend(
            local_manifests
                .iter()
                .filter_map(|manifest| manifest.parent().map(|dir| dir.join("src"))),
        );
    }
    let config = crate_dir.join(".cargo/config.toml");
    if config.is_file() {
        files.push(config);
    }
    files.sort();
    files.dedup();
    files
}
