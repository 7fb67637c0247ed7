//! Binding a call's arguments to an op's parameters, the way Python does it.
//!
//! `x.view(2, 3)`, `x.view((2, 3))`, `x.view([2, 3])` and `x.view(size=(2, 3))` all bind
//! `size = [2, 3]`; `torch.transpose(x, 0, 1)` binds `input = x` positionally while
//! `x.transpose(0, 1)` binds it from the receiver; missing arguments take the table's
//! defaults. Dimension arguments are bound as written (negative dims included): wrapping
//! needs the tensor's rank and produces PyTorch's own `IndexError`, so the transfer
//! functions do it.

use std::fmt;

use super::schema::{DefaultValue, ParamSpec, ParamType, Variadic};
use super::table::{ModuleSpec, OpSpec};
use super::value::ArgValue;
use crate::layout::Size;

/// Arguments bound to parameters, in parameter order.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundArgs<S> {
    args: Vec<BoundArg<S>>,
    /// Keywords collected by a `**name` parameter (einops `h=8`), in call order.
    extra: Vec<(String, ArgValue<S>)>,
}

#[derive(Debug, Clone, PartialEq)]
struct BoundArg<S> {
    name: String,
    aliases: Vec<String>,
    value: ArgValue<S>,
    /// Passed by the caller (not a default).
    explicit: bool,
}

impl<S: Size> BoundArgs<S> {
    /// The arguments two paths bound to the same parameters: each value kept where the
    /// paths agree, unknown where they do not (`nn.Conv2d(c, d, 1, stride=s)` with `s` 1
    /// on one path and 2 on the other). `None` when they bound different parameters.
    pub fn join(&self, other: &Self) -> Option<Self> {
        let same_keys = |a: &[(String, ArgValue<S>)], b: &[(String, ArgValue<S>)]| {
            a.len() == b.len() && a.iter().zip(b).all(|((x, _), (y, _))| x == y)
        };
        if self.args.len() != other.args.len() || !same_keys(&self.extra, &other.extra) {
            return None;
        }
        let agree = |a: &ArgValue<S>, b: &ArgValue<S>| {
            if a == b {
                a.clone()
            } else {
                ArgValue::Unknown
            }
        };
        let args = self
            .args
            .iter()
            .zip(&other.args)
            .map(|(a, b)| {
                (a.name == b.name).then(|| BoundArg {
                    value: agree(&a.value, &b.value),
                    explicit: a.explicit || b.explicit,
                    ..a.clone()
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let extra = self
            .extra
            .iter()
            .zip(&other.extra)
            .map(|((k, a), (_, b))| (k.clone(), agree(a, b)))
            .collect();
        Some(BoundArgs { args, extra })
    }

    /// The value bound to the parameter answering to `name`.
    pub fn get(&self, name: &str) -> Option<&ArgValue<S>> {
        self.find(name).map(|a| &a.value)
    }

    /// Replace the value of an already bound parameter (the analysis refines an input it
    /// learned more about, e.g. the shape an einops pattern names). False if unbound.
    pub fn set(&mut self, name: &str, value: ArgValue<S>) -> bool {
        match self
            .args
            .iter_mut()
            .find(|a| a.name == name || a.aliases.iter().any(|x| x == name))
        {
            Some(a) => {
                a.value = value;
                true
            }
            None => false,
        }
    }

    /// Was `name` passed by the caller (rather than defaulted)?
    pub fn was_given(&self, name: &str) -> bool {
        self.find(name).is_some_and(|a| a.explicit)
    }

    fn find(&self, name: &str) -> Option<&BoundArg<S>> {
        self.args
            .iter()
            .find(|a| a.name == name || a.aliases.iter().any(|x| x == name))
    }

    /// Keywords collected by the `**` parameter.
    pub fn extra_keywords(&self) -> &[(String, ArgValue<S>)] {
        &self.extra
    }

    /// `(name, value)` of every bound parameter, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ArgValue<S>)> {
        self.args.iter().map(|a| (a.name.as_str(), &a.value))
    }

    /// Add `other`'s parameters that `self` lacks (a module call reads its constructor's).
    fn merge_missing(&mut self, other: &BoundArgs<S>) {
        for a in &other.args {
            if self.find(&a.name).is_none() {
                self.args.push(a.clone());
            }
        }
        for (k, v) in &other.extra {
            if !self.extra.iter().any(|(n, _)| n == k) {
                self.extra.push((k.clone(), v.clone()));
            }
        }
    }
}

/// Why a call does not match an op's signature (Python would raise `TypeError`, or the call
/// selects an overload the table does not model). The analysis treats the result as unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindError {
    /// A method call on an op without a method form.
    NoReceiver {
        op: String,
    },
    TooManyPositional {
        op: String,
        expected: usize,
        got: usize,
    },
    UnknownKeyword {
        op: String,
        keyword: String,
    },
    Duplicate {
        op: String,
        param: String,
    },
    Missing {
        op: String,
        param: String,
    },
    WrongType {
        op: String,
        param: String,
        expected: &'static str,
    },
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::NoReceiver { op } => write!(f, "{op}() has no method form"),
            BindError::TooManyPositional { op, expected, got } => {
                write!(
                    f,
                    "{op}() takes {expected} positional arguments but {got} were given"
                )
            }
            BindError::UnknownKeyword { op, keyword } => {
                write!(f, "{op}() got an unexpected keyword argument '{keyword}'")
            }
            BindError::Duplicate { op, param } => {
                write!(f, "{op}() got multiple values for argument '{param}'")
            }
            BindError::Missing { op, param } => {
                write!(f, "{op}() missing required argument '{param}'")
            }
            BindError::WrongType {
                op,
                param,
                expected,
            } => write!(f, "{op}(): argument '{param}' must be {expected}"),
        }
    }
}

