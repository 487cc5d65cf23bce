//! The benchmark protocol of `shared/bench/triton_ref.py`: `tessera-examples --bench NAME --json`
//! prints one JSON object per line, `{"name","shape","dtype","ms","gbps"|"tflops","ok"}` (plus
//! `clock`, `reps`, `device`, `entry`, `checked` and, for matmul, `config`), with the same
//! names, shapes, dtypes and byte/flop counts as that script, so its `--rust BIN` mode can put
//! them beside Triton's:
//!
//! | family    | shapes (dtype order as the script)            | counted                     |
//! |-----------|-----------------------------------------------|-----------------------------|
//! | copy      | `[2²⁸]` f32                                   | 8n bytes                    |
//! | add       | `[2²⁰]`, `[2²⁴]`, `[2²⁸]` f32                 | 12n bytes                   |
//! | softmax   | f32, f16 × `[4096, 1024]`, `[8192, 4096]`, `[16384, 8192]` | 2·M·N·size bytes |
//! | layernorm | f16 `[4096, N]`, N = 1024, 4096, 8192         | 2·M·N·size bytes            |
//! | matmul    | f16, bf16 × `[S, S, S]`, S = 1024 … 8192      | 2·S³ flops                  |
//! | transpose | f32, f16 `[8192, 8192]`                       | 2·M·N·size bytes            |
//! | gather    | f32, f16 × `[65536, N]`, N = 32 … 256         | M·N·(2·size + 4) bytes      |
//! | attention, attention_causal | f16 `[BH, N, D]`: `[64, 4096, 64]`, `[16, 16384, 64]`, `[64, 4096, 128]`, `[16, 16384, 128]` | 4·BH·N²·D flops (halved when causal) |
//!
//! The kernels are `tessera_kernels::{copy, vec_add}` and the `#[tile_kernel]`s of
//! `tessera_kernels::tiled::bench_triton` at the script's tile sizes and warp counts (see
//! [`crate::bench_tiled`]) and, for attention, `tessera_kernels::tiled::attention` (see
//! [`crate::bench_attention`]).
//!
//! Timing follows `triton.testing.do_bench`: an estimate from 5 launches, then warm-up launches
//! for ~25 ms and timed launches for ~200 ms (capped), each timed launch preceded by a 256 MB L2
//! flush and timed alone with CUDA events; the figure is the median. The output of the last
//! launch is verified once against the CPU (`checked` says what was compared).

use crate::bench_tiled;
use crate::checks::{blocks_for, count_u32};
use crate::data::{first_mismatch, uniform_vec};
use tessera::launch::{Device, DeviceKind, LaunchError, Module, TimingClock, TimingOptions};
use tessera::launch::{KernelArgs, LaunchConfig};
use tessera::tile::{launch_config, Specialisation};
use tessera::Kernel;
use tessera_kernels::{COPY, COPY_ELEMENTS_PER_THREAD, VEC_ADD, VEC_ADD_ELEMENTS_PER_THREAD};

/// Every family `triton_ref.py` knows.
pub const FAMILIES: [&str; 9] = [
    "copy",
    "add",
    "softmax",
    "layernorm",
    "matmul",
    "transpose",
    "gather",
    "attention",
    "attention_causal",
];
/// Threads per block of the elementwise kernels (4 elements each: 1024 elements per block, as
/// Triton's `add` with `BLOCK=1024`).
const THREADS: u32 = 256;

/// The derived figure of a benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    /// Bytes read + written per launch / time, in GB/s.
    Gbps(f64),
    /// Floating-point operations per launch / time, in TFLOP/s.
    Tflops(f64),
}

impl Figure {
    /// `bytes` moved in `ms` milliseconds.
    pub fn gbps(bytes: f64, ms: f64) -> Figure {
        Figure::Gbps(bytes / ms / 1e6)
    }

    /// `flops` done in `ms` milliseconds.
    pub fn tflops(flops: f64, ms: f64) -> Figure {
        Figure::Tflops(flops / ms / 1e9)
    }
}

