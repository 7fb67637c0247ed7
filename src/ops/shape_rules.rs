//! Shape rules of ops whose *output layout* is simply contiguous but whose *shape* must be
//! computed: matrix products, reductions, concatenation. (Layout rules live in
//! `crate::layout`; these are shape arithmetic with PyTorch's error messages, checked on
//! torch 2.15 CPU.) With symbolic sizes an undecidable check gives `Undecided`.

use crate::layout::elementwise::broadcast_shapes;
use crate::layout::{wrap_dim, Decider, LayoutError, LayoutErrorKind, Size, Tri};

/// The boolean behind a comparison, or the `Undecided` error.
fn decide(answer: Tri) -> Result<bool, LayoutError> {
    answer.known().ok_or_else(|| {
        LayoutError::new(
            LayoutErrorKind::Undecided,
            "undecidable under the assumptions",
        )
    })
}

fn mismatch(message: String) -> LayoutError {
    LayoutError::new(LayoutErrorKind::ShapeMismatch, message)
}

fn invalid(message: String) -> LayoutError {
    LayoutError::new(LayoutErrorKind::InvalidArgument, message)
}

pub(crate) fn product<S: Size>(sizes: &[S]) -> S {
    sizes.iter().fold(S::lit(1), |acc, s| acc.mul(s))
}

/// `[a, b]`, as PyTorch prints a size list.
pub(crate) fn torch_list<S: Size>(values: &[S]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// `torch.mm(a, b)`: `(n, k) @ (k, m) → (n, m)`.
pub fn mm_shape<S: Size>(a: &[S], b: &[S], dec: &Decider) -> Result<Vec<S>, LayoutError> {
    if a.len() != 2 {
        return Err(invalid(format!(
            "mm: self must be a matrix, got {}-D tensor",
            a.len()
        )));
    }
    if b.len() != 2 {
        return Err(invalid(format!(
            "mm: mat2 must be a matrix, got {}-D tensor",
            b.len()
        )));
    }
    check_mm(&a[0], &a[1], &b[0], &b[1], dec)?;
    Ok(vec![a[0].clone(), b[1].clone()])
}

/// The `mm` inner-dimension check and its message (`rows x k` and `k2 x cols`).
fn check_mm<S: Size>(rows: &S, k: &S, k2: &S, cols: &S, dec: &Decider) -> Result<(), LayoutError> {
    if !decide(dec.eq(k, k2))? {
        return Err(mismatch(format!(
            "mm: mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {k2}x{cols})"
        )));
    }
    Ok(())
}

/// `torch.bmm(a, b)`: `(B, n, k) @ (B, k, m) → (B, n, m)`, no broadcasting.
pub fn bmm_shape<S: Size>(a: &[S], b: &[S], dec: &Decider) -> Result<Vec<S>, LayoutError> {
    if a.len() != 3 {
        return Err(invalid("batch1 must be a 3D tensor".into()));
    }
    if b.len() != 3 {
        return Err(invalid("batch2 must be a 3D tensor".into()));
    }
    check_batched(&a[0], &a[2], &b[0], &b[1], dec)?;
    Ok(vec![a[0].clone(), a[1].clone(), b[2].clone()])
}

/// bmm's check of `batch2`'s first two dims against `[batch, k]`.
fn check_batched<S: Size>(
    batch: &S,
    k: &S,
    batch2: &S,
    k2: &S,
    dec: &Decider,
) -> Result<(), LayoutError> {
    if !(decide(dec.eq(batch, batch2))? && decide(dec.eq(k, k2))?) {
        return Err(mismatch(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: [{batch2}, {k2}]."
        )));
    }
    Ok(())
}

