//! The replay helper the CLI calls (`stridelint replay`, `--verify`): measure one layout on an
//! engine, put it next to the device's copy ceiling, and say it in one line.

use std::fmt;

use super::dtype::DType;
use super::error::VerifyError;
use super::measurement::{CopyMeasurement, MeasureOptions};
use super::strided::StridedLayout;
use super::Engine;

/// One replayed layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub layout: StridedLayout,
    pub dtype: DType,
    /// `cpu` or `cuda`.
    pub engine: &'static str,
    pub device: String,
    pub measurement: CopyMeasurement,
    /// The device's copy ceiling at the same size (GB/s), when a copy was measured.
    pub ceiling_gbps: Option<f64>,
    /// E.g. `copies 512.0 MiB in 1.84 ms (585 GB/s, 58% of this device's copy ceiling)`.
    pub summary: String,
}

/// Measures `layout` of `dtype` on `engine`, and the engine's copy ceiling at the same size.
pub fn replay(
    engine: &dyn Engine,
    layout: &StridedLayout,
    dtype: DType,
    opts: &MeasureOptions,
) -> Result<Replay, VerifyError> {
    let (measurement, ceiling_gbps) = engine.measure_with_ceiling(layout, dtype, opts)?;
    Ok(Replay {
        layout: layout.clone(),
        dtype,
        engine: engine.name(),
        device: engine.device(),
        summary: summarize(&measurement, ceiling_gbps),
        measurement,
        ceiling_gbps,
    })
}

/// The one-line verdict for a measurement.
pub fn summarize(measurement: &CopyMeasurement, ceiling_gbps: Option<f64>) -> String {
    let m = measurement;
    if m.bytes_copied == 0 {
        return "has no elements: nothing to copy".to_string();
    }
    let speed = match ceiling_gbps {
        Some(ceiling) if ceiling > 0.0 => format!(
            "{:.0} GB/s, {:.0}% of this device's copy ceiling",
            m.gbps,
            100.0 * m.gbps / ceiling
        ),
        _ => format!("{:.0} GB/s", m.gbps),
    };
    if m.extra_bytes == 0 {
        format!(
            "is already contiguous: no copy is made (copying its {} would take {}, {speed})",
            format_bytes(m.bytes_copied),
            format_ms(m.median_ms)
        )
    } else {
        format!(
            "copies {} in {} ({speed})",
            format_bytes(m.bytes_copied),
            format_ms(m.median_ms)
        )
    }
}

/// The cost of a copy that happens once per layer, over one forward pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardCost {
    pub layers: u64,
    pub bytes: u64,
    pub extra_bytes: u64,
    pub ms: f64,
}

/// Scales one measurement to `layers` occurrences per forward pass. Callers refuse totals
/// beyond 64 bits first ([`super::budget::per_forward_bytes`]); this saturates rather than
/// wrap should one slip through.
pub fn per_forward(measurement: &CopyMeasurement, layers: u64) -> ForwardCost {
    ForwardCost {
        layers,
        bytes: measurement.bytes_copied.saturating_mul(layers),
        extra_bytes: measurement.extra_bytes.saturating_mul(layers),
        ms: measurement.median_ms * layers as f64,
    }
}

impl fmt::Display for ForwardCost {
    /// `per forward pass (32 layers): 16.0 GiB copied in 58.9 ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = if self.layers == 1 { "layer" } else { "layers" };
        if self.extra_bytes == 0 {
            write!(f, "per forward pass ({} {noun}): no copy", self.layers)
        } else {
            write!(
                f,
                "per forward pass ({} {noun}): {} copied in {}",
                self.layers,
                format_bytes(self.bytes),
                format_ms(self.ms)
            )
        }
    }
}

/// `512.0 MiB`, `3.0 KiB`, `12 B` (binary units, one decimal).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `1.84 ms`, `12.3 µs`, `1.20 s`: three significant digits in the natural unit.
pub fn format_ms(ms: f64) -> String {
    let (value, unit) = if ms >= 1000.0 {
        (ms / 1000.0, "s")
    } else if ms >= 1.0 {
        (ms, "ms")
    } else {
        (ms * 1000.0, "µs")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::cpu::CpuEngine;

    fn measurement(bytes: u64, extra: u64, ms: f64, gbps: f64) -> CopyMeasurement {
        CopyMeasurement {
            bytes_copied: bytes,
            extra_bytes: extra,
            median_ms: ms,
            p10_ms: ms,
            p90_ms: ms,
            runs: 50,
            gbps,
            kernel: "row gather".into(),
            checked: true,
        }
    }

    #[test]
    fn summary_reads_like_the_cli_promises() {
        let m = measurement(512 << 20, 512 << 20, 1.84, 585.0);
        assert_eq!(
            summarize(&m, Some(1008.6)),
            "copies 512.0 MiB in 1.84 ms (585 GB/s, 58% of this device's copy ceiling)"
        );
        assert_eq!(
            summarize(&m, None),
            "copies 512.0 MiB in 1.84 ms (585 GB/s)"
        );
        let dense = measurement(4096, 0, 0.0123, 666.0);
        assert_eq!(
            summarize(&dense, None),
            "is already contiguous: no copy is made (copying its 4.0 KiB would take 12.3 µs, 666 GB/s)"
        );
        assert_eq!(
            summarize(&measurement(0, 0, 0.0, 0.0), None),
            "has no elements: nothing to copy"
        );
    }

    #[test]
    fn per_forward_scales_by_layers() {
        let m = measurement(512 << 20, 512 << 20, 1.84, 585.0);
        let cost = per_forward(&m, 32);
        assert_eq!(cost.bytes, 16 << 30);
        assert!((cost.ms - 58.88).abs() < 1e-9);
        assert_eq!(
            cost.to_string(),
            "per forward pass (32 layers): 16.0 GiB copied in 58.9 ms"
        );
        let none = per_forward(&measurement(64, 0, 0.001, 1.0), 1);
        assert_eq!(none.to_string(), "per forward pass (1 layer): no copy");
    }

    #[test]
    fn units_format_with_three_significant_digits() {
        assert_eq!(format_bytes(12), "12 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(3 << 30), "3.0 GiB");
        assert_eq!(format_ms(1234.0), "1.23 s");
        assert_eq!(format_ms(184.4), "184 ms");
        assert_eq!(format_ms(0.5), "500 µs");
    }

    #[test]
    fn replay_on_the_cpu_measures_and_summarises() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let layout = StridedLayout::contiguous(&[32, 64])
            .transpose(0, 1)
            .unwrap();
        let replayed = replay(&engine, &layout, DType::F32, &MeasureOptions::quick()).unwrap();
        assert_eq!(replayed.engine, "cpu");
        assert!(replayed.ceiling_gbps.unwrap() > 0.0);
        assert!(
            replayed.summary.starts_with("copies 8.0 KiB in "),
            "{}",
            replayed.summary
        );
        assert!(replayed.measurement.checked);
    }
}
