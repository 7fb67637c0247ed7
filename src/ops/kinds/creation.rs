//! Tensor creation: factories (`zeros(*size)`, `full`, `x.new_zeros`) are contiguous;
//! `*_like(x)` lays out like `x.clone()` (preserve_format) without copying data;
//! `arange`/`linspace`/`eye`/`tensor(data)` have shapes computed from their arguments.

use super::{memory_format_arg, size_arg, tensor_arg, Outcome};
use crate::layout::dense::clone_with_format;
use crate::layout::{Decider, Layout, MemoryFormat, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

pub fn create<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let size = args
        .get("size")
        .and_then(ArgValue::as_sizes)
        .ok_or_else(|| Transfer::unknown_tensor())?;
    Ok(Transfer::tensor(Layout::contiguous(size)))
}

/// `zeros_like(x, memory_format=preserve_format)` and friends: a new tensor laid out as
/// `x.clone(memory_format)` would be — but not a copy of `x`'s data.
pub fn create_like<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let unknown = || Transfer::unknown_tensor();
    let format = memory_format_arg(args)
        .map_err(|()| unknown())?
        .unwrap_or(MemoryFormat::Preserve);
    match clone_with_format(input, format, d) {
        Ok(layout) => Ok(Transfer::tensor(layout)),
        Err(e) if e.is_undecided() => Err(unknown()),
        Err(e) => Err(Transfer::from_layout_error(e, OpErrorKind::InvalidArgument)),
    }
}

/// `arange(end)` / `arange(start, end, step)`: `ceil((end - start) / step)` elements.
/// `arange(n)` binds `start = n` (PyTorch's first positional), read here as `arange(0, n)`.
pub fn arange<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let unknown = || Transfer::unknown_tensor();
    let (start, end) = match args.get("end") {
        None | Some(ArgValue::None) => (
            ArgValue::Int(S::lit(0)),
            args.get("start").cloned().ok_or_else(unknown)?,
        ),
        Some(end) => (args.get("start").cloned().ok_or_else(unknown)?, end.clone()),
    };
    let step = args.get("step").cloned().ok_or_else(unknown)?;
    let length = match (start.as_size(), end.as_size(), step.as_i64()) {
        (Some(start), Some(end), Some(step)) if step != 0 => {
            // ceil(span / step) with integer floor division: (span + step ∓ 1) // step.
            let span = end.sub(&start);
            let adjust = if step > 0 { step - 1 } else { step + 1 };
            span.add(&S::lit(adjust)).floordiv(&S::lit(step))
        }
        _ => {
            let as_f64 = |v: &ArgValue<S>| match v {
                ArgValue::Float(x) => Some(*x),
                other => other.as_i64().map(|i| i as f64),
            };
            // A float whose value the analysis does not know arrives as NaN.
            let length = match (as_f64(&start), as_f64(&end), as_f64(&step)) {
                (Some(a), Some(b), Some(s)) if s != 0.0 => ((b - a) / s).ceil(),
                _ => f64::NAN,
            };
            if !length.is_finite() {
                return Err(unknown());
            }
            S::lit(length.max(0.0) as i64)
        }
    };
    Ok(Transfer::tensor(Layout::contiguous(vec![length])))
}

pub fn linspace<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let steps = size_arg(args, "steps").map_err(|_| Transfer::unknown_tensor())?;
    Ok(Transfer::tensor(Layout::contiguous(vec![steps])))
}

pub fn eye<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    let n = size_arg(args, "n").map_err(|_| Transfer::unknown_tensor())?;
    let m = match args.get("m") {
        None | Some(ArgValue::None) => n.clone(),
        Some(_) => size_arg(args, "m").map_err(|_| Transfer::unknown_tensor())?,
    };
    Ok(Transfer::tensor(Layout::contiguous(vec![n, m])))
}