/// `torch.matmul(a, b)` / `a @ b` (ATen `_matmul_impl`): dot, mv, mm, and for an ND
/// operand either one folded mv/mm over its flattened leading dims or a broadcast batched
/// product. `folds` says whether ATen folds (see `ops::kinds::matmul`); the result shape
/// is the same either way, only the error message differs.
pub fn matmul_shape<S: Size>(
    a: &[S],
    b: &[S],
    folds: bool,
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    let (da, db) = (a.len(), b.len());
    if da == 0 || db == 0 {
        return Err(invalid(format!(
            "both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )));
    }
    match (da, db) {
        (1, 1) => {
            if !decide(dec.eq(&a[0], &b[0]))? {
                return Err(mismatch(format!(
                    "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                    a[0], b[0], a[0], b[0]
                )));
            }
            Ok(Vec::new())
        }
        (2, 1) => {
            check_mv(&a[0], &a[1], &b[0], dec)?;
            Ok(vec![a[0].clone()])
        }
        (1, 2) => {
            check_mm(&S::lit(1), &a[0], &b[0], &b[1], dec)?;
            Ok(vec![b[1].clone()])
        }
        (2, 2) => mm_shape(a, b, dec),
        (_, 1) | (_, 2) if folds => {
            // ND @ 1-D / 2-D folded into one mv / mm over a's flattened leading dims.
            let lead = &a[..da - 1];
            let rows = product(lead);
            let k = &a[da - 1];
            if db == 1 {
                check_mv(&rows, k, &b[0], dec)?;
                Ok(lead.to_vec())
            } else {
                check_mm(&rows, k, &b[0], &b[1], dec)?;
                let mut out = lead.to_vec();
                out.push(b[1].clone());
                Ok(out)
            }
        }
        (1, _) if folds => {
            // 1-D @ ND folded as `b.mT` (…, m, k) times the vector.
            let (lead, tail) = b.split_at(db - 2);
            let (k, m) = (&tail[0], &tail[1]);
            let rows = product(lead).mul(m);
            check_mv(&rows, k, &a[0], dec)?;
            let mut out = lead.to_vec();
            out.push(m.clone());
            Ok(out)
        }
        _ => {
            // Batched: broadcast the batch dims, then one bmm over their product.
            let (batch_a, n, k) = if da == 1 {
                (&a[..0], None, &a[0])
            } else {
                (&a[..da - 2], Some(&a[da - 2]), &a[da - 1])
            };
            let (batch_b, k2, m) = if db == 1 {
                (&b[..0], &b[0], None)
            } else {
                (&b[..db - 2], &b[db - 2], Some(&b[db - 1]))
            };
            let batch = broadcast_shapes(batch_a, batch_b, dec)?;
            let batch_numel = product(&batch);
            check_batched(&batch_numel, k, &batch_numel, k2, dec)?;
            let mut out = batch;
            out.extend(n.cloned());
            out.extend(m.cloned());
            Ok(out)
        }
    }
}

fn check_mv<S: Size>(rows: &S, k: &S, vec_len: &S, dec: &Decider) -> Result<(), LayoutError> {
    if !decide(dec.eq(k, vec_len))? {
        return Err(mismatch(format!(
            "size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({vec_len})"
        )));
    }
    Ok(())
}

/// `F.linear(input, weight)`: `input @ weight.t()` with `weight` of shape `(out, in)`.
/// The error is the folded mm's (`prod(leading) x in` and `in' x out`).
pub fn linear_shape<S: Size>(
    input: &[S],
    in_features: &S,
    out_features: &S,
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    let Some((k, lead)) = input.split_last() else {
        return Err(invalid(
            "both arguments to linear need to be at least 1D, but they are 0D and 2D".into(),
        ));
    };
    check_mm(&product(lead), k, in_features, out_features, dec)?;
    let mut out = lead.to_vec();
    out.push(out_features.clone());
    Ok(out)
}

/// The shape of a reduction over `dims` (`None` or empty = every dim), with `keepdim`.
pub fn reduced_shape<S: Size>(
    shape: &[S],
    dims: Option<&[i64]>,
    keepdim: bool,
) -> Result<Vec<S>, LayoutError> {
    let rank = shape.len();
    let mut reduced = vec![false; rank];
    match dims {
        None | Some([]) => reduced.iter_mut().for_each(|r| *r = true),
        Some(dims) => {
            for &dim in dims {
                let d = wrap_dim(dim, rank)?;
                if rank == 0 {
                    continue;
                }
                if reduced[d] {
                    return Err(invalid(format!(
                        "dim {d} appears multiple times in the list of dims"
                    )));
                }
                reduced[d] = true;
            }
        }
    }
    Ok(shape
        .iter()
        .zip(&reduced)
        .filter_map(|(size, &r)| match (r, keepdim) {
            (false, _) => Some(size.clone()),
            (true, true) => Some(S::lit(1)),
            (true, false) => None,
        })
        .collect())
}

/// `torch.cat(shapes, dim)`: the output shape (1-D empty inputs skipped, as ATen does).
pub fn cat_shape<S: Size>(shapes: &[&[S]], dim: i64, dec: &Decider) -> Result<Vec<S>, LayoutError> {
    if shapes.is_empty() {
        return Err(invalid(
            "torch.cat(): expected a non-empty list of Tensors".into(),
        ));
    }
    for (i, shape) in shapes.iter().enumerate() {
        if shape.is_empty() {
            return Err(invalid(format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            )));
        }
    }
    let skipped = |shape: &[S]| -> Result<bool, LayoutError> {
        Ok(shape.len() == 1 && decide(dec.eq_lit(&shape[0], 0))?)
    };
    let mut kept = Vec::with_capacity(shapes.len());
    for (i, shape) in shapes.iter().enumerate() {
        if !skipped(shape)? {
            kept.push((i, *shape));
        }
    }
    let Some(&(_, reference)) = kept.first() else {
        return Ok(vec![S::lit(0)]);
    };
    let d = wrap_dim(dim, reference.len())?;
    let mut total = S::lit(0);
    for &(i, shape) in &kept {
        if shape.len() != reference.len() {
            return Err(mismatch(format!(
                "Tensors must have same number of dimensions: got {} and {}",
                reference.len(),
                shape.len()
            )));
        }
        for (axis, (expected, got)) in reference.iter().zip(shape.iter()).enumerate() {
            if axis != d && !decide(dec.eq(expected, got))? {
                return Err(mismatch(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {expected} but got size {got} for tensor number {i} in the list."
                )));
            }
        }
        total = total.add(&shape[d]);
    }
    let mut out = reference.to_vec();
    out[d] = total;
    Ok(out)
}

/// `torch.stack(shapes, dim)`: equal shapes, a new dim of size `len(shapes)` at `dim`.
pub fn stack_shape<S: Size>(
    shapes: &[&[S]],
    dim: i64,
    dec: &Decider,
) -> Result<Vec<S>, LayoutError> {
    let Some(first) = shapes.first() else {
        return Err(invalid("stack expects a non-empty TensorList".into()));
    };
    let d = wrap_dim(dim, first.len() + 1)?;
    for (i, shape) in shapes.iter().enumerate().skip(1) {
        let equal = shape.len() == first.len()
            && shape
                .iter()
                .zip(first.iter())
                .try_fold(true, |acc, (a, b)| {
                    Ok::<bool, LayoutError>(acc && decide(dec.eq(a, b))?)
                })?;
        if !equal {
            return Err(mismatch(format!(
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                torch_list(first),
                torch_list(shape)
            )));
        }
    }
    let mut out = first.to_vec();
    out.insert(d, S::lit(shapes.len() as i64));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec() -> Decider<'static> {
        Decider::concrete()
    }

    fn err(r: Result<Vec<i64>, LayoutError>) -> String {
        r.unwrap_err().message
    }

    /// Shapes and messages observed on torch 2.15 CPU.
    #[test]
    fn matmul_shapes_and_messages_match_torch() {
        // Without folding (the batched path), as for operands whose leading dims do not merge.
        let m = |a: &[i64], b: &[i64]| matmul_shape(a, b, false, &dec());
        let folded = |a: &[i64], b: &[i64]| matmul_shape(a, b, true, &dec());
        assert_eq!(m(&[5, 3], &[3]).unwrap(), vec![5]);
        assert_eq!(m(&[3], &[3, 5]).unwrap(), vec![5]);
        assert_eq!(m(&[3], &[3]).unwrap(), Vec::<i64>::new());
        assert_eq!(m(&[3], &[2, 3, 5]).unwrap(), vec![2, 5]);
        assert_eq!(m(&[2, 5, 3], &[3]).unwrap(), vec![2, 5]);
        assert_eq!(m(&[2, 1, 4, 3], &[5, 3, 6]).unwrap(), vec![2, 5, 4, 6]);
        assert_eq!(m(&[4, 3], &[2, 2, 3, 5]).unwrap(), vec![2, 2, 4, 5]);
        assert_eq!(
            err(m(&[2, 3], &[4, 5])),
            "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
        );
        assert_eq!(
            err(folded(&[7, 2, 3], &[4, 5])),
            "mm: mat1 and mat2 shapes cannot be multiplied (14x3 and 4x5)"
        );
        assert_eq!(
            err(m(&[3, 4, 1, 3, 5], &[6, 2])),
            "Expected size for first two dimensions of batch2 tensor to be: [12, 5] but got: [12, 6]."
        );
        assert_eq!(
            err(m(&[3, 4, 1, 3, 5], &[6])),
            "Expected size for first two dimensions of batch2 tensor to be: [12, 5] but got: [12, 6]."
        );
        assert_eq!(m(&[3, 4, 1, 3, 5], &[5, 2]).unwrap(), vec![3, 4, 1, 3, 2]);
        assert_eq!(folded(&[4], &[2, 4, 5]).unwrap(), vec![2, 5]);
        assert_eq!(
            err(m(&[3], &[4, 5])),
            "mm: mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"
        );
        assert_eq!(
            err(m(&[5, 3], &[4])),
            "size mismatch, got input (5), mat (5x3), vec (4)"
        );
        assert_eq!(
            err(folded(&[7, 2, 3], &[4])),
            "size mismatch, got input (14), mat (14x3), vec (4)"
        );
        // 1-D @ ND folded through b.mT: (3,) @ (2,4,5) with mergeable b.mT → mv of (10x4).
        assert_eq!(
            err(folded(&[3], &[2, 4, 5])),
            "size mismatch, got input (10), mat (10x4), vec (3)"
        );
        assert_eq!(
            err(m(&[3], &[4])),
            "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively"
        );
        assert_eq!(
            err(m(&[7, 2, 3], &[6, 4, 5])),
            "The size of tensor a (7) must match the size of tensor b (6) at non-singleton dimension 0"
        );
        assert_eq!(
            err(m(&[2, 5, 3, 4], &[2, 5, 6, 7])),
            "Expected size for first two dimensions of batch2 tensor to be: [10, 4] but got: [10, 6]."
        );
        assert_eq!(err(m(&[3], &[2, 4, 5])), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
        assert_eq!(err(m(&[4, 3], &[2, 4, 5])), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
        assert_eq!(
            err(m(&[2, 3], &[])),
            "both arguments to matmul need to be at least 1D, but they are 2D and 0D"
        );
    }

    #[test]
    fn mm_bmm_linear_messages_match_torch() {
        assert_eq!(
            err(mm_shape(&[2, 3, 3], &[3, 5], &dec())),
            "mm: self must be a matrix, got 3-D tensor"
        );
        assert_eq!(
            err(mm_shape(&[2, 3], &[3, 4, 1], &dec())),
            "mm: mat2 must be a matrix, got 3-D tensor"
        );
        assert_eq!(
            err(bmm_shape(&[2, 3], &[3, 4], &dec())),
            "batch1 must be a 3D tensor"
        );
        assert_eq!(
            err(bmm_shape(&[7, 2, 3], &[6, 3, 5], &dec())),
            "Expected size for first two dimensions of batch2 tensor to be: [7, 3] but got: [6, 3]."
        );
        assert_eq!(
            bmm_shape(&[2, 3, 4], &[2, 4, 5], &dec()).unwrap(),
            vec![2, 3, 5]
        );
        // F.linear(randn(2,7,3), randn(5,4)): weight.t() is 4x5.
        assert_eq!(
            err(linear_shape(&[2, 7, 3], &4, &5, &dec())),
            "mm: mat1 and mat2 shapes cannot be multiplied (14x3 and 4x5)"
        );
        assert_eq!(
            err(linear_shape(&[3], &5, &4, &dec())),
            "mm: mat1 and mat2 shapes cannot be multiplied (1x3 and 5x4)"
        );
        assert_eq!(
            linear_shape(&[2, 4, 6], &6, &5, &dec()).unwrap(),
            vec![2, 4, 5]
        );
    }

    #[test]
    fn reductions_keep_or_drop_dims() {
        assert_eq!(
            reduced_shape(&[2i64, 3, 4], Some(&[1]), false).unwrap(),
            vec![2, 4]
        );
        assert_eq!(
            reduced_shape(&[2i64, 3, 4], Some(&[-1]), true).unwrap(),
            vec![2, 3, 1]
        );
        assert_eq!(
            reduced_shape(&[2i64, 3, 4], Some(&[0, 2]), true).unwrap(),
            vec![1, 3, 1]
        );
        // sum(dim=[]) and sum() reduce everything; argmax(keepdim=True) keeps ones.
        assert_eq!(
            reduced_shape(&[2i64, 3], Some(&[]), false).unwrap(),
            Vec::<i64>::new()
        );
        assert_eq!(reduced_shape(&[2i64, 3], None, true).unwrap(), vec![1, 1]);
        assert_eq!(
            reduced_shape(&[2i64, 3], Some(&[0, 0]), false)
                .unwrap_err()
                .message,
            "dim 0 appears multiple times in the list of dims"
        );
        assert_eq!(
            reduced_shape(&[2i64, 3], Some(&[2]), false)
                .unwrap_err()
                .message,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
        );
    }

    #[test]
    fn cat_and_stack_shapes_and_messages_match_torch() {
        let d = dec();
        assert_eq!(
            cat_shape(&[&[2i64, 3][..], &[2, 4]], 1, &d).unwrap(),
            vec![2, 7]
        );
        assert_eq!(
            cat_shape(&[&[0i64][..], &[2, 4]], 0, &d).unwrap(),
            vec![2, 4]
        );
        assert_eq!(
            cat_shape(&[&[2i64, 3][..], &[2, 4]], 0, &d).unwrap_err().message,
            "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list."
        );
        assert_eq!(
            cat_shape(&[&[2i64, 3][..], &[2, 4, 1]], 0, &d)
                .unwrap_err()
                .message,
            "Tensors must have same number of dimensions: got 2 and 3"
        );
        assert_eq!(
            cat_shape::<i64>(&[&[][..], &[]], 0, &d)
                .unwrap_err()
                .message,
            "zero-dimensional tensor (at position 0) cannot be concatenated"
        );
        assert_eq!(
            cat_shape::<i64>(&[], 0, &d).unwrap_err().message,
            "torch.cat(): expected a non-empty list of Tensors"
        );
        assert_eq!(
            stack_shape(&[&[2i64, 3][..], &[2, 3]], 1, &d).unwrap(),
            vec![2, 2, 3]
        );
        assert_eq!(
            stack_shape(&[&[2i64, 3][..], &[2, 4]], 0, &d).unwrap_err().message,
            "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1"
        );
        assert_eq!(
            stack_shape(&[&[2i64, 3][..]], 3, &d).unwrap_err().message,
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
        );
    }
}
