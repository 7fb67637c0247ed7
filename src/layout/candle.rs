//! candle's layout rules (spec §10), where they differ from PyTorch's.
//!
//! candle has no `view`: `reshape` is a view exactly when the input is contiguous *by
//! candle's test* (which has no zero-element shortcut and no chunk logic), and otherwise
//! copies. Its `matmul` kernels accept only some stride patterns and return an error for
//! the rest. Dimensions are `usize` in candle; here a negative `i64` dimension stands for
//! `D::Minus(k)`, and in shape arguments `S::lit(-1)` stands for the hole `()`.

use std::fmt;

use super::decided::{cite_exact_division, known, product, Undecided};
use super::error::{LayoutError, LayoutErrorKind};
use super::layout::Layout;
use super::reshape::MaybeCopy;
use super::size::{Decider, Size};
use super::tri::Tri;

/// Which candle build runs the code: the backends whose layout checks differ (§10.3, and
/// the contract table of `rules/candle.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CandleBackend {
    /// cuBLAS (`cuda` feature).
    Cuda,
    /// The `mkl` or `accelerate` CPU builds (BLAS with a leading-dimension argument).
    Mkl,
    /// The default CPU build (the `gemm` crate, arbitrary matrix strides).
    Cpu,
    /// Apple's Metal (`metal` feature; MLX's gemm kernels).
    Metal,
}

impl CandleBackend {
    /// Every backend, in the order findings name them.
    pub const ALL: [CandleBackend; 4] = [
        CandleBackend::Cuda,
        CandleBackend::Metal,
        CandleBackend::Mkl,
        CandleBackend::Cpu,
    ];

    /// The backend a table or a configuration names: `cpu`, `mkl` (or `accelerate`),
    /// `cuda`, `metal`.
    pub fn parse(text: &str) -> Option<CandleBackend> {
        match text.trim().to_ascii_lowercase().as_str() {
            "cuda" => Some(CandleBackend::Cuda),
            "mkl" | "accelerate" => Some(CandleBackend::Mkl),
            "cpu" => Some(CandleBackend::Cpu),
            "metal" => Some(CandleBackend::Metal),
            _ => None,
        }
    }

    /// How a finding names the backend to a reader.
    pub fn describe(self) -> &'static str {
        match self {
            CandleBackend::Cuda => "CUDA",
            CandleBackend::Mkl => "mkl/accelerate",
            CandleBackend::Cpu => "CPU (gemm crate)",
            CandleBackend::Metal => "Metal",
        }
    }
}

impl fmt::Display for CandleBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CandleBackend::Cuda => "cuda",
            CandleBackend::Mkl => "mkl/accelerate",
            CandleBackend::Cpu => "cpu",
            CandleBackend::Metal => "metal",
        })
    }
}

/// The matrix-stride test a matmul backend applies to each operand (§10.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixRule {
    /// Any strides (the `gemm` crate takes a row and a column stride).
    Any,
    /// Row-major or column-major with the exact leading dimension, a size-1 dim excusing
    /// the condition on it (cuBLAS `gemm_config`, MLX `call_mlx_gemm`).
    Lenient,
    /// As `Lenient`, but the column-major test has no size-1 escapes (mkl/accelerate).
    Strict,
}

/// What one backend's matmul checks: the batch-dim rule (`ab_skip`) and a matrix rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatmulRules {
    /// The batch dims must merge into one batch stride (rank ≤ 4 and mergeable).
    pub batch: bool,
    pub matrix: MatrixRule,
}

impl MatmulRules {
    /// The rules built into candle 0.11.1 for `backend` (`rules/candle.toml` holds the same
    /// as data; `tests/it/rust_tables.rs` checks the two agree).
    pub fn of(backend: CandleBackend) -> MatmulRules {
        match backend {
            CandleBackend::Cpu => MatmulRules {
                batch: true,
                matrix: MatrixRule::Any,
            },
            CandleBackend::Mkl => MatmulRules {
                batch: true,
                matrix: MatrixRule::Strict,
            },
            CandleBackend::Cuda => MatmulRules {
                batch: true,
                matrix: MatrixRule::Lenient,
            },
            // MLX's kernel reads one batch stride (stride[-3]) and never rejects batch dims.
            CandleBackend::Metal => MatmulRules {
                batch: false,
                matrix: MatrixRule::Lenient,
            },
        }
    }
}

