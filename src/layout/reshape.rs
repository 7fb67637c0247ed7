//! The `view` / `reshape` family (spec §4): `view`, `reshape`, `flatten`, `unflatten`,
//! `ravel`, `contiguous`. Each answers two questions a lint needs: does the call fail, and
//! does it silently copy.

use super::assumption::Assumption;
use super::contiguity::{strides_for_format, MemoryFormat};
use super::decided::product;
use super::error::{torch_list, LayoutError, LayoutErrorKind};
use super::infer_size::{infer_size, ShapeError};
use super::layout::Layout;
use super::size::{Decider, Size};
use super::tri::Tri;
use super::view::{too_few_dims_for_blocks, view_strides, ViewStrides};
use super::wrap_dim::{wrap_dim, wrap_existing_dim};

/// PyTorch's `view` error (E_VIEW), verbatim.
pub const E_VIEW: &str = "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.";

/// The answer of [`view`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ViewOutcome<S> {
    /// The view succeeds with this layout (same offset as the input).
    View(Layout<S>),
    /// The shape argument itself is invalid (`infer_size` fails): `reshape` fails too.
    InvalidShape(ShapeError<S>),
    /// The shape is fine but no strides express it: `view` raises [`E_VIEW`] (and
    /// `reshape` would copy). `shape` is the resolved target.
    NotViewable { shape: Vec<S> },
    /// Symbolic sizes prevent deciding.
    Unknown,
}

impl<S: Size> ViewOutcome<S> {
    /// The view's layout, or the error PyTorch raises (kind `Undecided` for `Unknown`).
    pub fn into_result(self) -> Result<Layout<S>, LayoutError> {
        match self {
            ViewOutcome::View(layout) => Ok(layout),
            ViewOutcome::InvalidShape(error) => Err(error.into()),
            ViewOutcome::NotViewable { .. } => {
                Err(LayoutError::new(LayoutErrorKind::NotViewable, E_VIEW))
            }
            ViewOutcome::Unknown => Err(ShapeError::<S>::Undecided.into()),
        }
    }

    /// PyTorch's message when the view certainly fails.
    pub fn error_message(&self) -> Option<String> {
        match self {
            ViewOutcome::InvalidShape(ShapeError::Undecided)
            | ViewOutcome::View(_)
            | ViewOutcome::Unknown => None,
            ViewOutcome::InvalidShape(error) => Some(error.message()),
            ViewOutcome::NotViewable { .. } => Some(E_VIEW.to_string()),
        }
    }
}

/// The result of an op that returns a view when it can and a fresh copy otherwise
/// (`reshape`, `flatten`, `ravel`, `contiguous`, `to`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MaybeCopy<S> {
    /// The result's shape (always known once the arguments are valid).
    pub shape: Vec<S>,
    /// The result's layout; `None` when symbolic sizes prevent deciding its strides.
    /// A copy is a new contiguous tensor with offset 0.
    pub layout: Option<Layout<S>>,
    /// Whether the op allocates and copies.
    pub copies: Tri,
}

impl<S: Size> MaybeCopy<S> {
    pub(crate) fn alias(layout: Layout<S>) -> Self {
        MaybeCopy {
            shape: layout.shape.clone(),
            layout: Some(layout),
            copies: Tri::No,
        }
    }

    pub(crate) fn copy(layout: Layout<S>) -> Self {
        MaybeCopy {
            shape: layout.shape.clone(),
            layout: Some(layout),
            copies: Tri::Yes,
        }
    }

    pub(crate) fn undecided(shape: Vec<S>, copies: Tri) -> Self {
        MaybeCopy {
            shape,
            layout: None,
            copies,
        }
    }
}

/// `x.view(shape)`: resolve `-1`, then [`view_strides`]. Never copies.
pub fn view<S: Size>(layout: &Layout<S>, shape: &[S], dec: &Decider) -> ViewOutcome<S> {
    let shape = match infer_size(shape, &layout.numel(), dec) {
        Ok(shape) => shape,
        // The element count cannot be compared, but no shape of this many dims is a view:
        // the call fails either way, on the strides if the counts match.
        Err(ShapeError::Undecided) if too_few_dims_for_blocks(layout, shape, dec) => {
            dec.record(Assumption::ElementCountMatches);
            return ViewOutcome::NotViewable {
                shape: shape.to_vec(),
            };
        }
        Err(ShapeError::Undecided) => return ViewOutcome::Unknown,
        Err(error) => return ViewOutcome::InvalidShape(error),
    };
    match view_strides(layout, &shape, dec) {
        ViewStrides::Strides(strides) => {
            ViewOutcome::View(Layout::new(shape, strides, layout.offset.clone()))
        }
        ViewStrides::NotViewable => ViewOutcome::NotViewable { shape },
        ViewStrides::Unknown => ViewOutcome::Unknown,
    }
}

