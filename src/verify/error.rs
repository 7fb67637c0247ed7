//! The one error type of the verify engine.
//!
//! Every failure is reported as a value with a one-line, human-readable reason: the CLI prints
//! it as is (`--verify` falls back to the CPU with that line as the explanation), so the
//! messages name the cause and, where there is one, the fix.

use std::fmt;

/// Why a measurement could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyError {
    /// The layout itself is malformed (rank mismatch, negative size, storage before index 0, …).
    InvalidLayout(String),
    /// A dtype name that the engine does not know.
    UnknownDType(String),
    /// The layout is valid but this engine cannot run it (e.g. more dimensions than a kernel
    /// parameter block holds after coalescing).
    Unsupported(String),
    /// Host or device memory for the buffers could not be allocated.
    OutOfMemory(String),
    /// Refused before anything was allocated: the buffers would exceed the memory limit, or
    /// a size computation overflows 64-bit arithmetic (see [`super::budget`]).
    TooLarge(String),
    /// The CUDA engine cannot be used here: no driver, no GPU, no NVRTC, a compile failure…
    /// The text is the one-line reason shown to the user.
    CudaUnavailable(String),
    /// A CUDA call failed after the engine was set up.
    Cuda(String),
    /// The copy produced wrong data: the engine has a bug, the measurement is void.
    Mismatch(String),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::InvalidLayout(why) => write!(f, "invalid layout: {why}"),
            VerifyError::UnknownDType(name) => write!(
                f,
                "unknown dtype `{name}` (expected one of f64, f32, f16, bf16, i64, i32, i16, i8, u8, bool)"
            ),
            VerifyError::Unsupported(why) => write!(f, "unsupported layout for this engine: {why}"),
            VerifyError::OutOfMemory(why) => write!(f, "out of memory: {why}"),
            VerifyError::TooLarge(why) => write!(f, "refused: {why}"),
            VerifyError::CudaUnavailable(why) => write!(f, "CUDA unavailable: {why}"),
            VerifyError::Cuda(why) => write!(f, "CUDA error: {why}"),
            VerifyError::Mismatch(why) => write!(f, "copy produced wrong data: {why}"),
        }
    }
}

impl std::error::Error for VerifyError {}
