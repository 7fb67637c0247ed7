//! Multi-output views (spec §5): `split`, `split_with_sizes`, `chunk`, `tensor_split`,
//! `unbind`. The result is a list of layouts when the number of pieces is known.

use super::{fail, int_arg, size_arg, sizes_arg, tensor_arg, Outcome};
use crate::layout::split as pieces;
use crate::layout::{Decider, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

use OpErrorKind::ElementCount;

/// `split(int, dim)` or `split([sizes], dim)` / `split_with_sizes`.
pub fn split<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let dim = int_arg(args, "dim")?;
    let result = match args.get("split_size") {
        Some(ArgValue::IntList(_)) => {
            pieces::split_with_sizes(input, &sizes_arg(args, "split_size")?, dim, d)
        }
        _ => pieces::split(input, &size_arg(args, "split_size")?, dim, d),
    };
    Ok(Transfer::tensors(result.map_err(fail(ElementCount))?))
}

pub fn chunk<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let result = pieces::chunk(input, int_arg(args, "chunks")?, int_arg(args, "dim")?, d);
    Ok(Transfer::tensors(result.map_err(fail(ElementCount))?))
}

/// `tensor_split(sections)` or `tensor_split([indices])`.
pub fn tensor_split<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let dim = int_arg(args, "dim")?;
    let result = match args.get("indices_or_sections") {
        Some(ArgValue::IntList(_)) => {
            pieces::tensor_split_indices(input, &sizes_arg(args, "indices_or_sections")?, dim, d)
        }
        _ => pieces::tensor_split_sections(input, int_arg(args, "indices_or_sections")?, dim),
    };
    Ok(Transfer::tensors(result.map_err(fail(ElementCount))?))
}

pub fn unbind<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let result = pieces::unbind(input, int_arg(args, "dim")?, d);
    Ok(Transfer::tensors(result.map_err(fail(ElementCount))?))
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout};
    use crate::ops::{apply, bind, ArgValue, OpResult, OpTable, Transfer};

    type A = ArgValue<i64>;

    fn run(
        spec_name: &str,
        function: bool,
        args: Vec<A>,
        keywords: Vec<(&str, A)>,
    ) -> Transfer<i64> {
        let table = OpTable::torch();
        let spec = if function {
            table.function(spec_name)
        } else {
            table.method(spec_name)
        }
        .unwrap();
        let kw = keywords
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let (receiver, positional) = if function {
            (None, args)
        } else {
            (Some(args[0].clone()), args[1..].to_vec())
        };
        apply(
            spec,
            &bind(spec, receiver, positional, kw).unwrap(),
            &Decider::concrete(),
        )
    }

    fn shapes(t: &Transfer<i64>) -> Vec<Vec<i64>> {
        match &t.result {
            OpResult::Tensors(v) => v.iter().map(|l| l.shape.clone()).collect(),
            other => panic!("{other:?}"),
        }
    }

    /// nanoGPT: `q, k, v = self.c_attn(x).split(self.n_embd, dim=2)`; torch facts of spec §5.
    #[test]
    fn split_forms() {
        let x = A::tensor(Layout::contiguous(vec![2, 5, 96]));
        let t = run(
            "split",
            false,
            vec![x.clone(), A::Int(32)],
            vec![("dim", A::Int(2))],
        );
        assert_eq!(shapes(&t), vec![vec![2, 5, 32]; 3]);
        let t = run(
            "torch.split",
            true,
            vec![x.clone(), A::ints(&[64, 32]), A::Int(-1)],
            vec![],
        );
        assert_eq!(shapes(&t), vec![vec![2, 5, 64], vec![2, 5, 32]]);
        let t = run(
            "split_with_sizes",
            false,
            vec![x.clone(), A::ints(&[90, 3])],
            vec![("dim", A::Int(2))],
        );
        assert!(t.op_error().is_some());
        // tensor_split(7 rows, 3) → 3, 2, 2 (numpy array_split).
        let y = A::tensor(Layout::contiguous(vec![7]));
        assert_eq!(
            shapes(&run(
                "tensor_split",
                false,
                vec![y.clone(), A::Int(3)],
                vec![]
            )),
            vec![vec![3], vec![2], vec![2]]
        );
        assert_eq!(
            shapes(&run(
                "tensor_split",
                false,
                vec![y, A::ints(&[1, 5])],
                vec![]
            )),
            vec![vec![1], vec![4], vec![2]]
        );
        // qkv.unbind(0)
        let qkv = A::tensor(Layout::contiguous(vec![3, 2, 4]));
        assert_eq!(
            shapes(&run("unbind", false, vec![qkv], vec![])),
            vec![vec![2, 4]; 3]
        );
        // chunk of 5 rows in 4 → 2, 2, 1 (fewer than asked).
        let z = A::tensor(Layout::contiguous(vec![5, 2]));
        assert_eq!(
            shapes(&run("chunk", false, vec![z, A::Int(4)], vec![])),
            vec![vec![2, 2], vec![2, 2], vec![1, 2]]
        );
    }
}
