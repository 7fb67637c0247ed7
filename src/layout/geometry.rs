//! The geometry of PyTorch's single-output view ops (spec §5): each returns the layout of
//! its result, which shares the input's storage, or the error PyTorch raises.
//!
//! Dimension arguments are `i64` (negative counts from the end, as in Python); sizes,
//! indices and positions are `S`, so they may be symbolic (`x[:, T - 1]`).

use super::assumption::Assumption;
use super::decided::{at_least_zero, known, negate, smaller, Undecided};
use super::error::{torch_list, LayoutError, LayoutErrorKind};
use super::layout::Layout;
use super::size::{Decider, Size};
use super::wrap_dim::wrap_dim;

/// `transpose(dim0, dim1)` / `swapaxes` / `swapdims`: swap two dimensions' sizes and strides.
pub fn transpose<S: Size>(
    layout: &Layout<S>,
    dim0: i64,
    dim1: i64,
) -> Result<Layout<S>, LayoutError> {
    let d0 = wrap_dim(dim0, layout.rank())?;
    let d1 = wrap_dim(dim1, layout.rank())?;
    let mut out = layout.clone();
    if d0 != d1 {
        out.shape.swap(d0, d1);
        out.strides.swap(d0, d1);
    }
    Ok(out)
}

/// `t()`: transpose of a matrix; rank ≤ 2 only (a 0-d or 1-d tensor is returned as is).
pub fn t<S: Size>(layout: &Layout<S>) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    if rank > 2 {
        return Err(LayoutError::invalid(format!(
            "t() expects a tensor with <= 2 dimensions, but self is {rank}D"
        )));
    }
    transpose(layout, 0, if rank < 2 { 0 } else { 1 })
}

/// `.T`: all dimensions reversed (PyTorch warns, but complies, for ranks other than 0 and 2).
pub fn numpy_t<S: Size>(layout: &Layout<S>) -> Layout<S> {
    let mut out = layout.clone();
    out.shape.reverse();
    out.strides.reverse();
    out
}

/// `.mT`: transpose of the last two dimensions; needs rank ≥ 2.
pub fn mt<S: Size>(layout: &Layout<S>) -> Result<Layout<S>, LayoutError> {
    transpose_last_two(layout, "tensor.mT")
}

/// `.mH`: like `.mT` (the conjugation does not change the layout).
pub fn mh<S: Size>(layout: &Layout<S>) -> Result<Layout<S>, LayoutError> {
    transpose_last_two(layout, "tensor.mH")
}

/// `adjoint()`: like `.mH`.
pub fn adjoint<S: Size>(layout: &Layout<S>) -> Result<Layout<S>, LayoutError> {
    transpose_last_two(layout, "tensor.adjoint()")
}

fn transpose_last_two<S: Size>(layout: &Layout<S>, what: &str) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    if rank < 2 {
        return Err(LayoutError::invalid(format!(
            "{what} is only supported on matrices or batches of matrices. Got {rank}-D tensor."
        )));
    }
    transpose(layout, -2, -1)
}

/// `permute(dims)`: output dimension `i` is input dimension `dims[i]`.
pub fn permute<S: Size>(layout: &Layout<S>, dims: &[i64]) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    if dims.len() != rank {
        // PyTorch's dense permute shares this check (and its sparse wording) with sparse COO.
        return Err(LayoutError::new(
            LayoutErrorKind::InvalidPermutation,
            format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {rank} is not equal to len(dims) = {}",
                dims.len()
            ),
        ));
    }
    let mut seen = vec![false; rank];
    let mut shape = Vec::with_capacity(rank);
    let mut strides = Vec::with_capacity(rank);
    for &dim in dims {
        let d = wrap_dim(dim, rank)?;
        if seen[d] {
            return Err(LayoutError::new(
                LayoutErrorKind::InvalidPermutation,
                "permute(): duplicate dims are not allowed.",
            ));
        }
        seen[d] = true;
        shape.push(layout.shape[d].clone());
        strides.push(layout.strides[d].clone());
    }
    Ok(Layout::new(shape, strides, layout.offset.clone()))
}

