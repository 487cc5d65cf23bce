//! The main example: runs the kernels on the chosen device over several sizes (ragged tails
//! included), compares every output with a CPU reference, and collects the emulator's
//! shared-memory reports.

use crate::data::{first_mismatch, uniform_vec};
use std::collections::BTreeMap;
use tessera::emulator::EmulatorReport;
use tessera::launch::{Device, DeviceKind, LaunchConfig, LaunchError, LaunchReport, Module};
use tessera_kernels::{
    COPY, COPY_ELEMENTS_PER_THREAD, ROW_SUM, TRANSPOSE32, VEC_ADD, VEC_ADD_ELEMENTS_PER_THREAD,
};

/// Value written past the end of every output: a kernel that writes out of range changes it.
const CANARY: f32 = -12345.5;
/// Elements of canary after each output.
const CANARY_LEN: usize = 8;

/// `n` elements of `fill` followed by [`CANARY_LEN`] `canary`s: an output whose overrun shows.
pub fn with_canaries<T: Copy>(n: usize, fill: T, canary: T) -> Vec<T> {
    let mut init = vec![fill; n + CANARY_LEN];
    init[n..].fill(canary);
    init
}

/// One verified case.
#[derive(Debug)]
pub struct Outcome {
    /// Kernel and shape, e.g. `vec_add n=1025 block=256`.
    pub label: String,
    /// Whether the output matched the reference exactly (and the canary is intact).
    pub ok: bool,
    /// What was compared, or the first difference.
    pub detail: String,
}

/// Runs the cases and keeps their outcomes and emulator reports.
pub struct Checks<'a> {
    pub(crate) device: &'a Device,
    pub(crate) module: &'a Module,
    /// Outcomes in the order run.
    pub outcomes: Vec<Outcome>,
    /// Emulator reports summed per kernel (empty on a GPU).
    pub reports: BTreeMap<String, EmulatorReport>,
    /// The `#[tile_kernel]`s run, in order.
    pub tile_runs: Vec<TileRun>,
    /// Print every outcome as it is checked (else only the failures).
    pub verbose: bool,
    /// The checks not run because their kernel has no code for the device (an NVIDIA-only
    /// kernel while the emulator emulates amdgpu, `TESSERA_DEVICE=emulator-amd`): the kernel
    /// and the instructions that keep it off AMD. Neither passed nor failed.
    pub not_run: Vec<(String, Vec<String>)>,
}

/// A `#[tile_kernel]` the example ran.
#[derive(Debug)]
pub struct TileRun {
    /// The kernel (its module's name).
    pub kernel: &'static str,
    /// The module's `EXPLAIN` text (layout inference of every entry).
    pub explain: &'static str,
    /// The entries launched, in order: PTX name, warps, dynamic shared memory in bytes.
    pub entries: Vec<(&'static str, u32, u32)>,
}

/// Blocks to cover `n` elements with `threads` threads of `per_thread` elements each.
pub fn blocks_for(n: usize, threads: u32, per_thread: u32) -> Result<u32, LaunchError> {
    let per_block = threads as usize * per_thread as usize;
    u32::try_from(n.div_ceil(per_block).max(1)).map_err(|_| LaunchError::InvalidConfig {
        kernel: "examples".to_string(),
        reason: format!("{n} elements need more than 2^32 blocks"),
    })
}

/// `n` as the kernels' `u32` element count.
pub fn count_u32(n: usize) -> Result<u32, LaunchError> {
    u32::try_from(n).map_err(|_| LaunchError::InvalidConfig {
        kernel: "examples".to_string(),
        reason: format!("{n} elements exceed the kernels' u32 count"),
    })
}

impl<'a> Checks<'a> {
    pub fn new(device: &'a Device, module: &'a Module) -> Self {
        Checks {
            device,
            module,
            outcomes: Vec::new(),
            reports: BTreeMap::new(),
            tile_runs: Vec::new(),
            verbose: false,
            not_run: Vec::new(),
        }
    }

