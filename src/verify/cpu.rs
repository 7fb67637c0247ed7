//! The CPU engine: materialises a strided layout with rayon, the way a good CPU copy would.
//!
//! * Contiguous source ranges (whole tensors, or the runs of a row gather) move as slices
//!   (`copy_from_slice`, i.e. `memcpy`).
//! * A true transpose is blocked into squares of about 32 KiB so that both the strided reads
//!   and the contiguous writes stay in cache; a row gather whose rows are themselves
//!   transposed (`(B,H,S,D) → (B,S,H,D)`) is blocked the same way with whole rows as units.
//! * Work is split into chunks of the *output*, so threads never share a cache line they
//!   write, and each chunk starts a [`Cursor`] once and then only adds strides.
//!
//! Only the element size matters (copies move raw bits), so each strategy is monomorphised for
//! `u8`, `u16`, `u32` and `u64` ([`Element`]): `bf16`, `f16` and `i16` all run the `u16` code.

use std::hint::black_box;
use std::time::Instant;

use rayon::prelude::*;

use super::cursor::Cursor;
use super::dtype::DType;
use super::error::VerifyError;
use super::measurement::{gigabytes_per_second, CopyMeasurement, MeasureOptions, TimingSummary};
use super::plan::{plan_copy, CanonicalLayout, CopyKind, CopyPlan, Dim};
use super::reference::{check_copy, fill_pattern, CheckCoverage, Element};
use super::strided::StridedLayout;
use super::Engine;

/// Output bytes per parallel task: large enough that scheduling costs nothing, small enough
/// that every thread gets several tasks to balance.
const CHUNK_BYTES: usize = 256 * 1024;

/// The CPU engine, with its own thread pool so that measurements use exactly the requested
/// number of threads.
pub struct CpuEngine {
    pool: rayon::ThreadPool,
    threads: usize,
}

impl CpuEngine {
    /// An engine with `threads` workers (`None`: every available core).
    pub fn new(threads: Option<usize>) -> Result<Self, VerifyError> {
        let threads = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|index| format!("stridelint-verify-{index}"))
            .build()
            .map_err(|err| {
                VerifyError::Unsupported(format!("cannot start {threads} threads: {err}"))
            })?;
        Ok(CpuEngine { pool, threads })
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Copies the layout `plan` describes from `src` (its storage) into the row-major `dst`
    /// on this engine's threads. `dst` must hold exactly `plan.numel()` elements and `src`
    /// the layout's footprint.
    pub fn copy<T: Element>(&self, plan: &CopyPlan, src: &[T], dst: &mut [T]) {
        self.pool.install(|| copy_layout(plan, src, dst));
    }

    /// The engine to use for one measurement: this one, or a temporary one when the options
    /// ask for a different thread count.
    fn with_threads<R>(
        &self,
        opts: &MeasureOptions,
        run: impl FnOnce(&CpuEngine) -> Result<R, VerifyError>,
    ) -> Result<R, VerifyError> {
        match opts.threads {
            Some(threads) if threads != self.threads => run(&CpuEngine::new(Some(threads))?),
            _ => run(self),
        }
    }

