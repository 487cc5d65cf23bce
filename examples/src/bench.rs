//! The benchmark protocol of `shared/bench/triton_ref.py`: `tessera-examples --bench NAME --json`
//! prints one JSON object per line, `{"name","shape","dtype","ms","gbps","ok"}`, with the same
//! names, shapes, dtypes and byte counts as that script (copy: `[n]`, 8n bytes; add: `[n]`, 12n
//! bytes; float32), so its `--rust BIN` mode can put them beside Triton's.
//!
//! Timing follows `triton.testing.do_bench`: an estimate from 5 launches, then warm-up launches
//! for ~25 ms and timed launches for ~200 ms (capped), each timed launch preceded by a 256 MB L2
//! flush and timed alone with CUDA events; the figure is the median. The output of the last
//! launch is verified once against the CPU, bit for bit.

use crate::checks::{blocks_for, count_u32};
use crate::data::{first_mismatch, uniform_vec};
use tessera::launch::{Device, DeviceKind, LaunchError, Module, TimingClock, TimingOptions};
use tessera::launch::{KernelArgs, LaunchConfig};
use tessera::Kernel;
use tessera_kernels::{COPY, COPY_ELEMENTS_PER_THREAD, VEC_ADD, VEC_ADD_ELEMENTS_PER_THREAD};

/// Every family `triton_ref.py` knows.
pub const FAMILIES: [&str; 7] = [
    "copy",
    "add",
    "softmax",
    "layernorm",
    "matmul",
    "transpose",
    "gather",
];
/// Threads per block of the elementwise kernels (4 elements each: 1024 elements per block, as
/// Triton's `add` with `BLOCK=1024`).
const THREADS: u32 = 256;

/// One benchmark result line.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    pub name: &'static str,
    pub shape: Vec<usize>,
    pub dtype: &'static str,
    /// Median time of one launch.
    pub ms: f64,
    /// Bytes read + written per launch / time.
    pub gbps: f64,
    /// Whether the output matched the CPU reference.
    pub ok: bool,
    /// Which clock `ms` comes from.
    pub clock: TimingClock,
    /// Timed launches behind the median.
    pub repetitions: usize,
    /// The device's name.
    pub device: String,
}

/// A finite number as JSON (`null` otherwise).
fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".to_string()
    }
}

/// A string as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl BenchRow {
    /// The protocol's JSON object (one line), plus `clock`, `reps` and `device`.
    pub fn to_json(&self) -> String {
        let shape: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        let clock = match self.clock {
            TimingClock::CudaEvents => "cuda_events",
            TimingClock::EmulatorWallTime => "emulator_wall_time",
        };
        format!(
            "{{\"name\":{},\"shape\":[{}],\"dtype\":{},\"ms\":{},\"gbps\":{},\"ok\":{},\"clock\":{},\"reps\":{},\"device\":{}}}",
            json_string(self.name),
            shape.join(","),
            json_string(self.dtype),
            json_number(self.ms),
            json_number(self.gbps),
            self.ok,
            json_string(clock),
            self.repetitions,
            json_string(&self.device)
        )
    }

    /// A human-readable line.
    pub fn to_text(&self) -> String {
        format!(
            "{:<6} {:<14} {:<8} {:>12.1} us {:>9.1} GB/s  {}  ({} reps, {})",
            self.name,
            format!("{:?}", self.shape),
            self.dtype,
            self.ms * 1e3,
            self.gbps,
            if self.ok { "ok" } else { "WRONG" },
            self.repetitions,
            self.clock
        )
    }
}

/// Launch counts in the manner of `do_bench` (25 ms of warm-up, 200 ms of timed launches) from
/// an estimate of one launch, capped so tiny kernels do not run for minutes.
pub fn repetitions_for(estimate_ms: f64) -> (u32, u32) {
    let estimate = estimate_ms.max(1e-4);
    let warmup = (25.0 / estimate).clamp(1.0, 500.0) as u32;
    let repetitions = (200.0 / estimate).clamp(10.0, 2000.0) as u32;
    (warmup, repetitions)
}

/// Times `kernel` as described in the [module docs](self).
fn time_kernel<A: KernelArgs>(
    device: &Device,
    module: &Module,
    kernel: Kernel<A>,
    config: LaunchConfig,
    args: A,
) -> Result<(f64, TimingClock, usize), LaunchError> {
    let gpu = device.kind() == DeviceKind::Gpu;
    let flush = if gpu {
        TimingOptions::default().l2_flush_bytes
    } else {
        0
    };
    let estimate = device.time_launches(
        module,
        kernel,
        config,
        args,
        TimingOptions {
            warmup: 1,
            repetitions: 5,
            l2_flush_bytes: flush,
        },
    )?;
    let (warmup, repetitions) = if gpu {
        repetitions_for(estimate.median_ms)
    } else {
        (1, 3)
    };
    let timing = device.time_launches(
        module,
        kernel,
        config,
        args,
        TimingOptions {
            warmup,
            repetitions,
            l2_flush_bytes: flush,
        },
    )?;
    Ok((timing.median_ms, timing.clock, timing.samples_ms.len()))
}

