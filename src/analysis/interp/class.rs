//! Classes and objects: the classes of the analysed code with their bases resolved, and
//! constructing an object by running its constructor (`__init__`, or a Rust `new` lowered to
//! `self.field = …`) with the caller's arguments.
//!
//! An object's attributes are what its constructor leaves on `self`, minus the attributes
//! that any other method of its class (or of a base) assigns: their value when a method
//! starts is not known. A constructor parameter stored on `self` is not a tensor argument of
//! the method that reads it, so the contiguity assumption does not follow it there.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use crate::ir::{self, Class, CmpOp, Expr, ExprKind, Function, Language, Span, Stmt, Target};
use crate::layout::Assumption;

use super::super::apply::CallArgs;
use super::super::env::{join_opt, Env};
use super::super::frame::Facts;
use super::super::value::{Bindings, ClassDef, Instance, UnknownReason, Value};
use super::call::register_buffer_name;
use super::{fingerprint, same_params, Callee, Interpreter};

/// The classes of the analysed code, by name (`Outer.Inner` for nested ones).
#[derive(Debug, Default, Clone)]
pub struct ClassTable {
    by_name: HashMap<String, Arc<ClassDef>>,
}

impl ClassTable {
    /// Resolve the bases of `classes` among themselves (by their last dotted name part as
    /// written: `nn.Module` is a library base, `BertPreTrainedModel` one of these).
    pub fn build(classes: &[Arc<Class>]) -> ClassTable {
        let by_source: HashMap<&str, &Arc<Class>> =
            classes.iter().map(|c| (c.name.as_str(), c)).collect();
        let mut table = ClassTable::default();
        for c in classes {
            let mut visiting = HashSet::default();
            table.define(c, &by_source, &mut visiting);
        }
        table
    }

    fn define(
        &mut self,
        c: &Arc<Class>,
        by_source: &HashMap<&str, &Arc<Class>>,
        visiting: &mut HashSet<String>,
    ) -> Option<Arc<ClassDef>> {
        if let Some(d) = self.by_name.get(&c.name) {
            return Some(d.clone());
        }
        if !visiting.insert(c.name.clone()) || visiting.len() > 32 {
            return None;
        }
        let mut bases = Vec::new();
        for b in &c.bases {
            let name = b.rsplit('.').next().unwrap_or(b);
            if let Some(base) = by_source.get(name).copied() {
                if let Some(def) = self.define(base, by_source, visiting) {
                    bases.push(def);
                }
            }
        }
        let mut reassigned: HashSet<String> = c
            .methods
            .iter()
            .filter(|m| !m.is_constructor && m.name != "__init__")
            .flat_map(|m| assigned_self_attrs(&m.body))
            .collect();
        for b in &bases {
            reassigned.extend(b.reassigned.iter().cloned());
        }
        let def = Arc::new(ClassDef {
            class: c.clone(),
            bases,
            reassigned,
        });
        self.by_name.insert(c.name.clone(), def.clone());
        Some(def)
    }

    pub fn get(&self, name: &str) -> Option<Arc<ClassDef>> {
        self.by_name.get(name).cloned()
    }
}

