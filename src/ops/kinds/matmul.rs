//! Matrix products and lookups (spec §6.2): `matmul`/`@`, `mm`, `bmm`, `addmm`, `baddbmm`,
//! `linear`, `nn.Linear`, `embedding`, `nn.Embedding`: contiguous outputs of a computed
//! shape.

use super::{bool_arg, size_arg, tensor_arg, Outcome};
use crate::layout::{view_strides, Decider, Layout, LayoutError, Size, Tri, ViewStrides};
use crate::ops::bind::BoundArgs;
use crate::ops::shape_rules::{bmm_shape, linear_shape, matmul_shape, mm_shape, product};
use crate::ops::transfer::{OpErrorKind, Transfer};

fn contiguous_result<S: Size>(
    shape: Result<Vec<S>, LayoutError>,
) -> Result<Transfer<S>, Transfer<S>> {
    shape
        .map(|shape| Transfer::tensor(Layout::contiguous(shape)))
        .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::ElementCount))
}

/// Is `layout.view(-1, layout.size(-1))` possible (computeStride, spec §3)? That is the
/// fold `matmul` and `linear` apply to an ND operand: a view when possible, else a copy.
fn folds_into_a_view<S: Size>(layout: &Layout<S>, d: &Decider) -> Tri {
    let Some((k, lead)) = layout.shape.split_last() else {
        return Tri::No;
    };
    match view_strides(layout, &[product(lead), k.clone()], d) {
        ViewStrides::Strides(_) => Tri::Yes,
        ViewStrides::NotViewable => Tri::No,
        ViewStrides::Unknown => Tri::Unknown,
    }
}

/// Does ATen's `matmul` fold an ND (≥ 3) operand times a 1-D/2-D one into a single mm/mv
/// (ATen `should_fold`)? Observed on torch 2.15 through the error messages of both paths:
/// it folds when the larger operand (`b.mT` for `1-D @ ND`) is empty or folds into a view
/// (`(2,1,3,4)/(12,100,4,1)` does, `(2,3,4)/(24,4,1)` does not). It also folds whenever
/// the smaller operand requires grad, which a static analysis cannot see: this answers for
/// inference (no grad). `2-D @ ND` then never folds.
fn folds<S: Size>(a: &Layout<S>, b: &Layout<S>, d: &Decider) -> Tri {
    let empty_or_merges = |larger: &Layout<S>| {
        d.eq_lit(&larger.numel(), 0)
            .or(folds_into_a_view(larger, d))
    };
    match (a.rank(), b.rank()) {
        (ra, 1 | 2) if ra >= 3 => empty_or_merges(a),
        (1, rb) if rb >= 3 => {
            let mut transposed = b.clone();
            transposed.shape.swap(rb - 2, rb - 1);
            transposed.strides.swap(rb - 2, rb - 1);
            empty_or_merges(&transposed)
        }
        _ => Tri::No,
    }
}

pub fn matmul<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let (a, b) = (tensor_arg(args, "input")?, tensor_arg(args, "other")?);
    let fold = folds(a, b, d);
    // Folding changes only the error message, never the result: an undecided fold with a
    // failing product still fails (reported with the batched path's message).
    let shape = match matmul_shape(&a.shape, &b.shape, fold.is_yes(), d) {
        Err(e) if fold == Tri::Unknown && !e.is_undecided() => {
            matmul_shape(&a.shape, &b.shape, false, d)
        }
        other => other,
    };
    // The product of a non-folding ND operand goes through `reshape` of its batch dims,
    // which may copy (source only; not modelled precisely).
    let copies = if a.rank() >= 3 && fold != Tri::Yes {
        Tri::Unknown
    } else {
        Tri::No
    };
    Ok(contiguous_result(shape)?.with_copy(copies, a.numel()))
}

pub fn mm<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let (a, b) = (tensor_arg(args, "input")?, tensor_arg(args, "mat2")?);
    contiguous_result(mm_shape(&a.shape, &b.shape, d))
}

pub fn bmm<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let (a, b) = (tensor_arg(args, "input")?, tensor_arg(args, "mat2")?);
    contiguous_result(bmm_shape(&a.shape, &b.shape, d))
}

/// `addmm(input, mat1, mat2)`: the product's shape (`input` broadcasts to it).
pub fn addmm<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let (a, b) = (tensor_arg(args, "mat1")?, tensor_arg(args, "mat2")?);
    contiguous_result(mm_shape(&a.shape, &b.shape, d))
}

pub fn baddbmm<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let (a, b) = (tensor_arg(args, "batch1")?, tensor_arg(args, "batch2")?);
    contiguous_result(bmm_shape(&a.shape, &b.shape, d))
}

