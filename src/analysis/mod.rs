//! The abstract interpreter over the IR. It knows IR, layout and ops — never a
//! frontend's syntax tree, never output formats.
//!
//! Per file: the module's top-level statements are run first (imports, constants,
//! definitions). Then every function, method and nested definition is the *root* of an
//! analysis of its own, with its tensor parameters assumed contiguous and of unknown (named)
//! sizes — the *open context* — and a method runs on the object its class's constructor
//! builds from its own parameters. Calls into the analysed code are followed with the
//! caller's argument values (each such call is a *caller context*, memoised; see
//! `interp`). Every tensor-op call reached is recorded as an [`event::OpEvent`] that the
//! lints read.

use rustc_hash::FxHashSet as HashSet;
use std::sync::Arc;

use crate::ir::{self, Function, Stmt};
use crate::layout::Assumptions;

pub mod apply;
pub mod env;
pub mod event;
pub mod facts;
pub mod foreign;
pub mod frame;
pub mod interp;
pub mod prefix;
pub mod rank;
pub mod tables;
pub mod value;

use env::Env;
use event::OpEvent;
use interp::{ClassTable, Interpreter};
use value::{ClassDef, Value};

/// Settings of the analysis.
#[derive(Debug, Clone, Default)]
pub struct AnalysisSettings {
    pub assumptions: Assumptions,
    /// Follow calls of names imported from other files of the tree (`follow-imports`):
    /// off by default, because on the corpus it costs 8–15 % of the run time side by side.
    pub follow_imports: bool,
    /// Record the layout of every tensor name read or bound ([`ModuleAnalysis::probes`]),
    /// for the editor's hover and inlay hints. Off for `check`: it costs a copy per read.
    pub probe: bool,
}

/// What the analysis of one file found.
#[derive(Debug, Default)]
pub struct ModuleAnalysis {
    pub events: Vec<OpEvent>,
    /// The function in which the analysis ran out of its budget, when it did: the results
    /// of the file are then partial (calls stopped being followed there and after).
    pub budget_exhausted: Option<String>,
    /// The units of work the analysis spent (see `interp::FILE_WORK_BASE`).
    pub work: u64,
    /// The other files of the tree the analysis read definitions from (path, blake3 of the
    /// bytes): the results are stale when one of them changes.
    pub foreign_files: Vec<(Arc<std::path::Path>, String)>,
    /// With [`AnalysisSettings::probe`]: one event (op [`event::PROBE_OP`]) per tensor name
    /// read or bound in the file, its outcomes the layouts the path held there.
    pub probes: Vec<OpEvent>,
}

/// Analyse one lowered file and return the op events of every function in it; with a
/// `project`, calls of names imported from other files of the tree are followed.
pub fn analyze_module(
    module: &ir::Module,
    source: &str,
    settings: &AnalysisSettings,
    project: Option<foreign::Project>,
) -> ModuleAnalysis {
    value::forget_sides();
    let mut it = Interpreter::new(source, module.language, &settings.assumptions);
    it.project = project;
    if settings.probe {
        it.probes = Some(Vec::new());
    }
    let classes = all_classes(module);
    it.classes = ClassTable::build(&classes);

    // 1. Top level: imports, constants, and any tensor code written at module level.
    it.begin_root("<module>", None);
    let top = module_body_without_defs(&module.body);
    let mut globals = it
        .exec_block(&top, Some(Env::default()))
        .unwrap_or_default();
    for f in &module.functions {
        globals.set(&f.name, Value::Function(f.clone(), None));
    }
    for c in &module.classes {
        if let Some(def) = it.classes.get(&c.name) {
            globals.set(&c.name, Value::Class(def));
        }
    }
    it.set_globals(globals);
    let mut analysed: Vec<Analysed> = vec![Analysed {
        events: it.take_events(),
    }];

    // 2. Free functions and the functions nested anywhere, each on its own.
    let mut functions: Vec<Arc<Function>> = module.functions.clone();
    for f in &module.functions {
        nested_functions(&f.body, &mut functions, 0);
    }
    nested_functions(&module.body, &mut functions, 0);
    for f in &functions {
        it.begin_root(&f.name, None);
        let params = it.standalone_params(f);
        it.run_root(f, params);
        analysed.push(Analysed {
            events: it.take_events(),
        });
    }

    // 3. Classes: the object built from the constructor's own parameters, then each method
    // on it.
    for c in &classes {
        let Some(def) = it.classes.get(&c.name) else {
            continue;
        };
        let this = it.open_instance(&def);
        analysed.push(Analysed {
            events: it.take_events(),
        });
        for m in &c.methods {
            if m.is_constructor || m.name == "__init__" {
                continue;
            }
            analyse_method(&mut it, &def, this.clone(), m, &mut analysed);
            let mut nested = Vec::new();
            nested_functions(&m.body, &mut nested, 0);
            for f in nested {
                it.begin_root(&f.name, None);
                let params = it.standalone_params(&f);
                it.run_root(&f, params);
                analysed.push(Analysed {
                    events: it.take_events(),
                });
            }
        }
    }

    let mut events: Vec<OpEvent> = Vec::new();
    for a in analysed {
        let merged = merge_paths(a.events);
        if events.is_empty() {
            // Most of a large file's events are one root's: kept, not copied.
            events = merged;
        } else {
            events.extend(merged);
        }
    }
    // What ran in another file, or was reached from there, is that file's to report.
    events.retain(|e| {
        !e.span.in_other_file() && e.context.as_deref().is_none_or(|c| !foreign::in_foreign(c))
    });
    ModuleAnalysis {
        events: dedup_events(events),
        budget_exhausted: it.exhausted.clone(),
        work: it.work_spent(),
        foreign_files: it.foreign_files(),
        probes: it.probes.take().unwrap_or_default(),
    }
}

