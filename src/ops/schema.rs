//! Argument schemas: how a parameter of an op is written in `rules/*.toml` and what it means.
//!
//! A table entry lists its parameters as short strings in Python's own notation, one per
//! parameter, so that a newcomer can copy a signature from the PyTorch docs:
//!
//! ```text
//! "input: tensor"                 a required tensor
//! "dim: dim = -1"                 an int dimension with a default
//! "dim|axis: dims? = None"        one dim or a list of dims; also accepted as `axis=`; None allowed
//! "*size: shape"                  varargs shape: view(2, 3) == view((2, 3)) == view(size=(2, 3))
//! "*indices: any"                 plain varargs (each positional kept as given)
//! "*"                             every following parameter is keyword-only
//! "**axes_lengths: int"           collects unknown keywords (einops `h=8`)
//! ```
//!
//! Grammar: `[*|**]name[|alias…]: type[?] [= default]`. Defaults are Python literals:
//! `None`, `True`, `False`, integers, floats, quoted strings and lists/tuples of integers.
//! Aliases are extra keyword names the parameter answers to, and extra names a transfer
//! function may read it by (e.g. einops' `tensor|input`).

use std::fmt;

/// What kind of value a parameter takes. Binding checks values against it loosely (an
/// `Unknown` value is always accepted) and normalises a few forms (see [`ParamType::Shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// A tensor operand.
    Tensor,
    /// A sequence of tensors (`torch.cat(tensors)`).
    Tensors,
    /// An integer (may be a symbolic size).
    Int,
    /// One dimension index (negative allowed; wrapped by the transfer function).
    Dim,
    /// One dimension or a sequence of dimensions (`sum(dim=(1, 2))`, `squeeze(0)`).
    Dims,
    /// A sequence of integers (`permute(dims)`, `repeat(sizes)`); a lone int becomes a list.
    Ints,
    /// A shape (sizes, `-1` allowed); a lone int becomes a one-element shape.
    Shape,
    /// An int or a sequence of ints, kept as given (`split(split_size_or_sections)`).
    IntOrInts,
    Float,
    Bool,
    Str,
    /// A Python number that is *not* a tensor operand (`leaky_relu(negative_slope)`).
    Scalar,
    /// A tensor operand that also accepts a Python number, which PyTorch wraps into a 0-d
    /// tensor that takes part in broadcasting and in the output-stride rule (spec §6.1):
    /// `x * 2` is a two-operand op, not on the fast path.
    TensorOrScalar,
    /// A tensor operand, or a Python number that selects a Scalar overload and is *not* an
    /// operand: `x.pow(2)` and `x.clamp(min=0)` are one-operand ops (checked on torch 2.15).
    TensorOrNumber,
    /// Anything (dtypes, devices, index expressions, callables): never checked.
    Any,
}

impl ParamType {
    pub const ALL: &'static [ParamType] = &[
        ParamType::Tensor,
        ParamType::Tensors,
        ParamType::Int,
        ParamType::Dim,
        ParamType::Dims,
        ParamType::Ints,
        ParamType::Shape,
        ParamType::IntOrInts,
        ParamType::Float,
        ParamType::Bool,
        ParamType::Str,
        ParamType::Scalar,
        ParamType::TensorOrScalar,
        ParamType::TensorOrNumber,
        ParamType::Any,
    ];

    /// The spelling used in the tables.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Tensor => "tensor",
            ParamType::Tensors => "tensors",
            ParamType::Int => "int",
            ParamType::Dim => "dim",
            ParamType::Dims => "dims",
            ParamType::Ints => "ints",
            ParamType::Shape => "shape",
            ParamType::IntOrInts => "int_or_ints",
            ParamType::Float => "float",
            ParamType::Bool => "bool",
            ParamType::Str => "str",
            ParamType::Scalar => "scalar",
            ParamType::TensorOrScalar => "tensor_or_scalar",
            ParamType::TensorOrNumber => "tensor_or_number",
            ParamType::Any => "any",
        }
    }

    pub fn from_name(name: &str) -> Option<ParamType> {
        ParamType::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// Does a positional varargs parameter of this type accept its whole value as one
    /// sequence argument (`view((2, 3))` as well as `view(2, 3)`)?
    pub fn varargs_accepts_one_sequence(self) -> bool {
        matches!(
            self,
            ParamType::Shape | ParamType::Ints | ParamType::Dims | ParamType::Tensors
        )
    }
}

/// A default value written in a table (a Python literal).
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    IntList(Vec<i64>),
}

/// How a parameter collects arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variadic {
    /// An ordinary parameter.
    No,
    /// `*name`: the remaining positional arguments.
    Positional,
    /// `**name`: keywords no other parameter claims.
    Keywords,
}

