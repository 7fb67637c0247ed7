//! Element-wise ops (spec §6.1): broadcasting plus TensorIterator's output-stride rule.
//!
//! The operands are the entry's `tensor`, `tensor_or_scalar` and `tensor_or_number`
//! parameters, in declaration order (the order TensorIterator sees them: `torch.where`
//! declares `condition` first). A Python number passed to a `tensor_or_scalar` parameter is
//! a 0-d operand (`x * 2` is a two-operand op); passed to a `tensor_or_number` parameter it
//! selects a Scalar overload and is no operand at all (`x.pow(2)` is one-operand).

use super::{tensor_arg, Outcome};
use crate::layout::elementwise::elementwise_output;
use crate::layout::{Decider, Layout, Size};
use crate::ops::bind::BoundArgs;
use crate::ops::schema::{ParamType, Variadic};
use crate::ops::table::OpSpec;
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

/// The operands TensorIterator sees, in order.
fn operands<S: Size>(spec: &OpSpec, args: &BoundArgs<S>) -> Result<Vec<Layout<S>>, Transfer<S>> {
    let mut out = Vec::new();
    for param in spec.params.iter().filter(|p| p.variadic == Variadic::No) {
        let wraps_numbers = match param.ty {
            ParamType::Tensor => false,
            ParamType::TensorOrScalar => true,
            ParamType::TensorOrNumber => false,
            _ => continue,
        };
        match args.get(&param.name) {
            Some(ArgValue::Tensor(Some(layout))) => out.push(layout.clone()),
            Some(ArgValue::None) | None => {}
            Some(v) if v.is_number() => {
                if wraps_numbers {
                    out.push(Layout::scalar());
                }
            }
            // A tensor of unknown layout, or a value that may be a tensor or a number.
            Some(_) => return Err(Transfer::unknown_tensor()),
        }
    }
    Ok(out)
}

pub fn elementwise<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let inputs = operands(spec, args)?;
    // `F.normalize`: the norm it divides by is broadcast back along `dim`, and breaks the
    // stride ties of size-1 dims its own way (scripts/oracle/check_normalize.py).
    if spec.variant.as_deref() == Some("norm_divisor")
        && inputs
            .iter()
            .any(|l| l.shape.iter().any(|s| !d.eq_lit(s, 1).is_no()))
    {
        return Err(Transfer::unknown_tensor());
    }
    let refs: Vec<&Layout<S>> = inputs.iter().collect();
    let output = elementwise_output(&refs, d)
        .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::Broadcast))?;
    // `F.relu(x, inplace=True)`, `nn.ReLU(inplace=True)`: the result is `x` itself.
    match args.get("inplace") {
        Some(ArgValue::Bool(true)) => Ok(Transfer::tensor(tensor_arg(args, "input")?.clone())),
        Some(ArgValue::Bool(false)) | None => Ok(Transfer::tensor(output)),
        Some(_) => {
            let input = tensor_arg(args, "input")?;
            if *input == output {
                Ok(Transfer::tensor(output))
            } else {
                Err(Transfer::unknown_tensor())
            }
        }
    }
}