/// candle's `Shape::is_contiguous`: innermost first, every dimension of size > 1 must have
/// the stride equal to the product of the sizes walked so far. Unlike PyTorch there is no
/// zero-element shortcut: after a size-0 dimension the product is 0, so `(2, 0, 3)` with
/// strides `(3, 3, 1)` is *not* contiguous for candle.
pub fn candle_is_contiguous<S: Size>(layout: &Layout<S>, dec: &Decider) -> Tri {
    let mut expected = S::lit(1);
    let mut answer = Tri::Yes;
    for (size, stride) in layout.shape.iter().zip(&layout.strides).rev() {
        let stride_matches = dec.eq(stride, &expected);
        let dim_ok = if stride_matches.is_yes() {
            Tri::Yes
        } else {
            stride_matches.or(dec.le(size, &S::lit(1)))
        };
        answer = answer.and(dim_ok);
        if answer.is_no() {
            return Tri::No;
        }
        expected = expected.mul(size);
    }
    answer
}

/// candle's `Shape::stride_contiguous`: plain row-major products (a zero-size dimension
/// zeroes every stride outside it — PyTorch would count it as 1).
pub fn candle_contiguous_strides<S: Size>(shape: &[S]) -> Vec<S> {
    let mut strides = vec![S::lit(1); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].mul(&shape[d + 1]);
    }
    strides
}

/// `reshape(shape)`: a view (contiguous strides, same offset) when
/// [`candle_is_contiguous`], otherwise a contiguous copy with offset 0. `S::lit(-1)` is
/// the hole `()` of `ShapeWithOneHole`.
pub fn candle_reshape<S: Size>(
    layout: &Layout<S>,
    target: &[S],
    dec: &Decider,
) -> Result<MaybeCopy<S>, LayoutError> {
    let numel = layout.numel();
    let shape = resolve_hole(target, &numel, dec)?;
    if !known(dec.eq(&product(&shape), &numel))? {
        return Err(LayoutError::shape_mismatch(format!(
            "shape mismatch in reshape, lhs: {}, rhs: {}",
            candle_shape(&layout.shape),
            candle_shape(&shape)
        )));
    }
    let strides = candle_contiguous_strides(&shape);
    Ok(match candle_is_contiguous(layout, dec) {
        Tri::Yes => MaybeCopy::alias(Layout::new(shape, strides, layout.offset.clone())),
        Tri::No => MaybeCopy::copy(Layout::new(shape, strides, S::lit(0))),
        Tri::Unknown => MaybeCopy::undecided(shape, Tri::Unknown),
    })
}

/// `ShapeWithOneHole::into_shape`: fill the `()` with `numel / product(rest)`.
fn resolve_hole<S: Size>(target: &[S], numel: &S, dec: &Decider) -> Result<Vec<S>, LayoutError> {
    let hole = S::lit(-1);
    let mut holes = Vec::new();
    for (i, size) in target.iter().enumerate() {
        if known(dec.eq(size, &hole))? {
            holes.push(i);
        }
    }
    let index = match holes[..] {
        [] => return Ok(target.to_vec()),
        [index] => index,
        _ => {
            return Err(LayoutError::invalid(
                "candle's reshape accepts at most one hole `()` (more do not type-check)",
            ))
        }
    };
    let rest: Vec<S> = target
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != index)
        .map(|(_, size)| size.clone())
        .collect();
    let rest_product = product(&rest);
    if known(dec.eq_lit(&rest_product, 0))? {
        return Err(LayoutError::shape_mismatch(format!(
            "cannot reshape tensor of {numel} elements to {}",
            hole_tuple(target, index)
        )));
    }
    let quotient = numel.floordiv(&rest_product);
    if !known(dec.eq(&quotient.mul(&rest_product), numel))? {
        return Err(LayoutError::shape_mismatch(format!(
            "cannot reshape tensor with {numel} elements to {}",
            hole_tuple(target, index)
        )));
    }
    cite_exact_division(&rest_product, numel, dec);
    let mut shape = target.to_vec();
    shape[index] = quotient;
    Ok(shape)
}

