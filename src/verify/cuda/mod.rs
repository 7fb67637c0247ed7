//! The CUDA engine: runs the planned copy on the GPU with the NVRTC-compiled kernels of
//! `kernels/`, timed with CUDA events.
//!
//! Measurement protocol (`../shared/spec/cuda-engine.md` §4): buffers are allocated and
//! filled before timing; `warmup_runs` untimed runs; then for each of `timed_runs` runs the
//! L2 cache is flushed by a memset of a scratch buffer twice its size *outside* the event
//! pair, and the copy is timed between two events created with timing enabled. The median,
//! 10th and 90th percentiles are reported. The device's copy ceiling is measured the same way
//! for a `cuMemcpyDtoD` and for the engine's own vectorised copy kernel at the same size; the
//! faster of the two is the ceiling (on Hopper an SM copy kernel can beat the copy engine).
//!
//! Everything here is reached only through [`CudaEngine::new`], which checks the libraries
//! first and turns every failure into [`VerifyError::CudaUnavailable`] with a one-line reason.

pub mod nvrtc;
pub mod probe;

use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUresult};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr,
    DriverError, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;

use self::nvrtc::{compile_kernels, CompiledKernels, Target};
use self::probe::{check_driver_library, check_nvrtc, quietly};
use super::dtype::DType;
use super::error::VerifyError;
use super::kernel_params::{kernel_launches, GatherParams, KernelLaunch, TransposeParams};
use super::launch::{gather_geometry, LaunchGeometry};
use super::measurement::{gigabytes_per_second, CopyMeasurement, MeasureOptions, TimingSummary};
use super::plan::{plan_copy, CopyPlan, Dim};
use super::reference::{check_copy, fill_pattern, CheckCoverage, Element};
use super::strided::StridedLayout;
use super::Engine;

// SAFETY: both are #[repr(C)] plain data whose layout matches the kernels' argument structs
// (pinned by a test in kernel_params.rs and static_asserts in strided_common.cuh).
unsafe impl DeviceRepr for GatherParams {}
unsafe impl DeviceRepr for TransposeParams {}

/// Output positions compared with the reference per measurement (plus both ends).
const CHECK_SAMPLES: u64 = 1 << 22;

/// The GPU engine for one device.
pub struct CudaEngine {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    device_name: String,
    capability: (i32, i32),
    sm_count: u32,
    l2_bytes: usize,
    code: String,
}

/// The two ceilings measured by [`CudaEngine::copy_ceilings`], in GB/s (read + write).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyCeilings {
    pub memcpy_gbps: f64,
    /// The engine's own 16-byte-vector copy kernel on the same bytes (`None` when the size is
    /// not a multiple of 16).
    pub kernel_gbps: Option<f64>,
}

impl CopyCeilings {
    pub fn best(&self) -> f64 {
        self.memcpy_gbps.max(self.kernel_gbps.unwrap_or(0.0))
    }
}

impl CudaEngine {
    /// Opens GPU `ordinal` and compiles the kernels for it. Any failure — no driver, no
    /// device, no NVRTC, a compile or load error, even a panic inside cudarc — comes back as
    /// [`VerifyError::CudaUnavailable`] with a one-line reason, the most basic one first (no
    /// GPU is reported as such even where NVRTC is missing too).
    pub fn new(ordinal: usize) -> Result<Self, VerifyError> {
        check_driver_library()?;
        let unavailable = |why: String| VerifyError::CudaUnavailable(why);
        quietly(|| Self::open(ordinal))
            .map_err(|panic| unavailable(format!("the CUDA driver failed: {panic}")))?
    }

