//! `infer_size` (spec §2): resolve the `-1` of a shape argument and check the element
//! count. `view`, `reshape` and `unflatten` run it before any stride logic, so its errors
//! are the "shape" errors of those ops — distinct from `view`'s stride error (E_VIEW).

use super::decided::{cite_exact_division, known, Undecided};
use super::error::{torch_list, LayoutError, LayoutErrorKind};
use super::size::{Decider, Size};
use super::tri::Tri;

/// Why a shape argument is rejected. [`ShapeError::message`] gives PyTorch's exact text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ShapeError<S> {
    /// Two or more `-1` entries.
    MultipleInferred,
    /// An entry below `-1`.
    InvalidDimension {
        size: S,
        index: usize,
        shape: Vec<S>,
    },
    /// The shape does not hold exactly the tensor's elements (or no `-1` value fits).
    NumelMismatch { shape: Vec<S>, numel: S },
    /// A `-1` next to a zero-size entry: any value would do, so PyTorch refuses.
    AmbiguousInferred { shape: Vec<S> },
    /// Symbolic sizes prevent deciding whether the shape is valid.
    Undecided,
}

impl<S: Size> ShapeError<S> {
    /// PyTorch's message (a `RuntimeError` in Python) for concrete sizes.
    pub fn message(&self) -> String {
        match self {
            ShapeError::MultipleInferred => "only one dimension can be inferred".to_string(),
            ShapeError::InvalidDimension { size, index, shape } => {
                format!("invalid shape dimension {size} at index {index} of shape {}", torch_list(shape))
            }
            ShapeError::NumelMismatch { shape, numel } => {
                format!("shape '{}' is invalid for input of size {numel}", torch_list(shape))
            }
            ShapeError::AmbiguousInferred { shape } => format!(
                "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
                torch_list(shape)
            ),
            ShapeError::Undecided => LayoutError::from(Undecided).message,
        }
    }

    /// The error as a [`LayoutError`], for ops that report every failure the same way.
    pub fn to_layout_error(&self) -> LayoutError {
        let kind = match self {
            ShapeError::MultipleInferred
            | ShapeError::InvalidDimension { .. }
            | ShapeError::AmbiguousInferred { .. } => LayoutErrorKind::InvalidArgument,
            ShapeError::NumelMismatch { .. } => LayoutErrorKind::ShapeMismatch,
            ShapeError::Undecided => LayoutErrorKind::Undecided,
        };
        LayoutError::new(kind, self.message())
    }
}

impl<S> From<Undecided> for ShapeError<S> {
    fn from(_: Undecided) -> Self {
        ShapeError::Undecided
    }
}

impl<S: Size> From<ShapeError<S>> for LayoutError {
    fn from(error: ShapeError<S>) -> Self {
        error.to_layout_error()
    }
}