/// One declared parameter of an op, a module constructor or a module call.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    /// Other names the parameter answers to (keywords and transfer-function lookups).
    pub aliases: Vec<String>,
    pub ty: ParamType,
    /// `?`: `None` is an acceptable value.
    pub optional: bool,
    /// `None` when the parameter is required.
    pub default: Option<DefaultValue>,
    pub variadic: Variadic,
    /// Declared after a bare `*`: can only be passed by keyword.
    pub keyword_only: bool,
}

impl ParamSpec {
    /// Does this parameter answer to `name` (its own name or an alias)?
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a == name)
    }
}

impl fmt::Display for ParamSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.variadic {
            Variadic::No => {}
            Variadic::Positional => f.write_str("*")?,
            Variadic::Keywords => f.write_str("**")?,
        }
        f.write_str(&self.name)?;
        for a in &self.aliases {
            write!(f, "|{a}")?;
        }
        write!(f, ": {}", self.ty.name())?;
        if self.optional {
            f.write_str("?")?;
        }
        if let Some(d) = &self.default {
            f.write_str(" = ")?;
            match d {
                DefaultValue::None => f.write_str("None")?,
                DefaultValue::Bool(b) => f.write_str(if *b { "True" } else { "False" })?,
                DefaultValue::Int(i) => write!(f, "{i}")?,
                DefaultValue::Float(x) => write!(f, "{x:?}")?,
                DefaultValue::Str(s) => write!(f, "{s:?}")?,
                DefaultValue::IntList(v) => write!(f, "{v:?}")?,
            }
        }
        Ok(())
    }
}

/// Parse a whole parameter list (the entries of a `params = [...]` array).
///
/// Errors name the offending entry; the table loader adds the file and op.
pub fn parse_params(entries: &[String]) -> Result<Vec<ParamSpec>, String> {
    let mut out: Vec<ParamSpec> = Vec::with_capacity(entries.len());
    let mut keyword_only = false;
    for entry in entries {
        let entry = entry.trim();
        if entry == "*" {
            if keyword_only {
                return Err("a second bare `*` marker".into());
            }
            keyword_only = true;
            continue;
        }
        let mut p = parse_param(entry).map_err(|e| format!("parameter `{entry}`: {e}"))?;
        if p.variadic == Variadic::Positional {
            if keyword_only {
                return Err(format!(
                    "parameter `{entry}`: `*name` after the keyword-only marker"
                ));
            }
            keyword_only = true; // like Python: what follows `*args` is keyword-only
        } else {
            p.keyword_only = keyword_only;
        }
        if let Some(prev) = out
            .iter()
            .find(|q| q.answers_to(&p.name) || p.aliases.iter().any(|a| q.answers_to(a)))
        {
            return Err(format!(
                "parameter `{entry}`: name clashes with `{}`",
                prev.name
            ));
        }
        if p.variadic == Variadic::Keywords && out.iter().any(|q| q.variadic == Variadic::Keywords)
        {
            return Err(format!("parameter `{entry}`: a second `**` parameter"));
        }
        if p.variadic == Variadic::No && !p.keyword_only && p.default.is_none() {
            if let Some(prev) = out
                .iter()
                .find(|q| q.variadic == Variadic::No && !q.keyword_only && q.default.is_some())
            {
                return Err(format!(
                    "parameter `{entry}`: a required positional parameter after `{}`, which has a default",
                    prev.name
                ));
            }
        }
        out.push(p);
    }
    Ok(out)
}