impl Interpreter<'_> {
    fn new_instance(
        &mut self,
        class: &Arc<ClassDef>,
        attrs: Bindings,
        facts: &Facts,
    ) -> Arc<Instance> {
        self.next_instance += 1;
        Arc::new(Instance {
            class: class.clone(),
            attrs,
            exact_quotients: facts.assumptions.exact_quotients.clone(),
            divisibility: facts.divisibility.to_vec(),
            id: self.next_instance,
            named: None,
        })
    }

    /// An object standing for the parameter `param` (a Rust parameter typed with a struct of
    /// the file): no attribute known, the unknown ones named after the parameter.
    pub(super) fn parameter_object(&mut self, class: &Arc<ClassDef>, param: &str) -> Value {
        self.next_instance += 1;
        Value::Instance(Arc::new(Instance {
            class: class.clone(),
            attrs: HashMap::default(),
            exact_quotients: Vec::new(),
            divisibility: Vec::new(),
            id: self.next_instance,
            named: Some(param.to_string()),
        }))
    }

    /// The constructors of a class: Python's `__init__` (by the lookup order), or the Rust
    /// functions lowered as constructors.
    pub(super) fn constructors(
        &self,
        class: &Arc<ClassDef>,
    ) -> Vec<(Arc<Function>, Arc<ClassDef>)> {
        match self.language {
            Language::Python => class
                .method("__init__")
                .map(|(f, owner)| (f, owner_arc(class, owner)))
                .into_iter()
                .collect(),
            Language::Rust => class
                .class
                .methods
                .iter()
                .filter(|m| m.is_constructor)
                .map(|m| (m.clone(), class.clone()))
                .collect(),
        }
    }

    /// `Cls(args)`: run the constructor with the arguments on a new object (memoised per
    /// class and arguments for the current analysis).
    pub fn construct(
        &mut self,
        class: &Arc<ClassDef>,
        a: CallArgs,
        span: Span,
        env: &mut Env,
    ) -> Value {
        self.construct_with(class, None, a, span, env)
    }

    /// `Cls::ctor(args)` (a Rust constructor named at the call: `RotaryEmbedding::new(cfg,
    /// dev)`), or `Cls(args)` with `ctor` `None`: the class's first constructor.
    pub fn construct_with(
        &mut self,
        class: &Arc<ClassDef>,
        ctor: Option<Arc<Function>>,
        a: CallArgs,
        span: Span,
        _env: &mut Env,
    ) -> Value {
        if a.opaque_spread && !a.keyword_spread_only {
            return Value::Unknown(UnknownReason::Unmodelled);
        }
        let spread = super::call::spread_marker(&a);
        let args: Vec<(String, Value)> = a
            .positional
            .iter()
            .map(|v| (String::new(), v.clone()))
            .chain(a.keywords.iter().map(|(k, v)| (k.clone(), v.clone())))
            .chain(spread)
            .collect();
        let ctors = match ctor {
            Some(f) => vec![(f, class.clone())],
            None => self.constructors(class),
        };
        let which = ctors.first().map_or(0, |(f, _)| Arc::as_ptr(f) as usize);
        let key = (
            Arc::as_ptr(class) as usize ^ which.rotate_left(17),
            fingerprint(&args, None),
        );
        if let Some(found) = self
            .constructed
            .get(&key)
            .and_then(|v| v.iter().find(|(a, _)| same_params(a, &args)))
        {
            return Value::Instance(found.1.clone());
        }
        let Some((ctor, owner)) = ctors.first().cloned() else {
            // No constructor in the analysed code (a dataclass, a library base): an object
            // without known attributes; a Rust struct literal (`Linear { weight, span }`,
            // the only Rust call with keywords) gives its fields.
            let fields = match self.language {
                Language::Rust => a
                    .keywords
                    .iter()
                    .map(|(k, v)| (Arc::from(k.as_str()), v.clone()))
                    .collect(),
                Language::Python => HashMap::default(),
            };
            let obj = self.new_instance(class, fields, &Facts::default());
            return Value::Instance(obj);
        };
        let placeholder = self.new_instance(class, HashMap::default(), &Facts::default());
        let before = self.frame.facts.clone();
        let mut scratch = Env::default();
        let call_args = a
            .positional
            .into_iter()
            .map(|v| (None, v))
            .chain(a.keywords.into_iter().map(|(k, v)| (Some(k), v)))
            .collect();
        let saved_exits = self.frame.constructor_exits.take();
        let callee = Callee {
            function: ctor,
            this: Some(placeholder),
            class: Some(owner),
            share_attrs: true,
        };
        self.call_function(callee, call_args, span, &mut scratch);
        self.frame.constructor_exits = saved_exits;
        let learned = new_facts(&before, &self.frame.facts);
        let mut attrs = scratch.self_attrs;
        self.typed_fields(class, &mut attrs);
        let attrs = object_attrs(class, attrs);
        let obj = self.new_instance(class, attrs, &learned);
        self.constructed
            .entry(key)
            .or_default()
            .push((args, obj.clone()));
        Value::Instance(obj)
    }

    /// The object a method of `class` is analysed on when it is analysed on its own: the
    /// constructor run with its parameters as parameters (the events it records are the
    /// constructor's own analysis).
    pub fn open_instance(&mut self, class: &Arc<ClassDef>) -> Arc<Instance> {
        let placeholder = self.new_instance(class, HashMap::default(), &Facts::default());
        let mut attrs: Bindings = HashMap::default();
        let mut facts = Facts::default();
        for (ctor, owner) in self.constructors(class) {
            self.begin_root(
                &format!("{}.{}", class.name(), ctor.name),
                Some(placeholder.clone()),
            );
            self.frame.class = Some(owner);
            self.frame.body_of = Some(ctor.clone());
            let mut params = self.standalone_params(&ctor);
            for (name, value, text) in switch_defaults(&ctor) {
                if let Some(p) = params.iter_mut().find(|(n, _)| *n == name) {
                    p.1 = value;
                    facts.add_divisibility(Assumption::DefaultArgument {
                        class: class.name().to_string(),
                        name,
                        value: text,
                    });
                }
            }
            let mut env = Env::default();
            for (n, v) in params {
                env.set(&n, v);
            }
            // Rust constructors end in `return Self { .. }`; a Python `__init__` falls off
            // its end.
            self.frame.constructor_exits = (self.language == Language::Rust).then(Vec::new);
            self.call_stack.push(Arc::as_ptr(&ctor));
            let end = self.exec_block(&ctor.body, Some(env));
            self.call_stack.pop();
            let exits = self.frame.constructor_exits.take().unwrap_or_default();
            let mut end = exits.into_iter().map(Some).fold(end, join_opt);
            if end.is_none() {
                // Every path returned (a Python `__init__` that returns early): the
                // attributes at the returns.
                end = self.frame.exit_attrs.take().map(|self_attrs| Env {
                    self_attrs,
                    ..Env::default()
                });
            } else if let (Some(e), Some(x)) = (end.as_mut(), self.frame.exit_attrs.take()) {
                e.self_attrs = super::super::env::join_attrs(&e.self_attrs, &x);
            }
            if let Some(end) = end {
                attrs.extend(end.self_attrs);
            }
            facts.absorb(&self.frame.facts);
        }
        self.typed_fields(class, &mut attrs);
        let attrs = object_attrs(class, attrs);
        self.new_instance(class, attrs, &facts)
    }

    /// Fields whose value the constructor's analysis lost (a list of layers built by a
    /// closure, `(0..n).map(|i| Block::load(..)).collect()`) but whose declared type is a
    /// struct of the file (`blocks: Vec<Block>`): an object of it with no attribute known —
    /// for a `Vec`, a list of any number of them — so that its methods run on the caller's
    /// tensors, their own fields unknown.
    fn typed_fields(&mut self, class: &Arc<ClassDef>, attrs: &mut Bindings) {
        for (field, ty, list) in &class.class.field_types {
            let lost = matches!(attrs.get(field.as_str()), None | Some(Value::Unknown(_)));
            if !lost || class.reassigned.contains(field) {
                continue;
            }
            let Some(Value::Class(def)) = self.globals.get(ty).cloned() else {
                continue;
            };
            let object = self.parameter_object(&def, field);
            let value = if *list {
                Value::Repeated(Arc::new(object))
            } else {
                object
            };
            attrs.insert(field.as_str().into(), value);
        }
    }
}

