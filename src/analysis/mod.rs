//! The abstract interpreter over the IR. It knows IR, layout and ops — never a
//! frontend's syntax tree, never output formats.
//!
//! Per file: the module's top-level statements are run first (imports, constants,
//! definitions), then every class's constructor (to learn what `self.x` holds), then
//! every function and method on its own, with tensor parameters assumed contiguous and
//! of unknown (named) sizes. Calls into the file's own functions are followed with the
//! caller's argument values (bounded depth). Every tensor-op call reached is recorded as
//! an [`event::OpEvent`] that the lints read.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use crate::ir::{self, Class, Function, Span, Stmt, Target};
use crate::layout::Assumptions;

pub mod calls;
pub mod env;
pub mod event;
pub mod interp;
pub mod tables;
pub mod value;

use env::Env;
use event::OpEvent;
use interp::{ClassInfo, Interpreter};
use value::Value;

/// Settings of the analysis.
#[derive(Debug, Clone, Default)]
pub struct AnalysisSettings {
    pub assumptions: Assumptions,
}

/// Analyse one lowered file and return the op events of every function in it.
pub fn analyze_module(
    module: &ir::Module,
    source: &str,
    settings: &AnalysisSettings,
) -> Vec<OpEvent> {
    let mut it = Interpreter::new(source, &settings.assumptions, Env::default());
    it.class = None;
    it.language = module.language;
    it.tables = tables::OpTables::for_language(module.language, source);
    // 1. Top level: imports, constants, and any tensor code written at module level.
    let top = module_body_without_defs(&module.body);
    let globals = it
        .exec_block(&top, Some(Env::default()))
        .unwrap_or_default();
    let mut globals = globals;
    for f in &module.functions {
        globals.set(&f.name, Value::Function(f.clone(), false));
    }
    it.globals = globals;
    let mut events = std::mem::take(&mut it.events);

    // 2. Free functions on their own. Each analysis is kept as (function, events of its own
    // body, events of the calls it led into) until step 4 decides which count.
    let mut analysed: Vec<(Option<&Function>, Vec<OpEvent>, Vec<OpEvent>)> = Vec::new();
    for f in &module.functions {
        let (own, followed) = analyze_function(&mut it, f, None);
        analysed.push((Some(f), own, followed));
    }

    // 3. Classes: constructor first, then each method.
    for c in &module.classes {
        let mut constructor_events = Vec::new();
        let info = Arc::new(class_info(&mut it, c, &mut constructor_events));
        analysed.push((None, Vec::new(), constructor_events));
        for m in &c.methods {
            if m.is_constructor {
                continue;
            }
            let (own, followed) = analyze_function(&mut it, m, Some(info.clone()));
            analysed.push((Some(m), own, followed));
        }
    }

    // 4. A private Python helper (`_name`) that the file's own code calls is analysed
    // through those calls, with the layouts its callers really pass; assuming its
    // parameters contiguous as well would report copies that no caller makes (a helper
    // given a transposed tensor, say). So at each op call in it that some caller reaches
    // with a known layout, only the callers' analyses count; its standalone analysis (its
    // body and the calls it led into, which rest on the same assumption) still speaks
    // where no caller reaches, or where no caller's layout is known.
    let reached_private_helper = |f: Option<&Function>| {
        f.is_some_and(|f| {
            module.language == ir::Language::Python
                && is_private_name(&f.name)
                && it.reached_from_callers.contains(&f.span.start)
        })
    };
    // For each op call reached from a caller: whether some such visit knew the layout.
    let mut caller_visits: HashMap<Span, bool> = HashMap::default();
    for (f, _, followed) in &analysed {
        if reached_private_helper(*f) {
            continue;
        }
        for event in followed {
            *caller_visits.entry(event.span).or_insert(false) |= !event.unknown_input;
        }
    }
    for (f, own, followed) in analysed {
        if reached_private_helper(f) {
            let callers_decide = |e: &OpEvent| caller_visits.get(&e.span) == Some(&true);
            events.extend(
                own.into_iter()
                    .chain(followed)
                    .filter(|e| !callers_decide(e)),
            );
        } else {
            events.extend(own);
            events.extend(followed);
        }
    }
    dedup_events(events)
}

/// `_helper` and `__mangled`, but not dunders (`__call__`), which Python itself calls.
fn is_private_name(name: &str) -> bool {
    name.starts_with('_') && !(name.starts_with("__") && name.ends_with("__"))
}

