//! Environments: local variables of the function being interpreted, and the
//! attributes of `self` established by the class's constructor.

// Fx hashing: the keys are short variable names, hashed on every lookup and join.
use rustc_hash::FxHashMap as HashMap;

use std::sync::Arc;

use super::value::{
    join_bindings, same_bindings, Bindings, Origin, SymLayout, TensorVal, Value, MAX_ALTERNATIVES,
};

/// Local bindings. `None` marks a path that cannot continue (after `return`/`raise`).
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub vars: Bindings,
    /// Attributes of `self` assigned so far in this function (`self.x = ...`).
    pub self_attrs: Bindings,
    /// Sizes given on this path to contiguous tensors of unknown shape, by origin, once a
    /// use revealed their rank (`x.permute(0, 2, 1, 3)`): every alias then agrees. Kept per
    /// path, since a use on one branch says nothing about the other.
    pub shapes: HashMap<Origin, SymLayout>,
    /// The branches this path took, in order: "`mask is None` is true". A test that cannot
    /// be named (it reads a tensor or calls something) does not split the path: its
    /// branches join where they meet.
    pub decisions: Vec<Arc<str>>,
    /// Tests this path already decided, with the names they read: the same test later on
    /// the path takes the same branch (`if cache is not None:` twice), until one of the
    /// names is assigned again.
    pub settled: Vec<SettledTest>,
}

/// A test a path decided (see [`Env::settled`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SettledTest {
    pub condition: Arc<str>,
    pub truth: bool,
    pub names: Vec<String>,
    /// The size the test showed to be ≥ 2 on this path (`area` of `self.area > 1` true).
    pub at_least_two: Option<String>,
}

impl Env {
    /// Record a branch this path took (see [`Env::decisions`]).
    pub fn decide(&mut self, decision: impl Into<Arc<str>>) {
        self.decisions.push(decision.into());
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }
    pub fn set(&mut self, name: &str, v: Value) {
        if !self.settled.is_empty() {
            self.settled.retain(|t| !t.names.iter().any(|n| n == name));
        }
        self.vars.insert(name.into(), v);
    }
    /// Bind `self.<attr>`; tests that read it are no longer settled.
    pub fn set_self_attr(&mut self, attr: &str, v: Value) {
        if !self.settled.is_empty() {
            let read = |n: &String| n.strip_prefix("self.") == Some(attr);
            self.settled.retain(|t| !t.names.iter().any(read));
        }
        self.self_attrs.insert(attr.into(), v);
    }
    /// Take the attributes of `self` a method call left: a test that read any of them is
    /// no longer settled (the method may have assigned it).
    pub fn replace_self_attrs(&mut self, attrs: Bindings) {
        self.settled
            .retain(|t| !t.names.iter().any(|n| n.starts_with("self.")));
        self.self_attrs = attrs;
    }

    /// What copying or joining this path costs, in [`crate::analysis::interp`]'s units of
    /// work: one per binding, size, decision and settled test it holds.
    pub fn weight(&self) -> u64 {
        (self.vars.len()
            + self.self_attrs.len()
            + self.shapes.len()
            + self.decisions.len()
            + self.settled.len()) as u64
    }

    /// How this path decided `condition` before, if it did and nothing it reads changed.
    pub fn settled_truth(&self, condition: &str) -> Option<bool> {
        self.settled
            .iter()
            .find(|t| &*t.condition == condition)
            .map(|t| t.truth)
    }
}

/// Join two environments of paths that meet. A variable bound on only one path may be
/// unbound on the other: its value is unknown afterwards.
pub fn join_envs(a: &Env, b: &Env) -> Env {
    let mut shapes = a.shapes.clone();
    shapes.retain(|o, l| b.shapes.get(o) == Some(l));
    // The joined path took the branches both took (their common beginning).
    let common = a
        .decisions
        .iter()
        .zip(&b.decisions)
        .take_while(|(x, y)| x == y)
        .count();
    Env {
        vars: join_bindings(&a.vars, &b.vars),
        self_attrs: join_bindings(&a.self_attrs, &b.self_attrs),
        shapes,
        decisions: a.decisions[..common].to_vec(),
        settled: a
            .settled
            .iter()
            .filter(|t| b.settled.contains(t))
            .cloned()
            .collect(),
    }
}