/// The constructor's switches that a method analysed on its own takes at their defaults:
/// parameters defaulting to `None`, a bool or a string that one of its tests reads
/// (`if qk_norm:`, `head_dim = head_dim or dim // h`, `Norm(d) if qk_norm else Identity()`).
/// Sizes stay symbolic; a switch left unknown would join the object's layers into unknowns.
fn switch_defaults(ctor: &Function) -> Vec<(String, Value, String)> {
    let mut tested = Tested::default();
    for s in &ctor.body {
        tested_names_in_stmt(s, &mut tested);
    }
    // `head_dim = attn_head_dim` then `if head_dim is None:` tests the parameter too, and
    // so does `self.use_global = use_global` then `if self.use_global:`.
    for s in &ctor.body {
        if let Stmt::Assign { targets, value, .. } = s {
            let ExprKind::Name(original) = &value.kind else {
                continue;
            };
            let aliased = match &targets[..] {
                [Target::Name(alias, _)] => tested.names.contains(alias.as_str()),
                [Target::Attr {
                    value: obj, attr, ..
                }] => {
                    matches!(&obj.kind, ExprKind::Name(n) if n == "self")
                        && tested.self_attrs.contains(attr.as_str())
                }
                _ => false,
            };
            if aliased {
                tested.names.insert(original.as_str());
            }
        }
    }
    ctor.params
        .iter()
        .filter(|p| !p.variadic && tested.names.contains(p.name.as_str()))
        .filter_map(|p| {
            let (value, text) = match &p.default.as_ref()?.kind {
                ExprKind::None => (Value::NoneVal, "None".to_string()),
                ExprKind::Bool(b) => (
                    Value::Bool(Some(*b)),
                    if *b { "True" } else { "False" }.to_string(),
                ),
                ExprKind::Str(s) => (Value::Str(s.clone()), format!("{s:?}")),
                _ => return None,
            };
            Some((p.name.clone(), value, text))
        })
        .collect()
}