/// `torch.tensor(data)`: a number is 0-d; a (nested) list gives its lengths.
pub fn tensor_literal<S: Size>(args: &BoundArgs<S>) -> Outcome<S> {
    fn shape_of<S: Size>(value: &ArgValue<S>) -> Option<Vec<S>> {
        match value {
            v if v.is_number() => Some(Vec::new()),
            ArgValue::IntList(items) => {
                let inner: Option<Vec<Vec<S>>> = items.iter().map(shape_of).collect();
                let inner = inner?;
                if inner.windows(2).any(|w| w[0] != w[1]) {
                    return None;
                }
                let mut shape = vec![S::lit(items.len() as i64)];
                shape.extend(inner.into_iter().next().unwrap_or_default());
                Some(shape)
            }
            _ => None,
        }
    }
    let shape = args
        .get("data")
        .and_then(shape_of)
        .ok_or_else(|| Transfer::unknown_tensor())?;
    Ok(Transfer::tensor(Layout::contiguous(shape)))
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout};
    use crate::ops::kinds::test_support::{function, A};
    use crate::ops::{apply, bind, OpTable, Transfer};

    fn shape(t: Transfer<i64>) -> Option<Vec<i64>> {
        t.layout().map(|l| l.shape.clone())
    }

    /// `arange` over floats the analysis does not know (NaN) has an unknown length, not 0.
    #[test]
    fn arange_of_unknown_floats_is_unknown() {
        let unknown = function(
            "torch.arange",
            vec![A::Float(f64::NAN), A::Float(f64::NAN)],
            vec![],
        );
        assert_eq!(shape(unknown), None);
        // torch.arange(0.0, 2.5, 0.5).shape == (5,)
        let known = function(
            "torch.arange",
            vec![A::Float(0.0), A::Float(2.5), A::Float(0.5)],
            vec![],
        );
        assert_eq!(shape(known), Some(vec![5]));
    }

    /// Shapes observed on torch 2.15.
    #[test]
    fn factory_shapes_match_torch() {
        assert_eq!(
            function("torch.zeros", vec![A::Int(2), A::Int(3)], vec![]).layout(),
            Some(&Layout::contiguous(vec![2, 3]))
        );
        assert_eq!(
            shape(function("torch.randn", vec![A::ints(&[2, 3])], vec![])),
            Some(vec![2, 3])
        );
        assert_eq!(
            shape(function(
                "torch.zeros",
                vec![],
                vec![("size", A::ints(&[2, 3]))]
            )),
            Some(vec![2, 3])
        );
        assert_eq!(
            shape(function(
                "torch.full",
                vec![A::ints(&[2, 3]), A::Float(1.0)],
                vec![]
            )),
            Some(vec![2, 3])
        );
        assert_eq!(
            shape(function("torch.arange", vec![A::Int(5)], vec![])),
            Some(vec![5])
        );
        assert_eq!(
            shape(function(
                "torch.arange",
                vec![A::Int(1), A::Int(7), A::Int(2)],
                vec![]
            )),
            Some(vec![3])
        );
        assert_eq!(
            shape(function(
                "torch.arange",
                vec![A::Int(0), A::Int(1), A::Float(0.3)],
                vec![]
            )),
            Some(vec![4])
        );
        assert_eq!(
            shape(function("torch.arange", vec![A::Float(2.5)], vec![])),
            Some(vec![3])
        );
        assert_eq!(
            shape(function("torch.arange", vec![], vec![("end", A::Int(5))])),
            Some(vec![5])
        );
        assert_eq!(
            shape(function(
                "torch.linspace",
                vec![A::Int(0), A::Int(1), A::Int(7)],
                vec![]
            )),
            Some(vec![7])
        );
        assert_eq!(
            shape(function("torch.eye", vec![A::Int(2), A::Int(5)], vec![])),
            Some(vec![2, 5])
        );
        assert_eq!(
            shape(function("torch.eye", vec![A::Int(3)], vec![])),
            Some(vec![3, 3])
        );
        let nested = A::IntList(vec![A::ints(&[1, 2]), A::ints(&[3, 4]), A::ints(&[5, 6])]);
        assert_eq!(
            function("torch.tensor", vec![nested], vec![]).layout(),
            Some(&Layout::new(vec![3, 2], vec![2, 1], 0))
        );
    }

    /// Spec §5 / torch 2.15: `*_like` keeps a dense input's strides, lays a non-dense input
    /// out densely in its dim order, and honours an explicit memory format.
    #[test]
    fn like_factories_follow_preserve_format() {
        let xt = Layout::new(vec![2i64, 3, 4], vec![12, 1, 3], 5);
        let t = function("torch.zeros_like", vec![A::tensor(xt)], vec![]);
        assert_eq!(
            t.layout(),
            Some(&Layout::new(vec![2, 3, 4], vec![12, 1, 3], 0))
        );
        let sparse = Layout::new(vec![2i64, 4, 3], vec![24, 1, 8], 0);
        assert_eq!(
            function("torch.empty_like", vec![A::tensor(sparse.clone())], vec![]).layout(),
            Some(&Layout::new(vec![2, 4, 3], vec![12, 1, 4], 0))
        );
        let t = function(
            "torch.ones_like",
            vec![A::tensor(sparse)],
            vec![("memory_format", A::Str("torch.contiguous_format".into()))],
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 4, 3])));
        let spec = OpTable::torch().method("new_zeros").unwrap();
        let t = apply(
            spec,
            &bind(
                spec,
                Some(A::Tensor(None)),
                vec![A::Int(3), A::Int(4)],
                vec![],
            )
            .unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![3, 4])));
    }
}
