//! Element types, as far as a copy cares about them: a name and a size in bytes.
//!
//! A layout copy moves raw bits, so `bf16` and `f16` (and `i16`) are the same copy; the dtype
//! only decides the element size, and through it the vector width and the kernel variant.

use std::fmt;
use std::str::FromStr;

use super::error::VerifyError;

/// The element type of a tensor whose layout is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U8,
    Bool,
}

impl DType {
    /// Every dtype, for tests and help texts.
    pub const ALL: [DType; 10] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U8,
        DType::Bool,
    ];

    /// Size of one element in bytes (PyTorch's `element_size()`).
    pub fn size_bytes(self) -> usize {
        match self {
            DType::F64 | DType::I64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// The short name used in the CLI and in reports (`bf16`, `f32`, …).
    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::Bool => "bool",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = VerifyError;

    /// Accepts the short names, PyTorch's names with or without `torch.` (`torch.bfloat16`,
    /// `half`, `float`, `long`, …) and candle's (`DType::BF16`), case-insensitively.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.trim().to_ascii_lowercase();
        let name = lower
            .strip_prefix("torch.")
            .or_else(|| lower.strip_prefix("dtype::"))
            .or_else(|| lower.strip_prefix("kind::"))
            .unwrap_or(&lower);
        let dtype = match name {
            "f64" | "float64" | "double" => DType::F64,
            "f32" | "float32" | "float" => DType::F32,
            "f16" | "float16" | "half" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "i64" | "int64" | "long" => DType::I64,
            "i32" | "int32" | "int" => DType::I32,
            "i16" | "int16" | "short" => DType::I16,
            "i8" | "int8" => DType::I8,
            "u8" | "uint8" => DType::U8,
            "bool" => DType::Bool,
            _ => return Err(VerifyError::UnknownDType(text.to_string())),
        };
        Ok(dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_torch_element_size() {
        // torch: torch.empty(0, dtype=d).element_size()
        assert_eq!(DType::F64.size_bytes(), 8);
        assert_eq!(DType::F32.size_bytes(), 4);
        assert_eq!(DType::BF16.size_bytes(), 2);
        assert_eq!(DType::F16.size_bytes(), 2);
        assert_eq!(DType::I64.size_bytes(), 8);
        assert_eq!(DType::Bool.size_bytes(), 1);
    }

    #[test]
    fn parses_torch_candle_and_short_names() {
        assert_eq!("bf16".parse::<DType>(), Ok(DType::BF16));
        assert_eq!("torch.bfloat16".parse::<DType>(), Ok(DType::BF16));
        assert_eq!("half".parse::<DType>(), Ok(DType::F16));
        assert_eq!("DType::F32".parse::<DType>(), Ok(DType::F32));
        assert_eq!("Kind::Int64".parse::<DType>(), Ok(DType::I64));
        assert_eq!(" Float ".parse::<DType>(), Ok(DType::F32));
        assert!(matches!(
            "complex64".parse::<DType>(),
            Err(VerifyError::UnknownDType(_))
        ));
    }

    #[test]
    fn every_name_round_trips() {
        for dtype in DType::ALL {
            assert_eq!(dtype.name().parse::<DType>(), Ok(dtype));
        }
    }
}
