//! A kernel crate's PTX for several targets, as embedded by [`include_ptx!`](crate::include_ptx),
//! and the choice of the one a device runs.

use super::error::BuildError;
use super::sm::Sm;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The PTX of one kernel crate for each target it was built for, oldest target first.
///
/// `tessera::include_ptx!("my_kernels")` gives the set that [`PtxBuild::build`](super::PtxBuild::build)
/// wrote; [`Device::load_ptx_set`](crate::launch::Device::load_ptx_set) loads the member that
/// [`best_for`](PtxSet::best_for) picks for the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtxSet {
    targets: &'static [(Sm, &'static str)],
}

impl PtxSet {
    /// The set of these `(target, PTX)` pairs.
    pub const fn new(targets: &'static [(Sm, &'static str)]) -> PtxSet {
        PtxSet { targets }
    }

    /// `(name, PTX)` pairs as the generated set file lists them, with each name as an [`Sm`].
    /// A name that is not a supported SM stops the compilation (the build script wrote it).
    pub const fn targets_named<const N: usize>(
        named: &[(&'static str, &'static str)],
    ) -> [(Sm, &'static str); N] {
        let mut targets = [(Sm::SM_80, ""); N];
        let mut index = 0;
        while index < N {
            let (name, ptx) = named[index];
            targets[index] = match Sm::named(name) {
                Some(sm) => (sm, ptx),
                None => panic!("the PTX set names a target that is not a supported SM"),
            };
            index += 1;
        }
        targets
    }

    /// Every `(target, PTX)` pair, oldest target first.
    pub fn targets(&self) -> &'static [(Sm, &'static str)] {
        self.targets
    }

    /// The targets, oldest first.
    pub fn sms(&self) -> Vec<Sm> {
        self.targets.iter().map(|(sm, _)| *sm).collect()
    }

    /// Whether the set holds no PTX (a build without the device build).
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The PTX for exactly `sm`.
    pub fn get(&self, sm: Sm) -> Option<&'static str> {
        self.targets
            .iter()
            .find(|(target, _)| *target == sm)
            .map(|(_, ptx)| *ptx)
    }

    /// The PTX a device of compute capability `device` runs best: among the targets that run on
    /// it ([`Sm::runs_on`]), the highest capability, an arch-specific one (`sm_90a`) before the
    /// portable one (`sm_90`) of the same capability.
    pub fn best_for(&self, device: (u32, u32)) -> Option<(Sm, &'static str)> {
        self.targets
            .iter()
            .filter(|(sm, _)| sm.runs_on(device))
            .max_by_key(|(sm, _)| (sm.compute_capability(), sm.is_arch_specific()))
            .copied()
    }

    /// The PTX the emulator takes: the oldest target (the emulator runs the kernels' host build
    /// and reads only the PTX's entries, so the choice is fixed).
    pub fn for_emulator(&self) -> Option<(Sm, &'static str)> {
        self.targets.first().copied()
    }
}

/// The file [`include_ptx!`](crate::include_ptx) includes for the crate `crate_name`:
/// `$OUT_DIR/<crate_name>.ptx-set.rs`.
pub fn ptx_set_path(out_dir: &Path, crate_name: &str) -> PathBuf {
    out_dir.join(format!("{crate_name}.ptx-set.rs"))
}

/// The text of a set file: a slice expression of `("sm_XY", include_str!("<path>"))` pairs.
pub(super) fn ptx_set_source(targets: &[(Sm, PathBuf)]) -> String {
    set_source(
        "include_str",
        targets.iter().map(|(sm, path)| (sm.name(), path)),
    )
}

/// A slice expression of `(name, <include>!("<path>"))` pairs: the text of a set file (PTX or
/// code objects) that `include!` embeds.
pub(super) fn set_source<'a>(
    include: &str,
    targets: impl Iterator<Item = (&'a str, &'a PathBuf)>,
) -> String {
    let mut text = String::from("&[\n");
    for (name, path) in targets {
        let _ = writeln!(
            text,
            "    ({name:?}, {include}!({:?})),",
            path.display().to_string()
        );
    }
    text.push(']');
    text
}

/// Writes `text` as the set file `path` (its directory created), unless it holds it already.
pub(super) fn write_set_file(path: &Path, text: &str) -> Result<(), BuildError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|error| BuildError::Io {
            path: dir.to_path_buf(),
            error,
        })?;
    }
    super::write_if_changed(path, text)
}

/// Writes the set file of `crate_name` in `out_dir` for these `(target, PTX file)` pairs (none
/// for a build without PTX) and returns its path.
pub fn write_ptx_set(
    out_dir: &Path,
    crate_name: &str,
    targets: &[(Sm, PathBuf)],
) -> Result<PathBuf, BuildError> {
    let path = ptx_set_path(out_dir, crate_name);
    write_set_file(&path, &ptx_set_source(targets))?;
    Ok(path)
}