/// `movedim(source, destination)` / `moveaxis`: the listed dimensions move to their
/// destinations; the others keep their relative order in the remaining places.
/// The `int` form is `movedim(layout, &[src], &[dst])`.
pub fn movedim<S: Size>(
    layout: &Layout<S>,
    source: &[i64],
    destination: &[i64],
) -> Result<Layout<S>, LayoutError> {
    if source.len() != destination.len() {
        return Err(LayoutError::invalid(format!(
            "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as destination ({} dims)",
            torch_list(source),
            torch_list(destination)
        )));
    }
    let rank = layout.rank();
    let wrap_all = |dims: &[i64]| {
        dims.iter()
            .map(|&d| wrap_dim(d, rank))
            .collect::<Result<Vec<_>, _>>()
    };
    let from = wrap_all(source)?;
    let to = wrap_all(destination)?;
    if has_duplicates(&from) {
        return Err(LayoutError::new(
            LayoutErrorKind::InvalidPermutation,
            format!("movedim: repeated dim in `source` ({})", torch_list(source)),
        ));
    }
    if has_duplicates(&to) {
        return Err(LayoutError::new(
            LayoutErrorKind::InvalidPermutation,
            format!(
                "movedim: repeated dim in `destination` ({})",
                torch_list(destination)
            ),
        ));
    }
    if rank == 0 {
        return Ok(layout.clone());
    }
    let mut order: Vec<Option<usize>> = vec![None; rank];
    for (&f, &t) in from.iter().zip(&to) {
        order[t] = Some(f);
    }
    let mut rest = (0..rank).filter(|d| !from.contains(d));
    for slot in order.iter_mut().filter(|slot| slot.is_none()) {
        *slot = rest.next();
    }
    let dims: Vec<i64> = order
        .into_iter()
        .map(|d| d.expect("every slot is filled") as i64)
        .collect();
    permute(layout, &dims)
}

fn has_duplicates(dims: &[usize]) -> bool {
    dims.iter().enumerate().any(|(i, d)| dims[..i].contains(d))
}

/// `squeeze()`: drop every dimension of size 1.
pub fn squeeze<S: Size>(layout: &Layout<S>, dec: &Decider) -> Result<Layout<S>, LayoutError> {
    let every_dim = vec![true; layout.rank()];
    squeeze_marked(layout, &every_dim, dec)
}

/// `squeeze(dim)`: drop `dim` if its size is 1; otherwise the same geometry.
pub fn squeeze_dim<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let d = wrap_dim(dim, layout.rank())?;
    if layout.rank() == 0 {
        return Ok(layout.clone());
    }
    let mut marked = vec![false; layout.rank()];
    marked[d] = true;
    squeeze_marked(layout, &marked, dec)
}

/// `squeeze(dims)`: drop each listed dimension whose size is 1.
pub fn squeeze_dims<S: Size>(
    layout: &Layout<S>,
    dims: &[i64],
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    let mut marked = vec![false; rank.max(1)];
    for &dim in dims {
        let d = wrap_dim(dim, rank)?;
        if marked[d] {
            return Err(LayoutError::invalid(format!(
                "dim {d} appears multiple times in the list of dims"
            )));
        }
        marked[d] = true;
    }
    marked.truncate(rank);
    squeeze_marked(layout, &marked, dec)
}

fn squeeze_marked<S: Size>(
    layout: &Layout<S>,
    marked: &[bool],
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let mut out = Layout::new(Vec::new(), Vec::new(), layout.offset.clone());
    for ((size, stride), &drop_if_one) in layout.shape.iter().zip(&layout.strides).zip(marked) {
        if drop_if_one && known(dec.eq_lit(size, 1))? {
            continue;
        }
        out.shape.push(size.clone());
        out.strides.push(stride.clone());
    }
    Ok(out)
}

/// `unsqueeze(dim)`: insert a size-1 dimension at `dim ∈ [-rank-1, rank]`. Its stride is
/// `size·stride` of the dimension it lands before, or 1 at the end — the value that keeps
/// a contiguous tensor contiguous.
pub fn unsqueeze<S: Size>(layout: &Layout<S>, dim: i64) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    let d = wrap_dim(dim, rank + 1)?;
    let stride = if d < rank {
        layout.shape[d].mul(&layout.strides[d])
    } else {
        S::lit(1)
    };
    let mut out = layout.clone();
    out.shape.insert(d, S::lit(1));
    out.strides.insert(d, stride);
    Ok(out)
}