/// The hole tuple as candle prints it (`{:?}` of a Rust tuple): `(2, ())`, `((),)`.
fn hole_tuple<S: Size>(target: &[S], hole: usize) -> String {
    let items: Vec<String> = target
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i == hole {
                "()".to_string()
            } else {
                s.to_string()
            }
        })
        .collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// A shape as candle's `{:?}` prints it: `[2, 3]`.
fn candle_shape<S: Size>(shape: &[S]) -> String {
    let items: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// candle's dimension argument: `0..rank`, or negative for `D::Minus(k)`.
fn candle_dim<S: Size>(layout: &Layout<S>, dim: i64, op: &str) -> Result<usize, LayoutError> {
    let rank = layout.rank() as i64;
    let index = if dim < 0 { rank + dim } else { dim };
    if index < 0 || index >= rank {
        return Err(LayoutError::new(
            LayoutErrorKind::DimOutOfRange,
            format!(
                "{op}: dimension index {dim} out of range for {}",
                candle_shape(&layout.shape)
            ),
        ));
    }
    Ok(index as usize)
}

/// `narrow(dim, start, len)`: offset `+= stride·start`, size `len`.
pub fn candle_narrow<S: Size>(
    layout: &Layout<S>,
    dim: i64,
    start: &S,
    len: &S,
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let d = candle_dim(layout, dim, "narrow")?;
    let size = &layout.shape[d];
    let fail = |msg: &str| {
        LayoutError::invalid(format!(
            "narrow invalid args {msg}: {}, dim: {d}, start: {start}, len:{len}",
            candle_shape(&layout.shape)
        ))
    };
    // Bounds the analysis cannot decide (`narrow(D::Minus1, 0, rot)` of a head of `d`)
    // give the narrowed layout: the code after the call runs only where candle's check
    // passed, as a reshape's success teaches its sizes.
    if dec.lt(size, start) == Tri::Yes {
        return Err(fail("start > dim_len"));
    }
    if dec.lt(size, &start.add(len)) == Tri::Yes {
        return Err(fail("start + len > dim_len"));
    }
    dec.learn_upper_bound(start, size);
    dec.learn_upper_bound(&start.add(len), size);
    let mut out = layout.clone();
    out.offset = layout.offset.add(&start.mul(&layout.strides[d]));
    out.shape[d] = len.clone();
    Ok(out)
}

/// `chunk(chunks, dim)`: always `min(chunks, size)` pieces; the first `size % chunks` are
/// one longer (size 5 in 4 chunks → 2, 1, 1, 1 — PyTorch gives 2, 2, 1).
pub fn candle_chunk<S: Size>(
    layout: &Layout<S>,
    chunks: usize,
    dim: i64,
    dec: &Decider,
) -> Result<Vec<Layout<S>>, LayoutError> {
    let d = candle_dim(layout, dim, "chunk")?;
    let size = layout.shape[d].clone();
    let chunk_count = S::lit(chunks as i64);
    if known(dec.lt(&size, &chunk_count))? {
        let count = size.as_lit().ok_or(Undecided)?;
        return (0..count)
            .map(|i| candle_narrow(layout, d as i64, &S::lit(i), &S::lit(1), dec))
            .collect();
    }
    if chunks == 0 {
        return Err(LayoutError::invalid(
            "chunk: chunks must be positive (candle divides by zero and panics)",
        ));
    }
    let base = size.floordiv(&chunk_count);
    let longer = size
        .sub(&base.mul(&chunk_count))
        .as_lit()
        .ok_or(Undecided)?;
    let mut pieces = Vec::with_capacity(chunks);
    let mut start = S::lit(0);
    for i in 0..chunks as i64 {
        let length = if i < longer {
            base.add(&S::lit(1))
        } else {
            base.clone()
        };
        pieces.push(candle_narrow(layout, d as i64, &start, &length, dec)?);
        start = start.add(&length);
    }
    Ok(pieces)
}

/// `t()`: swaps the *last two* dimensions and needs rank ≥ 2 (PyTorch's `t()` is for rank
/// ≤ 2 only).
pub fn candle_t<S: Size>(layout: &Layout<S>) -> Result<Layout<S>, LayoutError> {
    let rank = layout.rank();
    if rank < 2 {
        return Err(LayoutError::invalid(format!(
            "unexpected rank, expected: 2, got: {rank} ({})",
            candle_shape(&layout.shape)
        )));
    }
    let mut out = layout.clone();
    out.shape.swap(rank - 2, rank - 1);
    out.strides.swap(rank - 2, rank - 1);
    Ok(out)
}

/// `broadcast_as(shape)` / `expand(shape)`: new leading dimensions get stride 0 (even of
/// size 1), equal sizes keep their stride, size 1 stretches with stride 0. No `-1`.
pub fn candle_broadcast_as<S: Size>(
    layout: &Layout<S>,
    shape: &[S],
    dec: &Decider,
) -> Result<Layout<S>, LayoutError> {
    let fail = || {
        LayoutError::shape_mismatch(format!(
            "cannot broadcast {} to {}",
            candle_shape(&layout.shape),
            candle_shape(shape)
        ))
    };
    if shape.len() < layout.rank() {
        return Err(fail());
    }
    let added = shape.len() - layout.rank();
    let mut strides = vec![S::lit(0); added];
    for ((target, size), stride) in shape[added..]
        .iter()
        .zip(&layout.shape)
        .zip(&layout.strides)
    {
        if known(dec.eq(target, size))? {
            strides.push(stride.clone());
        } else if known(dec.eq_lit(size, 1))? {
            strides.push(S::lit(0));
        } else {
            return Err(fail());
        }
    }
    Ok(Layout::new(shape.to_vec(), strides, layout.offset.clone()))
}

/// Whether candle's `matmul(lhs, rhs)` accepts the operands' strides, and why not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MatmulCheck {
    pub ok: Tri,
    /// For `ok == No`: which check fails, in words (candle's own messages carry whole
    /// `Layout` dumps; this names the failing rule instead).
    pub reason: Option<String>,
    /// For `ok == No`: the operand whose strides the check rejects (`"lhs"` or `"rhs"`);
    /// `None` when the shapes do not match.
    pub rejected: Option<&'static str>,
    /// For `ok == No` on strides: whether the batch-dim rule (rather than the matrix
    /// rule) is the one that fails.
    pub batch_rule: bool,
}