/// `linear` on an ND (≥ 3) input goes through matmul's folding (spec §6.2): a reshape of
/// the leading dims, which may copy when they do not merge into a view.
fn linear_copies<S: Size>(input: &Layout<S>, d: &Decider) -> Tri {
    if input.rank() >= 3 && !folds_into_a_view(input, d).is_yes() {
        Tri::Unknown
    } else {
        Tri::No
    }
}

/// `F.linear(input, weight)` with `weight` of shape `(out_features, in_features)`.
pub fn linear<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let (input, weight) = (tensor_arg(args, "input")?, tensor_arg(args, "weight")?);
    let [out_features, in_features] = weight.shape.as_slice() else {
        return Err(Transfer::unknown_tensor());
    };
    let copies = linear_copies(input, d);
    Ok(
        contiguous_result(linear_shape(&input.shape, in_features, out_features, d))?
            .with_copy(copies, input.numel()),
    )
}

/// `nn.Linear(in_features, out_features)(input)`.
pub fn linear_module<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let out_features = size_arg(args, "out_features").map_err(|_| Transfer::unknown_tensor())?;
    let copies = linear_copies(input, d);
    let shape = match size_arg(args, "in_features") {
        Ok(in_features) => linear_shape(&input.shape, &in_features, &out_features, d),
        // Without the constructor's in_features only the output shape is known.
        Err(_) => match input.shape.split_last() {
            Some((_, lead)) => Ok(lead.iter().cloned().chain([out_features]).collect()),
            None => return Err(Transfer::unknown_tensor()),
        },
    };
    Ok(contiguous_result(shape)?.with_copy(copies, input.numel()))
}

/// `nn.GRU`/`nn.LSTM`/`nn.RNN(input_size, hidden_size, …)(input)`: `(output, h_n)` (and
/// `c_n` for the LSTM, which the caller pairs with `h_n`). The layers run time-major: with
/// `batch_first=True` the (B, T, D·H) output is the transpose of a contiguous (T, B, D·H)
/// tensor, strides (D·H, B·D·H, 1) (torch 2.15, every cell type and direction).
pub fn recurrent<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let hidden = size_arg(args, "hidden_size").map_err(|_| Transfer::unknown_tensor())?;
    let unknown = |_| Transfer::unknown_tensor();
    let batch_first = bool_arg(args, "batch_first").map_err(unknown)?;
    let directions = if bool_arg(args, "bidirectional").map_err(unknown)? {
        2
    } else {
        1
    };
    let layers = size_arg(args, "num_layers").map_err(unknown)?;
    // An LSTM's projection (`proj_size > 0`) changes the output's size: not modelled.
    if args.get("proj_size").is_some()
        && size_arg(args, "proj_size").map_err(unknown)?.as_lit() != Some(0)
    {
        return Err(Transfer::unknown_tensor());
    }
    let features = S::lit(directions).mul(&hidden);
    let states = S::lit(directions).mul(&layers);
    let (output, state_shape) = match input.shape.as_slice() {
        [t, _] => (
            Layout::contiguous(vec![t.clone(), features]),
            vec![states, hidden],
        ),
        [a, b, _] => {
            let (batch, time) = if batch_first { (a, b) } else { (b, a) };
            let time_major = Layout::contiguous(vec![time.clone(), batch.clone(), features]);
            let output = if batch_first {
                crate::layout::geometry::transpose(&time_major, 0, 1)
                    .map_err(|_| Transfer::unknown_tensor())?
            } else {
                time_major
            };
            (output, vec![states, batch.clone(), hidden])
        }
        _ => return Err(Transfer::unknown_tensor()),
    };
    Ok(Transfer::tensors(vec![
        output,
        Layout::contiguous(state_shape),
    ]))
}

/// `F.embedding(input, weight)`: `input.shape + (weight.shape[1],)`.
pub fn embedding<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let (input, weight) = (tensor_arg(args, "input")?, tensor_arg(args, "weight")?);
    let [_, dim] = weight.shape.as_slice() else {
        return Err(Transfer::unknown_tensor());
    };
    let mut shape = input.shape.clone();
    shape.push(dim.clone());
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

