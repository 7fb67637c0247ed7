//! Output layout of PyTorch's element-wise ops (`a + b`, `x.exp()`, `torch.where`, …):
//! TensorIterator's rule (spec §6.1). The output keeps the memory order of its inputs, so
//! `x.transpose(1, 2) + 1` is still transposed in memory — a fact the linter needs to see
//! that a later `.view(...)` fails.

use super::contiguity::{strides_for_format, MemoryFormat};
use super::decided::{known, Undecided};
use super::dim_order::{sort_innermost_first, Placement};
use super::error::LayoutError;
use super::layout::{contiguous_strides, Layout};
use super::size::{Decider, Size};
use super::tri::Tri;
use super::view::same_shape;

/// Right-aligned broadcast of two shapes, with PyTorch's error for sizes that differ and
/// are both ≠ 1. Dimension `i` in the message counts in the *result*.
pub fn broadcast_shapes<S: Size>(a: &[S], b: &[S], dec: &Decider) -> Result<Vec<S>, LayoutError> {
    broadcast_shapes_of(a, b, false, dec)
}

/// [`broadcast_shapes`] of an op that is known to have succeeded when it returns (candle's
/// `broadcast_mul`, whose caller goes on only with its result): two lined-up sizes the
/// decider cannot compare, neither of which can be 1, are equal, and the result takes the
/// first operand's.
pub fn broadcast_shapes_succeeding<S: Size>(
    a: &[S],
    b: &[S],
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    broadcast_shapes_of(a, b, true, dec)
}

fn broadcast_shapes_of<S: Size>(
    a: &[S],
    b: &[S],
    succeeds: bool,
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    let ndim = a.len().max(b.len());
    let one = S::lit(1);
    let mut out = vec![one.clone(); ndim];
    for i in (0..ndim).rev() {
        let from_end = ndim - 1 - i;
        let size_a = a.len().checked_sub(from_end + 1).map_or(&one, |d| &a[d]);
        let size_b = b.len().checked_sub(from_end + 1).map_or(&one, |d| &b[d]);
        let a_is_one = dec.eq(size_a, &one);
        let b_is_one = dec.eq(size_b, &one);
        if succeeds && a_is_one.is_no() && b_is_one.is_no() && !dec.ne(size_a, size_b).is_yes() {
            out[i] = size_a.clone();
            continue;
        }
        let compatible = dec.eq(size_a, size_b).or(a_is_one).or(b_is_one);
        if !known(compatible)? {
            return Err(LayoutError::shape_mismatch(format!(
                "The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at non-singleton dimension {i}"
            )));
        }
        // Against a 1 (a scalar's padding, a broadcast dim) or an equal size the output
        // keeps `a`'s size, whether or not `a` is 1 itself.
        out[i] = if b_is_one.is_yes() || dec.eq(size_a, size_b).is_yes() {
            size_a.clone()
        } else if known(a_is_one)? {
            size_b.clone()
        } else {
            size_a.clone()
        };
    }
    Ok(out)
}

/// The layout of a new element-wise output over `inputs`, in argument order. A Python
/// scalar operand is a 0-d tensor ([`Layout::scalar`]). The output's offset is 0.
///
/// 1. The shape is the broadcast of all inputs. The inputs are "all the same shape" only
///    if each has exactly that shape and 0-d operands are not mixed with others (so
///    `x + 1` never is).
/// 2. Same shape: all contiguous → contiguous; else all channels-last → channels-last;
///    else all non-overlapping-and-dense with identical strides → those strides.
/// 3. Otherwise sort the dimensions into memory order ([`sort_innermost_first`]): to
///    compare two dimensions, ask each input in turn, skipping inputs where either stride
///    is 0 (broadcast); the first input with different strides decides, and on equal
///    strides the larger dimension goes outside. If the order is plain row-major the
///    output is contiguous; otherwise it gets dense strides in that order.
pub fn elementwise_output<S: Size>(
    inputs: &[&Layout<S>],
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let (shape, all_same_shape) = common_shape(inputs, dec)?;
    if all_same_shape && !inputs.is_empty() {
        if let Some(strides) = fast_path_strides(inputs, &shape, dec)? {
            return Ok(Layout::new(shape, strides, S::lit(0)));
        }
    }
    let strides = memory_order_strides(inputs, &shape, dec)?;
    Ok(Layout::new(shape, strides, S::lit(0)))
}