    /// Measures `plan`'s copy and, when `with_ceiling`, a memcpy of the same byte count with
    /// its timed runs interleaved run by run with the copy's, so that on a shared machine the
    /// two medians come from the same moments and their ratio means something.
    fn measure_typed<T: Element>(
        &self,
        layout: &StridedLayout,
        plan: &CopyPlan,
        opts: &MeasureOptions,
        with_ceiling: bool,
    ) -> Result<(CopyMeasurement, Option<f64>), VerifyError> {
        let mut src: Vec<T> = allocate(layout.footprint_elems()?, "source buffer")?;
        self.pool.install(|| fill_pattern(&mut src));
        let mut dst: Vec<T> = allocate(plan.numel(), "destination buffer")?;
        let bytes = plan.bytes_written();
        let mut memcpy = match with_ceiling && bytes > 0 {
            true => Some(MemcpyBuffers::new(self, bytes)?),
            false => None,
        };
        let samples = {
            let mut copy = || {
                self.copy(plan, &src, &mut dst);
                black_box(dst.as_mut_slice());
            };
            match memcpy.as_mut() {
                Some(buffers) => {
                    time_interleaved(opts, &mut [&mut copy, &mut || buffers.run(self)])
                }
                None => time_interleaved(opts, &mut [&mut copy]),
            }
        };
        if opts.check {
            self.pool
                .install(|| check_copy(layout, plan.dtype, &src, &dst, CheckCoverage::All))?;
        }
        let timing = TimingSummary::from_samples(&samples[0]);
        let ceiling = samples.get(1).map(|memcpy_samples| {
            gigabytes_per_second(
                2 * bytes,
                TimingSummary::from_samples(memcpy_samples).median_ms,
            )
        });
        let path = match (plan.kind, run_transpose_dim(&plan.layout)) {
            (CopyKind::RowGather { .. }, Some(_)) => {
                format!("{plan}, blocked as a transpose of runs")
            }
            _ => plan.to_string(),
        };
        let measurement = CopyMeasurement::from_timing(plan, timing, path, opts.check);
        Ok((measurement, ceiling))
    }

    fn measure(
        &self,
        layout: &StridedLayout,
        dtype: DType,
        opts: &MeasureOptions,
        with_ceiling: bool,
    ) -> Result<(CopyMeasurement, Option<f64>), VerifyError> {
        let plan = plan_copy(layout, dtype)?;
        super::budget::admit(
            super::budget::cpu_bytes(layout, dtype, with_ceiling)?,
            &format!("measuring the copy of {layout} ({dtype})"),
            opts,
        )?;
        self.with_threads(opts, |engine| match dtype.size_bytes() {
            1 => engine.measure_typed::<u8>(layout, &plan, opts, with_ceiling),
            2 => engine.measure_typed::<u16>(layout, &plan, opts, with_ceiling),
            4 => engine.measure_typed::<u32>(layout, &plan, opts, with_ceiling),
            _ => engine.measure_typed::<u64>(layout, &plan, opts, with_ceiling),
        })
    }
}

/// Two buffers for timing a plain parallel memcpy: the CPU's copy ceiling.
struct MemcpyBuffers {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl MemcpyBuffers {
    fn new(engine: &CpuEngine, bytes: u64) -> Result<Self, VerifyError> {
        let mut src: Vec<u8> = allocate(bytes, "ceiling source buffer")?;
        engine.pool.install(|| fill_pattern(&mut src));
        let dst = allocate(bytes, "ceiling destination buffer")?;
        Ok(MemcpyBuffers { src, dst })
    }