    fn open(ordinal: usize) -> Result<Self, VerifyError> {
        let unavailable = |what: &str, err: DriverError| {
            VerifyError::CudaUnavailable(format!("{what}: {}", describe(err)))
        };
        let ctx = CudaContext::new(ordinal)
            .map_err(|err| unavailable(&format!("cannot open GPU {ordinal}"), err))?;
        // One stream only: no cross-stream events are needed on allocations.
        // SAFETY: called before any allocation on this context.
        unsafe { ctx.disable_event_tracking() };
        let capability = ctx
            .compute_capability()
            .map_err(|err| unavailable("cannot read the compute capability", err))?;
        let attribute = |attribute| {
            ctx.attribute(attribute)
                .map_err(|err| unavailable("cannot read a device attribute", err))
        };
        let sm_count =
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let l2_bytes = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize;
        let device_name = ctx
            .name()
            .unwrap_or_else(|_| format!("CUDA device {ordinal}"));
        check_nvrtc()?;
        let (module, code) = load_kernels(&ctx, capability)?;
        Ok(CudaEngine {
            stream: ctx.default_stream(),
            ctx,
            module,
            device_name,
            capability,
            sm_count,
            l2_bytes,
            code,
        })
    }

    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    pub fn l2_bytes(&self) -> usize {
        self.l2_bytes
    }

    /// Ceiling of a same-size copy: `cuMemcpyDtoD` and the engine's own contiguous copy
    /// kernel, measured with the same protocol as [`Engine::measure_copy`].
    pub fn copy_ceilings(
        &self,
        bytes: u64,
        opts: &MeasureOptions,
    ) -> Result<CopyCeilings, VerifyError> {
        let both = super::budget::checked_mul(bytes, 2, "the ceiling buffers' size")?;
        super::budget::admit(both, "measuring the copy ceiling", opts)?;
        let len = self.checked_len(bytes, both)?;
        let src = self
            .stream
            .alloc_zeros::<u8>(len)
            .map_err(cuda_error("allocating the ceiling source"))?;
        let mut dst = self
            .stream
            .alloc_zeros::<u8>(len)
            .map_err(cuda_error("allocating the ceiling destination"))?;
        let memcpy = self.time(opts, &mut dst, |stream, dst| stream.memcpy_dtod(&src, dst))?;
        let kernel_gbps = if bytes % 16 == 0 && bytes > 0 {
            let function = self.function("strided_gather_16")?;
            let units = bytes / 16;
            let launches: Vec<(GatherParams, LaunchGeometry)> = super::launch::split_into_pieces(
                &[Dim {
                    size: units,
                    stride: 1,
                }],
                0,
                super::launch::MAX_ITEMS_PER_LAUNCH,
            )
            .into_iter()
            .map(|piece| {
                let mut params = GatherParams {
                    src_offset: piece.src_offset,
                    dst_offset: piece.dst_offset,
                    count: piece.len() as u32,
                    ndims: 1,
                    sizes: Default::default(),
                    src_strides: [0; super::kernel_params::MAX_KERNEL_DIMS],
                };
                params.sizes[0] =
                    super::divider::FastDivider::new(piece.len() as u32).expect("piece below 2^31");
                params.src_strides[0] = 1;
                (params, gather_geometry(piece.len(), self.sm_count))
            })
            .collect();
            let timing = self.time(opts, &mut dst, |stream, dst| {
                for (params, geometry) in &launches {
                    launch_with(stream, &function, &src, dst, params, *geometry)?;
                }
                Ok(())
            })?;
            Some(gigabytes_per_second(2 * bytes, timing.median_ms))
        } else {
            None
        };
        Ok(CopyCeilings {
            memcpy_gbps: gigabytes_per_second(2 * bytes, memcpy.median_ms),
            kernel_gbps,
        })
    }

    fn function(&self, name: &str) -> Result<CudaFunction, VerifyError> {
        self.module
            .load_function(name)
            .map_err(cuda_error(&format!("loading kernel {name}")))
    }

    /// `bytes` as a `usize`, after checking that `total_bytes` fit in free device memory.
    fn checked_len(&self, bytes: u64, total_bytes: u64) -> Result<usize, VerifyError> {
        let (free, _) = self
            .ctx
            .mem_get_info()
            .map_err(cuda_error("querying free memory"))?;
        let flush = 2 * self.l2_bytes as u64;
        if total_bytes.saturating_add(flush) > free as u64 {
            return Err(VerifyError::OutOfMemory(format!(
                "needs {total_bytes} bytes of device memory plus {flush} for L2 flushing; {free} are free"
            )));
        }
        usize::try_from(bytes).map_err(|_| VerifyError::OutOfMemory(format!("{bytes} bytes")))
    }