/// candle's `matmul` (§10.3): shape checks, then the backend's stride checks.
///
/// * Shapes: same rank ≥ 2, equal `k`, equal *products* of batch dims (no broadcasting).
///   An empty result (or `k == 0`) returns zeros before any stride check.
/// * Batch dims (every backend): none, one (any stride), or two that merge
///   (`stride[0] == stride[1]·dims[1]`, or either of size 1); three or more fail.
/// * Matrix dims, cuBLAS and mkl/accelerate: row-major with leading dimension exactly the
///   row length, or column-major likewise (cuBLAS also excuses size-1 dims there). The
///   default CPU build accepts any matrix strides.
pub fn candle_matmul_ok<S: Size>(
    lhs: &Layout<S>,
    rhs: &Layout<S>,
    backend: CandleBackend,
    dec: &Decider,
) -> MatmulCheck {
    candle_matmul_check(
        lhs,
        rhs,
        MatmulRules::of(backend),
        &backend.to_string(),
        dec,
    )
}

/// [`candle_matmul_ok`] with the rules given: `label` names the backend in the reason.
pub fn candle_matmul_check<S: Size>(
    lhs: &Layout<S>,
    rhs: &Layout<S>,
    rules: MatmulRules,
    label: &str,
    dec: &Decider,
) -> MatmulCheck {
    verdict(check_matmul(lhs, rhs, rules, label, dec))
}