    /// Runs one check; a launch refused because its kernel is NVIDIA-only on an AMD target
    /// (`LaunchError::NvidiaOnly`) is recorded in [`Checks::not_run`] instead of stopping the
    /// run. Every other error stops it.
    pub(crate) fn unless_nvidia_only(
        &mut self,
        check: impl FnOnce(&mut Self) -> Result<(), LaunchError>,
    ) -> Result<(), LaunchError> {
        match check(self) {
            Err(LaunchError::NvidiaOnly {
                kernel,
                instructions,
                ..
            }) => {
                self.not_run.push((kernel, instructions));
                Ok(())
            }
            other => other,
        }
    }

    /// How many cases failed.
    pub fn failures(&self) -> usize {
        self.outcomes.iter().filter(|o| !o.ok).count()
    }

    pub(crate) fn record(&mut self, kernel: &str, report: LaunchReport) {
        if let Some(emulated) = report.emulator_report() {
            self.reports
                .entry(kernel.to_string())
                .or_default()
                .merge(emulated);
        }
    }

    pub(crate) fn push(&mut self, label: String, ok: bool, detail: String) {
        let outcome = Outcome { label, ok, detail };
        if self.verbose || !outcome.ok {
            println!(
                "  {:<44} {}  {}",
                outcome.label,
                if outcome.ok { "ok  " } else { "FAIL" },
                outcome.detail
            );
        }
        self.outcomes.push(outcome);
    }

    /// An output buffer of `n` elements followed by [`CANARY_LEN`] canaries.
    fn output(&self, n: usize) -> Result<tessera::launch::DeviceBuffer<f32>, LaunchError> {
        self.device.upload(&with_canaries(n, 0f32, CANARY))
    }

    /// Compares `got[..n]` with `want` bit for bit and checks the canaries after it.
    fn verify(&mut self, label: String, got: &[f32], n: usize, want: impl Fn(usize) -> f32 + Sync) {
        let canary_ok = got[n..].iter().all(|&v| v.to_bits() == CANARY.to_bits());
        match (first_mismatch(&got[..n], &want), canary_ok) {
            (None, true) => self.push(label, true, format!("{n} values exact")),
            (Some(i), _) => {
                let detail = format!("element {i}: got {:e}, want {:e}", got[i], want(i));
                self.push(label, false, detail)
            }
            (None, false) => {
                self.push(label, false, "wrote past the end of the output".to_string())
            }
        }
    }

    /// `vec_add` on `n` elements with `threads` threads per block.
    pub fn vec_add(&mut self, n: usize, threads: u32) -> Result<(), LaunchError> {
        let a = uniform_vec(1, n);
        let b = uniform_vec(2, n);
        let (da, db) = (self.device.upload(&a)?, self.device.upload(&b)?);
        let out = self.output(n)?;
        let config = LaunchConfig::linear(
            blocks_for(n, threads, VEC_ADD_ELEMENTS_PER_THREAD)?,
            threads,
        );
        let args = (da.ptr(), db.ptr(), out.ptr(), count_u32(n)?);
        let report = self.device.launch(self.module, VEC_ADD, config, args)?;
        self.record("vec_add", report);
        let got = out.download()?;
        self.verify(format!("vec_add n={n} block={threads}"), &got, n, |i| {
            a[i] + b[i]
        });
        Ok(())
    }

    /// `copy` on `n` elements with `threads` threads per block.
    pub fn copy(&mut self, n: usize, threads: u32) -> Result<(), LaunchError> {
        let x = uniform_vec(3, n);
        let dx = self.device.upload(&x)?;
        let out = self.output(n)?;
        let config =
            LaunchConfig::linear(blocks_for(n, threads, COPY_ELEMENTS_PER_THREAD)?, threads);
        let report = self.device.launch(
            self.module,
            COPY,
            config,
            (dx.ptr(), out.ptr(), count_u32(n)?),
        )?;
        self.record("copy", report);
        let got = out.download()?;
        self.verify(format!("copy n={n} block={threads}"), &got, n, |i| x[i]);
        Ok(())
    }

