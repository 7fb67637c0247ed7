//! Memory budgets: what a measurement will allocate, computed with checked arithmetic
//! *before* anything is allocated, and refused above a limit.
//!
//! A copy of `B = 10^12` rows asks for terabytes; allocating first and failing later means
//! the kernel's OOM killer ends the process after it has swapped the machine to a halt
//! (Linux overcommits, so `try_reserve` succeeds and the page faults kill). So every engine
//! asks [`admit`] first, with the byte count of the buffers it is about to allocate, and
//! the callers ([`super::findings`], `stridelint replay`) ask [`precheck`] before they even
//! select an engine. The limit is `--verify-max-bytes` when given, else
//! [`DEFAULT_FRACTION`] of the memory available now ([`available_memory`]: `MemAvailable`,
//! and the cgroup's `memory.max` minus `memory.current` when lower).

use super::dtype::DType;
use super::error::VerifyError;
use super::measurement::MeasureOptions;
use super::replay::format_bytes;
use super::strided::StridedLayout;

/// Share of the available memory a measurement may use by default.
pub const DEFAULT_FRACTION: f64 = 0.5;

/// Used when the available memory cannot be read (no `/proc`): 4 GiB.
const FALLBACK_LIMIT: u64 = 4 << 30;

/// The limit `opts` sets (`--verify-max-bytes`), or the default one, with how it was set,
/// for messages.
pub fn limit(opts: &MeasureOptions) -> (u64, String) {
    match opts.max_bytes {
        Some(bytes) => (bytes, "--verify-max-bytes".to_string()),
        None => match available_memory() {
            Some(available) => (
                (available as f64 * DEFAULT_FRACTION) as u64,
                format!(
                    "half of the {} of memory available; --verify-max-bytes sets another limit",
                    format_bytes(available)
                ),
            ),
            None => (
                FALLBACK_LIMIT,
                "the default when the available memory is unknown; --verify-max-bytes sets another limit"
                    .to_string(),
            ),
        },
    }
}

/// Refuses `bytes` of buffers for `what` above the limit of `opts`.
pub fn admit(bytes: u64, what: &str, opts: &MeasureOptions) -> Result<(), VerifyError> {
    let (max, why) = limit(opts);
    if bytes > max {
        return Err(VerifyError::TooLarge(format!(
            "{what} would allocate {} ({bytes} bytes), more than the limit of {} ({why})",
            format_bytes(bytes),
            format_bytes(max)
        )));
    }
    Ok(())
}

/// `a · b` or a refusal naming `what` overflowed.
pub fn checked_mul(a: u64, b: u64, what: &str) -> Result<u64, VerifyError> {
    a.checked_mul(b).ok_or_else(|| overflow(what))
}

/// `a + b` or a refusal naming `what` overflowed.
pub fn checked_add(a: u64, b: u64, what: &str) -> Result<u64, VerifyError> {
    a.checked_add(b).ok_or_else(|| overflow(what))
}

fn overflow(what: &str) -> VerifyError {
    VerifyError::TooLarge(format!("{what} overflows 64-bit arithmetic"))
}

/// Bytes of the layout's storage (its footprint) and of its contiguous copy, for `dtype`.
pub fn buffer_bytes(layout: &StridedLayout, dtype: DType) -> Result<(u64, u64), VerifyError> {
    let size = dtype.size_bytes() as u64;
    let source = checked_mul(layout.footprint_elems()?, size, "the source buffer's size")?;
    let copy = checked_mul(layout.numel(), size, "the copy's size")?;
    Ok((source, copy))
}

/// What the CPU engine allocates to measure `layout`: the source, the copy, and (for the
/// copy ceiling) a memcpy's source and destination of the copy's size.
pub fn cpu_bytes(
    layout: &StridedLayout,
    dtype: DType,
    with_ceiling: bool,
) -> Result<u64, VerifyError> {
    let (source, copy) = buffer_bytes(layout, dtype)?;
    let ceiling = if with_ceiling {
        checked_mul(copy, 2, "the ceiling buffers' size")?
    } else {
        0
    };
    checked_add(
        checked_add(source, copy, "the buffers' size")?,
        ceiling,
        "the buffers' size",
    )
}