/// Whether one operand alone makes `matmul` fail under `rules`, whatever the other operand
/// (of any layout, of the shape that makes the call's shapes agree): its batch dims do not
/// merge, or its matrix is neither row- nor column-major. `side` is `"lhs"` (its matrix is
/// `m × k`) or `"rhs"` (`k × n`); both sizes are read from the operand itself. (A partner
/// giving an empty result, where candle returns zeros before any check, is excluded by the
/// caller's assumption that sizes are at least 1.)
pub fn candle_matmul_operand_check<S: Size>(
    operand: &Layout<S>,
    side: &'static str,
    rules: MatmulRules,
    label: &str,
    dec: &Decider,
) -> MatmulCheck {
    let rank = operand.rank();
    if rank < 2 {
        return verdict(Err(Undecided));
    }
    let (rows, cols) = (&operand.shape[rank - 2], &operand.shape[rank - 1]);
    let empty = dec.eq_lit(&product(&operand.shape), 0);
    let result = known(empty).and_then(|empty| {
        if empty {
            return Ok(None);
        }
        operand_failure(operand, side, rows, cols, rules, label, dec)
    });
    verdict(result)
}

fn verdict(result: Result<Option<Rejection>, Undecided>) -> MatmulCheck {
    match result {
        Ok(None) => MatmulCheck {
            ok: Tri::Yes,
            reason: None,
            rejected: None,
            batch_rule: false,
        },
        Ok(Some(r)) => MatmulCheck {
            ok: Tri::No,
            batch_rule: r.batch_rule,
            reason: Some(r.reason),
            rejected: r.operand,
        },
        Err(Undecided) => MatmulCheck {
            ok: Tri::Unknown,
            reason: None,
            rejected: None,
            batch_rule: false,
        },
    }
}

/// `Ok(None)`: accepted; `Ok(Some((operand, reason)))`: rejected, for the strides of
/// `operand` (`None`: for the shapes).
fn check_matmul<S: Size>(
    lhs: &Layout<S>,
    rhs: &Layout<S>,
    rules: MatmulRules,
    backend: &str,
    dec: &Decider,
) -> Result<Option<Rejection>, Undecided> {
    let rank = lhs.rank();
    let shape_mismatch = || {
        let reason = format!(
            "shape mismatch in matmul, lhs: {}, rhs: {}",
            candle_shape(&lhs.shape),
            candle_shape(&rhs.shape)
        );
        Some(Rejection {
            operand: None,
            reason,
            batch_rule: false,
        })
    };
    if rank < 2 || rhs.rank() != rank {
        return Ok(shape_mismatch());
    }
    let (m, k) = (&lhs.shape[rank - 2], &lhs.shape[rank - 1]);
    let (k2, n) = (&rhs.shape[rank - 2], &rhs.shape[rank - 1]);
    let lhs_batch = product(&lhs.shape[..rank - 2]);
    let result_numel = lhs_batch.mul(m).mul(n);
    if known(dec.eq_lit(&result_numel, 0).or(dec.eq_lit(k, 0)))? {
        return Ok(None);
    }
    if !known(
        dec.eq(k, k2)
            .and(dec.eq(&lhs_batch, &product(&rhs.shape[..rank - 2]))),
    )? {
        return Ok(shape_mismatch());
    }
    for (side, layout, rows, cols) in [("lhs", lhs, m, k), ("rhs", rhs, k, n)] {
        if let Some(failure) = operand_failure(layout, side, rows, cols, rules, backend, dec)? {
            return Ok(Some(failure));
        }
    }
    Ok(None)
}

