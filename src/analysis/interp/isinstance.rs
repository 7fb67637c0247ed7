//! `isinstance(value, types)` on abstract values: decided where the value's kind settles
//! it (a literal size is an `int`, a known layer is an `nn.Module`, a flag is no module),
//! so `k // 2 if isinstance(k, int) else [x // 2 for x in k]` and `act if isinstance(act,
//! nn.Module) else nn.Identity()` take one branch. Anything else stays unknown.

use super::super::value::{TensorVal, Value};

/// One entry of `isinstance`'s second argument.
pub(super) enum TypeRef {
    /// A builtin type by name: `int`, `float`, `bool`, `str`, `tuple`, `list`.
    Builtin(String),
    /// A library class by dotted path (`torch.nn.Module`, `torch.Tensor`).
    Path(String),
}

/// `Some(answer)` when every entry is decided for `value` (true as soon as one is).
pub(super) fn isinstance(value: &Value, types: &[TypeRef]) -> Option<bool> {
    let mut answer = Some(false);
    for t in types {
        match is_instance_of(value, t) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => answer = None,
        }
    }
    answer
}

fn is_instance_of(value: &Value, t: &TypeRef) -> Option<bool> {
    match t {
        TypeRef::Builtin(name) => builtin_kind(value).map(|kinds| kinds.contains(&name.as_str())),
        TypeRef::Path(path) => library_class(value, path),
    }
}

/// The builtin types a value is an instance of; `None` when its type is unknown or may be
/// either of `tuple` and `list` (the analysis keeps both as one sequence).
fn builtin_kind(value: &Value) -> Option<&'static [&'static str]> {
    Some(match value {
        Value::Int(_) => &["int"],
        Value::Bool(_) => &["bool", "int"],
        Value::Float => &["float"],
        Value::Str(_) => &["str"],
        Value::NoneVal
        | Value::NnModule(_)
        | Value::Sequential(_)
        | Value::Tensor(TensorVal::Alts(_)) => &[],
        _ => return None,
    })
}

/// Is `value` an instance of the library class `path`? Only what the value's kind
/// settles: numbers, strings and `None` are no torch class; a table layer is an
/// `nn.Module`; a tensor is a `torch.Tensor` and no module. (A tensor of unknown layout
/// may stand for a join with another kind of value: not decided.)
fn library_class(value: &Value, path: &str) -> Option<bool> {
    let module = path == "torch.nn.Module";
    match value {
        Value::Int(_) | Value::Bool(_) | Value::Float | Value::Str(_) | Value::NoneVal
            if path.starts_with("torch.") =>
        {
            Some(false)
        }
        Value::NnModule(_) | Value::Sequential(_) if module => Some(true),
        Value::NnModule(m) if m.spec.classes.iter().any(|c| c == path) => Some(true),
        Value::Tensor(TensorVal::Alts(_)) if path == "torch.Tensor" => Some(true),
        Value::Tensor(TensorVal::Alts(_)) if module => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{isinstance, TypeRef};
    use crate::analysis::value::Value;

    fn builtin(name: &str) -> TypeRef {
        TypeRef::Builtin(name.into())
    }

    #[test]
    fn a_value_of_known_kind_decides() {
        assert_eq!(isinstance(&Value::int(3), &[builtin("int")]), Some(true));
        assert_eq!(
            isinstance(&Value::Bool(Some(true)), &[builtin("int")]),
            Some(true)
        );
        assert_eq!(
            isinstance(&Value::int(3), &[builtin("tuple"), builtin("list")]),
            Some(false)
        );
        let module = TypeRef::Path("torch.nn.Module".into());
        assert_eq!(
            isinstance(&Value::Bool(Some(false)), &[module]),
            Some(false)
        );
    }

    #[test]
    fn a_sequence_or_an_unknown_value_stays_undecided() {
        // The analysis keeps tuples and lists as one kind of sequence.
        let seq = Value::Tuple(vec![Value::int(3), Value::int(3)]);
        assert_eq!(isinstance(&seq, &[builtin("tuple")]), None);
        assert_eq!(isinstance(&seq, &[builtin("int")]), None);
        let unknown = Value::Unknown(crate::analysis::value::UnknownReason::Unmodelled);
        assert_eq!(isinstance(&unknown, &[builtin("int")]), None);
    }
}