    /// Warm-up runs, then timed runs between timing events, each after an L2 flush.
    fn time<T>(
        &self,
        opts: &MeasureOptions,
        dst: &mut CudaSlice<T>,
        mut run: impl FnMut(&Arc<CudaStream>, &mut CudaSlice<T>) -> Result<(), DriverError>,
    ) -> Result<TimingSummary, VerifyError> {
        let stream = &self.stream;
        let mut flush = stream
            .alloc_zeros::<u8>((2 * self.l2_bytes).max(1))
            .map_err(cuda_error("allocating the L2 flush buffer"))?;
        for _ in 0..opts.warmup_runs {
            run(stream, dst).map_err(cuda_error("running the copy"))?;
        }
        let timed_event = || self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        let (start, end): (CudaEvent, CudaEvent) = (
            timed_event().map_err(cuda_error("creating a timing event"))?,
            timed_event().map_err(cuda_error("creating a timing event"))?,
        );
        let mut samples = Vec::with_capacity(opts.timed_runs.max(1));
        for _ in 0..opts.timed_runs.max(1) {
            stream
                .memset_zeros(&mut flush)
                .map_err(cuda_error("flushing L2"))?;
            start
                .record(stream)
                .map_err(cuda_error("recording an event"))?;
            run(stream, dst).map_err(cuda_error("running the copy"))?;
            end.record(stream)
                .map_err(cuda_error("recording an event"))?;
            let ms = start
                .elapsed_ms(&end)
                .map_err(cuda_error("reading the timer"))?;
            samples.push(ms as f64);
        }
        Ok(TimingSummary::from_samples(&samples))
    }

    fn measure_typed<T: Element + DeviceRepr + ValidAsZeroBits>(
        &self,
        layout: &StridedLayout,
        plan: &CopyPlan,
        opts: &MeasureOptions,
    ) -> Result<CopyMeasurement, VerifyError> {
        let esize = std::mem::size_of::<T>() as u64;
        let footprint = layout.footprint_elems()?;
        let launches = kernel_launches(plan, self.sm_count)?;
        let functions = launches
            .iter()
            .map(|launch| {
                launch
                    .kernel_name()
                    .map(|name| self.function(&name))
                    .transpose()
            })
            .collect::<Result<Vec<Option<CudaFunction>>, VerifyError>>()?;
        let (source_bytes, copy_bytes) = super::budget::buffer_bytes(layout, plan.dtype)?;
        let device_bytes =
            super::budget::checked_add(source_bytes, copy_bytes, "the buffers' size")?;
        // The host holds the source (filled there, uploaded) and the downloaded copy.
        super::budget::admit(
            device_bytes,
            &format!("measuring the copy of {layout} ({})", plan.dtype),
            opts,
        )?;
        let numel = self.checked_len(plan.numel(), device_bytes)?;

        let mut host_src = vec![T::default(); footprint as usize];
        fill_pattern(&mut host_src);
        let src = self
            .stream
            .clone_htod(&host_src)
            .map_err(cuda_error("uploading the source"))?;
        let mut dst = self
            .stream
            .alloc_zeros::<T>(numel)
            .map_err(cuda_error("allocating the destination"))?;

        let timing = self.time(opts, &mut dst, |stream, dst| {
            for (launch, function) in launches.iter().zip(&functions) {
                match (launch, function) {
                    (
                        KernelLaunch::Memcpy {
                            src_offset_bytes,
                            bytes,
                        },
                        _,
                    ) => {
                        let start = (src_offset_bytes / esize) as usize;
                        let view = src.slice(start..start + (bytes / esize) as usize);
                        stream.memcpy_dtod(&view, dst)?;
                    }
                    (
                        KernelLaunch::Gather {
                            params, geometry, ..
                        },
                        Some(function),
                    ) => launch_with(stream, function, &src, dst, params, *geometry)?,
                    (
                        KernelLaunch::Transpose {
                            params, geometry, ..
                        },
                        Some(function),
                    ) => launch_with(stream, function, &src, dst, params, *geometry)?,
                    _ => unreachable!("every kernel launch has its function loaded"),
                }
            }
            Ok(())
        })?;

        if opts.check {
            let host_dst = self
                .stream
                .clone_dtoh(&dst)
                .map_err(cuda_error("downloading the result"))?;
            check_copy(
                layout,
                plan.dtype,
                &host_src,
                &host_dst[..numel],
                CheckCoverage::Sample(CHECK_SAMPLES),
            )?;
        }
        let kernel = match launches.first().and_then(KernelLaunch::kernel_name) {
            Some(name) => format!("{plan} [{name}]"),
            None => plan.to_string(),
        };
        Ok(CopyMeasurement::from_timing(
            plan, timing, kernel, opts.check,
        ))
    }
}