/// `x.reshape(shape)`: a view whenever [`view_strides`] finds strides (always, for a
/// contiguous input), otherwise a contiguous copy. So it copies ⇔ the input is not
/// contiguous and `view_strides` finds nothing (§4).
pub fn reshape<S: Size>(
    layout: &Layout<S>,
    shape: &[S],
    dec: &Decider,
) -> Result<MaybeCopy<S>, LayoutError> {
    let resolved = match infer_size(shape, &layout.numel(), dec) {
        Err(ShapeError::Undecided) if too_few_dims_for_blocks(layout, shape, dec) => {
            // If the call returns, the counts match and no view exists: a copy.
            dec.record(Assumption::ElementCountMatches);
            return Ok(MaybeCopy::copy(Layout::contiguous(solve_minus_one(
                shape,
                &layout.numel(),
            ))));
        }
        resolved => resolved?,
    };
    Ok(reshape_resolved(layout, resolved, dec))
}

/// `shape` with its `-1` (if any) replaced by the element count over the other sizes.
fn solve_minus_one<S: Size>(shape: &[S], numel: &S) -> Vec<S> {
    let others = shape
        .iter()
        .filter(|size| size.as_lit() != Some(-1))
        .fold(S::lit(1), |acc, size| acc.mul(size));
    shape
        .iter()
        .map(|size| {
            if size.as_lit() == Some(-1) {
                numel.floordiv(&others)
            } else {
                size.clone()
            }
        })
        .collect()
}

/// `reshape` to a shape that needs no `-1` resolution and has the right element count.
///
/// For a contiguous input PyTorch calls `view`, which is the same `computeStride`; for a
/// non-contiguous one it tries `computeStride` and falls back to a copy. Either way the
/// strides, when they exist, are `computeStride`'s — so one call answers both branches.
fn reshape_resolved<S: Size>(layout: &Layout<S>, shape: Vec<S>, dec: &Decider) -> MaybeCopy<S> {
    match view_strides(layout, &shape, dec) {
        ViewStrides::Strides(strides) => {
            MaybeCopy::alias(Layout::new(shape, strides, layout.offset.clone()))
        }
        // computeStride never fails on a contiguous tensor, so this input is not contiguous.
        ViewStrides::NotViewable => MaybeCopy::copy(Layout::contiguous(shape)),
        ViewStrides::Unknown => {
            let copies = if layout.is_contiguous(dec).is_yes() {
                Tri::No
            } else {
                Tri::Unknown
            };
            MaybeCopy::undecided(shape, copies)
        }
    }
}

/// `x.flatten(start_dim, end_dim)`: `reshape` with the dims `start..=end` merged into one.
/// `start == end` returns the input itself; a 0-d input becomes shape `[1]`.
pub fn flatten<S: Size>(
    layout: &Layout<S>,
    start_dim: i64,
    end_dim: i64,
    dec: &Decider,
) -> Result<MaybeCopy<S>, LayoutError> {
    let start = wrap_dim(start_dim, layout.rank())?;
    let end = wrap_dim(end_dim, layout.rank())?;
    if start > end {
        return Err(LayoutError::invalid(
            "flatten() has invalid args: start_dim cannot come after end_dim",
        ));
    }
    if layout.rank() == 0 {
        return Ok(reshape_resolved(layout, vec![S::lit(1)], dec));
    }
    if start == end {
        return Ok(MaybeCopy::alias(layout.clone()));
    }
    // PyTorch multiplies the sizes itself instead of passing -1, avoiding the zero-size ambiguity.
    let mut shape = Vec::with_capacity(layout.rank() - (end - start));
    shape.extend_from_slice(&layout.shape[..start]);
    shape.push(product(&layout.shape[start..=end]));
    shape.extend_from_slice(&layout.shape[end + 1..]);
    Ok(reshape_resolved(layout, shape, dec))
}