    fn run(&mut self, engine: &CpuEngine) {
        engine.pool.install(|| copy_dense(&self.src, &mut self.dst));
        black_box(self.dst.as_mut_slice());
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> String {
        format!("{} ({} threads)", cpu_model_name(), self.threads)
    }

    fn measure_copy(
        &self,
        layout: &StridedLayout,
        dtype: DType,
        opts: &MeasureOptions,
    ) -> Result<CopyMeasurement, VerifyError> {
        Ok(self.measure(layout, dtype, opts, false)?.0)
    }

    fn copy_ceiling_gbps(&self, bytes: u64, opts: &MeasureOptions) -> Result<f64, VerifyError> {
        super::budget::admit(
            super::budget::checked_mul(bytes, 2, "the ceiling buffers' size")?,
            "measuring the copy ceiling",
            opts,
        )?;
        self.with_threads(opts, |engine| {
            let mut buffers = MemcpyBuffers::new(engine, bytes)?;
            let samples = time_interleaved(opts, &mut [&mut || buffers.run(engine)]);
            let timing = TimingSummary::from_samples(&samples[0]);
            Ok(gigabytes_per_second(2 * bytes, timing.median_ms))
        })
    }

    /// Interleaves the copy's timed runs with the memcpy's (see `measure_typed`).
    fn measure_with_ceiling(
        &self,
        layout: &StridedLayout,
        dtype: DType,
        opts: &MeasureOptions,
    ) -> Result<(CopyMeasurement, Option<f64>), VerifyError> {
        self.measure(layout, dtype, opts, true)
    }
}

/// Runs every action `warmup_runs` times untimed, then `timed_runs` rounds (at least one)
/// in which each action runs once, timed; returns each action's samples in milliseconds.
fn time_interleaved(opts: &MeasureOptions, actions: &mut [&mut dyn FnMut()]) -> Vec<Vec<f64>> {
    for _ in 0..opts.warmup_runs {
        actions.iter_mut().for_each(|action| action());
    }
    let mut samples = vec![Vec::with_capacity(opts.timed_runs.max(1)); actions.len()];
    for _ in 0..opts.timed_runs.max(1) {
        for (action, times) in actions.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            action();
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    samples
}

/// A zeroed buffer of `len` elements, or a clean error when the memory is not there.
fn allocate<T: Element>(len: u64, what: &str) -> Result<Vec<T>, VerifyError> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>() as u64);
    let too_big = || VerifyError::OutOfMemory(format!("{what} of {bytes} bytes"));
    let len = usize::try_from(len).map_err(|_| too_big())?;
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| too_big())?;
    buffer.resize(len, T::default());
    Ok(buffer)
}

/// Elements of `T` per parallel task.
fn chunk_elems<T>() -> usize {
    (CHUNK_BYTES / std::mem::size_of::<T>()).max(1)
}

fn copy_layout<T: Element>(plan: &CopyPlan, src: &[T], dst: &mut [T]) {
    let layout = &plan.layout;
    match plan.kind {
        CopyKind::Empty => {}
        CopyKind::Dense => {
            let start = layout.offset as usize;
            copy_dense(&src[start..start + dst.len()], dst);
        }
        CopyKind::RowGather { .. } => match run_transpose_dim(layout) {
            Some(unit_dim) => {
                let run = layout.dims[layout.dims.len() - 1].size as usize;
                copy_transpose(layout, unit_dim, run, src, dst)
            }
            None => copy_gather(layout, src, dst),
        },
        CopyKind::ScalarGather => copy_gather(layout, src, dst),
        CopyKind::Transpose { unit_dim, .. } => copy_transpose(layout, unit_dim, 1, src, dst),
    }
}

/// `dst.copy_from_slice(src)`, split over the threads.
fn copy_dense<T: Element>(src: &[T], dst: &mut [T]) {
    dst.par_chunks_mut(chunk_elems::<T>())
        .zip(src.par_chunks(chunk_elems::<T>()))
        .for_each(|(out, from)| out.copy_from_slice(from));
}

/// Row and scalar gathers: walk the output in chunks; within a chunk go row by row (a row
/// is one run of the innermost dimension) and copy each row's part as a slice when the
/// innermost stride is 1, element by element otherwise.
fn copy_gather<T: Element>(layout: &CanonicalLayout, src: &[T], dst: &mut [T]) {
    let (outer, innermost) = layout.dims.split_at(layout.dims.len() - 1);
    let Dim {
        size: row_len,
        stride: inner_stride,
    } = innermost[0];
    let row_len = row_len as usize;
    let chunk = chunk_elems::<T>();
    dst.par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(chunk_index, out)| {
            let start = chunk_index * chunk;
            let mut rows = Cursor::at(outer, layout.offset, (start / row_len) as u64);
            let mut column = start % row_len;
            let mut written = 0;
            while written < out.len() {
                let take = (row_len - column).min(out.len() - written);
                let target = &mut out[written..written + take];
                let first = rows.offset() + column as i64 * inner_stride;
                if inner_stride == 1 {
                    let first = first as usize;
                    target.copy_from_slice(&src[first..first + take]);
                } else {
                    for (step, slot) in target.iter_mut().enumerate() {
                        *slot = src[(first + step as i64 * inner_stride) as usize];
                    }
                }
                written += take;
                column = 0;
                rows.advance();
            }
        });
}

