//! Benchmarks of the verify engine's copies against the device's own copy ceiling.
//!
//! `bench_engine --engine cpu` runs the CPU cases, `bench_engine --engine cuda` the GPU cases
//! (see [`cases`]); `--json` prints one JSON object per case for
//! `scripts/bench_cpu_engine.py` and `scripts/gpu_bench.sh`, which time PyTorch's
//! `.contiguous()` on exactly the same views (`--list` prints them) and put both side by side.
//! `--probe` prints which engine `--engine auto` would pick here and why.

use std::process::ExitCode;

use clap::Parser;
use serde_json::json;
use stridelint::verify::replay::{format_bytes, format_ms};
use stridelint::verify::{
    plan_copy, select_engine, CopyMeasurement, CpuEngine, DType, Engine, EngineChoice,
    MeasureOptions, StridedLayout, VerifyError,
};

#[derive(Parser)]
#[command(about = "Time the verify engine's strided copies against the device's copy ceiling")]
struct Args {
    /// cpu, cuda or auto.
    #[arg(long, default_value = "cpu")]
    engine: String,
    /// CPU threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long, default_value_t = 5)]
    warmup: usize,
    #[arg(long, default_value_t = 50)]
    runs: usize,
    /// One JSON object per case instead of a table.
    #[arg(long)]
    json: bool,
    /// Print the cases (name, dtype, shape, strides, offset, footprint) as JSON and exit.
    #[arg(long)]
    list: bool,
    /// Print the engine `auto` selects here (or why CUDA is not used) and exit.
    #[arg(long)]
    probe: bool,
    /// Instead of the cases, check this many random views (every strategy, every element
    /// size, offsets, steps, broadcast, reversed strides) against the reference gather.
    #[arg(long)]
    sweep: Option<usize>,
    /// Case names (default: the engine's standard set).
    cases: Vec<String>,
}

/// A benchmark layout: a view of a contiguous tensor, as PyTorch would build it.
struct Case {
    name: &'static str,
    /// The PyTorch expression, for humans.
    expression: &'static str,
    layout: StridedLayout,
    dtype: DType,
    gpu: bool,
}