impl std::error::Error for BindError {}

/// Bind a call. `receiver` is the tensor of a method call (`x` in `x.view(…)`); for a
/// function call it is `None` and the first positional binds the first parameter.
pub fn bind<S: Size>(
    spec: &OpSpec,
    receiver: Option<ArgValue<S>>,
    positional: Vec<ArgValue<S>>,
    keywords: Vec<(String, ArgValue<S>)>,
) -> Result<BoundArgs<S>, BindError> {
    let receiver_slot = match receiver {
        Some(value) => {
            let index = spec.receiver.ok_or_else(|| BindError::NoReceiver {
                op: spec.name.clone(),
            })?;
            Some((index, value))
        }
        None => None,
    };
    bind_params(
        &spec.name,
        &spec.params,
        receiver_slot,
        positional,
        keywords,
    )
}

/// Bind a module's constructor call (`nn.Linear(768, 3072, bias=False)`).
pub fn bind_module_init<S: Size>(
    module: &ModuleSpec,
    positional: Vec<ArgValue<S>>,
    keywords: Vec<(String, ArgValue<S>)>,
) -> Result<BoundArgs<S>, BindError> {
    bind_params(&module.name, &module.init, None, positional, keywords)
}

/// Bind a call of a constructed module (`self.fc(x)`): the forward arguments, plus the
/// constructor's bound arguments, so the transfer function of `module.call` can read both
/// (`nn.Linear`'s `out_features`, `nn.Flatten`'s `start_dim`).
pub fn bind_module_call<S: Size>(
    module: &ModuleSpec,
    init: &BoundArgs<S>,
    positional: Vec<ArgValue<S>>,
    keywords: Vec<(String, ArgValue<S>)>,
) -> Result<BoundArgs<S>, BindError> {
    let mut bound = bind_params(
        &module.call.name,
        &module.call.params,
        None,
        positional,
        keywords,
    )?;
    bound.merge_missing(init);
    Ok(bound)
}