/// For a row gather, the outer dimension along which consecutive rows are adjacent in the
/// source (stride == run length), when it is not already the innermost outer dimension: the
/// rows then form a transpose of whole runs (a `(B,H,S,D) → (B,S,H,D)` permute is one, with
/// runs of D), and copying them in transpose order turns scattered run-sized reads into long
/// sequential ones.
fn run_transpose_dim(layout: &CanonicalLayout) -> Option<usize> {
    let (outer, innermost) = layout.dims.split_at(layout.dims.len().checked_sub(1)?);
    let run = innermost[0].size as i64;
    let last_outer = outer.last()?;
    if last_outer.stride == run || last_outer.stride == 0 {
        return None;
    }
    outer[..outer.len() - 1]
        .iter()
        .rposition(|dim| dim.stride == run)
}

/// Side of a transpose block, in units (elements, or runs of elements): about 32 KiB of
/// units per block, between 8 and 64 on a side.
fn transpose_tile(unit_bytes: usize) -> usize {
    let side = ((32 * 1024 / unit_bytes.max(1)) as f64).sqrt() as usize;
    (1usize << side.max(1).ilog2()).clamp(8, 64)
}

/// A transpose of units of `run` contiguous elements (`run == 1`: single elements; then
/// `dims` are all the layout's dimensions, else all but the innermost run). `plane[unit_dim]`
/// (size A) has source stride `run`, the last plane dimension (size B, stride `sb`) is written
/// contiguously, the dimensions between them (product M) and before `unit_dim` are batch. The
/// output of one outer index is A·M·B units; it is split into bands of `tile` values of A
/// (contiguous in the output), and each band is copied in `tile × tile` blocks of (A, B) for
/// every middle index, reading each block column by column (`tile` contiguous source units)
/// and writing it row by row.
///
/// Small units go through a contiguous staging buffer, as the GPU kernel goes through shared
/// memory: reading or writing a block of elements directly would touch `tile` cache lines
/// `sb` elements apart at every step, and with power-of-two strides (an 8192 × 8192 `.t()`)
/// those lines fall in the same cache set and evict each other before they are reused. Units
/// of a cache line or more are copied directly.
fn copy_transpose<T: Element>(
    layout: &CanonicalLayout,
    unit_dim: usize,
    run: usize,
    src: &[T],
    dst: &mut [T],
) {
    let plane = if run == 1 {
        &layout.dims[..]
    } else {
        &layout.dims[..layout.dims.len() - 1]
    };
    let last = plane.len() - 1;
    let outer = &plane[..unit_dim];
    let middle = &plane[unit_dim + 1..last];
    let rows = plane[unit_dim].size as usize;
    let Dim {
        size: cols,
        stride: col_stride,
    } = plane[last];
    let cols = cols as usize;
    let unit_bytes = run * std::mem::size_of::<T>();
    let tile = transpose_tile(unit_bytes);
    let staged = unit_bytes < 64;
    let middle_len: usize = middle.iter().map(|dim| dim.size as usize).product();
    let row_len = middle_len * cols * run; // output elements per value of A
    dst.par_chunks_mut(rows * row_len)
        .enumerate()
        .for_each(|(outer_index, block)| {
            let outer_base = Cursor::at(outer, layout.offset, outer_index as u64).offset();
            block
                .par_chunks_mut(tile * row_len)
                .enumerate()
                .for_each_init(
                    || vec![T::default(); if staged { tile * tile * run } else { 0 }],
                    |staging, (band_index, band)| {
                        let band_rows = band.len() / row_len;
                        let mut middle_cursor = Cursor::at(middle, outer_base, 0);
                        for middle_index in 0..middle_len {
                            let base = middle_cursor.offset() + (band_index * tile * run) as i64;
                            let out_unit = |r: usize, c: usize| {
                                ((r * middle_len + middle_index) * cols + c) * run
                            };
                            for col0 in (0..cols).step_by(tile) {
                                let width = tile.min(cols - col0);
                                let column_start =
                                    |c: usize| (base + (col0 + c) as i64 * col_stride) as usize;
                                if !staged {
                                    for c in 0..width {
                                        let from = column_start(c);
                                        for r in 0..band_rows {
                                            let to = out_unit(r, col0 + c);
                                            band[to..to + run].copy_from_slice(
                                                &src[from + r * run..from + (r + 1) * run],
                                            );
                                        }
                                    }
                                    continue;
                                }
                                // staging[(c * tile + r) * run ..] holds unit (r, c) of the block.
                                let column_len = band_rows * run;
                                for c in 0..width {
                                    let from = column_start(c);
                                    staging[c * tile * run..c * tile * run + column_len]
                                        .copy_from_slice(&src[from..from + column_len]);
                                }
                                for r in 0..band_rows {
                                    let to = out_unit(r, col0);
                                    let out_row = &mut band[to..to + width * run];
                                    if run == 1 {
                                        for (c, slot) in out_row.iter_mut().enumerate() {
                                            *slot = staging[c * tile + r];
                                        }
                                    } else {
                                        for (c, unit) in out_row.chunks_exact_mut(run).enumerate() {
                                            let at = (c * tile + r) * run;
                                            unit.copy_from_slice(&staging[at..at + run]);
                                        }
                                    }
                                }
                            }
                            middle_cursor.advance();
                        }
                    },
                );
        });
}