/// The events of one root analysis.
struct Analysed {
    events: Vec<OpEvent>,
}

fn analyse_method(
    it: &mut Interpreter,
    def: &Arc<ClassDef>,
    this: Arc<value::Instance>,
    m: &Arc<Function>,
    analysed: &mut Vec<Analysed>,
) {
    it.begin_root(&format!("{}.{}", def.name(), m.name), Some(this));
    let params = it.standalone_params(m);
    it.run_root(m, params);
    analysed.push(Analysed {
        events: it.take_events(),
    });
}

/// One root analysis reaches a call once per path (see `interp::stmt`): those events are
/// one event whose outcomes are the paths' (the lints then ask whether every path fails, or
/// one named path). Events stay apart across call contexts and loop iterations, which are
/// facts of their own. The branches that tell the merged paths apart become each
/// outcome's condition (the ones all of them took are where the call is, not a condition).
fn merge_paths(mut events: Vec<OpEvent>) -> Vec<OpEvent> {
    // One event per call, op, chain of call sites and loop path; found by a hash of those,
    // then compared (no key is built per event: this runs on every event of the file).
    fn call_spans(ev: &OpEvent) -> impl Iterator<Item = ir::Span> + '_ {
        std::iter::successors(ev.context.as_deref(), |c| c.parent.as_deref()).map(|c| c.call_span)
    }
    fn key_hash(ev: &OpEvent) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        (ev.span, ev.name_span, &ev.op, &ev.path).hash(&mut h);
        call_spans(ev).for_each(|s| s.hash(&mut h));
        h.finish()
    }
    fn same_key(a: &OpEvent, b: &OpEvent) -> bool {
        a.span == b.span
            && a.name_span == b.name_span
            && a.op == b.op
            && a.path == b.path
            && call_spans(a).eq(call_spans(b))
    }
    keep_first_of_each(&mut events, key_hash, same_key, |into, ev| {
        into.unknown_input = into.unknown_input.or(ev.unknown_input);
        // Most are there already: copied only when new.
        for d in ev.divisibility.iter() {
            if !into.divisibility.contains(d) {
                Arc::make_mut(&mut into.divisibility).push(d.clone());
            }
        }
        into.outcomes.append(&mut ev.outcomes);
    });
    for ev in &mut events {
        name_path_conditions(ev);
    }
    events
}