/// `dropout`: an element-wise op in training (one operand: dense inputs keep their
/// strides), the input itself in eval mode, when `inplace`, when `p == 0` or when the
/// input is empty. A module does not say
/// whether it is training; the layout is then known only where both modes agree.
/// Feature dropout multiplies by a broadcast mask, whose effect on the strides of
/// size-1 dims is not modelled: only its eval mode is known.
pub fn dropout<S: Size>(spec: &OpSpec, args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let input = tensor_arg(args, "input")?;
    let eval = input.clone();
    if matches!(args.get("inplace"), Some(ArgValue::Bool(true))) {
        return Ok(Transfer::tensor(eval));
    }
    // ATen returns the input itself when `p == 0` or the input is empty (torch 2.15).
    let p_is_zero = matches!(args.get("p"), Some(ArgValue::Float(p)) if *p == 0.0)
        || args.get("p").and_then(ArgValue::as_i64) == Some(0);
    if p_is_zero || d.eq_lit(&input.numel(), 0).is_yes() {
        return Ok(Transfer::tensor(eval));
    }
    let training = args.get("training").and_then(ArgValue::as_bool);
    if training == Some(false) {
        return Ok(Transfer::tensor(eval));
    }
    let unknown = || Transfer::unknown_tensor();
    if spec.variant.as_deref() == Some("feature") {
        return Err(unknown());
    }
    let train = elementwise_output(&[input], d)
        .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::Broadcast))?;
    match training {
        Some(_) => Ok(Transfer::tensor(train)),
        None if train == eval => Ok(Transfer::tensor(train)),
        None => Err(unknown()),
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout};
    use crate::ops::kinds::test_support::{function, method, A};
    use crate::ops::{apply, bind_module_call, bind_module_init, OpErrorKind, OpResult, OpTable};

    fn l(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    /// Observed on torch 2.15 with x = empty(100).as_strided((3,1,2), (1,7,3)): one-operand
    /// ops keep (1,7,3); ops with a wrapped Python scalar take the general path → (1,6,3).
    #[test]
    fn scalar_operands_follow_torch() {
        let x = l(&[3, 1, 2], &[1, 7, 3]);
        for (name, args) in [
            ("exp", vec![]),
            ("pow", vec![A::Int(2)]),
            ("__pow__", vec![A::Int(2)]),
            ("clamp", vec![A::Float(0.0)]),
            ("sigmoid", vec![]),
        ] {
            assert_eq!(
                method(name, x.clone(), args).layout(),
                Some(&l(&[3, 1, 2], &[1, 7, 3])),
                "{name}"
            );
        }
        for (name, args) in [
            ("__mul__", vec![A::Int(2)]),
            ("__add__", vec![A::Int(1)]),
            ("__rsub__", vec![A::Int(1)]),
            ("__gt__", vec![A::Int(0)]),
            ("add", vec![A::Int(1)]),
        ] {
            assert_eq!(
                method(name, x.clone(), args).layout(),
                Some(&l(&[3, 1, 2], &[1, 6, 3])),
                "{name}"
            );
        }
        assert_eq!(
            function(
                "torch.nn.functional.leaky_relu",
                vec![A::tensor(x.clone()), A::Float(0.1)],
                vec![]
            )
            .layout(),
            Some(&l(&[3, 1, 2], &[1, 7, 3]))
        );
        // torch.where(cond, x, 0.0) → general path; `2 ** x` and masked_fill → contiguous.
        assert_eq!(
            function(
                "torch.where",
                vec![A::tensor(x.clone()), A::tensor(x.clone()), A::Float(0.0)],
                vec![]
            )
            .layout(),
            Some(&l(&[3, 1, 2], &[1, 6, 3]))
        );
        assert_eq!(
            method("__rpow__", x.clone(), vec![A::Int(2)]).layout(),
            Some(&l(&[3, 1, 2], &[2, 2, 1]))
        );
        assert_eq!(
            method(
                "masked_fill",
                x.clone(),
                vec![A::tensor(x.clone()), A::Float(0.0)]
            )
            .layout(),
            Some(&l(&[3, 1, 2], &[2, 2, 1]))
        );
        // A larger mask enlarges the result; a mask that does not broadcast is an error.
        let mask = A::tensor(Layout::contiguous(vec![4, 3, 1, 2]));
        assert_eq!(
            method("masked_fill", x.clone(), vec![mask, A::Float(0.0)]).layout(),
            Some(&Layout::contiguous(vec![4, 3, 1, 2]))
        );
        let bad = method(
            "masked_fill",
            x,
            vec![A::tensor(Layout::contiguous(vec![5])), A::Float(0.0)],
        );
        assert_eq!(
            bad.op_error().map(|e| e.message.as_str()),
            Some("The size of tensor a (5) must match the size of tensor b (2) at non-singleton dimension 2")
        );
    }

    /// Spec §6: `x.transpose(1,2) + 1` keeps the transposed order; a contiguous condition
    /// first in `torch.where` makes the output contiguous (torch 2.15).
    #[test]
    fn operand_order_decides_the_output_layout() {
        let xt = l(&[2, 3, 4], &[12, 1, 3]);
        let xc = Layout::contiguous(vec![2i64, 3, 4]);
        assert_eq!(
            method("__add__", xt.clone(), vec![A::Int(1)]).layout(),
            Some(&xt)
        );
        assert_eq!(
            method("__add__", xt.clone(), vec![A::tensor(xc.clone())]).layout(),
            Some(&xt)
        );
        assert_eq!(
            method("__add__", xc.clone(), vec![A::tensor(xt.clone())]).layout(),
            Some(&xc)
        );
        let w = function(
            "torch.where",
            vec![
                A::tensor(xc.clone()),
                A::tensor(xt.clone()),
                A::tensor(xt.clone()),
            ],
            vec![],
        );
        assert_eq!(w.layout(), Some(&xc));
        let e = method(
            "__add__",
            Layout::contiguous(vec![2, 3]),
            vec![A::tensor(Layout::contiguous(vec![4]))],
        );
        assert_eq!(
            e.op_error().map(|e| (e.kind, e.message.as_str())),
            Some((OpErrorKind::Broadcast, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"))
        );
        // An operand that may be a tensor or a number: unknown.
        assert_eq!(
            method("__add__", xc, vec![A::Unknown]).result,
            OpResult::UnknownTensor
        );
    }

    /// torch 2.15: dropout in training keeps a dense input's strides; eval returns the
    /// input itself — for a non-dense input the two differ.
    #[test]
    fn dropout_modes() {
        let dense = l(&[2, 3, 5, 4], &[60, 5, 1, 15]);
        let sparse = l(&[2, 3, 5, 4], &[120, 10, 1, 30]);
        let f = |x: Layout<i64>, training: A| {
            function(
                "torch.nn.functional.dropout",
                vec![A::tensor(x), A::Float(0.5), training],
                vec![],
            )
        };
        assert_eq!(f(dense.clone(), A::Bool(true)).layout(), Some(&dense));
        assert_eq!(
            f(sparse.clone(), A::Bool(true)).layout(),
            Some(&l(&[2, 3, 5, 4], &[60, 5, 1, 15]))
        );
        assert_eq!(f(sparse.clone(), A::Bool(false)).layout(), Some(&sparse));
        let table = OpTable::torch();
        let module = table.module("nn.Dropout").unwrap();
        let init = bind_module_init::<i64>(module, vec![A::Float(0.1)], vec![]).unwrap();
        let call = |x: Layout<i64>| {
            apply(
                &module.call,
                &bind_module_call(module, &init, vec![A::tensor(x)], vec![]).unwrap(),
                &Decider::concrete(),
            )
        };
        assert_eq!(call(dense.clone()).layout(), Some(&dense));
        assert_eq!(call(sparse).result, OpResult::UnknownTensor);
    }
}