/// Why a matmul is rejected: the operand whose strides fail (`None`: the shapes), in
/// words, and whether the batch-dim rule (rather than the matrix rule) is the one failed.
struct Rejection {
    operand: Option<&'static str>,
    reason: String,
    batch_rule: bool,
}

/// The first check of `rules` that `layout` (a `rows × cols` operand) fails, in words.
fn operand_failure<S: Size>(
    layout: &Layout<S>,
    side: &'static str,
    rows: &S,
    cols: &S,
    rules: MatmulRules,
    backend: &str,
    dec: &Decider,
) -> Result<Option<Rejection>, Undecided> {
    let rank = layout.rank();
    if rules.batch && !known(batch_strides_ok(layout, dec))? {
        return Ok(Some(Rejection {
            operand: Some(side),
            reason: format!(
                "non-contiguous {side}: candle's {backend} matmul needs the batch dims of {side} to merge into one batch stride, got shape {} strides {}",
                candle_shape(&layout.shape),
                candle_shape(&layout.strides)
            ),
            batch_rule: true,
        }));
    }
    let lenient = match rules.matrix {
        MatrixRule::Any => return Ok(None),
        MatrixRule::Lenient => true,
        MatrixRule::Strict => false,
    };
    if !known(matrix_strides_ok(layout, rows, cols, lenient, dec))? {
        return Ok(Some(Rejection {
            operand: Some(side),
            reason: format!(
            "non-contiguous {side}: candle's {backend} matmul needs the last two strides of {side} to be row-major ({cols}, 1) or column-major (1, {rows}), got {}",
            candle_shape(&layout.strides[rank - 2..])
        ),
            batch_rule: false,
        }));
    }
    Ok(None)
}

/// The operands of the matmul that `candle_nn::Linear::forward` runs on `input`
/// (candle-nn 0.11.1 `linear.rs` l.43–73), its weight `(n, k)` contiguous (as a
/// `VarBuilder` gives it): a contiguous 3-d or 4-d input is reshaped to `(b·m, k)`; a
/// non-contiguous one meets the weight broadcast over its batch dims and transposed,
/// strides `(0…, 1, k)`; any other rank is the lhs as it is, against `w.t()`, strides
/// `(1, k)` (a rank other than 2 then fails the matmul's shape check). `None` when the
/// input's contiguity cannot be decided.
pub fn candle_linear_operands<S: Size>(
    input: &Layout<S>,
    out_features: &S,
    dec: &Decider,
) -> Option<(Layout<S>, Layout<S>)> {
    let rank = input.rank();
    if rank == 0 {
        return None;
    }
    let k = input.shape[rank - 1].clone();
    let weight_t = |batch: &[S]| {
        let mut shape = batch.to_vec();
        shape.extend([k.clone(), out_features.clone()]);
        let mut strides = vec![S::lit(0); batch.len()];
        strides.extend([S::lit(1), k.clone()]);
        Layout::new(shape, strides, S::lit(0))
    };
    if rank == 3 || rank == 4 {
        let batch = &input.shape[..rank - 2];
        if known(candle_is_contiguous(input, dec)).ok()? {
            let rows = product(&input.shape[..rank - 1]);
            let shape = vec![rows, k.clone()];
            let strides = candle_contiguous_strides(&shape);
            let lhs = Layout::new(shape, strides, input.offset.clone());
            return Some((lhs, weight_t(&[])));
        }
        return Some((input.clone(), weight_t(batch)));
    }
    Some((input.clone(), weight_t(&[])))
}

/// `MatMul::ab_skip` / `gemm_config`'s batch-stride rule.
fn batch_strides_ok<S: Size>(layout: &Layout<S>, dec: &Decider) -> Tri {
    let batch = layout.rank() - 2;
    match batch {
        0 | 1 => Tri::Yes,
        2 => {
            let (dims, strides) = (&layout.shape, &layout.strides);
            dec.eq(&strides[0], &strides[1].mul(&dims[1]))
                .or(dec.eq_lit(&dims[0], 1))
                .or(dec.eq_lit(&dims[1], 1))
        }
        _ => Tri::No,
    }
}