/// What the tests of a constructor read: plain names, and the attributes of `self`
/// (`if self.use_global:` reads `use_global`).
#[derive(Default)]
struct Tested<'a> {
    names: HashSet<&'a str>,
    self_attrs: HashSet<&'a str>,
}

/// Names read by the tests of `s` (if/assert/while conditions, `a if t else b`, `a or b`).
fn tested_names_in_stmt<'a>(s: &'a Stmt, out: &mut Tested<'a>) {
    let mut exprs: Vec<&Expr> = Vec::new();
    match s {
        Stmt::If {
            test, body, orelse, ..
        } => {
            names_in(test, out);
            body.iter()
                .chain(orelse)
                .for_each(|s| tested_names_in_stmt(s, out));
        }
        // An assert chooses no branch: a parameter it requires (`assert feat_size is not
        // None`) is not a switch, and taking its default would end every path there.
        Stmt::Assert { .. } => {}
        Stmt::Loop { .. } | Stmt::With { .. } | Stmt::Try { .. } => {
            s.for_each_block(|b| b.iter().for_each(|s| tested_names_in_stmt(s, out)))
        }
        Stmt::Assign { value, .. } | Stmt::AugAssign { value, .. } => exprs.push(value),
        Stmt::Expr(e) => exprs.push(e),
        Stmt::Return { value: Some(e), .. } => exprs.push(e),
        _ => {}
    }
    for e in exprs {
        tests_in_expr(e, out);
    }
}

/// Names read by the tests inside an expression: `t` of `a if t else b`, both sides of
/// `a or b` / `a and b`.
fn tests_in_expr<'a>(e: &'a Expr, out: &mut Tested<'a>) {
    match &e.kind {
        ExprKind::IfExp(parts) => {
            let [test, body, orelse] = &**parts;
            names_in(test, out);
            tests_in_expr(body, out);
            tests_in_expr(orelse, out);
        }
        ExprKind::Compare {
            op: CmpOp::Or | CmpOp::And,
            operands,
        } => operands.iter().for_each(|o| names_in(o, out)),
        ExprKind::Call(call) => {
            tests_in_expr(call.func(), out);
            (call.args().iter()).for_each(|a| tests_in_expr(a.value(), out));
        }
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter().for_each(|i| tests_in_expr(i, out))
        }
        ExprKind::BinOp { operands, .. } => operands.iter().for_each(|o| tests_in_expr(o, out)),
        _ => {}
    }
}