/// `expand(sizes)` / `expand_as` / `broadcast_to` (`inferExpandGeometry`): sizes align
/// from the right; `-1` keeps a size; a size-1 dimension stretches with stride 0; new
/// leading dimensions get stride 0 when their size is not 1.
///
/// The "too few sizes" message names the tensor's type (`CPUFloatType`), which a static
/// analysis does not know; it is written `Tensor` here. A 0-d input gets all strides 0;
/// PyTorch skips the per-dimension checks for it, so a `-1` there is reported here with
/// the leading-dimension error (not checked against torch).
pub fn expand<S: Size>(
    layout: &Layout<S>,
    sizes: &[S],
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    let ndim = sizes.len();
    if ndim < rank {
        return Err(LayoutError::invalid(format!(
            "expand(Tensor{{{}}}, size={}): the number of sizes provided ({ndim}) must be greater or equal to the number of dimensions in the tensor ({rank})",
            torch_list(&layout.shape),
            torch_list(sizes)
        )));
    }
    let minus_one = S::lit(-1);
    let mut shape = vec![S::lit(0); ndim];
    let mut strides = vec![S::lit(0); ndim];
    for i in (0..ndim).rev() {
        let existing = (i + rank).checked_sub(ndim);
        let (mut size, mut stride) = match existing {
            Some(d) => (layout.shape[d].clone(), layout.strides[d].clone()),
            None if i + 1 < ndim => (S::lit(1), shape[i + 1].mul(&strides[i + 1])),
            None => (S::lit(1), S::lit(1)),
        };
        let mut target = sizes[i].clone();
        if known(dec.eq(&target, &minus_one))? {
            if existing.is_none() {
                return Err(LayoutError::invalid(format!(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )));
            }
            target = size.clone();
        }
        if known(dec.ne(&size, &target))? {
            if !known(dec.eq_lit(&size, 1))? {
                return Err(LayoutError::shape_mismatch(format!(
                    "The expanded size of the tensor ({target}) must match the existing size ({size}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                    torch_list(sizes),
                    torch_list(&layout.shape)
                )));
            }
            if known(dec.lt(&target, &S::lit(0)))? {
                // PyTorch builds a tensor with a negative size here and fails later, in
                // ways this algebra does not model.
                return Err(LayoutError::invalid(format!(
                    "expand: negative size {target} in {}",
                    torch_list(sizes)
                )));
            }
            size = target;
            stride = S::lit(0);
        }
        shape[i] = size;
        strides[i] = stride;
    }
    if rank == 0 {
        strides.iter_mut().for_each(|stride| *stride = S::lit(0));
    }
    Ok(Layout::new(shape, strides, layout.offset.clone()))
}

/// `narrow(dim, start, length)`: `length` elements of `dim` from `start` (negative
/// `start` counts from the end).
pub fn narrow<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    start: &S,
    length: &S,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::invalid(
            "narrow() cannot be applied to a 0-dim tensor.",
        ));
    }
    let zero = S::lit(0);
    if known(dec.lt(length, &zero))? {
        return Err(LayoutError::invalid(
            "narrow(): length must be non-negative.",
        ));
    }
    let d = wrap_dim(dim, layout.rank())?;
    let size = &layout.shape[d];
    let lowest = negate(size);
    // A range the decider cannot place is within the dim: `narrow` fails on one outside it
    // (torch and candle alike), so the call returns only then.
    if !known(dec.le(&lowest, start))? || dec.le(start, size).is_no() {
        return Err(LayoutError::index_out_of_range(format!(
            "start out of range (expected to be in range of [{lowest}, {size}], but got {start})"
        )));
    }
    let start = if known(dec.lt(start, &zero))? {
        start.add(size)
    } else {
        start.clone()
    };
    if dec.le(&start, &size.sub(length)).is_no() {
        return Err(LayoutError::invalid(format!(
            "start ({start}) + length ({length}) exceeds dimension size ({size})."
        )));
    }
    dec.learn_upper_bound(&start, size);
    dec.learn_upper_bound(&start.add(length), size);
    Ok(take_range(layout, d, &start, length.clone(), 1))
}

/// `select(dim, index)` / `x[..., index, ...]`: drop `dim`, moving the offset to `index`.
pub fn select<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    index: &S,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::index_out_of_range(
            "select() cannot be applied to a 0-dim tensor.",
        ));
    }
    let d = wrap_dim(dim, layout.rank())?;
    let size = &layout.shape[d];
    // A loop's index (≥ 0) that the decider cannot place below the size is in range if the
    // call returns: torch raises an IndexError otherwise.
    let in_range =
        dec.index_in_range(index, size) || index.index_bound(dec.assumptions()).is_some();
    let too_low = !in_range && known(dec.le(size, &S::lit(-1).sub(index)))?;
    if too_low || (!in_range && known(dec.le(size, index))?) {
        return Err(LayoutError::index_out_of_range(format!(
            "select(): index {index} out of range for tensor of size {} at dimension {d}",
            torch_list(&layout.shape)
        )));
    }
    let index = if known(dec.lt(index, &S::lit(0)))? {
        index.add(size)
    } else {
        index.clone()
    };
    let mut out = layout.clone();
    out.offset = layout.offset.add(&index.mul(&layout.strides[d]));
    out.shape.remove(d);
    out.strides.remove(d);
    Ok(out)
}