/// Statements of the module body other than function/class definitions (those are
/// analysed on their own).
fn module_body_without_defs(body: &[Stmt]) -> Vec<Stmt> {
    body.iter()
        .filter(|s| !matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        .cloned()
        .collect()
}

/// Analyses `f` on its own; returns the events of its own body and those of the calls it
/// led into (recorded with its argument values), apart.
fn analyze_function(
    it: &mut Interpreter,
    f: &Arc<Function>,
    class: Option<Arc<ClassInfo>>,
) -> (Vec<OpEvent>, Vec<OpEvent>) {
    it.class = class;
    it.reset_function_state();
    let params = it.standalone_params(f);
    it.run_function(f, params);
    std::mem::take(&mut it.events)
        .into_iter()
        .partition(|event| !event.from_caller)
}

/// Run the constructor(s) to learn the attributes of `self`. Attributes that any other
/// method reassigns are dropped: their value at a method's entry is not known.
fn class_info(it: &mut Interpreter, c: &Class, events: &mut Vec<OpEvent>) -> ClassInfo {
    let mut info = ClassInfo::default();
    for m in &c.methods {
        info.methods.insert(m.name.clone(), m.clone());
    }
    let reassigned: HashSet<String> = c
        .methods
        .iter()
        .filter(|m| !m.is_constructor)
        .flat_map(|m| assigned_self_attrs(&m.body))
        .collect();
    let mut attrs: HashMap<String, Value> = HashMap::default();
    for ctor in c.methods.iter().filter(|m| m.is_constructor) {
        it.class = Some(Arc::new(ClassInfo {
            methods: info.methods.clone(),
            ..Default::default()
        }));
        it.reset_function_state();
        let params = it.standalone_params(ctor);
        let mut env = Env::default();
        for (n, v) in params {
            env.set(&n, v);
        }
        // Rust constructors end in `return Self { .. }`; a Python `__init__` falls off its end.
        it.constructor_exits = (it.language == ir::Language::Rust).then(Vec::new);
        let end = it.exec_block(&ctor.body, Some(env));
        let exits = it.constructor_exits.take().unwrap_or_default();
        if let Some(end) = exits.into_iter().map(Some).fold(end, env::join_opt) {
            attrs.extend(end.self_attrs);
        }
        events.append(&mut it.events);
        info.exact_quotients
            .extend(it.assumptions.exact_quotients.iter().cloned());
        info.divisibility.extend(it.divisibility.iter().cloned());
    }
    attrs.retain(|k, _| !reassigned.contains(k));
    // A constructor parameter stored on `self` is not a tensor argument of the method that
    // reads it: the contiguity assumption does not extend to it.
    for v in attrs.values_mut() {
        if let Value::Named {
            name,
            is_param: true,
        } = v
        {
            *v = Value::Named {
                name: name.clone(),
                is_param: false,
            };
        }
    }
    info.attrs = attrs;
    info
}

/// Names `x` of every `self.x = ...` (and `self.register_buffer("x", ...)`) in a body.
fn assigned_self_attrs(body: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    fn target_names(t: &Target, out: &mut Vec<String>) {
        match t {
            Target::Attr { value, attr, .. } => {
                if matches!(&value.kind, ir::ExprKind::Name(n) if n == "self") {
                    out.push(attr.clone());
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
                Stmt::If { body, orelse, .. } => {
                    walk(body, out);
                    walk(orelse, out);
                }
                Stmt::Loop { body, orelse, .. } => {
                    walk(body, out);
                    walk(orelse, out);
                }
                Stmt::With { body, .. } => walk(body, out),
                Stmt::Try {
                    body,
                    handlers,
                    orelse,
                    finalbody,
                    ..
                } => {
                    walk(body, out);
                    handlers.iter().for_each(|h| walk(h, out));
                    walk(orelse, out);
                    walk(finalbody, out);
                }
                Stmt::Expr(e) => {
                    if let Some(name) = calls::register_buffer_name(e) {
                        out.push(name);
                    }
                }
                _ => {}
            }
        }
    }
    walk(body, &mut out);
    out
}

/// The same call site can be reached from several analyses: on its own (parameters
/// assumed contiguous) and through callers (with their arguments' layouts). Each context is
/// a separate fact — a failure certain in one context is a real failure when that context
/// occurs, whatever other contexts do — so events are only deduplicated when identical.
fn dedup_events(events: Vec<OpEvent>) -> Vec<OpEvent> {
    let mut out: Vec<OpEvent> = Vec::with_capacity(events.len());
    let mut seen: HashSet<(u32, u32, String, String)> = HashSet::default();
    for ev in events {
        let fingerprint = ev
            .outcomes
            .iter()
            .map(|o| format!("{:?}|{:?}|{:?}", o.input.layout, o.target, o.copies))
            .collect::<Vec<_>>()
            .join(";");
        let key = (
            ev.span.start,
            ev.span.end,
            ev.op.clone(),
            format!("{}{fingerprint}", ev.unknown_input),
        );
        if seen.insert(key) {
            out.push(ev);
        }
    }
    out
}