/// Resolve `shape` (where `S::lit(-1)` means "infer") against a tensor of `numel` elements.
///
/// Checks run in PyTorch's order, so the first failing one names the error: entries left to
/// right (a second `-1` → [`ShapeError::MultipleInferred`], an entry `≤ -2` →
/// [`ShapeError::InvalidDimension`]), then the element count, then the zero-size ambiguity.
pub fn infer_size<S: Size>(shape: &[S], numel: &S, dec: &Decider) -> Result<Vec<S>, ShapeError<S>> {
    let minus_one = S::lit(-1);
    let zero = S::lit(0);
    let mut inferred_index = None;
    let mut known_product = S::lit(1);
    for (index, size) in shape.iter().enumerate() {
        if known(dec.eq(size, &minus_one))? {
            if inferred_index.is_some() {
                return Err(ShapeError::MultipleInferred);
            }
            inferred_index = Some(index);
        } else if known(dec.le(&zero, size))? {
            known_product = known_product.mul(size);
        } else {
            return Err(ShapeError::InvalidDimension {
                size: size.clone(),
                index,
                shape: shape.to_vec(),
            });
        }
    }

    let mut resolved = shape.to_vec();
    match inferred_index {
        None => {
            if !known(dec.eq(numel, &known_product))? {
                return Err(ShapeError::NumelMismatch {
                    shape: shape.to_vec(),
                    numel: numel.clone(),
                });
            }
        }
        Some(index) => {
            // PyTorch: ok ⇔ (product > 0 and numel % product == 0) or numel == product.
            // Kleene: with symbolic sizes `numel == product` is often undecidable while the
            // division is exact (`B·T·C` by `B·T·H`), and either answer suffices.
            let equal = dec.eq(numel, &known_product);
            let fits = if equal.is_yes() {
                Tri::Yes
            } else {
                let positive = dec.lt(&zero, &known_product);
                let divisible = if positive.is_no() {
                    Tri::No
                } else {
                    divides(&known_product, numel, dec)
                };
                equal.or(positive.and(divisible))
            };
            if !known(fits)? {
                return Err(ShapeError::NumelMismatch {
                    shape: shape.to_vec(),
                    numel: numel.clone(),
                });
            }
            if known(dec.eq_lit(&known_product, 0))? {
                return Err(ShapeError::AmbiguousInferred {
                    shape: shape.to_vec(),
                });
            }
            if !equal.is_yes() {
                cite_exact_division(&known_product, numel, dec);
            }
            resolved[index] = numel.floordiv(&known_product);
        }
    }
    Ok(resolved)
}

/// Does `divisor` (known positive) divide `dividend` exactly? Decided as
/// `(dividend // divisor) · divisor == dividend`, which the symbolic normal form can
/// settle when the quotient is expressible.
fn divides<S: Size>(divisor: &S, dividend: &S, dec: &Decider) -> Tri {
    let quotient = dividend.floordiv(divisor);
    dec.eq(&quotient.mul(divisor), dividend)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infer(shape: &[i64], numel: i64) -> Result<Vec<i64>, String> {
        infer_size(shape, &numel, &Decider::concrete()).map_err(|e| e.message())
    }

    #[test]
    fn resolves_minus_one() {
        assert_eq!(infer(&[-1, 5], 15), Ok(vec![3, 5]));
        assert_eq!(infer(&[3, -1], 15), Ok(vec![3, 5]));
        // (E) empty(0).view(10, 3, -1) → [10, 3, 0] because 0 % 30 == 0.
        assert_eq!(infer(&[10, 3, -1], 0), Ok(vec![10, 3, 0]));
        // (E) randn(()).reshape(-1).shape == (1,)
        assert_eq!(infer(&[-1], 1), Ok(vec![1]));
        assert_eq!(infer(&[1, -1], 0), Ok(vec![1, 0]));
    }

    #[test]
    fn torch_messages_in_torch_order() {
        assert_eq!(
            infer(&[15, -1, -1], 15),
            Err("only one dimension can be inferred".into())
        );
        assert_eq!(
            infer(&[-2, 12], 24),
            Err("invalid shape dimension -2 at index 0 of shape [-2, 12]".into())
        );
        assert_eq!(
            infer(&[7, -1], 15),
            Err("shape '[7, -1]' is invalid for input of size 15".into())
        );
        assert_eq!(
            infer(&[15, 0], 15),
            Err("shape '[15, 0]' is invalid for input of size 15".into())
        );
        assert_eq!(
            infer(&[2], 1),
            Err("shape '[2]' is invalid for input of size 1".into())
        );
        assert_eq!(
            infer(&[-1, 0], 0),
            Err("cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous".into())
        );
    }

    #[test]
    fn errors_convert_to_layout_errors() {
        let err: LayoutError = infer_size(&[7i64, -1], &15, &Decider::concrete())
            .unwrap_err()
            .into();
        assert_eq!(err.kind, LayoutErrorKind::ShapeMismatch);
    }
}