/// The least any engine allocates on the host for `layout` (the source is filled there and
/// the copy checked there): the check before an engine is even chosen.
pub fn precheck(
    layout: &StridedLayout,
    dtype: DType,
    opts: &MeasureOptions,
) -> Result<(), VerifyError> {
    layout.validate()?;
    let (source, copy) = buffer_bytes(layout, dtype)?;
    let bytes = checked_add(source, copy, "the buffers' size")?;
    admit(
        bytes,
        &format!("measuring the copy of {layout} ({dtype})"),
        opts,
    )
}

/// `bytes · layers`, the bytes a copy moves per forward pass, or a refusal.
pub fn per_forward_bytes(bytes: u64, layers: u64) -> Result<u64, VerifyError> {
    bytes
        .checked_mul(layers)
        .ok_or_else(|| overflow(&format!("{bytes} bytes × {layers} layers")))
}

/// Memory available to this process now, in bytes: `MemAvailable` from `/proc/meminfo`,
/// lowered to what the cgroup (v2 `memory.max` − `memory.current`, v1
/// `memory.limit_in_bytes` − `memory.usage_in_bytes`) still allows. `None` off Linux.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let available = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map(|kib| kib.saturating_mul(1024))?;
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
    };
    let cgroup = [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ]
    .iter()
    .find_map(|(max, current)| Some(read(max)?.saturating_sub(read(current)?)));
    Some(cgroup.map_or(available, |left| left.min(available)))
}

/// `16G`, `512MiB`, `1.5GB`, `1000000`: a byte count for `--verify-max-bytes`. `K`/`M`/`G`/`T`
/// and `KiB`…`TiB` are powers of 1024, `KB`…`TB` powers of 1000.
pub fn parse_byte_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{text}` (use bytes, K/M/G/T, KiB…TiB or KB…TB)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count such as 8G or 500000000"))?;
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}` is not a byte count between 1 and 2^64"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(bytes: u64) -> MeasureOptions {
        MeasureOptions {
            max_bytes: Some(bytes),
            ..MeasureOptions::quick()
        }
    }

    #[test]
    fn byte_sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_byte_size("1000"), Ok(1000));
        assert_eq!(parse_byte_size("8G"), Ok(8 << 30));
        assert_eq!(parse_byte_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_byte_size("1.5 GB"), Ok(1_500_000_000));
        assert!(parse_byte_size("0").is_err());
        assert!(parse_byte_size("lots").is_err());
        assert!(parse_byte_size("5 parsecs").is_err());
        assert!(parse_byte_size("99999999999T").is_err());
    }

    #[test]
    fn budgets_count_every_buffer_and_refuse_above_the_limit() {
        // (4, 6) transposed, f32: 96 bytes of storage, 96 bytes of copy, 192 for the ceiling.
        let layout = StridedLayout::contiguous(&[4, 6]).transpose(0, 1).unwrap();
        assert_eq!(cpu_bytes(&layout, DType::F32, true), Ok(384));
        assert_eq!(cpu_bytes(&layout, DType::F32, false), Ok(192));
        assert!(precheck(&layout, DType::F32, &limited(192)).is_ok());
        let refused = precheck(&layout, DType::F32, &limited(191)).unwrap_err();
        assert!(
            matches!(&refused, VerifyError::TooLarge(why) if why.contains("more than the limit of 191 B (--verify-max-bytes)")),
            "{refused}"
        );
        // 10^12 · 4 rows of f32 exceed any default limit, and refusing takes no time.
        let start = std::time::Instant::now();
        let huge = StridedLayout::contiguous(&[1_000_000_000_000, 4])
            .transpose(0, 1)
            .unwrap();
        assert!(matches!(
            precheck(&huge, DType::F32, &MeasureOptions::default()),
            Err(VerifyError::TooLarge(_))
        ));
        assert!(start.elapsed().as_secs_f64() < 0.5);
        // Byte counts that overflow are refusals too.
        let wide = StridedLayout::new(vec![1 << 61], vec![1], 0);
        assert!(matches!(
            buffer_bytes(&wide, DType::F64),
            Err(VerifyError::TooLarge(why)) if why.contains("overflows")
        ));
        assert!(per_forward_bytes(1 << 20, u64::MAX / 2).is_err());
        assert_eq!(per_forward_bytes(1 << 20, 32), Ok(32 << 20));
    }

    #[test]
    fn available_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|bytes| bytes > 0));
        }
        let (bytes, why) = limit(&MeasureOptions::default());
        assert!(bytes > 0 && !why.is_empty());
    }
}