fn cases() -> Vec<Case> {
    let view = |shape: &[i64], op: &dyn Fn(StridedLayout) -> Result<StridedLayout, VerifyError>| {
        op(StridedLayout::contiguous(shape)).expect("benchmark views are valid")
    };
    vec![
        Case {
            name: "bshd_transpose_bf16",
            expression: "empty(4, 16, 2048, 128, bf16).transpose(1, 2)",
            layout: view(&[4, 16, 2048, 128], &|x| x.transpose(1, 2)),
            dtype: DType::BF16,
            gpu: false,
        },
        Case {
            name: "t8192_f32",
            expression: "empty(8192, 8192, f32).t()",
            layout: view(&[8192, 8192], &|x| x.transpose(0, 1)),
            dtype: DType::F32,
            gpu: false,
        },
        Case {
            name: "bshd_permute_bf16",
            expression: "empty(16, 4096, 32, 128, bf16).permute(0, 2, 1, 3)",
            layout: view(&[16, 4096, 32, 128], &|x| x.permute(&[0, 2, 1, 3])),
            dtype: DType::BF16,
            gpu: true,
        },
        Case {
            name: "t16384_f32",
            expression: "empty(16384, 16384, f32).t()",
            layout: view(&[16384, 16384], &|x| x.transpose(0, 1)),
            dtype: DType::F32,
            gpu: true,
        },
        Case {
            name: "t16384_bf16",
            expression: "empty(16384, 16384, bf16).t()",
            layout: view(&[16384, 16384], &|x| x.transpose(0, 1)),
            dtype: DType::BF16,
            gpu: true,
        },
        Case {
            name: "slice_step2_f32",
            expression: "empty(8192, 16384, f32)[:, ::2]",
            layout: StridedLayout::new(vec![8192, 8192], vec![16384, 2], 0),
            dtype: DType::F32,
            gpu: true,
        },
    ]
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bench_engine: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), VerifyError> {
    let all = cases();
    if args.list {
        for case in &all {
            println!("{}", case_json(case)?);
        }
        return Ok(());
    }
    if args.probe {
        let (engine, reason) = select_engine(EngineChoice::Auto)?;
        match reason {
            Some(reason) => println!(
                "{} engine on {}; not CUDA because {reason}",
                engine.name(),
                engine.device()
            ),
            None => println!("{} engine on {}", engine.name(), engine.device()),
        }
        return Ok(());
    }
    let choice: EngineChoice = args.engine.parse()?;
    let bench = Bench::open(choice, args.threads)?;
    let engine = bench.engine();
    let gpu = engine.name() == "cuda";
    let selected: Vec<&Case> = if args.cases.is_empty() {
        all.iter().filter(|case| case.gpu == gpu).collect()
    } else {
        args.cases
            .iter()
            .map(|name| {
                all.iter().find(|case| case.name == name).ok_or_else(|| {
                    VerifyError::Unsupported(format!("unknown case `{name}` (see --list)"))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let opts = MeasureOptions {
        warmup_runs: args.warmup,
        timed_runs: args.runs,
        threads: args.threads,
        check: true,
        max_bytes: None,
    };
    if !args.json {
        println!("engine: {} on {}", engine.name(), engine.device());
    }
    if let Some(count) = args.sweep {
        return sweep(engine, count);
    }
    for case in selected {
        let (m, memcpy_gbps, kernel_gbps) = bench.measure(case, &opts)?;
        let ceiling = memcpy_gbps.max(kernel_gbps.unwrap_or(0.0));
        if args.json {
            let mut record = case_json(case)?;
            record["engine"] = json!(engine.name());
            record["device"] = json!(engine.device());
            record["threads"] = json!(args.threads);
            record["kernel"] = json!(m.kernel);
            record["bytes_copied"] = json!(m.bytes_copied);
            record["median_ms"] = json!(m.median_ms);
            record["p10_ms"] = json!(m.p10_ms);
            record["p90_ms"] = json!(m.p90_ms);
            record["runs"] = json!(m.runs);
            record["gbps"] = json!(m.gbps);
            record["memcpy_gbps"] = json!(memcpy_gbps);
            record["kernel_copy_gbps"] = json!(kernel_gbps);
            record["ceiling_ratio"] = json!(m.gbps / ceiling);
            record["checked"] = json!(m.checked);
            println!("{record}");
        } else {
            println!(
                "{:<22} {:<50} {}  {:>9} (p10 {}, p90 {})  {:>6.1} GB/s  = {:>3.0}% of copy ceiling {:.1} GB/s{}  checked={}",
                case.name,
                case.expression,
                format_bytes(m.bytes_copied),
                format_ms(m.median_ms),
                format_ms(m.p10_ms),
                format_ms(m.p90_ms),
                m.gbps,
                100.0 * m.gbps / ceiling,
                ceiling,
                kernel_gbps.map_or(String::new(), |k| format!(" (memcpy {memcpy_gbps:.1}, own kernel {k:.1})")),
                m.checked
            );
            println!("{:<22} {}", "", m.kernel);
        }
    }
    Ok(())
}

fn case_json(case: &Case) -> Result<serde_json::Value, VerifyError> {
    let plan = plan_copy(&case.layout, case.dtype)?;
    Ok(json!({
        "case": case.name,
        "expression": case.expression,
        "dtype": case.dtype.name(),
        "shape": case.layout.shape,
        "strides": case.layout.strides,
        "offset": case.layout.offset,
        "footprint": case.layout.footprint_elems()?,
        "plan": plan.to_string(),
        "gpu": case.gpu,
    }))
}

/// The engine under test, concrete so that the CUDA engine's two ceilings stay reachable.
enum Bench {
    Cpu(CpuEngine),
    #[cfg(feature = "cuda")]
    Cuda(stridelint::verify::cuda::CudaEngine),
}

impl Bench {
    /// `cpu`: the CPU engine; `cuda`: the GPU or an error; `auto`: the GPU, else the CPU with
    /// the reason on stderr.
    fn open(choice: EngineChoice, threads: Option<usize>) -> Result<Self, VerifyError> {
        let cpu = || CpuEngine::new(threads).map(Bench::Cpu);
        match choice {
            EngineChoice::Cpu => cpu(),
            #[cfg(feature = "cuda")]
            EngineChoice::Cuda => stridelint::verify::cuda::CudaEngine::new(0).map(Bench::Cuda),
            #[cfg(feature = "cuda")]
            EngineChoice::Auto => match stridelint::verify::cuda::CudaEngine::new(0) {
                Ok(engine) => Ok(Bench::Cuda(engine)),
                Err(why) => {
                    eprintln!("bench_engine: using the CPU: {why}");
                    cpu()
                }
            },
            #[cfg(not(feature = "cuda"))]
            _ => select_engine(choice).and_then(|_| cpu()),
        }
    }

    fn engine(&self) -> &dyn Engine {
        match self {
            Bench::Cpu(engine) => engine,
            #[cfg(feature = "cuda")]
            Bench::Cuda(engine) => engine,
        }
    }

    /// The case's measurement with `(memcpy GB/s, own copy kernel GB/s)` at its size; the
    /// kernel figure exists on CUDA only. On the CPU the memcpy runs are interleaved with the
    /// copy's (see `Engine::measure_with_ceiling`).
    fn measure(
        &self,
        case: &Case,
        opts: &MeasureOptions,
    ) -> Result<(CopyMeasurement, f64, Option<f64>), VerifyError> {
        match self {
            Bench::Cpu(engine) => {
                let (m, ceiling) = engine.measure_with_ceiling(&case.layout, case.dtype, opts)?;
                Ok((m, ceiling.unwrap_or(0.0), None))
            }
            #[cfg(feature = "cuda")]
            Bench::Cuda(engine) => {
                let m = engine.measure_copy(&case.layout, case.dtype, opts)?;
                let both = engine.copy_ceilings(m.bytes_copied, opts)?;
                Ok((m, both.memcpy_gbps, both.kernel_gbps))
            }
        }
    }
}

/// Checks `count` random views on `engine`; fails on the first wrong copy.
fn sweep(engine: &dyn Engine, count: usize) -> Result<(), VerifyError> {
    let opts = MeasureOptions {
        warmup_runs: 0,
        timed_runs: 1,
        threads: None,
        check: true,
        max_bytes: None,
    };
    let mut rng = SplitMix(0x5712_1de0);
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..count {
        let (layout, dtype) = random_view(&mut rng);
        let m = engine.measure_copy(&layout, dtype, &opts)?;
        let strategy = m.kernel.split(" (").next().unwrap_or_default().to_string();
        *kinds
            .entry(format!("{strategy}, {}-byte elements", dtype.size_bytes()))
            .or_default() += 1;
    }
    println!(
        "sweep: {count} random views copied correctly on {}:",
        engine.device()
    );
    for (kind, n) in kinds {
        println!("  {n:>5}  {kind}");
    }
    Ok(())
}

/// A small deterministic generator (SplitMix64), so a failing sweep can be rerun exactly.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// A view of a random contiguous tensor: sliced (start, step), sometimes expanded or
/// reversed along a dimension, then permuted; sizes up to 300 so that tiles are partial.
/// Expanded dimensions (up to 40) may take the element count a little over the budget.
fn random_view(rng: &mut SplitMix) -> (StridedLayout, DType) {
    let dtype = DType::ALL[rng.below(DType::ALL.len() as u64) as usize];
    let rank = 1 + rng.below(4) as usize;
    // At most about 2^22 elements in all, so that a sweep of hundreds of views takes seconds.
    let mut budget = 1u64 << 22;
    let base_shape: Vec<i64> = (0..rank)
        .map(|_| {
            let size = 1 + rng.below(budget.min(300));
            budget = (budget / size).max(1);
            size as i64
        })
        .collect();
    let base = StridedLayout::contiguous(&base_shape);
    let (mut shape, mut strides, mut offset) = (Vec::new(), Vec::new(), 0i64);
    for (axis, &size) in base_shape.iter().enumerate() {
        let stride = base.strides[axis];
        match rng.below(6) {
            0 => {
                // x[..., ::step]
                let step = 2 + rng.below(2) as i64;
                shape.push((size + step - 1) / step);
                strides.push(stride * step);
            }
            1 => {
                // x[..., k:k+1].expand(n)
                offset += rng.below(size as u64) as i64 * stride;
                shape.push(1 + rng.below(40) as i64);
                strides.push(0);
            }
            2 => {
                // a reversed dimension (only as_strided makes these in PyTorch)
                offset += (size - 1) * stride;
                shape.push(size);
                strides.push(-stride);
            }
            3 => {
                // x[..., k:]
                let start = rng.below(size as u64) as i64;
                offset += start * stride;
                shape.push(size - start);
                strides.push(stride);
            }
            _ => {
                shape.push(size);
                strides.push(stride);
            }
        }
    }
    let mut order: Vec<usize> = (0..rank).collect();
    for index in (1..rank).rev() {
        order.swap(index, rng.below(index as u64 + 1) as usize);
    }
    let layout = StridedLayout::new(shape, strides, offset)
        .permute(&order)
        .expect("a shuffled identity is a permutation");
    (layout, dtype)
}