/// TensorIterator's `compute_shape`: the broadcast shape, and whether every operand has it.
fn common_shape<S: Size>(
    inputs: &[&Layout<S>],
    dec: &Decider,
) -> Result<(Vec<S>, bool), LayoutError> {
    let mut shape: Vec<S> = Vec::new();
    let mut all_same_shape = true;
    let (mut has_scalars, mut has_tensors) = (false, false);
    for input in inputs {
        if input.rank() == 0 {
            has_scalars = true;
        } else {
            has_tensors = true;
        }
        if has_scalars && has_tensors {
            all_same_shape = false;
        }
        if shape.is_empty() {
            shape = input.shape.clone();
        } else if !same_shape(&input.shape, &shape, dec)? {
            all_same_shape = false;
            shape = broadcast_shapes(&shape, &input.shape, dec)?;
        }
    }
    Ok((shape, all_same_shape))
}

/// The three same-shape fast paths; `None` when none applies.
fn fast_path_strides<S: Size>(
    inputs: &[&Layout<S>],
    shape: &[S],
    dec: &Decider,
) -> Result<Option<Vec<S>>, LayoutError> {
    let all = |predicate: &dyn Fn(&Layout<S>) -> Tri| {
        inputs
            .iter()
            .fold(Tri::Yes, |acc, input| acc.and(predicate(input)))
    };
    if known(all(&|l| l.is_contiguous(dec)))? {
        return Ok(Some(contiguous_strides(shape)));
    }
    if known(all(&|l| l.is_channels_last_contiguous(dec)))? {
        return strides_for_format(shape, MemoryFormat::ChannelsLast).map(Some);
    }
    if known(all(&|l| l.is_non_overlapping_and_dense(dec)))? {
        let first = &inputs[0].strides;
        for input in &inputs[1..] {
            if !same_shape(&input.strides, first, dec)? {
                return Ok(None);
            }
        }
        return Ok(Some(first.clone()));
    }
    Ok(None)
}

/// The general path: each input's strides over the broadcast shape (0 where broadcast),
/// the dimension order they imply, and dense strides in that order.
fn memory_order_strides<S: Size>(
    inputs: &[&Layout<S>],
    shape: &[S],
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    let ndim = shape.len();
    if ndim <= 1 {
        return Ok(contiguous_strides(shape));
    }
    let zero = S::lit(0);
    let mut operand_strides = Vec::with_capacity(inputs.len());
    for input in inputs {
        let lead = ndim - input.rank();
        let mut strides = vec![zero.clone(); ndim];
        for (d, (size, stride)) in input.shape.iter().zip(&input.strides).enumerate() {
            let broadcast = known(
                dec.eq_lit(size, 1)
                    .and(dec.ne(&shape[lead + d], &S::lit(1))),
            )?;
            if !broadcast {
                strides[lead + d] = stride.clone();
            }
        }
        operand_strides.push(strides);
    }
    let perm = sort_innermost_first(ndim, |a, b| place(&operand_strides, shape, a, b, dec))?;
    if perm.iter().enumerate().all(|(k, &d)| d == ndim - 1 - k) {
        return Ok(contiguous_strides(shape));
    }
    let mut out = vec![zero; ndim];
    let mut running = S::lit(1);
    for &d in &perm {
        out[d] = running.clone();
        running = running.mul(&shape[d]);
    }
    Ok(out)
}