/// `slice(dim, start, end, step)` / `x[:, start:end:step]`. `None` bounds are the ends of
/// the dimension; negative bounds count from the end; both are then clamped into
/// `[0, size]` with `end ≥ start`, so slicing never fails on bounds.
pub fn slice<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    start: Option<&S>,
    end: Option<&S>,
    step: i64,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    if layout.rank() == 0 {
        return Err(LayoutError::index_out_of_range(
            "slice() cannot be applied to a 0-dim tensor.",
        ));
    }
    let d = wrap_dim(dim, layout.rank())?;
    if step <= 0 {
        return Err(LayoutError::invalid("slice step must be positive"));
    }
    let size = &layout.shape[d];
    let (start, end) = match clamped_bounds(start, end, size, dec) {
        Ok(bounds) => bounds,
        Err(Undecided) => assumed_within(start, end, size, dec)?,
    };
    let length = end.sub(&start);
    let count = if step == 1 {
        length
    } else {
        length.add(&S::lit(step - 1)).floordiv(&S::lit(step))
    };
    Ok(take_range(layout, d, &start, count, step))
}

/// A slice's bounds as torch uses them: `None` bounds are the ends of the dimension
/// (PyTorch's C++ default for a missing start is 0, for a missing end INT64_MAX), negative
/// bounds count from the end, both clamped into `[0, size]` with `end ≥ start`.
fn clamped_bounds<S: Size>(
    start: Option<&S>,
    end: Option<&S>,
    size: &S,
    dec: &Decider,
) -> Result<(S, S), Undecided> {
    let zero = S::lit(0);
    let mut start = match start {
        Some(start) if start.as_lit() != Some(i64::MAX) => start.clone(),
        _ => zero.clone(),
    };
    let mut end = end.cloned().unwrap_or_else(|| size.clone());
    if known(dec.lt(&start, &zero))? {
        start = start.add(size);
    }
    if known(dec.lt(&end, &zero))? {
        end = end.add(size);
    }
    if known(dec.lt(&start, &zero))? {
        start = zero;
    } else if known(dec.le(size, &start))? {
        start = size.clone();
    }
    if known(dec.lt(&end, &start))? {
        end = start.clone();
    } else if known(dec.le(size, &end))? {
        end = size.clone();
    }
    Ok((start, end))
}

/// Bounds [`clamped_bounds`] cannot place, of a window that moves with a loop
/// (`x[:, i:i + n]`, `i` the index of a `range` loop): taken as written when `end ≥ start`
/// whatever the sizes, on the stated condition that the slice lies within the dimension
/// ([`Assumption::SliceWithin`]); near the end of the dimension it would be shorter. Other
/// bounds (literals, parameters) stay undecided: nothing says where they fall.
fn assumed_within<S: Size>(
    start: Option<&S>,
    end: Option<&S>,
    size: &S,
    dec: &Decider,
) -> Result<(S, S), Undecided> {
    let (Some(start), Some(end)) = (start, end) else {
        return Err(Undecided);
    };
    let moves_with_loop = |b: &S| b.index_bound(dec.assumptions()).is_some();
    if !(moves_with_loop(start) || moves_with_loop(end)) || !known(dec.le(start, end))? {
        return Err(Undecided);
    }
    dec.record(Assumption::SliceWithin {
        start: start.to_string(),
        end: end.to_string(),
        size: size.to_string(),
    });
    Ok((start.clone(), end.clone()))
}

/// A range `start..end` of dimension `d` that must lie within it (candle's `x.i(a..b)`, a
/// `narrow` that fails on a range outside the dim), when [`clamped_bounds`] cannot place
/// it: taken as written (a missing start is 0, a missing end the size) when `0 ≤ start` is
/// decided, since the call returns only when `start ≤ end ≤ size`. `None` when the bounds
/// are decided (the ordinary slice applies) or `0 ≤ start` is not.
pub fn checked_range<S: Size>(
    layout: &Layout<S>,
    d: usize,
    start: Option<&S>,
    end: Option<&S>,
    dec: &Decider,
) -> Option<Layout<S>> {
    let size = layout.shape.get(d)?;
    if clamped_bounds(start, end, size, dec).is_ok() {
        return None;
    }
    let zero = S::lit(0);
    let start = start.cloned().unwrap_or_else(|| zero.clone());
    let end = end.cloned().unwrap_or_else(|| size.clone());
    if !dec.le(&zero, &start).is_yes() || dec.le(&start, &end).is_no() {
        return None;
    }
    dec.learn_upper_bound(&end, size);
    Some(take_range(layout, d, &start, end.sub(&start), 1))
}

