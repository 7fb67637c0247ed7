//! The verify engine: replays a finding's *concrete* layout on a real device and measures what
//! materialising it costs — bytes, time, bandwidth, and how that compares with the device's own
//! copy ceiling.
//!
//! It takes numbers, never source code: a [`StridedLayout`] (shape, strides and storage offset
//! in elements) and a [`DType`]. The pieces:
//!
//! * [`plan`]: canonicalise the layout (drop size-1 dimensions, merge dimensions the source
//!   walks as one) and choose a strategy — memcpy, row gather, tiled transpose or scalar
//!   gather. Pure, shared by both engines.
//! * [`divider`] and [`launch`]: fast 32-bit division magic numbers and launch geometry for
//!   the GPU kernels, computed and tested on the host.
//! * [`cpu`]: the rayon engine. Always available.
//! * [`cuda`] (feature `cuda`, on by default): the cudarc + NVRTC engine. It loads CUDA lazily
//!   at run time, so the crate builds and every test passes on a machine without CUDA, and
//!   [`select_engine`] falls back to the CPU with a one-line reason.
//! * [`reference`]: the naive gather every engine's output is checked against.
//! * [`budget`]: what a measurement will allocate, refused above the memory limit before
//!   anything is allocated (`--verify-max-bytes`).
//! * [`replay`]: the helper the CLI calls (`stridelint replay`, `--verify`).
//!
//! Architecture invariant: this module takes numbers (concrete layouts, dtypes, engine
//! options) and knows nothing of rule codes, diagnostics or source files; `--verify` for
//! findings (binding a finding's sizes, re-checking its verdict) is `crate::verify_findings`.
//!
//! See `docs/verify.md` for the measurement protocol and `../shared/spec/cuda-engine.md` for the
//! research behind the kernels.

pub mod budget;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod cursor;
pub mod divider;
pub mod dtype;
pub mod error;
pub mod kernel_params;
pub mod launch;
pub mod measurement;
pub mod plan;
pub mod reference;
pub mod replay;
pub mod strided;

pub use cpu::CpuEngine;
pub use dtype::DType;
pub use error::VerifyError;
pub use measurement::{CopyMeasurement, MeasureOptions};
pub use plan::{plan_copy, CopyKind, CopyPlan};
pub use replay::{per_forward, replay, ForwardCost, Replay};
pub use strided::StridedLayout;

/// A device that can materialise strided layouts and time it.
pub trait Engine {
    /// `"cpu"` or `"cuda"`.
    fn name(&self) -> &'static str;

    /// The device in words, e.g. `"NVIDIA H200 (sm_90, 132 SMs)"` or
    /// `"Intel(R) Xeon(R) Processor (2 threads)"`.
    fn device(&self) -> String;

    /// Materialises `layout` of a buffer of `dtype` into a new contiguous buffer: allocates the
    /// source (sized to the layout's footprint), fills it with non-zero data, runs the copy
    /// (`opts.warmup_runs` untimed, then `opts.timed_runs` timed), checks the result against
    /// the reference gather when `opts.check` is set, and reports the timing.
    fn measure_copy(
        &self,
        layout: &StridedLayout,
        dtype: DType,
        opts: &MeasureOptions,
    ) -> Result<CopyMeasurement, VerifyError>;

    /// This device's copy ceiling for `bytes` (a memcpy of the same size, timed the same way),
    /// in GB/s counting bytes read plus bytes written.
    fn copy_ceiling_gbps(&self, bytes: u64, opts: &MeasureOptions) -> Result<f64, VerifyError>;

    /// The measurement and the copy ceiling at its size (`None` when nothing was copied).
    /// Engines on shared, noisy devices (the CPU) override this to interleave the two
    /// measurements run by run, so that their ratio compares the same moments.
    fn measure_with_ceiling(
        &self,
        layout: &StridedLayout,
        dtype: DType,
        opts: &MeasureOptions,
    ) -> Result<(CopyMeasurement, Option<f64>), VerifyError> {
        let measurement = self.measure_copy(layout, dtype, opts)?;
        let ceiling = match measurement.bytes_copied {
            0 => None,
            bytes => Some(self.copy_ceiling_gbps(bytes, opts)?),
        };
        Ok((measurement, ceiling))
    }
}

/// Which engine the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineChoice {
    /// CUDA when it works here, else the CPU (with the reason CUDA was not used).
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl std::str::FromStr for EngineChoice {
    type Err = VerifyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(EngineChoice::Auto),
            "cpu" => Ok(EngineChoice::Cpu),
            "cuda" | "gpu" => Ok(EngineChoice::Cuda),
            other => Err(VerifyError::Unsupported(format!(
                "unknown engine `{other}` (expected auto, cpu or cuda)"
            ))),
        }
    }
}

/// Builds the engine for `choice`. With [`EngineChoice::Auto`] a CUDA failure is not an error:
/// the CPU engine is returned together with the one-line reason CUDA was not used. With
/// [`EngineChoice::Cuda`] that reason is the error.
pub fn select_engine(
    choice: EngineChoice,
) -> Result<(Box<dyn Engine>, Option<String>), VerifyError> {
    match choice {
        EngineChoice::Cpu => Ok((Box::new(CpuEngine::new(None)?), None)),
        EngineChoice::Cuda => Ok((cuda_engine()?, None)),
        EngineChoice::Auto => match cuda_engine() {
            Ok(engine) => Ok((engine, None)),
            Err(why) => Ok((Box::new(CpuEngine::new(None)?), Some(why.to_string()))),
        },
    }
}

#[cfg(feature = "cuda")]
fn cuda_engine() -> Result<Box<dyn Engine>, VerifyError> {
    Ok(Box::new(cuda::CudaEngine::new(0)?))
}

#[cfg(not(feature = "cuda"))]
fn cuda_engine() -> Result<Box<dyn Engine>, VerifyError> {
    Err(VerifyError::CudaUnavailable(
        "this stridelint was built without the `cuda` feature".to_string(),
    ))
}
