//! [`ArgValue`]: an argument of an op call, as the caller (the analysis or the oracle
//! harness) abstracted it. Transfer functions read arguments only through the accessors
//! here, which answer `None` whenever a value is not known precisely enough.

use crate::layout::{Layout, Size};

/// A bound argument value, already abstracted by the caller.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue<S> {
    /// A tensor; `None` = a tensor whose layout is unknown.
    Tensor(Option<Layout<S>>),
    /// A sequence of tensors (`cat`/`stack` inputs).
    TensorList(Vec<Option<Layout<S>>>),
    /// An int or a size (may be symbolic); dims are `Int` too.
    Int(S),
    /// A tuple or list (`(2, -1, C)`, `torch.Size`); elements usually `Int`, may be `Unknown`.
    IntList(Vec<ArgValue<S>>),
    Float(f64),
    Bool(bool),
    /// A string, or the dotted name of a torch constant (`"torch.channels_last"`).
    Str(String),
    None,
    /// One entry of a subscript, `a:b:c` (each part `None` when omitted).
    Slice(Box<SliceArg<S>>),
    /// `...` in a subscript.
    Ellipsis,
    /// Anything the caller could not evaluate.
    Unknown,
}

/// The three parts of a slice `start:stop:step`; omitted parts are [`ArgValue::None`].
#[derive(Clone, Debug, PartialEq)]
pub struct SliceArg<S> {
    pub start: ArgValue<S>,
    pub stop: ArgValue<S>,
    pub step: ArgValue<S>,
}

impl<S: Size> ArgValue<S> {
    /// A slice with the given parts (`None` = omitted).
    pub fn slice(start: Option<S>, stop: Option<S>, step: Option<S>) -> Self {
        let part = |p: Option<S>| p.map_or(ArgValue::None, ArgValue::Int);
        ArgValue::Slice(Box::new(SliceArg {
            start: part(start),
            stop: part(stop),
            step: part(step),
        }))
    }

    /// A list of literal ints.
    pub fn ints(values: &[i64]) -> Self {
        ArgValue::IntList(values.iter().map(|&v| ArgValue::Int(S::lit(v))).collect())
    }

    /// A tensor with a known layout.
    pub fn tensor(layout: Layout<S>) -> Self {
        ArgValue::Tensor(Some(layout))
    }

    pub fn is_none(&self) -> bool {
        matches!(self, ArgValue::None)
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, ArgValue::Unknown)
    }

    /// The size, for an `Int` (a Python `bool` counts as the int it is).
    pub fn as_size(&self) -> Option<S> {
        match self {
            ArgValue::Int(v) => Some(v.clone()),
            ArgValue::Bool(b) => Some(S::lit(i64::from(*b))),
            _ => None,
        }
    }

    /// A literal integer (dims, indices, counts must be literal to be used).
    pub fn as_i64(&self) -> Option<i64> {
        self.as_size().and_then(|v| v.as_lit())
    }

    /// The elements of a sequence of sizes, each known (`None` if any element is not an int).
    pub fn as_sizes(&self) -> Option<Vec<S>> {
        match self {
            ArgValue::IntList(items) => items.iter().map(ArgValue::as_size).collect(),
            _ => None,
        }
    }

    /// A sequence of literal ints, or a single int as a one-element list.
    pub fn as_i64s(&self) -> Option<Vec<i64>> {
        match self {
            ArgValue::IntList(items) => items.iter().map(ArgValue::as_i64).collect(),
            other => other.as_i64().map(|v| vec![v]),
        }
    }

    /// The tensor operand: `Some(Some(layout))` known, `Some(None)` a tensor of unknown
    /// layout, `None` not a tensor.
    pub fn as_tensor(&self) -> Option<Option<&Layout<S>>> {
        match self {
            ArgValue::Tensor(layout) => Some(layout.as_ref()),
            _ => None,
        }
    }

    /// The layout of a known tensor.
    pub fn as_layout(&self) -> Option<&Layout<S>> {
        self.as_tensor().flatten()
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ArgValue::Bool(b) => Some(*b),
            ArgValue::Int(v) => v.as_lit().map(|v| v != 0),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            ArgValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Is this a number a Python caller could pass where a tensor operand is accepted?
    pub fn is_number(&self) -> bool {
        matches!(
            self,
            ArgValue::Int(_) | ArgValue::Float(_) | ArgValue::Bool(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_refuse_what_they_cannot_know() {
        let list = ArgValue::<i64>::IntList(vec![ArgValue::Int(2), ArgValue::Unknown]);
        assert_eq!(list.as_sizes(), None);
        assert_eq!(
            ArgValue::<i64>::ints(&[2, -1]).as_sizes(),
            Some(vec![2, -1])
        );
        assert_eq!(ArgValue::<i64>::Int(3).as_i64s(), Some(vec![3]));
        assert_eq!(ArgValue::<i64>::Bool(true).as_i64(), Some(1));
        assert_eq!(ArgValue::<i64>::Tensor(None).as_tensor(), Some(None));
        assert_eq!(ArgValue::<i64>::Unknown.as_tensor(), None);
        assert_eq!(ArgValue::<i64>::Float(0.5).as_i64(), None);
    }
}