/// The layout of `count` elements of dimension `d`, every `step`-th from `start`
/// (arguments already validated).
pub(crate) fn take_range<S: Size>(
    layout: &Layout<S>,
    d: usize,
    start: &S,
    count: S,
    step: i64,
) -> Layout<S> {
    let mut out = layout.clone();
    out.offset = layout.offset.add(&start.mul(&layout.strides[d]));
    out.shape[d] = count;
    if step != 1 {
        out.strides[d] = layout.strides[d].mul(&S::lit(step));
    }
    out
}

/// `diagonal(offset, dim1, dim2)`: drop both dimensions and append the diagonal, whose
/// stride is the sum of theirs.
pub fn diagonal<S: Size>(
    layout: &Layout<S>,
    offset: i64,
    dim1: i64,
    dim2: i64,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    let d1 = wrap_dim(dim1, rank)?;
    let d2 = wrap_dim(dim2, rank)?;
    if d1 == d2 {
        return Err(LayoutError::invalid(format!(
            "diagonal dimensions cannot be identical {dim1}, {dim2}"
        )));
    }
    let (size1, size2) = (&layout.shape[d1], &layout.shape[d2]);
    let (stride1, stride2) = (&layout.strides[d1], &layout.strides[d2]);
    let shift = S::lit(offset);
    let diag_size = if offset >= 0 {
        at_least_zero(&smaller(size1, &size2.sub(&shift), dec)?, dec)?
    } else {
        at_least_zero(&smaller(&size1.add(&shift), size2, dec)?, dec)?
    };
    let mut out = layout.clone();
    if !known(dec.eq_lit(&diag_size, 0))? {
        out.offset = if offset >= 0 {
            layout.offset.add(&shift.mul(stride2))
        } else {
            layout.offset.sub(&shift.mul(stride1))
        };
    }
    let diag_stride = stride1.add(stride2);
    for d in [d1.max(d2), d1.min(d2)] {
        out.shape.remove(d);
        out.strides.remove(d);
    }
    out.shape.push(diag_size);
    out.strides.push(diag_stride);
    Ok(out)
}

/// `unfold(dim, size, step)`: windows of `size` elements every `step` along `dim`, as a
/// new last dimension. A symbolic step is taken only where it divides the span the windows
/// cover by construction (`unfold(2, h // g, h // g)`: `g` windows); the number of windows
/// is a floor otherwise, which the sizes cannot spell.
pub fn unfold<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    size: &S,
    step: &S,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    let d = wrap_dim(dim, rank)?;
    let max_size = if rank == 0 {
        S::lit(1)
    } else {
        layout.shape[d].clone()
    };
    if !known(dec.le(size, &max_size))? {
        return Err(LayoutError::invalid(format!(
            "maximum size for tensor at dimension {d} is {max_size} but size is {size}"
        )));
    }
    if known(dec.lt(size, &S::lit(0)))? {
        return Err(LayoutError::invalid(format!(
            "size is {size} but must be >= 0"
        )));
    }
    if !known(dec.lt(&S::lit(0), step))? {
        return Err(LayoutError::invalid(format!(
            "step is {step} but must be > 0"
        )));
    }
    let mut out = layout.clone();
    out.shape.push(size.clone());
    out.strides.push(if rank == 0 {
        S::lit(1)
    } else {
        layout.strides[d].clone()
    });
    if d < rank {
        let span = layout.shape[d].sub(size);
        let windows = match step.as_lit() {
            Some(1) => span,
            Some(_) => span.floordiv(step),
            None if step.divides_by_construction(&span) => span.floordiv(step),
            None => return Err(Undecided.into()),
        };
        out.shape[d] = windows.add(&S::lit(1));
        if step.as_lit() != Some(1) {
            out.strides[d] = layout.strides[d].mul(step);
        }
    }
    Ok(out)
}

/// `as_strided(size, stride, storage_offset)`: exactly the given geometry (the offset
/// defaults to the input's). Storage bounds are not checked: the storage size is unknown.
pub fn as_strided<S: Size>(
    layout: &Layout<S>,
    shape: &[S],
    strides: &[S],
    offset: Option<&S>,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    if shape.len() != strides.len() {
        return Err(LayoutError::invalid(
            "mismatch in length of strides and shape",
        ));
    }
    for stride in strides {
        if known(dec.lt(stride, &S::lit(0)))? {
            return Err(LayoutError::invalid(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {}",
                torch_list(strides)
            )));
        }
    }
    let offset = offset.cloned().unwrap_or_else(|| layout.offset.clone());
    Ok(Layout::new(shape.to_vec(), strides.to_vec(), offset))
}