    /// `row_sum` of an `m`×`n` matrix with `threads` threads (`threads / 32` rows) per block.
    ///
    /// The entries are multiples of 1/2 in [-8, 8], never 0, so every partial sum is exact in
    /// f32 whatever the order of summation: the warp's butterfly order must give exactly the
    /// CPU's sum, and a dropped or doubled element shows.
    pub fn row_sum(&mut self, m: usize, n: usize, threads: u32) -> Result<(), LaunchError> {
        let entry = |r: usize, c: usize| ((r * 7 + c * 13) % 17) as f32 - 8.5;
        let x: Vec<f32> = (0..m * n)
            .map(|i| entry(i / n.max(1), i % n.max(1)))
            .collect();
        let want: Vec<f32> = (0..m).map(|r| (0..n).map(|c| entry(r, c)).sum()).collect();
        let dx = self.device.upload(&x)?;
        let out = self.output(m)?;
        let config = LaunchConfig::linear(blocks_for(m, threads / 32, 1)?, threads);
        let args = (dx.ptr(), out.ptr(), count_u32(m)?, count_u32(n)?);
        let report = self.device.launch(self.module, ROW_SUM, config, args)?;
        self.record("row_sum", report);
        let got = out.download()?;
        self.verify(format!("row_sum {m}x{n} block={threads}"), &got, m, |r| {
            want[r]
        });
        Ok(())
    }

    /// `transpose32` of an `n`×`n` matrix through a shared tile with row stride 32 (`padded`
    /// false: 32-way bank conflicts on the column reads) or 33 (conflict free).
    pub fn transpose32(&mut self, n: usize, padded: bool) -> Result<(), LaunchError> {
        let x = uniform_vec(4, n * n);
        let dx = self.device.upload(&x)?;
        let out = self.output(n * n)?;
        let tiles = count_u32(n / 32)?;
        let config = LaunchConfig {
            grid: [tiles, tiles, 1],
            block: [32, 8, 1],
            shared_bytes: 32 * 33 * 4,
        };
        let args = (dx.ptr(), out.ptr(), count_u32(n)?, padded as u32);
        let report = self.device.launch(self.module, TRANSPOSE32, config, args)?;
        let kernel = format!("transpose32 stride {}", if padded { 33 } else { 32 });
        self.record(&kernel, report);
        let got = out.download()?;
        self.verify(format!("{kernel} {n}x{n}"), &got, n * n, |i| {
            x[(i % n) * n + i / n]
        });
        Ok(())
    }

    /// Every case, sized for the device: the emulator runs one OS thread per GPU thread, so it
    /// gets the small sizes only. The hand-written kernels first, then the `#[tile_kernel]`
    /// ones ([`Checks::run_tiled`]).
    pub fn run_all(&mut self) -> Result<(), LaunchError> {
        self.run_handwritten()?;
        self.run_tiled()
    }

    /// The kernels written with `device_kernel!`: `vec_add`, `copy`, `row_sum`, `transpose32`.
    pub fn run_handwritten(&mut self) -> Result<(), LaunchError> {
        let gpu = self.device.kind() == DeviceKind::Gpu;
        let mut vector_sizes = vec![1, 3, 4, 5, 1000, 1023, 1024, 1025, 4099, 65_543];
        if gpu {
            vector_sizes.extend([1 << 20, (1 << 24) + 3]);
        }
        for &n in &vector_sizes {
            self.vec_add(n, 256)?;
        }
        self.vec_add(1029, 64)?;
        for &n in &vector_sizes {
            self.copy(n, 256)?;
        }
        let mut matrices = vec![
            (1, 1),
            (3, 31),
            (5, 32),
            (7, 33),
            (64, 100),
            (33, 1000),
            (9, 4096),
        ];
        if gpu {
            matrices.extend([(4096, 4096), (1000, 12_345)]);
        }
        for &(m, n) in &matrices {
            self.row_sum(m, n, 256)?;
        }
        self.row_sum(5, 77, 32)?;
        for padded in [false, true] {
            self.transpose32(if gpu { 4096 } else { 64 }, padded)?;
        }
        Ok(())
    }
}