/// `copy` of `n` f32: 8n bytes moved per launch.
pub fn bench_copy(device: &Device, module: &Module, n: usize) -> Result<BenchRow, LaunchError> {
    let x = uniform_vec(11, n);
    let dx = device.upload(&x)?;
    let out = device.zeros::<f32>(n)?;
    let config = LaunchConfig::linear(blocks_for(n, THREADS, COPY_ELEMENTS_PER_THREAD)?, THREADS);
    let args = (dx.ptr(), out.ptr(), count_u32(n)?);
    let (ms, clock, repetitions) = time_kernel(device, module, COPY, config, args)?;
    let got = out.download()?;
    let ok = first_mismatch(&got, |i| x[i]).is_none();
    let bytes = 8.0 * n as f64;
    Ok(BenchRow {
        name: "copy",
        shape: vec![n],
        dtype: "float32",
        ms,
        gbps: bytes / ms / 1e6,
        ok,
        clock,
        repetitions,
        device: device.name(),
    })
}

/// `add` (`vec_add`) of `n` f32: 12n bytes moved per launch.
pub fn bench_add(device: &Device, module: &Module, n: usize) -> Result<BenchRow, LaunchError> {
    let a = uniform_vec(12, n);
    let b = uniform_vec(13, n);
    let (da, db) = (device.upload(&a)?, device.upload(&b)?);
    let out = device.zeros::<f32>(n)?;
    let config = LaunchConfig::linear(
        blocks_for(n, THREADS, VEC_ADD_ELEMENTS_PER_THREAD)?,
        THREADS,
    );
    let args = (da.ptr(), db.ptr(), out.ptr(), count_u32(n)?);
    let (ms, clock, repetitions) = time_kernel(device, module, VEC_ADD, config, args)?;
    let got = out.download()?;
    let ok = first_mismatch(&got, |i| a[i] + b[i]).is_none();
    let bytes = 12.0 * n as f64;
    Ok(BenchRow {
        name: "add",
        shape: vec![n],
        dtype: "float32",
        ms,
        gbps: bytes / ms / 1e6,
        ok,
        clock,
        repetitions,
        device: device.name(),
    })
}

/// An implemented benchmark family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Copy,
    Add,
}

impl Family {
    /// The family named `name`, if implemented.
    pub fn parse(name: &str) -> Option<Family> {
        match name {
            "copy" => Some(Family::Copy),
            "add" => Some(Family::Add),
            _ => None,
        }
    }

    /// The name `triton_ref.py` uses.
    pub fn name(self) -> &'static str {
        match self {
            Family::Copy => "copy",
            Family::Add => "add",
        }
    }

    /// The shapes `triton_ref.py` uses (without `--quick`).
    pub fn default_sizes(self) -> Vec<usize> {
        match self {
            Family::Copy => vec![1 << 28],
            Family::Add => vec![1 << 20, 1 << 24, 1 << 28],
        }
    }

    /// Runs the family over `sizes`, handing each result to `emit` as soon as it is measured.
    pub fn run(
        self,
        device: &Device,
        module: &Module,
        sizes: &[usize],
        mut emit: impl FnMut(&BenchRow),
    ) -> Result<(), LaunchError> {
        for &n in sizes {
            let row = match self {
                Family::Copy => bench_copy(device, module, n)?,
                Family::Add => bench_add(device, module, n)?,
            };
            emit(&row);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_line_has_the_protocol_keys() {
        let row = BenchRow {
            name: "add",
            shape: vec![1 << 20],
            dtype: "float32",
            ms: 0.0125,
            gbps: 1006.63296,
            ok: true,
            clock: TimingClock::CudaEvents,
            repetitions: 2000,
            device: "NVIDIA \"H100\"".to_string(),
        };
        assert_eq!(
            row.to_json(),
            r#"{"name":"add","shape":[1048576],"dtype":"float32","ms":0.0125,"gbps":1006.63296,"ok":true,"clock":"cuda_events","reps":2000,"device":"NVIDIA \"H100\""}"#
        );
        let nan = BenchRow {
            ms: f64::NAN,
            gbps: f64::INFINITY,
            ..row
        };
        assert!(nan.to_json().contains(r#""ms":null,"gbps":null"#));
    }

    #[test]
    fn repetition_counts_follow_do_bench_with_caps() {
        assert_eq!(repetitions_for(1.0), (25, 200));
        assert_eq!(repetitions_for(0.001), (500, 2000));
        assert_eq!(repetitions_for(100.0), (1, 10));
    }

    #[test]
    fn shapes_match_triton_ref() {
        assert_eq!(Family::Copy.default_sizes(), vec![268_435_456]);
        assert_eq!(
            Family::Add.default_sizes(),
            vec![1_048_576, 16_777_216, 268_435_456]
        );
        for family in [Family::Copy, Family::Add] {
            assert_eq!(Family::parse(family.name()), Some(family));
            assert!(FAMILIES.contains(&family.name()));
        }
        assert_eq!(Family::parse("softmax"), None);
    }
}
