//! What a measurement is asked to do ([`MeasureOptions`]) and what it reports
//! ([`CopyMeasurement`]), plus the order statistics both engines use on their run times.

use super::plan::CopyPlan;

/// How to measure. The defaults follow `../shared/spec/cuda-engine.md` §4: warm up, then take
/// the median of many runs, because single runs on a shared machine are noise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasureOptions {
    /// Untimed runs first (page faults, caches, clocks, lazy module loading).
    pub warmup_runs: usize,
    /// Timed runs; the report gives their median and 10th/90th percentiles.
    pub timed_runs: usize,
    /// CPU worker threads; `None` is every available core.
    pub threads: Option<usize>,
    /// Compare the copy with the reference gather (see [`super::reference`]).
    pub check: bool,
    /// Refuse a measurement whose buffers would exceed this many bytes (`--verify-max-bytes`);
    /// `None`: half of the memory available (see [`super::budget`]).
    pub max_bytes: Option<u64>,
}

impl Default for MeasureOptions {
    fn default() -> Self {
        MeasureOptions {
            warmup_runs: 5,
            timed_runs: 50,
            threads: None,
            check: true,
            max_bytes: None,
        }
    }
}

impl MeasureOptions {
    /// Few runs, for tests that care about correctness rather than time.
    pub fn quick() -> Self {
        MeasureOptions {
            warmup_runs: 1,
            timed_runs: 3,
            ..MeasureOptions::default()
        }
    }
}

/// The result of materialising one layout into a new contiguous buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyMeasurement {
    /// Bytes written to the new buffer (`numel · element size`).
    pub bytes_copied: u64,
    /// Memory PyTorch's `.contiguous()` would allocate: `bytes_copied`, or 0 when the view is
    /// already contiguous and no copy happens.
    pub extra_bytes: u64,
    pub median_ms: f64,
    pub p10_ms: f64,
    pub p90_ms: f64,
    pub runs: usize,
    /// `(distinct bytes read + bytes written) / median time`, in 10^9 bytes per second.
    pub gbps: f64,
    /// Which copy path ran, e.g. `row gather (runs of 256 B, 16-byte vectors)`.
    pub kernel: String,
    /// Whether the result was compared with the reference gather (and matched: a mismatch
    /// is an error, not a measurement).
    pub checked: bool,
}

impl CopyMeasurement {
    /// The measurement of `plan`'s copy from its run times: the byte counts and bandwidth
    /// follow from the plan, so both engines report them identically.
    pub fn from_timing(
        plan: &CopyPlan,
        timing: TimingSummary,
        kernel: String,
        checked: bool,
    ) -> Self {
        let bytes_copied = plan.bytes_written();
        CopyMeasurement {
            bytes_copied,
            extra_bytes: if plan.needs_copy() { bytes_copied } else { 0 },
            median_ms: timing.median_ms,
            p10_ms: timing.p10_ms,
            p90_ms: timing.p90_ms,
            runs: timing.runs,
            gbps: gigabytes_per_second(plan.bytes_read() + bytes_copied, timing.median_ms),
            kernel,
            checked,
        }
    }
}

/// Median and spread of a set of run times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingSummary {
    pub median_ms: f64,
    pub p10_ms: f64,
    pub p90_ms: f64,
    pub runs: usize,
}

impl TimingSummary {
    /// Order statistics of `samples_ms` (linear interpolation between closest ranks, as
    /// NumPy's default `percentile`). An empty slice gives zeros.
    pub fn from_samples(samples_ms: &[f64]) -> Self {
        let mut sorted = samples_ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        TimingSummary {
            median_ms: percentile(&sorted, 0.5),
            p10_ms: percentile(&sorted, 0.1),
            p90_ms: percentile(&sorted, 0.9),
            runs: sorted.len(),
        }
    }
}

fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        len => {
            let position = fraction * (len - 1) as f64;
            let below = position.floor() as usize;
            let above = position.ceil() as usize;
            let weight = position - below as f64;
            sorted[below] * (1.0 - weight) + sorted[above] * weight
        }
    }
}

/// `bytes / ms` in 10^9 bytes per second (the unit of `bandwidthTest` and of PyTorch
/// benchmark tables); 0 when no time was measured.
pub fn gigabytes_per_second(bytes: u64, ms: f64) -> f64 {
    if ms > 0.0 {
        bytes as f64 / (ms * 1e6)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_like_numpy() {
        // numpy.percentile([1, 2, 3, 4, 10], [10, 50, 90]) == [1.4, 3.0, 7.6]
        let t = TimingSummary::from_samples(&[10.0, 3.0, 1.0, 4.0, 2.0]);
        assert!((t.p10_ms - 1.4).abs() < 1e-12);
        assert_eq!(t.median_ms, 3.0);
        assert!((t.p90_ms - 7.6).abs() < 1e-12);
        assert_eq!(t.runs, 5);
        // numpy.median([1, 2, 3, 4]) == 2.5
        assert_eq!(
            TimingSummary::from_samples(&[4.0, 1.0, 3.0, 2.0]).median_ms,
            2.5
        );
        assert_eq!(TimingSummary::from_samples(&[]).median_ms, 0.0);
    }

    #[test]
    fn bandwidth_counts_decimal_gigabytes() {
        // 1 GB in 1 ms is 1000 GB/s.
        assert_eq!(gigabytes_per_second(1_000_000_000, 1.0), 1000.0);
        assert_eq!(gigabytes_per_second(123, 0.0), 0.0);
    }
}
