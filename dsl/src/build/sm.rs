//! The SM architectures a PTX build can target.

use std::fmt;
use std::str::FromStr;

/// Environment variable that overrides the SM target of every [`PtxBuild`](super::PtxBuild).
pub const SM_ENV: &str = "TESSERA_SM";

/// A GPU architecture to generate PTX for (`-Ctarget-cpu=sm_XX`, PTX `.target sm_XX`).
///
/// Only architectures the device runtime layer supports (cp.async, ldmatrix and bf16 mma need
/// sm_80 or newer) are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sm {
    name: &'static str,
}

/// Accepted SM names, oldest first.
const KNOWN_SMS: [&str; 10] = [
    "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120", "sm_120a",
];

impl Sm {
    /// Ampere (A100): the default.
    pub const SM_80: Sm = Sm { name: "sm_80" };
    /// Hopper (H100), portable subset.
    pub const SM_90: Sm = Sm { name: "sm_90" };
    /// Hopper with the architecture-specific features (wgmma, setmaxnreg).
    pub const SM_90A: Sm = Sm { name: "sm_90a" };

    /// Parses `sm_80`, `sm_90a`, … (also accepts `80`, `90a`, `SM_90`).
    pub fn parse(text: &str) -> Result<Sm, UnknownSm> {
        let lower = text.trim().to_ascii_lowercase();
        let wanted = if lower.starts_with("sm_") {
            lower.clone()
        } else {
            format!("sm_{lower}")
        };
        KNOWN_SMS
            .iter()
            .find(|known| **known == wanted)
            .map(|known| Sm { name: known })
            .ok_or_else(|| UnknownSm {
                given: text.to_string(),
            })
    }

    /// The targets a [`PtxBuild`](super::PtxBuild) builds unless told otherwise: Ampere and
    /// newer through portable `sm_80` code, and Hopper with wgmma and TMA through `sm_90a`.
    pub const DEFAULT_TARGETS: [Sm; 2] = [Sm::SM_80, Sm::SM_90A];

    /// The SM spelled exactly `name` (`sm_90a`), usable in constants; `None` if unsupported.
    pub const fn named(name: &str) -> Option<Sm> {
        let mut index = 0;
        while index < KNOWN_SMS.len() {
            if bytes_equal(KNOWN_SMS[index].as_bytes(), name.as_bytes()) {
                return Some(Sm {
                    name: KNOWN_SMS[index],
                });
            }
            index += 1;
        }
        None
    }

    /// The name as rustc and ptxas spell it, e.g. `sm_90a`.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// Compute capability `(major, minor)`: `sm_90a` → `(9, 0)`.
    pub fn compute_capability(self) -> (u32, u32) {
        let digits: String = self.name[3..]
            .chars()
            .filter(|c| c.is_ascii_digit())
            .collect();
        let number: u32 = digits.parse().unwrap_or(0);
        (number / 10, number % 10)
    }

    /// Whether the target uses architecture-specific features (`sm_90a`): its code runs only on
    /// its own compute capability, not on newer ones.
    pub fn is_arch_specific(self) -> bool {
        self.name.ends_with('a')
    }

    /// Whether code for this target runs on a device of compute capability `device`:
    /// sm_XY runs on X.Y and newer, sm_XYa on exactly X.Y.
    pub fn runs_on(self, device: (u32, u32)) -> bool {
        if self.is_arch_specific() {
            self.compute_capability() == device
        } else {
            self.compute_capability() <= device
        }
    }
}

/// `a == b`, usable in constants.
const fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

impl Default for Sm {
    fn default() -> Self {
        Sm::SM_80
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl FromStr for Sm {
    type Err = UnknownSm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Sm::parse(s)
    }
}

/// A name that is not a supported SM (see [`Sm::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSm {
    /// The name as given.
    pub given: String,
}

impl fmt::Display for UnknownSm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown SM target `{}` (from the build script or ${SM_ENV}); supported: {}",
            self.given,
            KNOWN_SMS.join(", ")
        )
    }
}

impl std::error::Error for UnknownSm {}