impl Engine for CudaEngine {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn device(&self) -> String {
        let (major, minor) = self.capability;
        format!(
            "{} (sm_{major}{minor}, {} SMs, {} MiB L2, kernels: {})",
            self.device_name,
            self.sm_count,
            self.l2_bytes >> 20,
            self.code
        )
    }

    fn measure_copy(
        &self,
        layout: &StridedLayout,
        dtype: DType,
        opts: &MeasureOptions,
    ) -> Result<CopyMeasurement, VerifyError> {
        let plan = plan_copy(layout, dtype)?;
        if plan.numel() == 0 {
            let nothing = TimingSummary::from_samples(&[]);
            return Ok(CopyMeasurement::from_timing(
                &plan,
                nothing,
                plan.to_string(),
                true,
            ));
        }
        match dtype.size_bytes() {
            1 => self.measure_typed::<u8>(layout, &plan, opts),
            2 => self.measure_typed::<u16>(layout, &plan, opts),
            4 => self.measure_typed::<u32>(layout, &plan, opts),
            _ => self.measure_typed::<u64>(layout, &plan, opts),
        }
    }

    fn copy_ceiling_gbps(&self, bytes: u64, opts: &MeasureOptions) -> Result<f64, VerifyError> {
        Ok(self.copy_ceilings(bytes, opts)?.best())
    }
}

/// Compiles the kernels (CUBIN, else PTX) and loads the module; returns it with a description
/// of the code that loaded.
fn load_kernels(
    ctx: &Arc<CudaContext>,
    capability: (i32, i32),
) -> Result<(Arc<CudaModule>, String), VerifyError> {
    let mut reasons = Vec::new();
    for target in [Target::Cubin, Target::Ptx] {
        let compiled = match compile_kernels(capability, target) {
            Ok(compiled) => compiled,
            Err(err) => {
                reasons.push(err.to_string());
                continue;
            }
        };
        let code = compiled.describe();
        let ptx = match compiled {
            CompiledKernels::Cubin { image, .. } => Ptx::from_binary(image),
            CompiledKernels::Ptx { text, .. } => Ptx::from_src(text),
        };
        match ctx.load_module(ptx) {
            Ok(module) => return Ok((module, code)),
            Err(err) => reasons.push(format!("loading {code}: {}", describe(err))),
        }
    }
    Err(VerifyError::CudaUnavailable(reasons.join("; ")))
}

/// Launches one copy kernel: `(src, dst, params)`.
fn launch_with<T, P: DeviceRepr>(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    src: &CudaSlice<T>,
    dst: &mut CudaSlice<T>,
    params: &P,
    geometry: LaunchGeometry,
) -> Result<(), DriverError> {
    let config = LaunchConfig {
        grid_dim: (geometry.grid, 1, 1),
        block_dim: (geometry.block.0, geometry.block.1, 1),
        shared_mem_bytes: 0,
    };
    let mut builder = stream.launch_builder(function);
    builder.arg(src).arg(dst).arg(params);
    // SAFETY: the kernels take (const Unit* src, Unit* dst, Params p); src holds the layout's
    // footprint and dst its element count, which is exactly what the params index.
    unsafe { builder.launch(config) }.map(|_| ())
}

/// `CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)`.
fn describe(err: DriverError) -> String {
    let text = err
        .error_string()
        .map(|text| text.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{:?} ({text})", err.0)
}

/// Maps a driver error during a measurement to [`VerifyError`], out-of-memory separately.
fn cuda_error(what: &str) -> impl Fn(DriverError) -> VerifyError + '_ {
    move |err| {
        if err.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            VerifyError::OutOfMemory(format!("{what}: device memory exhausted"))
        } else {
            VerifyError::Cuda(format!("{what}: {}", describe(err)))
        }
    }
}