fn bind_params<S: Size>(
    op: &str,
    params: &[ParamSpec],
    receiver: Option<(usize, ArgValue<S>)>,
    positional: Vec<ArgValue<S>>,
    keywords: Vec<(String, ArgValue<S>)>,
) -> Result<BoundArgs<S>, BindError> {
    let mut slots: Vec<Option<(ArgValue<S>, bool)>> = vec![None; params.len()];
    if let Some((index, value)) = receiver {
        slots[index] = Some((value, true));
    }

    let positional_capacity = params
        .iter()
        .enumerate()
        .filter(|(i, p)| slots[*i].is_none() && !p.keyword_only && p.variadic == Variadic::No)
        .count();
    let got = positional.len();
    let mut pending = positional.into_iter();
    for (i, p) in params.iter().enumerate() {
        if slots[i].is_some() || p.keyword_only || p.variadic == Variadic::Keywords {
            continue;
        }
        if p.variadic == Variadic::Positional {
            let rest: Vec<ArgValue<S>> = pending.by_ref().collect();
            if !rest.is_empty() {
                slots[i] = Some((collect_varargs(p, rest), true));
            }
            break;
        }
        match pending.next() {
            Some(value) => slots[i] = Some((value, true)),
            None => break,
        }
    }
    if pending.next().is_some() {
        return Err(BindError::TooManyPositional {
            op: op.into(),
            expected: positional_capacity,
            got,
        });
    }

    let mut extra = Vec::new();
    for (keyword, value) in keywords {
        let target = params
            .iter()
            .position(|p| p.variadic != Variadic::Keywords && p.answers_to(&keyword));
        match target {
            Some(i) => {
                if slots[i].is_some() {
                    return Err(BindError::Duplicate {
                        op: op.into(),
                        param: params[i].name.clone(),
                    });
                }
                slots[i] = Some((value, true));
            }
            None if params.iter().any(|p| p.variadic == Variadic::Keywords) => {
                extra.push((keyword, value))
            }
            None => {
                return Err(BindError::UnknownKeyword {
                    op: op.into(),
                    keyword,
                })
            }
        }
    }

    let mut args = Vec::with_capacity(params.len());
    for (p, slot) in params.iter().zip(slots) {
        let (value, explicit) = match slot {
            Some((value, explicit)) => (normalize(op, p, value)?, explicit),
            None => match (&p.default, p.variadic) {
                (Some(d), _) => (default_value(d), false),
                (None, Variadic::Keywords) => (ArgValue::None, false),
                // Python's `*args` may be empty; a typed varargs (`*size: shape`) is required
                // because PyTorch's bindings reject `x.view()`.
                (None, Variadic::Positional) if p.ty == ParamType::Any => {
                    (ArgValue::IntList(Vec::new()), false)
                }
                (None, _) if p.optional => (ArgValue::None, false),
                (None, _) => {
                    return Err(BindError::Missing {
                        op: op.into(),
                        param: p.name.clone(),
                    })
                }
            },
        };
        args.push(BoundArg {
            name: p.name.clone(),
            aliases: p.aliases.clone(),
            value,
            explicit,
        });
    }
    Ok(BoundArgs { args, extra })
}

/// `*size` collects `view(2, 3)` as `[2, 3]`; a single sequence (or an unevaluable value,
/// which may be one) is the whole list: `view((2, 3))`.
fn collect_varargs<S: Size>(p: &ParamSpec, mut rest: Vec<ArgValue<S>>) -> ArgValue<S> {
    if rest.len() == 1 && p.ty.varargs_accepts_one_sequence() {
        let only = &rest[0];
        let is_whole = match p.ty {
            ParamType::Tensors => matches!(only, ArgValue::TensorList(_) | ArgValue::Unknown),
            _ => matches!(only, ArgValue::IntList(_) | ArgValue::Unknown),
        };
        if is_whole {
            return rest.pop().expect("one element");
        }
    }
    match p.ty {
        ParamType::Tensors => ArgValue::TensorList(
            rest.into_iter()
                .map(|v| match v {
                    ArgValue::Tensor(t) => t,
                    _ => None,
                })
                .collect(),
        ),
        _ => ArgValue::IntList(rest),
    }
}

/// Check a value against the parameter's type and bring it to the form transfer
/// functions expect (a lone int where a shape is expected becomes a one-element shape).
fn normalize<S: Size>(
    op: &str,
    p: &ParamSpec,
    value: ArgValue<S>,
) -> Result<ArgValue<S>, BindError> {
    let wrong = || BindError::WrongType {
        op: op.into(),
        param: p.name.clone(),
        expected: expected_text(p.ty),
    };
    if value.is_unknown() || (value.is_none() && (p.optional || p.ty == ParamType::Any)) {
        return Ok(value);
    }
    if p.variadic == Variadic::Keywords {
        return Ok(value);
    }
    let ok = match p.ty {
        ParamType::Any => true,
        ParamType::Tensor => matches!(value, ArgValue::Tensor(_)),
        ParamType::Tensors => matches!(value, ArgValue::TensorList(_)),
        ParamType::Int | ParamType::Dim => matches!(value, ArgValue::Int(_) | ArgValue::Bool(_)),
        ParamType::Dims | ParamType::IntOrInts => {
            matches!(value, ArgValue::Int(_) | ArgValue::IntList(_))
        }
        ParamType::Ints | ParamType::Shape => {
            if let ArgValue::Int(_) = value {
                return Ok(ArgValue::IntList(vec![value]));
            }
            matches!(value, ArgValue::IntList(_))
        }
        ParamType::Float | ParamType::Scalar => value.is_number(),
        ParamType::Bool => matches!(value, ArgValue::Bool(_) | ArgValue::Int(_)),
        ParamType::Str => matches!(value, ArgValue::Str(_)),
        ParamType::TensorOrScalar | ParamType::TensorOrNumber => {
            value.is_number() || matches!(value, ArgValue::Tensor(_))
        }
    };
    if ok {
        Ok(value)
    } else {
        Err(wrong())
    }
}