/// `x.unflatten(dim, sizes)`: split one dimension into `sizes` (one `-1` allowed). A split
/// of a single dimension never crosses a chunk boundary, so this view always succeeds.
///
/// Errors: PyTorch rewords the element-count error of `infer_size` ("unflatten: Provided
/// sizes … don't multiply up …"); the two-`-1` error arrives wrapped as "unflatten got an
/// unexpected error" (read in source, not checked against torch).
pub fn unflatten<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    sizes: &[S],
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let dim = wrap_dim(dim, layout.rank())?;
    if sizes.is_empty() {
        return Err(LayoutError::invalid("unflatten: sizes must be non-empty"));
    }
    let dim = wrap_existing_dim(dim as i64, layout.rank())?;
    let dim_size = &layout.shape[dim];
    let inferred = match infer_size(sizes, dim_size, dec) {
        Ok(inferred) => inferred,
        Err(ShapeError::NumelMismatch { .. }) => {
            return Err(LayoutError::shape_mismatch(format!(
                "unflatten: Provided sizes {} don't multiply up to the size of dim {dim} ({dim_size}) in the input tensor",
                torch_list(sizes)
            )))
        }
        Err(ShapeError::MultipleInferred) => {
            return Err(LayoutError::invalid(format!("unflatten got an unexpected error:\n{}", ShapeError::<S>::MultipleInferred.message())))
        }
        Err(other) => return Err(other.into()),
    };
    let mut shape = Vec::with_capacity(layout.rank() - 1 + inferred.len());
    shape.extend_from_slice(&layout.shape[..dim]);
    shape.extend(inferred);
    shape.extend_from_slice(&layout.shape[dim + 1..]);
    view(layout, &shape, dec).into_result()
}

/// `x.ravel()` = `x.contiguous().view(-1)`: copies whenever the input is not contiguous,
/// even where `reshape(-1)` would have been a view (`x[::2]`, expanded tensors).
pub fn ravel<S: Size>(layout: &Layout<S>, dec: &Decider) -> MaybeCopy<S> {
    let flat = vec![layout.numel()];
    match layout.is_contiguous(dec) {
        Tri::Yes => match view_strides(layout, &flat, dec) {
            ViewStrides::Strides(strides) => {
                MaybeCopy::alias(Layout::new(flat, strides, layout.offset.clone()))
            }
            _ => MaybeCopy::undecided(flat, Tri::No),
        },
        Tri::No => MaybeCopy::copy(Layout::contiguous(flat)),
        Tri::Unknown => MaybeCopy::undecided(flat, Tri::Unknown),
    }
}

/// `x.contiguous()`: the input itself when contiguous, else a contiguous copy.
pub fn contiguous<S: Size>(layout: &Layout<S>, dec: &Decider) -> MaybeCopy<S> {
    match layout.is_contiguous(dec) {
        Tri::Yes => MaybeCopy::alias(layout.clone()),
        Tri::No => MaybeCopy::copy(Layout::contiguous(layout.shape.clone())),
        Tri::Unknown => MaybeCopy::undecided(layout.shape.clone(), Tri::Unknown),
    }
}

