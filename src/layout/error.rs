//! The error every layout operation reports: a kind a lint can match on, and the exact
//! message PyTorch (or candle) prints for the same call, so a diagnostic can quote it.

use std::fmt;

use super::decided::Undecided;
use super::size::Size;

/// What went wrong, coarse enough to match on, fine enough to choose a lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutErrorKind {
    /// A dimension argument outside `[-rank, rank - 1]` (Python `IndexError`).
    DimOutOfRange,
    /// An index or start position outside a dimension (Python `IndexError`).
    IndexOutOfRange,
    /// `permute`/`movedim` arguments that are not a permutation of the dimensions.
    InvalidPermutation,
    /// Element counts or sizes that do not fit together (a reshape to the wrong number of
    /// elements, split sizes that do not add up, shapes that do not broadcast, …).
    ShapeMismatch,
    /// Any other rejected argument: negative length, non-positive step, wrong rank, ….
    InvalidArgument,
    /// `view` cannot express the result with strides (PyTorch's E_VIEW).
    NotViewable,
    /// Symbolic sizes prevent deciding the outcome; nothing is claimed.
    Undecided,
}

impl LayoutErrorKind {
    /// The Python exception PyTorch raises for this kind of error.
    pub fn python_exception(self) -> &'static str {
        match self {
            LayoutErrorKind::DimOutOfRange | LayoutErrorKind::IndexOutOfRange => "IndexError",
            _ => "RuntimeError",
        }
    }
}

/// A rejected layout operation. For concrete sizes `message` is the library's own text,
/// character for character; with symbolic sizes the numbers are printed symbolically.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LayoutError {
    pub kind: LayoutErrorKind,
    pub message: String,
}

impl LayoutError {
    pub fn new(kind: LayoutErrorKind, message: impl Into<String>) -> Self {
        LayoutError {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        LayoutError::new(LayoutErrorKind::InvalidArgument, message)
    }

    pub(crate) fn shape_mismatch(message: impl Into<String>) -> Self {
        LayoutError::new(LayoutErrorKind::ShapeMismatch, message)
    }

    pub(crate) fn index_out_of_range(message: impl Into<String>) -> Self {
        LayoutError::new(LayoutErrorKind::IndexOutOfRange, message)
    }

    pub fn is_undecided(&self) -> bool {
        self.kind == LayoutErrorKind::Undecided
    }
}

impl From<Undecided> for LayoutError {
    fn from(_: Undecided) -> Self {
        LayoutError::new(
            LayoutErrorKind::Undecided,
            "the outcome depends on symbolic sizes that cannot be compared under the current assumptions",
        )
    }
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LayoutError {}

/// A list as PyTorch prints an `IntArrayRef` in messages: `[2, 3]` (`[]` when empty).
pub(crate) fn torch_list<S: Size>(values: &[S]) -> String {
    let mut out = String::from("[");
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&value.to_string());
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_list_matches_intarrayref_printing() {
        assert_eq!(torch_list::<i64>(&[]), "[]");
        assert_eq!(torch_list(&[15i64, -1, -1]), "[15, -1, -1]");
    }

    #[test]
    fn index_errors_are_python_index_errors() {
        assert_eq!(
            LayoutErrorKind::DimOutOfRange.python_exception(),
            "IndexError"
        );
        assert_eq!(
            LayoutErrorKind::NotViewable.python_exception(),
            "RuntimeError"
        );
    }
}