fn expected_text(ty: ParamType) -> &'static str {
    match ty {
        ParamType::Tensor => "a tensor",
        ParamType::Tensors => "a sequence of tensors",
        ParamType::Int => "an int",
        ParamType::Dim => "a dimension (int)",
        ParamType::Dims => "a dimension or a sequence of dimensions",
        ParamType::Ints => "a sequence of ints",
        ParamType::Shape => "a shape (a sequence of ints)",
        ParamType::IntOrInts => "an int or a sequence of ints",
        ParamType::Float | ParamType::Scalar => "a number",
        ParamType::Bool => "a bool",
        ParamType::Str => "a string",
        ParamType::TensorOrScalar | ParamType::TensorOrNumber => "a tensor or a number",
        ParamType::Any => "anything",
    }
}

fn default_value<S: Size>(d: &DefaultValue) -> ArgValue<S> {
    match d {
        DefaultValue::None => ArgValue::None,
        DefaultValue::Bool(b) => ArgValue::Bool(*b),
        DefaultValue::Int(i) => ArgValue::Int(S::lit(*i)),
        DefaultValue::Float(x) => ArgValue::Float(*x),
        DefaultValue::Str(s) => ArgValue::Str(s.clone()),
        DefaultValue::IntList(v) => ArgValue::ints(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::OpTable;

    type A = ArgValue<i64>;

    fn t() -> A {
        ArgValue::Tensor(None)
    }
    fn kw(name: &str, v: A) -> (String, A) {
        (name.to_string(), v)
    }

    #[test]
    fn arguments_bound_on_two_paths_join_where_they_agree() {
        let table = OpTable::torch();
        let conv = table.module("torch.nn.Conv2d").unwrap();
        let on = |stride: A| {
            bind_module_init(
                conv,
                vec![A::Int(8), A::Int(16), A::Int(1)],
                vec![kw("stride", stride)],
            )
            .unwrap()
        };
        let joined = on(A::Int(1)).join(&on(A::Int(2))).unwrap();
        assert_eq!(joined, on(A::Unknown));
        assert_eq!(on(A::Int(2)).join(&on(A::Int(2))), Some(on(A::Int(2))));
        // A keyword on one path, its default on the other: the value where they differ.
        let other = bind_module_init(
            conv,
            vec![A::Int(8), A::Int(16), A::Int(1)],
            vec![kw("padding", A::Int(1))],
        )
        .unwrap();
        let joined = on(A::Int(1)).join(&other).unwrap();
        assert_eq!(joined.get("padding"), Some(&A::Unknown));
        assert_eq!(joined.get("stride"), Some(&A::Int(1)));
    }

    #[test]
    fn view_call_forms_all_bind_the_same_shape() {
        let view = OpTable::torch().method("view").unwrap();
        let expect = Some(A::ints(&[2, 3]));
        let forms: Vec<BoundArgs<i64>> = vec![
            bind(view, Some(t()), vec![A::Int(2), A::Int(3)], vec![]).unwrap(),
            bind(view, Some(t()), vec![A::ints(&[2, 3])], vec![]).unwrap(),
            bind(view, Some(t()), vec![], vec![kw("size", A::ints(&[2, 3]))]).unwrap(),
        ];
        for b in &forms {
            assert_eq!(b.get("size").cloned(), expect);
        }
        // view(6): one int is a one-element shape; view() is a TypeError in torch.
        let b = bind(view, Some(t()), vec![A::Int(6)], vec![]).unwrap();
        assert_eq!(b.get("size"), Some(&A::ints(&[6])));
        assert!(matches!(
            bind::<i64>(view, Some(t()), vec![], vec![]),
            Err(BindError::Missing { .. })
        ));
        // view(dtype) — a string/unknown single argument stays unknown (not a shape).
        let b = bind(view, Some(t()), vec![A::Unknown], vec![]).unwrap();
        assert_eq!(b.get("size"), Some(&A::Unknown));
    }

    #[test]
    fn method_and_function_forms_bind_the_tensor_to_input() {
        let table = OpTable::torch();
        let m = table.method("transpose").unwrap();
        let f = table.function("torch.transpose").unwrap();
        let a = bind(m, Some(t()), vec![A::Int(1), A::Int(2)], vec![]).unwrap();
        let b = bind(f, None, vec![t(), A::Int(1), A::Int(2)], vec![]).unwrap();
        let c = bind(
            f,
            None,
            vec![],
            vec![
                kw("input", t()),
                kw("dim0", A::Int(1)),
                kw("dim1", A::Int(2)),
            ],
        )
        .unwrap();
        for x in [&a, &b, &c] {
            assert_eq!(x.get("input"), Some(&t()));
            assert_eq!(x.get("dim0"), Some(&A::Int(1)));
            assert_eq!(x.get("dim1"), Some(&A::Int(2)));
        }
        // `torch.Tensor.transpose(x, 1, 2)` is the method called as a function.
        let u = table.function("torch.Tensor.transpose").unwrap();
        assert_eq!(u.name, m.name);
        let d = bind(u, None, vec![t(), A::Int(1), A::Int(2)], vec![]).unwrap();
        assert_eq!(d, a);
    }

    #[test]
    fn defaults_negative_dims_and_aliases() {
        let table = OpTable::torch();
        let sum = table.method("sum").unwrap();
        let b = bind(sum, Some(t()), vec![A::Int(-1)], vec![]).unwrap();
        assert_eq!(b.get("dim"), Some(&A::Int(-1)));
        assert_eq!(b.get("keepdim"), Some(&A::Bool(false)));
        assert!(!b.was_given("keepdim"));
        let b = bind(
            sum,
            Some(t()),
            vec![],
            vec![kw("axis", A::ints(&[1, 2])), kw("keepdims", A::Bool(true))],
        )
        .unwrap();
        assert_eq!(b.get("dim"), Some(&A::ints(&[1, 2])));
        assert_eq!(b.get("keepdim"), Some(&A::Bool(true)));
        let flatten = table.method("flatten").unwrap();
        let b = bind(flatten, Some(t()), vec![A::Int(1)], vec![]).unwrap();
        assert_eq!(b.get("start_dim"), Some(&A::Int(1)));
        assert_eq!(b.get("end_dim"), Some(&A::Int(-1)));
    }

    #[test]
    fn bad_calls_are_bind_errors() {
        let table = OpTable::torch();
        let transpose = table.method("transpose").unwrap();
        let e = bind(
            transpose,
            Some(t()),
            vec![A::Int(0), A::Int(1), A::Int(2)],
            vec![],
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                BindError::TooManyPositional {
                    expected: 2,
                    got: 3,
                    ..
                }
            ),
            "{e}"
        );
        let e = bind(
            transpose,
            Some(t()),
            vec![A::Int(0)],
            vec![kw("dim0", A::Int(1))],
        )
        .unwrap_err();
        assert!(matches!(e, BindError::Duplicate { .. }), "{e}");
        let e = bind(
            transpose,
            Some(t()),
            vec![A::Int(0), A::Int(1)],
            vec![kw("dimm", A::Int(1))],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "transpose() got an unexpected keyword argument 'dimm'"
        );
        let e = bind(
            transpose,
            Some(t()),
            vec![A::Str("a".into()), A::Int(1)],
            vec![],
        )
        .unwrap_err();
        assert!(matches!(e, BindError::WrongType { .. }), "{e}");
        let cat = table.function("torch.cat").unwrap();
        assert!(matches!(
            bind(cat, Some(t()), vec![], vec![]),
            Err(BindError::NoReceiver { .. })
        ));
        // torch.reshape takes one sequence, not varargs (spec §2: TypeError).
        let reshape = table.function("torch.reshape").unwrap();
        assert!(bind(reshape, None, vec![t(), A::Int(2), A::Int(3)], vec![]).is_err());
    }

    #[test]
    fn keyword_varargs_collect_einops_axis_lengths() {
        let rearrange = OpTable::torch().function("einops.rearrange").unwrap();
        let b = bind(
            rearrange,
            None,
            vec![t(), A::Str("b (h d) -> b h d".into())],
            vec![kw("h", A::Int(8))],
        )
        .unwrap();
        assert_eq!(b.extra_keywords(), &[("h".to_string(), A::Int(8))]);
    }

    #[test]
    fn module_calls_see_constructor_arguments() {
        let table = OpTable::torch();
        let linear = table.module("nn.Linear").unwrap();
        let init = bind_module_init::<i64>(
            linear,
            vec![A::Int(768), A::Int(3072)],
            vec![kw("bias", A::Bool(false))],
        )
        .unwrap();
        let call = bind_module_call(linear, &init, vec![t()], vec![]).unwrap();
        assert_eq!(call.get("out_features"), Some(&A::Int(3072)));
        assert_eq!(call.get("input"), Some(&t()));
        let flatten = table.module("torch.nn.Flatten").unwrap();
        let init = bind_module_init::<i64>(flatten, vec![], vec![]).unwrap();
        let call = bind_module_call(flatten, &init, vec![t()], vec![]).unwrap();
        assert_eq!(call.get("start_dim"), Some(&A::Int(1)));
    }
}