/// The processor's marketing name from `/proc/cpuinfo`, or the architecture elsewhere.
fn cpu_model_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::reference::reference_gather;

    fn copy_with_engine<T: Element>(
        engine: &CpuEngine,
        layout: &StridedLayout,
        dtype: DType,
    ) -> (Vec<T>, Vec<T>) {
        let plan = plan_copy(layout, dtype).unwrap();
        let mut src = vec![T::default(); layout.footprint_elems().unwrap() as usize];
        fill_pattern(&mut src);
        let mut dst = vec![T::default(); layout.numel() as usize];
        engine.copy(&plan, &src, &mut dst);
        (src, dst)
    }

    #[test]
    fn every_strategy_matches_the_reference_gather() {
        let engine = CpuEngine::new(Some(2)).unwrap();
        let layouts = [
            StridedLayout::contiguous(&[3, 5000]), // dense
            StridedLayout::contiguous(&[4, 300, 6, 40])
                .transpose(1, 2)
                .unwrap(), // row gather
            StridedLayout::contiguous(&[300, 200])
                .transpose(0, 1)
                .unwrap(), // transpose
            StridedLayout::contiguous(&[3, 70, 5, 130])
                .permute(&[0, 3, 2, 1])
                .unwrap(), // batched transpose
            StridedLayout::new(vec![100, 700], vec![2000, 3], 5), // scalar gather
            StridedLayout::new(vec![90_000], vec![2], 1), // 1-D strided, many chunks
            StridedLayout::new(vec![70, 3000], vec![1, 0], 0), // broadcast innermost
            StridedLayout::new(vec![50, 4000], vec![0, 1], 0), // broadcast rows
            StridedLayout::new(vec![300, 200], vec![-1, 300], 299), // reversed transpose
        ];
        for layout in &layouts {
            let (src, dst) = copy_with_engine::<u16>(&engine, layout, DType::BF16);
            assert!(dst == reference_gather(layout, &src), "bf16 {layout}");
            let (src, dst) = copy_with_engine::<u64>(&engine, layout, DType::F64);
            assert!(dst == reference_gather(layout, &src), "f64 {layout}");
        }
    }

    #[test]
    fn rows_of_a_head_permute_are_copied_as_a_transpose_of_runs() {
        let canonical = |layout: StridedLayout| plan_copy(&layout, DType::BF16).unwrap().layout;
        // (B,H,S,D) -> (B,S,H,D): S rows are adjacent in the source (stride D).
        let bshd = StridedLayout::contiguous(&[4, 16, 2048, 128])
            .transpose(1, 2)
            .unwrap();
        assert_eq!(run_transpose_dim(&canonical(bshd)), Some(1));
        // x[:, :3]: a plain row gather, rows never adjacent.
        assert_eq!(
            run_transpose_dim(&canonical(StridedLayout::new(vec![4, 3], vec![5, 1], 0))),
            None
        );
        // Broadcast rows: nothing to gain.
        assert_eq!(
            run_transpose_dim(&canonical(StridedLayout::new(
                vec![6, 8, 4],
                vec![4, 0, 1],
                0
            ))),
            None
        );
    }

    #[test]
    fn transpose_tiles_hold_about_32_kib() {
        assert_eq!(transpose_tile(4), 64);
        assert_eq!(transpose_tile(1), 64);
        assert_eq!(transpose_tile(256), 8);
        assert_eq!(transpose_tile(64), 16);
        assert_eq!(transpose_tile(1 << 20), 8);
    }

    #[test]
    fn measurement_reports_bytes_and_a_checked_result() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let layout = StridedLayout::contiguous(&[64, 32])
            .transpose(0, 1)
            .unwrap();
        let m = engine
            .measure_copy(&layout, DType::F32, &MeasureOptions::quick())
            .unwrap();
        assert_eq!(m.bytes_copied, 64 * 32 * 4);
        assert_eq!(m.extra_bytes, 64 * 32 * 4);
        assert_eq!(m.runs, 3);
        assert!(m.checked);
        assert!(m.median_ms > 0.0 && m.gbps > 0.0);
        assert!(m.p10_ms <= m.median_ms && m.median_ms <= m.p90_ms);
        assert!(m.kernel.starts_with("tiled transpose"), "{}", m.kernel);
        // Already contiguous: the copy is timed but PyTorch would allocate nothing.
        let dense = engine
            .measure_copy(
                &StridedLayout::contiguous(&[64, 32]),
                DType::F32,
                &MeasureOptions::quick(),
            )
            .unwrap();
        assert_eq!(dense.extra_bytes, 0);
    }

    #[test]
    fn empty_layouts_measure_nothing() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let m = engine
            .measure_copy(
                &StridedLayout::new(vec![0, 5], vec![1, 0], 0),
                DType::U8,
                &MeasureOptions::quick(),
            )
            .unwrap();
        assert_eq!((m.bytes_copied, m.extra_bytes, m.gbps), (0, 0, 0.0));
    }

    #[test]
    fn invalid_layouts_and_huge_buffers_are_errors() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let opts = MeasureOptions::quick();
        let bad = StridedLayout::new(vec![4], vec![-1], 0);
        assert!(matches!(
            engine.measure_copy(&bad, DType::F32, &opts),
            Err(VerifyError::InvalidLayout(_))
        ));
        let huge = StridedLayout::contiguous(&[1 << 40, 1 << 20])
            .transpose(0, 1)
            .unwrap();
        assert!(matches!(
            engine.measure_copy(&huge, DType::F64, &opts),
            Err(VerifyError::TooLarge(_))
        ));
        // Under the limit, an allocation that fails is still a clean error.
        let unlimited = MeasureOptions {
            max_bytes: Some(u64::MAX),
            ..MeasureOptions::quick()
        };
        assert!(matches!(
            engine.measure_copy(&huge, DType::F64, &unlimited),
            Err(VerifyError::OutOfMemory(_) | VerifyError::TooLarge(_))
        ));
    }

    #[test]
    fn ceiling_is_a_positive_bandwidth() {
        let engine = CpuEngine::new(None).unwrap();
        let gbps = engine
            .copy_ceiling_gbps(1 << 20, &MeasureOptions::quick())
            .unwrap();
        assert!(gbps > 0.0);
        assert!(engine
            .device()
            .ends_with(&format!("({} threads)", engine.threads())));
        assert_eq!(engine.name(), "cpu");
    }
}