/// `alias()` / `detach()` / `view_as(self)`: same geometry.
pub fn alias<S: Size>(layout: &Layout<S>) -> Layout<S> {
    layout.clone()
}

/// `torch.meshgrid(*tensors, indexing)` (ATen `meshgrid`): input `i` (0-d or 1-d, `n_i`
/// elements) viewed with `-1` at dim `i` and ones elsewhere, then expanded to
/// `(n_1, …, n_k)`: every dim but `i` gets stride 0, so flattening a grid copies. `"xy"`
/// swaps the first two inputs, computes the `"ij"` grids (of shape `(n_2, n_1, …)`), and
/// swaps the first two grids back.
pub fn meshgrid<S: Size>(
    inputs: &[&Layout<S>],
    xy: bool,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    if inputs.is_empty() {
        return Err(LayoutError::invalid(
            "meshgrid expects a non-empty TensorList",
        ));
    }
    let mut order: Vec<&Layout<S>> = inputs.to_vec();
    let swap = xy && order.len() >= 2;
    if swap {
        order.swap(0, 1);
    }
    if let Some(bad) = order.iter().find(|l| l.rank() > 1) {
        return Err(LayoutError::invalid(format!(
            "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: a tensor of size {}",
            torch_list(&bad.shape)
        )));
    }
    let shape: Vec<S> = order.iter().map(|l| l.numel()).collect();
    let mut grids = Vec::with_capacity(order.len());
    for (i, input) in order.iter().enumerate() {
        let mut view_shape = vec![S::lit(1); order.len()];
        view_shape[i] = shape[i].clone();
        let strides = match super::view::view_strides(input, &view_shape, dec) {
            super::view::ViewStrides::Strides(strides) => strides,
            _ => return Err(super::decided::Undecided.into()),
        };
        let viewed = Layout::new(view_shape, strides, input.offset.clone());
        grids.push(expand(&viewed, &shape, dec)?);
    }
    if swap {
        grids.swap(0, 1);
    }
    Ok(grids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[i64], strides: &[i64], offset: i64) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), offset)
    }

    fn contiguous(shape: &[i64]) -> Layout<i64> {
        Layout::contiguous(shape.to_vec())
    }

    fn dec() -> Decider<'static> {
        Decider::concrete()
    }

    #[test]
    fn unfold_by_a_symbolic_step_that_divides_the_span() {
        use crate::layout::{Assumptions, Dim};
        let assumptions = Assumptions::default();
        let dec = Decider::new(&assumptions);
        let (h, g) = (Dim::sym("h"), Dim::sym("g"));
        let piece = h.floordiv(&g);
        let x = Layout::contiguous(vec![Dim::sym("c"), h.clone()]);
        let windows = unfold(&x, 1, &piece, &piece, &dec).unwrap();
        assert_eq!(windows.shape, [Dim::sym("c"), g, piece.clone()]);
        assert_eq!(windows.strides, [h, piece.clone(), Dim::lit(1)]);
        // `(h - 3) // s + 1` windows: a floor the sizes cannot spell.
        let step = Dim::sym("s");
        assert!(unfold(&x, 1, &Dim::lit(3), &step, &dec).is_err());
    }

    #[test]
    fn transpose_and_t() {
        assert_eq!(
            transpose(&contiguous(&[2, 3, 4]), 1, 2).unwrap(),
            layout(&[2, 4, 3], &[12, 1, 4], 0)
        );
        assert_eq!(
            transpose(&contiguous(&[2, 3]), -1, -1).unwrap(),
            contiguous(&[2, 3])
        );
        assert_eq!(
            t(&contiguous(&[2, 3])).unwrap(),
            layout(&[3, 2], &[1, 3], 0)
        );
        assert_eq!(t(&contiguous(&[5])).unwrap(), contiguous(&[5]));
        assert_eq!(
            t(&contiguous(&[2, 3, 4])).unwrap_err().message,
            "t() expects a tensor with <= 2 dimensions, but self is 3D"
        );
        assert!(transpose(&contiguous(&[2, 3]), 0, 2).is_err());
    }

    #[test]
    fn matrix_transposes() {
        assert_eq!(
            numpy_t(&contiguous(&[2, 3, 4])),
            layout(&[4, 3, 2], &[1, 4, 12], 0)
        );
        assert_eq!(
            mt(&contiguous(&[2, 3, 4])).unwrap(),
            layout(&[2, 4, 3], &[12, 1, 4], 0)
        );
        assert_eq!(
            mt(&contiguous(&[4])).unwrap_err().message,
            "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
        );
        assert!(mh(&contiguous(&[4]))
            .unwrap_err()
            .message
            .starts_with("tensor.mH"));
        assert!(adjoint(&contiguous(&[3, 3])).is_ok());
    }

    #[test]
    fn permute_and_its_errors() {
        let x = contiguous(&[2, 3, 4]);
        assert_eq!(
            permute(&x, &[2, 0, 1]).unwrap(),
            layout(&[4, 2, 3], &[1, 12, 4], 0)
        );
        let wrong_length = permute(&x, &[0, 1]).unwrap_err();
        assert_eq!(wrong_length.kind, LayoutErrorKind::InvalidPermutation);
        assert!(wrong_length.message.starts_with(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions"
        ));
        assert_eq!(
            permute(&x, &[0, 0, 1]).unwrap_err().message,
            "permute(): duplicate dims are not allowed."
        );
        assert_eq!(
            permute(&x, &[0, 1, 3]).unwrap_err().kind,
            LayoutErrorKind::DimOutOfRange
        );
    }

    #[test]
    fn movedim_builds_the_permutation() {
        let x = contiguous(&[2, 3, 4, 5, 6]);
        // Source walkthrough: src (0, 1) → dst (2, 4) gives the order (2, 3, 0, 4, 1).
        let moved = movedim(&x, &[0, 1], &[2, 4]).unwrap();
        assert_eq!(moved, permute(&x, &[2, 3, 0, 4, 1]).unwrap());
        assert_eq!(movedim(&x, &[-1], &[0]).unwrap().shape, vec![6, 2, 3, 4, 5]);
        assert!(movedim(&x, &[0, 0], &[1, 2])
            .unwrap_err()
            .message
            .starts_with("movedim: repeated dim in `source`"));
        assert_eq!(
            movedim(&x, &[0, 1], &[2]).unwrap_err().message,
            "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number of dims as destination ([2] dims)"
        );
    }

    #[test]
    fn squeeze_variants() {
        let x = layout(&[1, 3, 1, 2], &[9, 2, 7, 1], 0);
        assert_eq!(squeeze(&x, &dec()).unwrap(), layout(&[3, 2], &[2, 1], 0));
        assert_eq!(
            squeeze_dim(&x, 2, &dec()).unwrap(),
            layout(&[1, 3, 2], &[9, 2, 1], 0)
        );
        assert_eq!(squeeze_dim(&x, 1, &dec()).unwrap(), x);
        assert_eq!(
            squeeze_dims(&x, &[0, -2], &dec()).unwrap(),
            layout(&[3, 2], &[2, 1], 0)
        );
        assert_eq!(
            squeeze_dims(&x, &[0, -4], &dec()).unwrap_err().message,
            "dim 0 appears multiple times in the list of dims"
        );
        assert_eq!(
            squeeze_dim(&Layout::<i64>::scalar(), 0, &dec()).unwrap(),
            Layout::scalar()
        );
    }

    #[test]
    fn unsqueeze_strides() {
        // (E) (2,3,4).unsqueeze(0) → stride 24; (4,3,2)/(1,4,12).unsqueeze(1) → stride 12.
        assert_eq!(
            unsqueeze(&contiguous(&[2, 3, 4]), 0).unwrap().strides,
            vec![24, 12, 4, 1]
        );
        assert_eq!(
            unsqueeze(&layout(&[4, 3, 2], &[1, 4, 12], 0), 1)
                .unwrap()
                .strides,
            vec![1, 12, 4, 12]
        );
        assert_eq!(
            unsqueeze(&contiguous(&[2, 3]), -1).unwrap(),
            layout(&[2, 3, 1], &[3, 1, 1], 0)
        );
        assert!(unsqueeze(&contiguous(&[2, 3]), 3).is_err());
    }

    #[test]
    fn expand_geometry_and_errors() {
        // (E) (3,1).expand(1,3,4) → strides (3,1,0); .expand(2,3,4) → (0,1,0).
        let x = contiguous(&[3, 1]);
        assert_eq!(
            expand(&x, &[1, 3, 4], &dec()).unwrap().strides,
            vec![3, 1, 0]
        );
        assert_eq!(
            expand(&x, &[2, 3, 4], &dec()).unwrap().strides,
            vec![0, 1, 0]
        );
        assert_eq!(
            expand(&x, &[-1, 4], &dec()).unwrap(),
            layout(&[3, 4], &[1, 0], 0)
        );
        // (E) tensor2(5).expand(1,1,5) has the strides of unsqueeze(0).unsqueeze(1).
        let five = contiguous(&[5]);
        let unsqueezed = unsqueeze(&unsqueeze(&five, 0).unwrap(), 1).unwrap();
        assert_eq!(
            expand(&five, &[1, 1, 5], &dec()).unwrap().strides,
            unsqueezed.strides
        );
        assert_eq!(
            expand(&five, &[-1, -1], &dec()).unwrap_err().message,
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
        );
        assert_eq!(
            expand(&x, &[3, 4, 2], &dec()).unwrap_err().message,
            "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [3, 4, 2].  Tensor sizes: [3, 1]"
        );
        assert!(expand(&x, &[4], &dec()).unwrap_err().message.ends_with(
            "the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)"
        ));
        // (E) zeros(0).expand((0,)) works; a 0-d tensor expands with all strides 0.
        assert_eq!(
            expand(&contiguous(&[0]), &[0], &dec()).unwrap().shape,
            vec![0]
        );
        assert_eq!(
            expand(&Layout::scalar(), &[2, 3], &dec()).unwrap(),
            layout(&[2, 3], &[0, 0], 0)
        );
    }

    #[test]
    fn narrow_select_slice_offsets() {
        let x = contiguous(&[4, 6]);
        assert_eq!(
            narrow(&x, 1, &2, &3, &dec()).unwrap(),
            layout(&[4, 3], &[6, 1], 2)
        );
        assert_eq!(
            narrow(&x, 1, &-2, &2, &dec()).unwrap(),
            layout(&[4, 2], &[6, 1], 4)
        );
        assert_eq!(
            narrow(&x, 1, &7, &1, &dec()).unwrap_err().message,
            "start out of range (expected to be in range of [-6, 6], but got 7)"
        );
        assert_eq!(
            narrow(&x, 1, &4, &3, &dec()).unwrap_err().message,
            "start (4) + length (3) exceeds dimension size (6)."
        );
        assert_eq!(select(&x, 0, &-1, &dec()).unwrap(), layout(&[6], &[1], 18));
        assert_eq!(
            select(&x, 0, &4, &dec()).unwrap_err().message,
            "select(): index 4 out of range for tensor of size [4, 6] at dimension 0"
        );
        assert_eq!(
            slice(&x, 1, Some(&1), None, 2, &dec()).unwrap(),
            layout(&[4, 3], &[6, 2], 1)
        );
        // (E) x[:, 5:9] on a dim of size 3 → size 0, offset += 3·stride (here 3·1 on a (4,3) tensor).
        let narrow_x = contiguous(&[4, 3]);
        assert_eq!(
            slice(&narrow_x, 1, Some(&5), Some(&9), 1, &dec()).unwrap(),
            layout(&[4, 0], &[3, 1], 3)
        );
        assert_eq!(
            slice(&x, 1, Some(&-4), Some(&-1), 1, &dec()).unwrap(),
            layout(&[4, 3], &[6, 1], 2)
        );
        assert_eq!(
            slice(&x, 0, None, None, 0, &dec()).unwrap_err().message,
            "slice step must be positive"
        );
    }

    #[test]
    fn diagonal_unfold_as_strided() {
        let x = contiguous(&[3, 4]);
        assert_eq!(
            diagonal(&x, 0, 0, 1, &dec()).unwrap(),
            layout(&[3], &[5], 0)
        );
        assert_eq!(
            diagonal(&x, 1, 0, 1, &dec()).unwrap(),
            layout(&[3], &[5], 1)
        );
        assert_eq!(
            diagonal(&x, -1, 0, 1, &dec()).unwrap(),
            layout(&[2], &[5], 4)
        );
        assert_eq!(
            diagonal(&x, 5, 0, 1, &dec()).unwrap(),
            layout(&[0], &[5], 0)
        );
        assert_eq!(
            diagonal(&x, 0, 1, -1, &dec()).unwrap_err().message,
            "diagonal dimensions cannot be identical 1, -1"
        );
        assert_eq!(
            unfold(&contiguous(&[7]), 0, &3, &2, &dec()).unwrap(),
            layout(&[3, 3], &[2, 1], 0)
        );
        assert_eq!(
            unfold(&contiguous(&[7]), 0, &8, &1, &dec())
                .unwrap_err()
                .message,
            "maximum size for tensor at dimension 0 is 7 but size is 8"
        );
        assert_eq!(
            unfold(&Layout::scalar(), 0, &1, &1, &dec()).unwrap(),
            layout(&[1], &[1], 0)
        );
        assert_eq!(
            as_strided(&x, &[2, 2], &[1, 2], Some(&3), &dec()).unwrap(),
            layout(&[2, 2], &[1, 2], 3)
        );
        assert!(as_strided(&x, &[2], &[1, 2], None, &dec()).is_err());
        assert_eq!(alias(&x), x);
    }
}
