//! What a launch is given (grid, block, shared memory; timing options) and what it reports.

use super::error::LaunchError;
use crate::emulator::EmulatorReport;
use std::fmt;

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Thread blocks per grid dimension (`gridDim`).
    pub grid: [u32; 3],
    /// Threads per block dimension (`blockDim`).
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes (above 48 KiB the launcher opts in).
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch: `blocks` blocks of `threads` threads, no dynamic shared memory.
    pub const fn linear(blocks: u32, threads: u32) -> Self {
        LaunchConfig {
            grid: [blocks, 1, 1],
            block: [threads, 1, 1],
            shared_bytes: 0,
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub const fn with_shared_bytes(mut self, bytes: u32) -> Self {
        self.shared_bytes = bytes;
        self
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| d as u64).product()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&d| d as u64).product()
    }

    /// The CUDA limits every device of compute capability ≥ 3.0 has.
    pub(super) fn validate(&self, kernel: &str) -> Result<(), LaunchError> {
        let invalid = |reason: String| LaunchError::InvalidConfig {
            kernel: kernel.to_string(),
            reason,
        };
        if self.grid.contains(&0) || self.block.contains(&0) {
            return Err(invalid(format!(
                "grid {:?} and block {:?} must have no zero dimension",
                self.grid, self.block
            )));
        }
        if self.threads_per_block() > 1024 {
            return Err(invalid(format!(
                "block {:?} has {} threads; at most 1024",
                self.block,
                self.threads_per_block()
            )));
        }
        if self.block[2] > 64 {
            return Err(invalid(format!("block z = {} exceeds 64", self.block[2])));
        }
        if self.grid[0] > i32::MAX as u32 || self.grid[1] > 65535 || self.grid[2] > 65535 {
            return Err(invalid(format!(
                "grid {:?} exceeds the limits [2^31-1, 65535, 65535]",
                self.grid
            )));
        }
        Ok(())
    }
}

/// What a launch reports.
#[derive(Debug)]
pub enum LaunchReport {
    /// Ran on the GPU (and finished without error).
    Gpu,
    /// Ran on the emulator; its counters (shared-memory accesses and wavefronts).
    Emulator(EmulatorReport),
}

impl LaunchReport {
    /// The emulator's report, if the launch ran there.
    pub fn emulator_report(&self) -> Option<&EmulatorReport> {
        match self {
            LaunchReport::Gpu => None,
            LaunchReport::Emulator(report) => Some(report),
        }
    }
}

/// How [`Device::time_launches`](super::Device::time_launches) times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingOptions {
    /// Untimed launches first.
    pub warmup: u32,
    /// Timed launches (each timed on its own); at least 1.
    pub repetitions: u32,
    /// GPU only (CUDA and HIP): before each timed launch, write this many bytes of a scratch buffer so the L2
    /// cache holds none of the kernel's data (as `triton.testing.do_bench`, 256 MB); 0 = off.
    pub l2_flush_bytes: usize,
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            warmup: 10,
            repetitions: 100,
            l2_flush_bytes: 256_000_000,
        }
    }
}

/// What clock a [`Timing`] was measured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingClock {
    /// CUDA events around each launch: GPU time.
    CudaEvents,
    /// HIP events around each launch: GPU time.
    HipEvents,
    /// Host wall time of each emulated launch: NOT a GPU time.
    EmulatorWallTime,
}

impl fmt::Display for TimingClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimingClock::CudaEvents => "CUDA events",
            TimingClock::HipEvents => "HIP events",
            TimingClock::EmulatorWallTime => "emulator wall time (not a GPU time)",
        })
    }
}

/// Launch times measured by [`Device::time_launches`](super::Device::time_launches).
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// Median time of one launch, in milliseconds.
    pub median_ms: f64,
    /// Fastest launch.
    pub min_ms: f64,
    /// Slowest launch.
    pub max_ms: f64,
    /// Every timed launch, in the order run.
    pub samples_ms: Vec<f64>,
    /// The clock used.
    pub clock: TimingClock,
}

impl Timing {
    pub(super) fn from_samples(samples_ms: Vec<f64>, clock: TimingClock) -> Timing {
        let mut sorted = samples_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_ms = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
        };
        Timing {
            median_ms,
            min_ms: sorted[0],
            max_ms: sorted[n - 1],
            samples_ms,
            clock,
        }
    }
}

/// One launch of an entry of a back end's module `M`: the kernel's name and the entry's index
/// in the module, the grid, and the packed parameters.
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(super) struct EntryLaunch<'a, M> {
    pub(super) module: &'a M,
    pub(super) name: &'a str,
    pub(super) index: u32,
    pub(super) config: &'a LaunchConfig,
    pub(super) params: &'a [super::KernelParam],
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl<M> Clone for EntryLaunch<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl<M> Copy for EntryLaunch<'_, M> {}