/// The matrix-stride rule for a `rows × cols` operand: row-major (`t[-1] == 1`,
/// `t[-2] == cols`) or column-major (`t[-1] == rows`, `t[-2] == 1`). cuBLAS (`lenient`)
/// excuses each condition when the dimension it describes has size 1; mkl/accelerate do so
/// for the row-major test only.
fn matrix_strides_ok<S: Size>(
    layout: &Layout<S>,
    rows: &S,
    cols: &S,
    lenient: bool,
    dec: &Decider,
) -> Tri {
    let rank = layout.rank();
    let (row_stride, col_stride) = (&layout.strides[rank - 2], &layout.strides[rank - 1]);
    let rows_one = dec.eq_lit(rows, 1);
    let cols_one = dec.eq_lit(cols, 1);
    let row_major = dec
        .eq_lit(col_stride, 1)
        .or(cols_one)
        .and(dec.eq(row_stride, cols).or(rows_one));
    let column_major = if lenient {
        dec.eq(col_stride, rows)
            .or(cols_one)
            .and(dec.eq_lit(row_stride, 1).or(rows_one))
    } else {
        dec.eq(col_stride, rows).and(dec.eq_lit(row_stride, 1))
    };
    row_major.or(column_major)
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
    fn contiguity_without_the_zero_element_shortcut() {
        assert_eq!(
            candle_is_contiguous(&layout(&[2, 0, 3], &[3, 3, 1]), &dec()),
            Tri::No
        );
        assert_eq!(
            candle_is_contiguous(&layout(&[2, 0, 3], &[0, 3, 1]), &dec()),
            Tri::Yes
        );
        assert_eq!(
            candle_is_contiguous(&layout(&[1, 16, 5, 5], &[20, 25, 5, 1]), &dec()),
            Tri::Yes
        );
        assert_eq!(candle_contiguous_strides(&[2i64, 0, 3]), vec![0, 3, 1]);
    }

    #[test]
    fn reshape_copies_unless_contiguous() {
        // Conformance row 52: sliced (2,3,4)/(24,4,1) → PyTorch view, candle copy.
        let sliced = Layout::new(vec![2i64, 3, 4], vec![24, 4, 1], 4);
        let out = candle_reshape(&sliced, &[2, 12], &dec()).unwrap();
        assert_eq!(
            (out.copies, out.layout),
            (Tri::Yes, Some(layout(&[2, 12], &[12, 1])))
        );
        let contiguous = Layout::new(vec![2i64, 3, 4], vec![12, 4, 1], 4);
        let out = candle_reshape(&contiguous, &[-1, 4], &dec()).unwrap();
        assert_eq!(
            (out.copies, out.layout),
            (Tri::No, Some(Layout::new(vec![6, 4], vec![4, 1], 4)))
        );
    }

    #[test]
    fn reshape_errors() {
        let x = Layout::contiguous(vec![2i64, 3]);
        assert_eq!(
            candle_reshape(&x, &[4, -1], &dec()).unwrap_err().message,
            "cannot reshape tensor with 6 elements to (4, ())"
        );
        assert_eq!(
            candle_reshape(&x, &[0, -1], &dec()).unwrap_err().message,
            "cannot reshape tensor of 6 elements to (0, ())"
        );
        assert_eq!(
            candle_reshape(&x, &[5], &dec()).unwrap_err().message,
            "shape mismatch in reshape, lhs: [2, 3], rhs: [5]"
        );
        assert_eq!(candle_reshape(&x, &[-1], &dec()).unwrap().shape, vec![6]);
    }

    #[test]
    fn chunk_returns_min_of_chunks_and_size() {
        let sizes = |size: i64, chunks: usize| -> Vec<i64> {
            candle_chunk(&Layout::contiguous(vec![size]), chunks, 0, &dec())
                .unwrap()
                .iter()
                .map(|p| p.shape[0])
                .collect()
        };
        assert_eq!(sizes(5, 4), vec![2, 1, 1, 1]);
        assert_eq!(sizes(3, 5), vec![1, 1, 1]);
        let pieces = candle_chunk(&Layout::contiguous(vec![6i64, 2]), 3, -2, &dec()).unwrap();
        assert_eq!(pieces[2].offset, 8);
    }

    #[test]
    fn t_swaps_the_last_two_dims() {
        assert_eq!(
            candle_t(&Layout::contiguous(vec![2i64, 3, 4])).unwrap(),
            layout(&[2, 4, 3], &[12, 1, 4])
        );
        assert_eq!(
            candle_t(&Layout::contiguous(vec![3i64]))
                .unwrap_err()
                .message,
            "unexpected rank, expected: 2, got: 1 ([3])"
        );
    }

    #[test]
    fn broadcast_as_gives_new_dims_stride_zero() {
        let x = Layout::contiguous(vec![3i64, 1]);
        assert_eq!(
            candle_broadcast_as(&x, &[1, 3, 4], &dec()).unwrap(),
            layout(&[1, 3, 4], &[0, 1, 0])
        );
        assert_eq!(
            candle_broadcast_as(&x, &[2, 4], &dec())
                .unwrap_err()
                .message,
            "cannot broadcast [3, 1] to [2, 4]"
        );
    }

    #[test]
    fn matmul_stride_rules() {
        let a = Layout::contiguous(vec![2i64, 3, 4]);
        let b = Layout::contiguous(vec![2i64, 4, 5]);
        for backend in [CandleBackend::Cuda, CandleBackend::Mkl, CandleBackend::Cpu] {
            assert_eq!(candle_matmul_ok(&a, &b, backend, &dec()).ok, Tri::Yes);
        }
        // A narrowed matrix (row stride 8 > width 4) fails cuBLAS/mkl, passes the gemm CPU build.
        let narrowed = layout(&[2, 3, 4], &[24, 8, 1]);
        assert_eq!(
            candle_matmul_ok(&narrowed, &b, CandleBackend::Cuda, &dec()).ok,
            Tri::No
        );
        assert_eq!(
            candle_matmul_ok(&narrowed, &b, CandleBackend::Cpu, &dec()).ok,
            Tri::Yes
        );
        // Transposed (column-major) operands are fine for BLAS.
        let bt = layout(&[2, 4, 5], &[20, 1, 4]);
        assert_eq!(
            candle_matmul_ok(&a, &bt, CandleBackend::Mkl, &dec()).ok,
            Tri::Yes
        );
        // Rank 5: three batch dims always fail.
        let a5 = Layout::contiguous(vec![2i64, 2, 2, 3, 4]);
        let b5 = Layout::contiguous(vec![2i64, 2, 2, 4, 5]);
        let check = candle_matmul_ok(&a5, &b5, CandleBackend::Cpu, &dec());
        assert_eq!(check.ok, Tri::No);
        assert!(check.reason.unwrap().starts_with("non-contiguous lhs"));
        // Batch products must match; the batch dims themselves need not.
        let lhs = Layout::contiguous(vec![2i64, 3, 5, 4]);
        let rhs = Layout::contiguous(vec![3i64, 2, 4, 6]);
        assert_eq!(
            candle_matmul_ok(&lhs, &rhs, CandleBackend::Cpu, &dec()).ok,
            Tri::Yes
        );
        let mismatch = candle_matmul_ok(
            &a,
            &Layout::contiguous(vec![2i64, 5, 5]),
            CandleBackend::Cpu,
            &dec(),
        );
        assert_eq!(
            mismatch.reason.as_deref(),
            Some("shape mismatch in matmul, lhs: [2, 3, 4], rhs: [2, 5, 5]")
        );
    }
}