/// `x.contiguous(memory_format=format)`: the input itself when already contiguous in that
/// format, else a copy laid out in it. `preserve_format` is rejected, as in PyTorch.
pub fn contiguous_in_format<S: Size>(
    layout: &Layout<S>,
    format: MemoryFormat,
    dec: &Decider,
) -> Result<MaybeCopy<S>, LayoutError> {
    if format == MemoryFormat::Preserve {
        return Err(LayoutError::invalid(
            "preserve memory format is unsupported by the contiguous operator",
        ));
    }
    Ok(match layout.is_contiguous_in(format, dec) {
        Tri::Yes => MaybeCopy::alias(layout.clone()),
        Tri::No => {
            let strides = strides_for_format(&layout.shape, format)?;
            MaybeCopy::copy(Layout::new(layout.shape.clone(), strides, S::lit(0)))
        }
        Tri::Unknown => MaybeCopy::undecided(layout.shape.clone(), Tri::Unknown),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn dec() -> Decider<'static> {
        Decider::concrete()
    }

    #[test]
    fn view_reports_e_view_and_shape_errors() {
        let transposed = layout(&[2, 3], &[1, 2]);
        let outcome = view(&transposed, &[6], &dec());
        assert_eq!(outcome, ViewOutcome::NotViewable { shape: vec![6] });
        assert_eq!(outcome.error_message().as_deref(), Some(E_VIEW));
        let bad = view(&transposed, &[4, -1], &dec());
        assert_eq!(
            bad.error_message().as_deref(),
            Some("shape '[4, -1]' is invalid for input of size 6")
        );
        assert_eq!(
            view(&transposed, &[2, 3, 1], &dec()),
            ViewOutcome::View(layout(&[2, 3, 1], &[1, 2, 2]))
        );
    }

    #[test]
    fn view_keeps_the_offset() {
        let sliced = Layout::new(vec![2i64, 3, 4], vec![24, 4, 1], 8);
        let viewed = view(&sliced, &[2, 12], &dec()).into_result().unwrap();
        assert_eq!(viewed, Layout::new(vec![2, 12], vec![24, 1], 8));
    }

    #[test]
    fn reshape_copies_only_when_not_viewable() {
        // TV test_reshape: randn(4,4,4)[:,0,:] → (4,4)/(16,1): reshape(-1) copies, (2,2,4) is a view.
        let picked = layout(&[4, 4], &[16, 1]);
        let flat = reshape(&picked, &[-1], &dec()).unwrap();
        assert_eq!(flat.copies, Tri::Yes);
        assert_eq!(flat.layout, Some(layout(&[16], &[1])));
        let split = reshape(&picked, &[2, 2, 4], &dec()).unwrap();
        assert_eq!(split.copies, Tri::No);
        assert_eq!(split.layout, Some(layout(&[2, 2, 4], &[32, 16, 1])));
        // All-stride-0 expands are views although not contiguous.
        assert_eq!(
            reshape(&layout(&[3, 4], &[0, 0]), &[-1], &dec())
                .unwrap()
                .copies,
            Tri::No
        );
    }

    #[test]
    fn flatten_rules() {
        // TV test_flatten_nonview / test_flatten_view.
        let t = layout(&[2, 3, 3, 2], &[18, 6, 1, 3]);
        assert_eq!(flatten(&t, 1, 3, &dec()).unwrap().copies, Tri::Yes);
        let v = layout(&[1, 2, 4, 3], &[24, 12, 1, 4]);
        let flat = flatten(&v, 0, 1, &dec()).unwrap();
        assert_eq!(flat.layout, Some(layout(&[2, 4, 3], &[12, 1, 4])));
        // start == end returns the input itself, even when not contiguous.
        assert_eq!(
            flatten(&t, 1, 1, &dec()).unwrap(),
            MaybeCopy::alias(t.clone())
        );
        assert_eq!(
            flatten(&t, 2, 1, &dec()).unwrap_err().message,
            "flatten() has invalid args: start_dim cannot come after end_dim"
        );
        assert_eq!(
            flatten(&Layout::<i64>::scalar(), 0, -1, &dec())
                .unwrap()
                .shape,
            vec![1]
        );
    }

    #[test]
    fn unflatten_splits_and_rewords_errors() {
        let x = Layout::contiguous(vec![2i64, 12]);
        assert_eq!(
            unflatten(&x, 1, &[3, -1], &dec()).unwrap(),
            layout(&[2, 3, 4], &[12, 4, 1])
        );
        assert_eq!(
            unflatten(&x, 1, &[5, -1], &dec()).unwrap_err().message,
            "unflatten: Provided sizes [5, -1] don't multiply up to the size of dim 1 (12) in the input tensor"
        );
        assert_eq!(
            unflatten(&x, 1, &[], &dec()).unwrap_err().message,
            "unflatten: sizes must be non-empty"
        );
    }

    #[test]
    fn ravel_copies_whenever_not_contiguous() {
        // TV test_ravel: ones(10)[::2].ravel() is a copy although reshape(-1) is a view.
        let strided = layout(&[5], &[2]);
        assert_eq!(reshape(&strided, &[-1], &dec()).unwrap().copies, Tri::No);
        let raveled = ravel(&strided, &dec());
        assert_eq!(raveled.copies, Tri::Yes);
        assert_eq!(raveled.layout, Some(layout(&[5], &[1])));
        assert_eq!(ravel(&layout(&[2, 3], &[3, 1]), &dec()).copies, Tri::No);
    }

    #[test]
    fn contiguous_returns_self_or_a_copy() {
        let t = Layout::new(vec![3i64, 2], vec![1, 3], 5);
        assert_eq!(
            contiguous(&t, &dec()),
            MaybeCopy::copy(layout(&[3, 2], &[2, 1]))
        );
        let c = Layout::new(vec![3i64, 2], vec![2, 1], 5);
        assert_eq!(contiguous(&c, &dec()), MaybeCopy::alias(c.clone()));
        let cl = contiguous_in_format(
            &layout(&[2, 3, 4, 5], &[60, 20, 5, 1]),
            MemoryFormat::ChannelsLast,
            &dec(),
        )
        .unwrap();
        assert_eq!(cl.layout, Some(layout(&[2, 3, 4, 5], &[60, 1, 15, 3])));
        assert!(contiguous_in_format(&c, MemoryFormat::Preserve, &dec()).is_err());
    }
}