/// TensorIterator's `should_swap` for dimensions `a` (currently inner) and `b`.
fn place<S: Size>(
    operand_strides: &[Vec<S>],
    shape: &[S],
    a: usize,
    b: usize,
    dec: &Decider,
) -> Result<Placement, Undecided> {
    for strides in operand_strides {
        let (stride_a, stride_b) = (&strides[a], &strides[b]);
        if known(dec.eq_lit(stride_a, 0).or(dec.eq_lit(stride_b, 0)))? {
            continue;
        }
        if known(dec.lt(stride_a, stride_b))? {
            return Ok(Placement::Inner);
        }
        if known(dec.lt(stride_b, stride_a))? {
            return Ok(Placement::Outer);
        }
        if known(dec.lt(&shape[b], &shape[a]))? {
            return Ok(Placement::Outer);
        }
    }
    Ok(Placement::Ambiguous)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn output(inputs: &[&Layout<i64>]) -> Vec<i64> {
        elementwise_output(inputs, &Decider::concrete())
            .unwrap()
            .strides
    }

    #[test]
    fn a_size_that_may_be_one_keeps_its_size_against_a_scalar() {
        // `torch.arange(dim // 2) * 2.0`: `dim // 2` may be 1 (dim = 2 or 3), which leaves
        // the output's size as it is either way (torch: (1,) * () is (1,)).
        use crate::layout::{Assumptions, Dim};
        let half = Dim::sym("dim").floordiv(&Dim::lit(2));
        let arange = Layout::contiguous(vec![half.clone()]);
        let assumptions = Assumptions::default();
        let out = elementwise_output(&[&arange, &Layout::scalar()], &Decider::new(&assumptions));
        assert_eq!(out.unwrap(), Layout::contiguous(vec![half]));
    }

    #[test]
    fn transposed_inputs_stay_transposed() {
        // (E) x=(2,3,4) contiguous, xt = x.transpose(1,2) → (12,1,4); xt + 1, xt + xt,
        // xt + randn(3) all keep (12,1,4).
        let xt = layout(&[2, 4, 3], &[12, 1, 4]);
        let scalar = Layout::scalar();
        assert_eq!(output(&[&xt, &scalar]), vec![12, 1, 4]);
        assert_eq!(output(&[&xt, &xt]), vec![12, 1, 4]);
        assert_eq!(output(&[&xt, &layout(&[3], &[1])]), vec![12, 1, 4]);
    }

    #[test]
    fn first_operand_wins_among_full_size_inputs() {
        // (E) xt + xt.contiguous() → (12,1,4); xt.contiguous() + xt → contiguous.
        let xt = layout(&[2, 4, 3], &[12, 1, 4]);
        let c = Layout::contiguous(vec![2i64, 4, 3]);
        assert_eq!(output(&[&xt, &c]), vec![12, 1, 4]);
        assert_eq!(output(&[&c, &xt]), vec![12, 3, 1]);
    }

    #[test]
    fn full_size_operand_beats_broadcast_one() {
        // (E) b(3,1) + a(3,4 transposed) → strides (1,3).
        let b = Layout::contiguous(vec![3i64, 1]);
        let a = layout(&[3, 4], &[1, 3]);
        assert_eq!(output(&[&b, &a]), vec![1, 3]);
    }

    #[test]
    fn non_dense_input_gives_dense_output_in_its_order() {
        // (E) (2,4,3)/(1,12,4) + 1 → (1,6,2).
        let x = layout(&[2, 4, 3], &[1, 12, 4]);
        assert_eq!(output(&[&x, &Layout::scalar()]), vec![1, 6, 2]);
        // An expanded (stride-0) input alone gives a contiguous output.
        assert_eq!(output(&[&layout(&[3, 4], &[0, 1])]), vec![4, 1]);
    }

    #[test]
    fn fast_paths() {
        let nhwc = layout(&[2, 3, 4, 5], &[60, 1, 15, 3]);
        assert_eq!(output(&[&nhwc, &nhwc]), vec![60, 1, 15, 3]);
        let dense = layout(&[2, 3, 4], &[12, 1, 3]);
        assert_eq!(output(&[&dense, &dense]), vec![12, 1, 3]);
    }

    #[test]
    fn broadcast_errors_name_the_output_dimension() {
        let err = broadcast_shapes(&[2i64, 3], &[4, 1, 5], &Decider::concrete()).unwrap_err();
        assert_eq!(err.message, "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 2");
        assert_eq!(
            broadcast_shapes(&[3i64, 1], &[4], &Decider::concrete()).unwrap(),
            vec![3, 4]
        );
        assert_eq!(
            broadcast_shapes(&[0i64], &[1], &Decider::concrete()).unwrap(),
            vec![0]
        );
    }
}