/// [`join_envs`], where a tensor's alternatives that only one path has are tagged with
/// that path's condition (`yes` for `a`'s, `no` for `b`'s).
pub fn join_envs_tagged(a: &Env, b: &Env, yes: &str, no: &str) -> Env {
    let mut out = join_envs(a, b);
    let tag = |from_a: &Bindings, from_b: &Bindings, into: &mut Bindings| {
        for (k, va) in from_a {
            if let Some(v) = from_b.get(k).and_then(|vb| join_tagged(va, vb, yes, no)) {
                into.insert(k.clone(), v);
            }
        }
    };
    tag(&a.vars, &b.vars, &mut out.vars);
    tag(&a.self_attrs, &b.self_attrs, &mut out.self_attrs);
    out
}

/// Join the attributes of `self` at two exits of a function.
pub fn join_attrs(a: &Bindings, b: &Bindings) -> Bindings {
    join_bindings(a, b)
}

/// The join of two tensors from the two sides of a nameable condition, each alternative
/// that only one side has tagged with that side's condition; `None` when they are not both
/// tensors with known alternatives (the plain join applies).
pub fn join_tagged(from_a: &Value, from_b: &Value, yes: &str, no: &str) -> Option<Value> {
    let (Value::Tensor(TensorVal::Alts(x)), Value::Tensor(TensorVal::Alts(y))) = (from_a, from_b)
    else {
        return None;
    };
    if let Some(merged) = super::value::join_unknown_shapes(x, y) {
        return Some(Value::Tensor(TensorVal::Alts(vec![merged])));
    }
    if x.len() + y.len() > MAX_ALTERNATIVES {
        return None;
    }
    let mut alts = Vec::with_capacity(x.len() + y.len());
    for alt in x {
        let mut alt = alt.clone();
        if !y.iter().any(|o| o.same_layout(&alt)) {
            alt.condition = Some(conjoin(alt.condition.as_deref(), yes));
        }
        alts.push(alt);
    }
    for alt in y {
        if !x.iter().any(|o| o.same_layout(alt)) {
            let mut alt = alt.clone();
            alt.condition = Some(conjoin(alt.condition.as_deref(), no));
            alts.push(alt);
        }
    }
    if alts.len() > x.len() {
        // Both sides tagged an alternative: a later op may make two of them one.
        super::value::record_sides(yes, no);
    }
    Some(Value::Tensor(TensorVal::Alts(alts)))
}

/// `a and b`: a condition with one more part.
pub(super) fn conjoin(existing: Option<&str>, more: &str) -> Arc<str> {
    match existing {
        Some(e) => Arc::from(format!("{e} and {more}")),
        None => Arc::from(more),
    }
}

/// The join of every path (`None` when there is none).
pub fn join_all_envs(paths: Vec<Env>) -> Option<Env> {
    let mut it = paths.into_iter();
    let first = it.next()?;
    Some(it.fold(first, |acc, e| join_envs(&acc, &e)))
}

/// Join an optional path state (`None` = the path has ended).
pub fn join_opt(a: Option<Env>, b: Option<Env>) -> Option<Env> {
    match (a, b) {
        (Some(x), Some(y)) => Some(join_envs(&x, &y)),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

/// Do two environments bind the same names to the same abstract values?
pub fn same_env(a: &Env, b: &Env) -> bool {
    same_bindings(&a.vars, &b.vars)
        && same_bindings(&a.self_attrs, &b.self_attrs)
        && a.shapes == b.shapes
}