/// Every plain name and `self` attribute an expression reads.
fn names_in<'a>(e: &'a Expr, out: &mut Tested<'a>) {
    match &e.kind {
        ExprKind::Name(n) => {
            out.names.insert(n.as_str());
        }
        ExprKind::Attr { value, attr } => {
            if matches!(&value.kind, ExprKind::Name(n) if n == "self") {
                out.self_attrs.insert(attr.as_str());
            }
            names_in(value, out)
        }
        ExprKind::Starred(value) | ExprKind::Neg(value) => names_in(value, out),
        ExprKind::Compare { operands, .. } | ExprKind::BinOp { operands, .. } => {
            operands.iter().for_each(|o| names_in(o, out))
        }
        ExprKind::IfExp(parts) => parts.iter().for_each(|p| names_in(p, out)),
        ExprKind::Call(call) => {
            names_in(call.func(), out);
            (call.args().iter()).for_each(|a| names_in(a.value(), out));
        }
        ExprKind::Subscript(subscript) => {
            names_in(subscript.value(), out);
            (subscript.index().iter()).for_each(|i| names_in(i, out));
        }
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter().for_each(|i| names_in(i, out))
        }
        _ => {}
    }
}

/// What a constructor left on the object, as the other methods see it.
fn object_attrs(class: &ClassDef, mut attrs: Bindings) -> Bindings {
    attrs.retain(|k, _| !class.reassigned.contains(&**k));
    for v in attrs.values_mut() {
        if let Value::Named {
            name,
            param: Some(_),
        } = v
        {
            *v = Value::Named {
                name: name.clone(),
                param: None,
            };
        }
    }
    attrs
}

/// The facts in `after` that `before` did not have.
fn new_facts(before: &Facts, after: &Facts) -> Facts {
    let mut out = Facts::default();
    for q in &after.assumptions.exact_quotients {
        if !before.assumptions.exact_quotients.contains(q) {
            out.add_quotient(q.clone());
        }
    }
    for d in after.divisibility.iter() {
        if !before.divisibility.contains(d) {
            out.add_divisibility(d.clone());
        }
    }
    out
}

fn owner_arc(class: &Arc<ClassDef>, owner: &ClassDef) -> Arc<ClassDef> {
    if std::ptr::eq(Arc::as_ptr(class), owner) {
        return class.clone();
    }
    for b in &class.bases {
        let found = owner_arc(b, owner);
        if std::ptr::eq(Arc::as_ptr(&found), owner) {
            return found;
        }
    }
    class.clone()
}

/// Names `x` of every `self.x = ...` (and `self.register_buffer("x", ...)`) in a body.
pub fn assigned_self_attrs(body: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    fn target_names(t: &Target, out: &mut Vec<String>) {
        match t {
            Target::Attr { value, attr, .. } => {
                if matches!(&value.kind, ir::ExprKind::Name(n) if n == "self") {
                    out.push(attr.to_string());
                }
            }
            Target::Tuple(items, _) => items.iter().for_each(|i| target_names(i, out)),
            Target::Starred(inner, _) => target_names(inner, out),
            _ => {}
        }
    }
    fn walk(body: &[Stmt], out: &mut Vec<String>) {
        for s in body {
            match s {
                Stmt::Assign { targets, .. } => targets.iter().for_each(|t| target_names(t, out)),
                Stmt::AugAssign { target, .. } => target_names(target, out),
                Stmt::Expr(e) => {
                    if let Some(name) = register_buffer_name(e) {
                        out.push(name);
                    }
                }
                _ => s.for_each_block(|b| walk(b, out)),
            }
        }
    }
    walk(body, &mut out);
    out
}
