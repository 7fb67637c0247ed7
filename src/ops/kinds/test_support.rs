//! What the kinds' unit tests share: applying a shipped table's op to concrete arguments.

use crate::layout::{Decider, Layout};
use crate::ops::{apply, bind, ArgValue, OpTable, Transfer};

pub type A = ArgValue<i64>;

fn keywords(kw: Vec<(&str, A)>) -> Vec<(String, A)> {
    kw.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// `table`'s method `name` on `input`.
pub fn method_in(
    table: &OpTable,
    name: &str,
    input: Layout<i64>,
    args: Vec<A>,
    kw: Vec<(&str, A)>,
) -> Transfer<i64> {
    let spec = table.method(name).unwrap();
    let bound = bind(spec, Some(A::tensor(input)), args, keywords(kw)).unwrap();
    apply(spec, &bound, &Decider::concrete())
}

/// PyTorch's method `name` on `input`.
pub fn method(name: &str, input: Layout<i64>, args: Vec<A>) -> Transfer<i64> {
    method_in(OpTable::torch(), name, input, args, vec![])
}

/// PyTorch's method `name` on `input`, with keyword arguments.
pub fn method_kw(
    name: &str,
    input: Layout<i64>,
    args: Vec<A>,
    kw: Vec<(&str, A)>,
) -> Transfer<i64> {
    method_in(OpTable::torch(), name, input, args, kw)
}

/// PyTorch's property `name` of `input` (`x.T`, `x.shape`).
pub fn attribute(name: &str, input: Layout<i64>) -> Transfer<i64> {
    let spec = OpTable::torch().attribute(name).unwrap();
    let bound = bind(spec, Some(A::tensor(input)), vec![], vec![]).unwrap();
    apply(spec, &bound, &Decider::concrete())
}

/// PyTorch's function `name` (`torch.cat`, `torch.zeros`).
pub fn function(name: &str, args: Vec<A>, kw: Vec<(&str, A)>) -> Transfer<i64> {
    let spec = OpTable::torch().function(name).unwrap();
    let bound = bind(spec, None, args, keywords(kw)).unwrap();
    apply(spec, &bound, &Decider::concrete())
}