/// Parse one parameter entry (not the bare `*` marker).
pub fn parse_param(entry: &str) -> Result<ParamSpec, String> {
    let (head, default) = match entry.split_once('=') {
        Some((h, d)) => (h.trim(), Some(parse_default(d.trim())?)),
        None => (entry.trim(), None),
    };
    let (names, ty) = head
        .split_once(':')
        .ok_or_else(|| "expected `name: type`".to_string())?;
    let (variadic, names) = if let Some(rest) = names.trim().strip_prefix("**") {
        (Variadic::Keywords, rest)
    } else if let Some(rest) = names.trim().strip_prefix('*') {
        (Variadic::Positional, rest)
    } else {
        (Variadic::No, names.trim())
    };
    let mut parts = names.split('|').map(str::trim);
    let name = parts.next().unwrap_or_default().to_string();
    let aliases: Vec<String> = parts.map(str::to_string).collect();
    for n in std::iter::once(&name).chain(aliases.iter()) {
        if !is_identifier(n) {
            return Err(format!("`{n}` is not a valid parameter name"));
        }
    }
    let ty = ty.trim();
    let (ty, optional) = match ty.strip_suffix('?') {
        Some(t) => (t.trim(), true),
        None => (ty, false),
    };
    let ty = ParamType::from_name(ty).ok_or_else(|| {
        let known: Vec<&str> = ParamType::ALL.iter().map(|t| t.name()).collect();
        format!("unknown type `{ty}` (known types: {})", known.join(", "))
    })?;
    if default == Some(DefaultValue::None) && !optional && ty != ParamType::Any {
        return Err("default `None` on a type without `?`".into());
    }
    if variadic != Variadic::No && default.is_some() && variadic == Variadic::Keywords {
        return Err("a `**` parameter cannot have a default".into());
    }
    Ok(ParamSpec {
        name,
        aliases,
        ty,
        optional,
        default,
        variadic,
        keyword_only: false,
    })
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// Parse a Python literal used as a default.
pub fn parse_default(text: &str) -> Result<DefaultValue, String> {
    match text {
        "None" => return Ok(DefaultValue::None),
        "True" => return Ok(DefaultValue::Bool(true)),
        "False" => return Ok(DefaultValue::Bool(false)),
        _ => {}
    }
    if let Some(inner) = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .or_else(|| text.strip_prefix('(').and_then(|t| t.strip_suffix(')')))
    {
        let items: Result<Vec<i64>, String> = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<i64>()
                    .map_err(|_| format!("`{s}` in default `{text}` is not an integer"))
            })
            .collect();
        return items.map(DefaultValue::IntList);
    }
    for quote in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(quote).and_then(|t| t.strip_suffix(quote)) {
            return Ok(DefaultValue::Str(inner.to_string()));
        }
    }
    if let Ok(i) = text.parse::<i64>() {
        return Ok(DefaultValue::Int(i));
    }
    if let Ok(x) = text.parse::<f64>() {
        return Ok(DefaultValue::Float(x));
    }
    Err(format!("cannot read default `{text}` (expected None, True, False, a number, a string or a list of ints)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_every_part_of_the_grammar() {
        let p = parse_param("dim|axis: dims? = None").unwrap();
        assert_eq!(p.name, "dim");
        assert_eq!(p.aliases, vec!["axis"]);
        assert_eq!(p.ty, ParamType::Dims);
        assert!(p.optional);
        assert_eq!(p.default, Some(DefaultValue::None));

        let p = parse_param("*size: shape").unwrap();
        assert_eq!(p.variadic, Variadic::Positional);
        assert_eq!(p.ty, ParamType::Shape);
        assert_eq!(p.default, None);

        let p = parse_param("**axes_lengths: int").unwrap();
        assert_eq!(p.variadic, Variadic::Keywords);

        assert_eq!(parse_default("-1").unwrap(), DefaultValue::Int(-1));
        assert_eq!(parse_default("0.5").unwrap(), DefaultValue::Float(0.5));
        assert_eq!(
            parse_default("\"mean\"").unwrap(),
            DefaultValue::Str("mean".into())
        );
        assert_eq!(
            parse_default("(1, 2)").unwrap(),
            DefaultValue::IntList(vec![1, 2])
        );
        assert_eq!(parse_default("[]").unwrap(), DefaultValue::IntList(vec![]));
    }

    #[test]
    fn keyword_only_after_bare_star_and_after_varargs() {
        let ps = parse_params(&strings(&["input: tensor", "*", "dim: dim = 0"])).unwrap();
        assert!(!ps[0].keyword_only);
        assert!(ps[1].keyword_only);
        let ps = parse_params(&strings(&[
            "input: tensor",
            "*size: shape",
            "dtype: any = None",
        ]))
        .unwrap();
        assert!(ps[2].keyword_only);
    }

    #[test]
    fn rejects_malformed_entries_with_a_reason() {
        assert!(parse_param("dim").unwrap_err().contains("name: type"));
        assert!(parse_param("dim: integer")
            .unwrap_err()
            .contains("unknown type `integer`"));
        assert!(parse_param("dim: int = None")
            .unwrap_err()
            .contains("without `?`"));
        assert!(parse_param("2x: int")
            .unwrap_err()
            .contains("not a valid parameter name"));
        assert!(parse_default("[1, x]")
            .unwrap_err()
            .contains("not an integer"));
        let e = parse_params(&strings(&["a: int = 1", "b: int"])).unwrap_err();
        assert!(e.contains("required positional parameter after `a`"), "{e}");
        let e = parse_params(&strings(&["a: int", "b|a: int"])).unwrap_err();
        assert!(e.contains("clashes"), "{e}");
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "dim|axis: dims? = None",
            "*size: shape",
            "keepdim: bool = False",
            "p: float = 0.5",
        ] {
            let p = parse_param(s).unwrap();
            assert_eq!(parse_param(&p.to_string()).unwrap(), p, "{s}");
        }
    }
}