/// Turn the decisions that tell an event's outcomes apart into their conditions.
fn name_path_conditions(ev: &mut OpEvent) {
    if ev.outcomes.len() < 2 {
        return;
    }
    let first = ev.outcomes[0].decisions.clone();
    let common = ev.outcomes.iter().fold(first.len(), |n, o| {
        n.min(
            first
                .iter()
                .zip(&o.decisions)
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    for o in &mut ev.outcomes {
        let rest = &o.decisions[common..];
        if rest.is_empty() {
            continue;
        }
        let mut parts: Vec<&str> = Vec::with_capacity(rest.len());
        for d in rest {
            // The same test twice on one path (`if cache is not None:` in two places).
            if !parts.contains(&&**d) {
                parts.push(d);
            }
        }
        if let Some(c) = &o.input.condition {
            parts.push(c);
        }
        o.input.condition = Some(Arc::from(parts.join(" and ")));
    }
}

/// Every class of the file: top-level ones (and `Outer.Inner`), and those defined inside
/// functions or top-level blocks.
pub(crate) fn all_classes(module: &ir::Module) -> Vec<Arc<ir::Class>> {
    let mut out = module.classes.clone();
    let mut seen: HashSet<*const ir::Class> = out.iter().map(Arc::as_ptr).collect();
    let mut bodies: Vec<&[Stmt]> = vec![&module.body];
    for f in &module.functions {
        bodies.push(&f.body);
    }
    for c in &module.classes {
        for m in &c.methods {
            bodies.push(&m.body);
        }
    }
    let mut found = Vec::new();
    for b in bodies {
        nested_classes(b, &mut found, 0);
    }
    for c in found {
        if seen.insert(Arc::as_ptr(&c)) {
            out.push(c);
        }
    }
    out
}

fn nested_classes(body: &[Stmt], out: &mut Vec<Arc<ir::Class>>, depth: usize) {
    if depth > 8 {
        return;
    }
    for s in body {
        match s {
            Stmt::ClassDef(c) => {
                out.push(c.clone());
                for m in &c.methods {
                    nested_classes(&m.body, out, depth + 1);
                }
            }
            Stmt::FunctionDef(f) => nested_classes(&f.body, out, depth + 1),
            _ => s.for_each_block(|b| nested_classes(b, out, depth + 1)),
        }
    }
}

/// Functions defined inside `body` (in a block, or nested in another function), not the
/// top-level ones.
fn nested_functions(body: &[Stmt], out: &mut Vec<Arc<Function>>, depth: usize) {
    if depth > 8 {
        return;
    }
    for s in body {
        match s {
            Stmt::FunctionDef(f) => {
                out.push(f.clone());
                nested_functions(&f.body, out, depth + 1);
            }
            Stmt::ClassDef(_) => {}
            _ => s.for_each_block(|b| nested_functions(b, out, depth + 1)),
        }
    }
}

/// Statements of the module body other than function/class definitions (those are
/// analysed on their own).
pub(crate) fn module_body_without_defs(body: &[Stmt]) -> Vec<Stmt> {
    body.iter()
        .filter(|s| !matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        .cloned()
        .collect()
}

/// The same call site can be reached from several analyses: on its own (parameters
/// assumed contiguous) and through callers (with their arguments' layouts). Each context is
/// a separate fact, so events are only deduplicated when identical.
fn dedup_events(mut events: Vec<OpEvent>) -> Vec<OpEvent> {
    // Compared structurally (layouts are equal as data exactly when equal as values), with
    // a hash to find the candidates: formatting every layout to compare it cost ~6 % of a
    // corpus run.
    keep_first_of_each(&mut events, event_fingerprint, same_fingerprint, |_, _| {});
    events
}

/// Keep the first of each run of events `same` calls equal (found through `hash`), in
/// order, and let it `absorb` each later one. In place — the kept events move to the
/// front — since a second list of a large file's events would be held at the peak.
fn keep_first_of_each(
    events: &mut Vec<OpEvent>,
    hash: impl Fn(&OpEvent) -> u64,
    same: impl Fn(&OpEvent, &OpEvent) -> bool,
    mut absorb: impl FnMut(&mut OpEvent, &mut OpEvent),
) {
    let mut kept = 0;
    let mut by_hash: rustc_hash::FxHashMap<u64, Vec<usize>> = Default::default();
    for i in 0..events.len() {
        let h = hash(&events[i]);
        let found = by_hash
            .get(&h)
            .and_then(|k| k.iter().copied().find(|&j| same(&events[j], &events[i])));
        match found {
            Some(j) => {
                let (front, rest) = events.split_at_mut(i);
                absorb(&mut front[j], &mut rest[0]);
            }
            None => {
                by_hash.entry(h).or_default().push(kept);
                events.swap(kept, i);
                kept += 1;
            }
        }
    }
    events.truncate(kept);
}

/// What makes two events at one call the same fact: the call, the op, the loop path
/// (iterations run apart may see one input and still differ), whether some input was
/// unknown or the op writes, and per outcome the input layout, target, copy verdict,
/// path condition and the facts on the input (the copy it came from).
fn event_fingerprint(ev: &OpEvent) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (
        ev.span,
        &ev.op,
        &ev.path,
        ev.unknown_input.is_some(),
        ev.write.is_some(),
    )
        .hash(&mut h);
    for o in &ev.outcomes {
        outcome_fingerprint(o).hash(&mut h);
    }
    h.finish()
}

type OutcomeFingerprint<'a> = (
    &'a Option<value::SymLayout>,
    &'a Option<Vec<crate::layout::Dim>>,
    crate::layout::Tri,
    &'a Option<Arc<str>>,
    &'a value::TensorFacts,
);

fn outcome_fingerprint(o: &value::AltOutcome) -> OutcomeFingerprint<'_> {
    (
        &o.input.layout,
        &o.target,
        o.copies,
        &o.input.condition,
        &o.input.facts,
    )
}

fn same_fingerprint(a: &OpEvent, b: &OpEvent) -> bool {
    a.span == b.span
        && a.op == b.op
        // Iterations of a loop run apart see the same input and may still differ.
        && a.path == b.path
        && a.unknown_input.is_some() == b.unknown_input.is_some()
        && a.write.is_some() == b.write.is_some()
        && a.outcomes.len() == b.outcomes.len()
        && a.outcomes
            .iter()
            .zip(&b.outcomes)
            .all(|(x, y)| outcome_fingerprint(x) == outcome_fingerprint(y))
}

#[cfg(test)]
mod tests;
