//! Shared by `tests/it/oracle.rs` and `tests/it/oracle_symbolic.rs`: reading the tables that
//! `scripts/oracle/` generated with real torch, and turning a recorded chain step into an
//! ops-API call (`OpTable::torch()` lookup, `bind`, `apply`).
//!
//! Recorded arguments are JSON (format in `scripts/oracle/gen_chains.py`). Numbers in them
//! become sizes through a [`Numbers`] function, so one converter serves the concrete replay
//! (`i64` from the recorded ints), the symbolic replay (`Dim` from the recorded derivations
//! such as `["*", "s0", "s1"]`) and the replay at another size assignment (`i64` from
//! evaluating those derivations).

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;
use stridelint::layout::{Decider, Dim, Layout, Size};
use stridelint::ops::{
    apply, bind, bind_module_call, bind_module_init, ArgValue, OpErrorKind, OpSpec, OpTable,
    SliceArg, Transfer,
};

/// Read `tests/data/oracle/<name>`, one JSON object per line.
pub fn load(name: &str) -> Vec<Value> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", "oracle", name]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1))
        })
        .collect()
}

/// Turns a JSON number — or a recorded derivation of one — into a size; `None` for any
/// JSON value that is not a number in this reading.
pub type Numbers<'a, S> = &'a dyn Fn(&Value) -> Option<S>;

/// The recorded ints, as they were passed to torch.
pub fn concrete_number(v: &Value) -> Option<i64> {
    v.as_i64()
}

/// A recorded derivation as a symbolic size: `"s3"` is the start size named `s3`,
/// `["*", a, b]` a product, and so on (the forms of `scripts/oracle/symexpr.py`).
pub fn symbolic_number(v: &Value) -> Option<Dim> {
    fold_form(
        v,
        &|name| Some(Dim::sym(name)),
        &|op, a: Dim, b: &Dim| match op {
            "+" => a.add(b),
            "-" => a.sub(b),
            "*" => a.mul(b),
            _ => Size::floordiv(&a, b),
        },
    )
}

/// A recorded derivation evaluated with the start sizes of `env`.
pub fn evaluated_number(v: &Value, env: &HashMap<String, i64>) -> Option<i64> {
    fold_form(
        v,
        &|name| env.get(name).copied(),
        &|op, a: i64, b: &i64| match op {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            _ => a.div_euclid(*b),
        },
    )
}

/// Fold a derivation: ints are literals, `s<digits>` symbols, `[op, x, y, …]` left folds.
fn fold_form<S: Size>(
    v: &Value,
    symbol: &dyn Fn(&str) -> Option<S>,
    op: &dyn Fn(&str, S, &S) -> S,
) -> Option<S> {
    match v {
        Value::Number(n) => n.as_i64().map(S::lit),
        Value::String(name) if is_symbol(name) => symbol(name),
        Value::Array(items) => {
            let operator = items
                .first()?
                .as_str()
                .filter(|o| matches!(*o, "+" | "-" | "*" | "//"))?;
            let mut operands = items[1..].iter().map(|x| fold_form(x, symbol, op));
            let first = operands.next()??;
            operands.try_fold(first, |acc, x| Some(op(operator, acc, &x?)))
        }
        _ => None,
    }
}

fn is_symbol(name: &str) -> bool {
    name.len() > 1 && name.starts_with('s') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

/// A `{"shape", "strides", "offset"}` object (the chain start, a tensor operand, a result).
pub fn layout_of<S: Size>(obj: &Value, num: Numbers<S>) -> Layout<S> {
    let list = |key: &str| -> Vec<S> {
        obj[key]
            .as_array()
            .unwrap_or_else(|| panic!("no `{key}` in {obj}"))
            .iter()
            .map(|v| num(v).expect("a size"))
            .collect()
    };
    let offset = num(&obj["offset"]).expect("an offset");
    Layout::new(list("shape"), list("strides"), offset)
}

/// The start of a chain, concrete or symbolic (its `sym_shape`/`sym_strides`).
pub fn start_layout<S: Size>(chain: &Value, num: Numbers<S>, symbolic: bool) -> Layout<S> {
    let start = &chain["start"];
    if !symbolic {
        return layout_of(start, num);
    }
    let list = |key: &str| -> Vec<S> {
        start[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|v| num(v).expect("a size"))
            .collect()
    };
    Layout::new(
        list("sym_shape"),
        list("sym_strides"),
        num(&start["offset"]).expect("an offset"),
    )
}

/// A recorded argument as an [`ArgValue`]; `{"this": true}` is the chain's current tensor.
pub fn arg_value<S: Size>(v: &Value, num: Numbers<S>, this: &Layout<S>) -> ArgValue<S> {
    if let Some(n) = num(v) {
        return ArgValue::Int(n);
    }
    match v {
        Value::Null => ArgValue::None,
        Value::Bool(b) => ArgValue::Bool(*b),
        Value::Number(n) => ArgValue::Float(n.as_f64().expect("a number")),
        Value::String(s) if s == "..." => ArgValue::Ellipsis,
        Value::String(s) => ArgValue::Str(s.clone()),
        Value::Array(items) => {
            let values: Vec<ArgValue<S>> = items.iter().map(|x| arg_value(x, num, this)).collect();
            if !values.is_empty() && values.iter().all(|x| x.as_tensor().is_some()) {
                ArgValue::TensorList(values.iter().map(|x| x.as_layout().cloned()).collect())
            } else {
                ArgValue::IntList(values)
            }
        }
        Value::Object(obj) => {
            if obj.contains_key("this") {
                ArgValue::Tensor(Some(this.clone()))
            } else if let Some(tensor) = obj.get("tensor") {
                ArgValue::Tensor(Some(layout_of(tensor, num)))
            } else if let Some(parts) = obj.get("slice").and_then(Value::as_array) {
                let part = |i: usize| arg_value(&parts[i], num, this);
                ArgValue::Slice(Box::new(SliceArg {
                    start: part(0),
                    stop: part(1),
                    step: part(2),
                }))
            } else {
                panic!("unknown argument object {v}")
            }
        }
    }
}

/// How a step is spelled: `x.op(...)`, `op(...)`, `x.op`, or `op(init...)(...)` for a
/// module class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Method,
    Function,
    Attribute,
    Module,
}