/// `nn.Embedding(num, dim)(input)`: `input.shape + (dim,)`.
pub fn embedding_module<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let dim = size_arg(args, "embedding_dim").map_err(|_| Transfer::unknown_tensor())?;
    let mut shape = input.shape.clone();
    shape.push(dim);
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout, Tri};
    use crate::ops::kinds::test_support::{method, A};
    use crate::ops::{apply, bind, bind_module_call, bind_module_init, OpTable};

    fn l(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    /// Spec §6.2 (E): products of transposed operands are contiguous.
    #[test]
    fn products_are_contiguous() {
        let att = method(
            "__matmul__",
            l(&[2, 4, 5, 8], &[160, 8, 32, 1]),
            vec![A::tensor(l(&[2, 4, 8, 5], &[160, 8, 1, 32]))],
        );
        assert_eq!(att.layout(), Some(&Layout::contiguous(vec![2, 4, 5, 5])));
        let t = method(
            "mm",
            l(&[4, 3], &[1, 4]),
            vec![A::tensor(Layout::contiguous(vec![3, 5]))],
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![4, 5])));
        let t = method(
            "bmm",
            l(&[2, 3, 4], &[12, 1, 3]),
            vec![A::tensor(Layout::contiguous(vec![2, 4, 5]))],
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 3, 5])));
        let t = method(
            "matmul",
            Layout::contiguous(vec![2, 3]),
            vec![A::tensor(Layout::contiguous(vec![4, 5]))],
        );
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")
        );
    }

    /// torch 2.15: whether matmul folds shows in the error message of a mismatched product.
    #[test]
    fn folding_follows_viewability() {
        let w = A::tensor(Layout::contiguous(vec![5, 2]));
        let msg = |x: Layout<i64>| {
            method("matmul", x, vec![w.clone()])
                .op_error()
                .map(|e| e.message.clone())
        };
        assert_eq!(
            msg(l(&[2, 1, 3, 4], &[12, 100, 4, 1])).as_deref(),
            Some("mm: mat1 and mat2 shapes cannot be multiplied (6x4 and 5x2)")
        );
        assert_eq!(
            msg(l(&[1, 3, 1, 1], &[6, 2, 1, 1])).as_deref(),
            Some("mm: mat1 and mat2 shapes cannot be multiplied (3x1 and 5x2)")
        );
        assert_eq!(
            msg(l(&[2, 3, 4], &[24, 4, 1])).as_deref(),
            Some("Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].")
        );
        assert_eq!(
            msg(l(&[2, 3, 4], &[12, 1, 3])).as_deref(),
            Some("Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].")
        );
    }

    /// LA `should_fold` (source): a 3-D input whose leading dims do not merge may be copied.
    #[test]
    fn folding_copies_are_flagged_as_possible() {
        let w = A::tensor(Layout::contiguous(vec![6, 5]));
        let contiguous = method("matmul", Layout::contiguous(vec![2, 4, 6]), vec![w.clone()]);
        assert_eq!(contiguous.copies, Tri::No);
        let permuted = method("matmul", l(&[2, 4, 6], &[6, 12, 1]), vec![w]);
        assert_eq!(
            (permuted.layout().map(|l| l.shape.clone()), permuted.copies),
            (Some(vec![2, 4, 5]), Tri::Unknown)
        );
    }

    #[test]
    fn linear_and_embedding_shapes() {
        let table = OpTable::torch();
        let linear = table.module("nn.Linear").unwrap();
        let init = bind_module_init::<i64>(linear, vec![A::Int(6), A::Int(5)], vec![]).unwrap();
        let call = |x: Layout<i64>| {
            apply(
                &linear.call,
                &bind_module_call(linear, &init, vec![A::tensor(x)], vec![]).unwrap(),
                &Decider::concrete(),
            )
        };
        // torch 2.15: Linear of a (2,4,6) non-contiguous input → contiguous (2,4,5).
        assert_eq!(
            call(l(&[2, 4, 6], &[6, 12, 1])).layout(),
            Some(&Layout::contiguous(vec![2, 4, 5]))
        );
        let e = call(Layout::contiguous(vec![2, 7, 3]));
        assert_eq!(
            e.op_error().map(|e| e.message.as_str()),
            Some("mm: mat1 and mat2 shapes cannot be multiplied (14x3 and 6x5)")
        );
        let f = table.function("F.linear").unwrap();
        let t = apply(
            f,
            &bind(
                f,
                None,
                vec![
                    A::tensor(Layout::contiguous(vec![2, 7, 3])),
                    A::tensor(Layout::contiguous(vec![5, 4])),
                ],
                vec![],
            )
            .unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(
            t.op_error().map(|e| e.message.as_str()),
            Some("mm: mat1 and mat2 shapes cannot be multiplied (14x3 and 4x5)")
        );
        // nn.Embedding(10, 7)(idx.t()) → (3, 2, 7) contiguous (torch 2.15).
        let emb = table.module("nn.Embedding").unwrap();
        let init = bind_module_init::<i64>(emb, vec![A::Int(10), A::Int(7)], vec![]).unwrap();
        let t = apply(
            &emb.call,
            &bind_module_call(emb, &init, vec![A::tensor(l(&[3, 2], &[1, 3]))], vec![]).unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![3, 2, 7])));
    }
}
