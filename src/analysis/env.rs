//! Environments: local variables of the function being interpreted, and the
//! attributes of `self` established by the class's constructor.

// Fx hashing: the keys are short variable names, hashed on every lookup and join.
use rustc_hash::FxHashMap as HashMap;

use super::value::{join, same_value, Value};

/// Local bindings. `None` marks a path that cannot continue (after `return`/`raise`).
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub vars: HashMap<String, Value>,
    /// Attributes of `self` assigned so far in this function (`self.x = ...`).
    pub self_attrs: HashMap<String, Value>,
}

impl Env {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }
    pub fn set(&mut self, name: &str, v: Value) {
        self.vars.insert(name.to_string(), v);
    }
}

/// Join two environments of paths that meet. A variable bound on only one path may be
/// unbound on the other: its value is unknown afterwards.
pub fn join_envs(a: &Env, b: &Env) -> Env {
    Env {
        vars: join_maps(&a.vars, &b.vars),
        self_attrs: join_maps(&a.self_attrs, &b.self_attrs),
    }
}

fn join_maps(a: &HashMap<String, Value>, b: &HashMap<String, Value>) -> HashMap<String, Value> {
    let mut out = HashMap::with_capacity_and_hasher(a.len().max(b.len()), Default::default());
    for (k, va) in a {
        let v = match b.get(k) {
            Some(vb) => join(va, vb),
            None => unbound_on_one_path(va),
        };
        out.insert(k.clone(), v);
    }
    for (k, vb) in b {
        if !a.contains_key(k) {
            out.insert(k.clone(), unbound_on_one_path(vb));
        }
    }
    out
}

fn unbound_on_one_path(v: &Value) -> Value {
    if v.is_tensor() {
        Value::unknown_tensor()
    } else {
        Value::Unknown
    }
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
    same_map(&a.vars, &b.vars) && same_map(&a.self_attrs, &b.self_attrs)
}

fn same_map(a: &HashMap<String, Value>, b: &HashMap<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| same_value(v, w)))
}