impl Form {
    pub fn of(step: &Value) -> Form {
        match step.get("form").and_then(Value::as_str) {
            Some("function") => Form::Function,
            Some("attribute") => Form::Attribute,
            Some("module") => Form::Module,
            _ => Form::Method,
        }
    }
}

/// The table entry a step calls, or why there is none.
pub fn spec_for(step: &Value) -> Result<&'static OpSpec, String> {
    let op = step["op"].as_str().expect("op");
    let table = OpTable::torch();
    let spec = match Form::of(step) {
        Form::Method => table.method(op),
        Form::Function => table.function(op),
        Form::Attribute => table.attribute(op),
        Form::Module => table.module(op).map(|m| &m.call),
    };
    spec.ok_or_else(|| format!("`{op}` ({:?}) is not in the torch table", Form::of(step)))
}

/// Run one recorded step on `input` through the ops API. `symbolic` picks the recorded
/// derivations (`sym_args`/`sym_kwargs`) over the plain numbers when a step has them.
pub fn run_step<S: Size>(
    step: &Value,
    input: &Layout<S>,
    num: Numbers<S>,
    symbolic: bool,
    dec: &Decider,
) -> Result<(&'static OpSpec, Transfer<S>), String> {
    let spec = spec_for(step)?;
    let pick = |plain: &str, derived: &str| -> Value {
        let chosen = if symbolic {
            step.get(derived).or_else(|| step.get(plain))
        } else {
            step.get(plain)
        };
        chosen.cloned().unwrap_or(Value::Null)
    };
    let positional_of = |key: &str, derived: &str| -> Vec<ArgValue<S>> {
        let raw = pick(key, derived).as_array().cloned().unwrap_or_default();
        raw.iter().map(|a| arg_value(a, num, input)).collect()
    };
    let keywords_of = |key: &str, derived: &str| -> Vec<(String, ArgValue<S>)> {
        let raw = pick(key, derived);
        raw.as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), arg_value(v, num, input)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let positional = if step["op"] == "__getitem__" {
        // `x[a, b:c, None]`: each entry of the index tuple is one positional argument.
        let index = pick("args", "sym_args")[0].clone();
        index
            .as_array()
            .expect("an index list")
            .iter()
            .map(|e| arg_value(e, num, input))
            .collect()
    } else {
        positional_of("args", "sym_args")
    };
    let keywords = keywords_of("kwargs", "sym_kwargs");
    let bound = match Form::of(step) {
        Form::Module => {
            let module = OpTable::torch()
                .module(step["op"].as_str().unwrap_or_default())
                .expect("found by spec_for");
            let init = bind_module_init(
                module,
                positional_of("init_args", "sym_init_args"),
                keywords_of("init_kwargs", "sym_init_kwargs"),
            )
            .map_err(|e| format!("binding the constructor failed: {e}"))?;
            bind_module_call(module, &init, positional, keywords)
        }
        Form::Function => bind(spec, None, positional, keywords),
        Form::Method | Form::Attribute => bind(
            spec,
            Some(ArgValue::Tensor(Some(input.clone()))),
            positional,
            keywords,
        ),
    }
    .map_err(|e| format!("bind failed: {e}"))?;
    Ok((spec, apply(spec, &bound, dec)))
}

/// The error kinds of the ops API that may stand for an error kind the generators
/// recorded (`scripts/oracle/layouts.py` ERROR_KINDS; those are coarse names chosen from
/// torch's messages, so a few map to more than one kind).
pub fn accepted_error_kinds(recorded: &str) -> &'static [OpErrorKind] {
    use OpErrorKind::*;
    match recorded {
        "view_incompatible" => &[ViewIncompatible],
        "element_count" | "ambiguous_zero" => &[ElementCount],
        "two_inferred" => &[TwoInferred],
        "invalid_shape_dim" => &[InvalidShapeDim],
        "dim_out_of_range" => &[DimOutOfRange],
        "index_out_of_range" => &[IndexOutOfRange, InvalidArgument],
        "broadcast" => &[Broadcast, ElementCount],
        "shape_mismatch" => &[ElementCount, Broadcast, InvalidArgument],
        "invalid_permutation" => &[InvalidPermutation, InvalidArgument],
        _ => &[InvalidArgument, ElementCount, Broadcast],
    }
}