/// One benchmark result line.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    pub name: &'static str,
    pub shape: Vec<usize>,
    pub dtype: &'static str,
    /// Median time of one launch.
    pub ms: f64,
    /// GB/s or TFLOP/s, counted as `triton_ref.py` does.
    pub figure: Figure,
    /// Whether the output matched the CPU reference.
    pub ok: bool,
    /// Which clock `ms` comes from.
    pub clock: TimingClock,
    /// Timed launches behind the median.
    pub repetitions: usize,
    /// The device's name.
    pub device: String,
    /// The PTX entry timed.
    pub entry: String,
    /// What the verification compared (and the first difference, if any).
    pub checked: String,
    /// Matmul: the tile configuration timed, `[BM, BN, BK, warps]`; attention: `[BM, BN,
    /// warps, stages]` (the order of `triton_ref.py`'s `config`).
    pub config: Option<[usize; 4]>,
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
    /// The protocol's JSON object (one line), plus `clock`, `reps`, `device`, `entry`,
    /// `checked` and (matmul) `config`.
    pub fn to_json(&self) -> String {
        let list = |values: &[usize]| -> String {
            let items: Vec<String> = values.iter().map(|d| d.to_string()).collect();
            format!("[{}]", items.join(","))
        };
        let clock = match self.clock {
            TimingClock::CudaEvents => "cuda_events",
            TimingClock::HipEvents => "hip_events",
            TimingClock::EmulatorWallTime => "emulator_wall_time",
        };
        let figure = match self.figure {
            Figure::Gbps(v) => format!("\"gbps\":{}", json_number(v)),
            Figure::Tflops(v) => format!("\"tflops\":{}", json_number(v)),
        };
        let config = match &self.config {
            Some(c) => format!(",\"config\":{}", list(c)),
            None => String::new(),
        };
        format!(
            "{{\"name\":{},\"shape\":{},\"dtype\":{},\"ms\":{},{figure},\"ok\":{},\"clock\":{},\"reps\":{},\"device\":{},\"entry\":{},\"checked\":{}{config}}}",
            json_string(self.name),
            list(&self.shape),
            json_string(self.dtype),
            json_number(self.ms),
            self.ok,
            json_string(clock),
            self.repetitions,
            json_string(&self.device),
            json_string(&self.entry),
            json_string(&self.checked),
        )
    }

    /// A human-readable line.
    pub fn to_text(&self) -> String {
        let figure = match self.figure {
            Figure::Gbps(v) => format!("{v:>9.1} GB/s"),
            Figure::Tflops(v) => format!("{v:>7.1} TFLOP/s"),
        };
        let config = match &self.config {
            Some(c) => format!(", config {c:?}"),
            None => String::new(),
        };
        format!(
            "{:<9} {:<20} {:<8} {:>12.1} us {figure}  {}  ({}; {} reps, {}; {}{config})",
            self.name,
            format!("{:?}", self.shape),
            self.dtype,
            self.ms * 1e3,
            if self.ok { "ok" } else { "WRONG" },
            self.checked,
            self.repetitions,
            self.clock,
            self.entry
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

/// A timed launch configuration: median, clock, timed launches.
pub struct Timed {
    pub ms: f64,
    pub clock: TimingClock,
    pub repetitions: usize,
}

/// Times a `#[tile_kernel]` specialisation (block `32 × num_warps`, its shared memory) as
/// described in the [module docs](self).
pub fn time_tile<A: KernelArgs>(
    device: &Device,
    module: &Module,
    spec: &Specialisation<A>,
    grid: [u32; 3],
    args: A,
) -> Result<Timed, LaunchError> {
    let config = launch_config(spec, grid, module);
    let (ms, clock, repetitions) = time_kernel(device, module, spec.kernel, config, args)?;
    Ok(Timed {
        ms,
        clock,
        repetitions,
    })
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

/// `checked` of an exact comparison of `n` elements.
fn exact_elements(n: usize, mismatch: Option<usize>) -> String {
    match mismatch {
        None => format!("all {n} elements, exact"),
        Some(i) => format!("all {n} elements, exact: element {i} differs"),
    }
}

/// `copy` of `n` f32: 8n bytes moved per launch.
pub fn bench_copy(device: &Device, module: &Module, n: usize) -> Result<BenchRow, LaunchError> {
    let x = uniform_vec(11, n);
    let dx = device.upload(&x)?;
    let out = device.zeros::<f32>(n)?;
    let config = LaunchConfig::linear(blocks_for(n, THREADS, COPY_ELEMENTS_PER_THREAD)?, THREADS);
    let args = (dx.ptr(), out.ptr(), count_u32(n)?);
    let timed = time_kernel(device, module, COPY, config, args)?;
    let mismatch = first_mismatch(&out.download()?, |i| x[i]);
    Ok(f32_elements_row(
        device,
        ("copy", COPY.name),
        n,
        8.0,
        timed,
        mismatch,
    ))
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
    let timed = time_kernel(device, module, VEC_ADD, config, args)?;
    let mismatch = first_mismatch(&out.download()?, |i| a[i] + b[i]);
    Ok(f32_elements_row(
        device,
        ("add", VEC_ADD.name),
        n,
        12.0,
        timed,
        mismatch,
    ))
}

/// The row of an elementwise f32 benchmark `name` (PTX entry `entry`) over `n` elements moving
/// `bytes_per_element` each, timed `(ms, clock, repetitions)`, exact unless `mismatch`.
fn f32_elements_row(
    device: &Device,
    (name, entry): (&'static str, &str),
    n: usize,
    bytes_per_element: f64,
    (ms, clock, repetitions): (f64, TimingClock, usize),
    mismatch: Option<usize>,
) -> BenchRow {
    BenchRow {
        name,
        shape: vec![n],
        dtype: "float32",
        ms,
        figure: Figure::gbps(bytes_per_element * n as f64, ms),
        ok: mismatch.is_none(),
        clock,
        repetitions,
        device: device.name(),
        entry: entry.to_string(),
        checked: exact_elements(n, mismatch),
        config: None,
    }
}

/// The row of a tensor-core benchmark timed at its fastest tile configuration: `timed` of PTX
/// entry `entry` at `config`, `flops` per launch; `checked` and `ok` from the check of every
/// configuration (`what` says what each compared, `worst` the largest |err|/tol, `failures` the
/// configurations that failed).
pub fn best_config_row(
    device: &Device,
    (name, shape, dtype): (&'static str, Vec<usize>, &'static str),
    (timed, entry, config): (&Timed, &str, [usize; 4]),
    flops: f64,
    (what, worst, failures): (&str, f64, &[String]),
) -> BenchRow {
    let checked = if failures.is_empty() {
        format!("{what}, worst |err|/tol {worst:.2}")
    } else {
        format!("{what}: {}", failures.join("; "))
    };
    BenchRow {
        name,
        shape,
        dtype,
        ms: timed.ms,
        figure: Figure::tflops(flops, timed.ms),
        ok: failures.is_empty(),
        clock: timed.clock,
        repetitions: timed.repetitions,
        device: device.name(),
        entry: entry.to_string(),
        checked,
        config: Some(config),
    }
}

/// A benchmark family of `triton_ref.py`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Copy,
    Add,
    Softmax,
    Layernorm,
    Matmul,
    Transpose,
    Gather,
    Attention,
    AttentionCausal,
}

impl Family {
    /// Every family, in the script's order.
    pub const ALL: [Family; 9] = [
        Family::Copy,
        Family::Add,
        Family::Softmax,
        Family::Layernorm,
        Family::Matmul,
        Family::Transpose,
        Family::Gather,
        Family::Attention,
        Family::AttentionCausal,
    ];

    /// The family named `name`.
    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The name `triton_ref.py` uses.
    pub fn name(self) -> &'static str {
        match self {
            Family::Copy => "copy",
            Family::Add => "add",
            Family::Softmax => "softmax",
            Family::Layernorm => "layernorm",
            Family::Matmul => "matmul",
            Family::Transpose => "transpose",
            Family::Gather => "gather",
            Family::Attention => "attention",
            Family::AttentionCausal => "attention_causal",
        }
    }

    /// The dtypes the family runs, in the script's order (each over every shape).
    pub fn dtypes(self) -> &'static [&'static str] {
        match self {
            Family::Copy | Family::Add => &["float32"],
            Family::Softmax | Family::Transpose | Family::Gather => &["float32", "float16"],
            Family::Layernorm | Family::Attention | Family::AttentionCausal => &["float16"],
            Family::Matmul => &["float16", "bfloat16"],
        }
    }

    /// The shapes `triton_ref.py` uses (without `--quick`), as `--sizes` would give them.
    pub fn default_shapes(self) -> Vec<Vec<usize>> {
        let shapes: &[&[usize]] = match self {
            Family::Copy => &[&[1 << 28]],
            Family::Add => &[&[1 << 20], &[1 << 24], &[1 << 28]],
            Family::Softmax => &[&[4096, 1024], &[8192, 4096], &[16384, 8192]],
            Family::Layernorm => &[&[4096, 1024], &[4096, 4096], &[4096, 8192]],
            Family::Matmul => &[&[1024], &[2048], &[4096], &[8192]],
            Family::Transpose => &[&[8192, 8192]],
            Family::Gather => &[&[65536, 32], &[65536, 64], &[65536, 128], &[65536, 256]],
            Family::Attention | Family::AttentionCausal => &[
                &[64, 4096, 64],
                &[16, 16384, 64],
                &[64, 4096, 128],
                &[16, 16384, 128],
            ],
        };
        shapes.iter().map(|s| s.to_vec()).collect()
    }

    /// Small shapes for the emulator (`--small`): ragged ones and one of each specialisation
    /// the default shapes use.
    pub fn small_shapes(self) -> Vec<Vec<usize>> {
        let shapes: &[&[usize]] = match self {
            Family::Copy | Family::Add => &[&[4099], &[1024]],
            Family::Softmax => &[&[3, 1000], &[2, 1024], &[2, 4096], &[1, 8192]],
            Family::Layernorm => &[&[3, 1000], &[2, 1024], &[2, 4096], &[1, 8192]],
            Family::Matmul => &[&[64], &[100, 70, 45]],
            Family::Transpose => &[&[70, 45], &[128, 64]],
            Family::Gather => &[&[100, 32], &[64, 64], &[33, 128], &[17, 256]],
            Family::Attention | Family::AttentionCausal => &[&[2, 130, 64], &[1, 70, 128]],
        };
        shapes.iter().map(|s| s.to_vec()).collect()
    }

    /// The shape a `--sizes` item stands for (`[S]` → `[S, S, S]` for matmul), or why the
    /// family cannot run it.
    pub fn shape(self, dims: &[usize]) -> Result<Vec<usize>, String> {
        let name = self.name();
        match (self, dims) {
            (Family::Copy | Family::Add, [_]) => Ok(dims.to_vec()),
            (Family::Copy | Family::Add, _) => Err(format!(
                "{name} takes element counts like 4096, not {dims:?}"
            )),
            (Family::Matmul, [s]) => Ok(vec![*s, *s, *s]),
            (Family::Matmul, [_, _, _]) => Ok(dims.to_vec()),
            (Family::Matmul, _) => Err(format!(
                "matmul takes S (for S x S x S) or MxNxK, not {dims:?}"
            )),
            (Family::Attention | Family::AttentionCausal, &[bh, n, d]) => {
                crate::bench_attention::check_shape(bh, n, d)?;
                Ok(dims.to_vec())
            }
            (Family::Attention | Family::AttentionCausal, _) => {
                Err(format!("{name} takes BHxNxD, not {dims:?}"))
            }
            (_, [_, n]) => {
                bench_tiled::check_columns(self, *n)?;
                Ok(dims.to_vec())
            }
            _ => Err(format!(
                "{name} takes matrix shapes like 4096x1024, not {dims:?}"
            )),
        }
    }

    /// Runs the family over `shapes` (each checked with [`Family::shape`]) for each of its
    /// dtypes, handing each result to `emit` as soon as it is measured.
    pub fn run(
        self,
        device: &Device,
        module: &Module,
        shapes: &[Vec<usize>],
        mut emit: impl FnMut(&BenchRow),
    ) -> Result<(), LaunchError> {
        let shapes: Vec<Vec<usize>> = shapes
            .iter()
            .map(|dims| self.shape(dims))
            .collect::<Result<_, _>>()
            .map_err(|reason| LaunchError::InvalidConfig {
                kernel: self.name().to_string(),
                reason,
            })?;
        for &dtype in self.dtypes() {
            for shape in &shapes {
                let row = match self {
                    Family::Copy => bench_copy(device, module, shape[0])?,
                    Family::Add => bench_add(device, module, shape[0])?,
                    Family::Attention | Family::AttentionCausal => {
                        let causal = self == Family::AttentionCausal;
                        crate::bench_attention::run(
                            device,
                            module,
                            causal,
                            [shape[0], shape[1], shape[2]],
                        )?
                    }
                    _ => bench_tiled::run(self, device, module, dtype, shape)?,
                };
                emit(&row);
            }
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
            figure: Figure::Gbps(1006.63296),
            ok: true,
            clock: TimingClock::CudaEvents,
            repetitions: 2000,
            device: "NVIDIA \"H100\"".to_string(),
            entry: "vec_add".to_string(),
            checked: "all 1048576 elements, exact".to_string(),
            config: None,
        };
        assert_eq!(
            row.to_json(),
            r#"{"name":"add","shape":[1048576],"dtype":"float32","ms":0.0125,"gbps":1006.63296,"ok":true,"clock":"cuda_events","reps":2000,"device":"NVIDIA \"H100\"","entry":"vec_add","checked":"all 1048576 elements, exact"}"#
        );
        let nan = BenchRow {
            ms: f64::NAN,
            figure: Figure::Gbps(f64::INFINITY),
            ..row.clone()
        };
        assert!(nan.to_json().contains(r#""ms":null,"gbps":null"#));
        let matmul = BenchRow {
            name: "matmul",
            shape: vec![8192, 8192, 8192],
            dtype: "bfloat16",
            figure: Figure::tflops(2.0 * 8192f64.powi(3), 2.0),
            config: Some([128, 128, 64, 8]),
            ..row
        };
        let json = matmul.to_json();
        assert!(
            json.contains(r#""shape":[8192,8192,8192],"dtype":"bfloat16""#),
            "{json}"
        );
        assert!(json.contains(r#""tflops":549.755813888,"#), "{json}");
        assert!(json.ends_with(r#","config":[128,128,64,8]}"#), "{json}");
        assert!(!json.contains("gbps"));
    }

    #[test]
    fn repetition_counts_follow_do_bench_with_caps() {
        assert_eq!(repetitions_for(1.0), (25, 200));
        assert_eq!(repetitions_for(0.001), (500, 2000));
        assert_eq!(repetitions_for(100.0), (1, 10));
    }

    #[test]
    fn shapes_match_triton_ref() {
        let shapes = |f: Family| -> Vec<Vec<usize>> {
            f.default_shapes()
                .iter()
                .map(|s| f.shape(s).unwrap())
                .collect()
        };
        assert_eq!(shapes(Family::Copy), [[268_435_456]]);
        assert_eq!(
            shapes(Family::Add),
            [[1_048_576], [16_777_216], [268_435_456]]
        );
        assert_eq!(
            shapes(Family::Softmax),
            [[4096, 1024], [8192, 4096], [16384, 8192]]
        );
        assert_eq!(
            shapes(Family::Layernorm),
            [[4096, 1024], [4096, 4096], [4096, 8192]]
        );
        assert_eq!(
            shapes(Family::Matmul),
            [[1024; 3], [2048; 3], [4096; 3], [8192; 3]]
        );
        assert_eq!(shapes(Family::Transpose), [[8192, 8192]]);
        assert_eq!(
            shapes(Family::Gather),
            [[65536, 32], [65536, 64], [65536, 128], [65536, 256]]
        );
        assert_eq!(Family::Softmax.dtypes(), ["float32", "float16"]);
        assert_eq!(Family::Layernorm.dtypes(), ["float16"]);
        assert_eq!(Family::Matmul.dtypes(), ["float16", "bfloat16"]);
        assert_eq!(Family::Transpose.dtypes(), ["float32", "float16"]);
        assert_eq!(Family::Gather.dtypes(), ["float32", "float16"]);
        for f in [Family::Attention, Family::AttentionCausal] {
            assert_eq!(
                shapes(f),
                [
                    [64, 4096, 64],
                    [16, 16384, 64],
                    [64, 4096, 128],
                    [16, 16384, 128]
                ]
            );
            assert_eq!(f.dtypes(), ["float16"]);
        }
        for (family, name) in Family::ALL.into_iter().zip(FAMILIES) {
            assert_eq!(family.name(), name);
            assert_eq!(Family::parse(name), Some(family));
            for shape in family.small_shapes() {
                family.shape(&shape).unwrap();
            }
        }
        assert_eq!(Family::parse("conv"), None);
    }

    #[test]
    fn shapes_a_family_cannot_run_are_refused() {
        assert!(Family::Copy.shape(&[4, 4]).is_err());
        assert!(Family::Softmax.shape(&[4096]).is_err());
        assert!(Family::Softmax.shape(&[4, 8193]).is_err());
        assert!(Family::Layernorm.shape(&[4, 16384]).is_err());
        assert!(Family::Gather.shape(&[100, 48]).is_err());
        assert!(Family::Matmul.shape(&[4, 4]).is_err());
        assert_eq!(Family::Matmul.shape(&[5, 6, 7]), Ok(vec![5, 6, 7]));
        assert_eq!(Family::Transpose.shape(&[3, 5]), Ok(vec![3, 5]));
    }
}
