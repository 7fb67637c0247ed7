//! The abstract interpreter: walks IR statements and expressions, keeping an [`Env`] of
//! abstract [`Value`]s per path, joining paths at `if`/`try`/loops, and handing every
//! tensor op to [`super::apply`], which applies the op tables and records an
//! [`OpEvent`] for the lints.
//!
//! The interpreter is one type whose methods are split by concern:
//! - this file: the state (file, root and frame; see [`super::frame`]), function calls with
//!   their memoised summaries, and the budget;
//! - `stmt`: statements, loops, assignments;
//! - `expr`: expressions, sizes and tuples;
//! - `call`: what a call expression refers to (a tensor method, a library function, a module
//!   object, a function or class of the analysed code, a builtin);
//! - `class`: classes, objects and their constructors.
//!
//! # Calls are summaries
//! A call into the analysed code runs the callee's body with the caller's argument values
//! (its *context*), once: the result, and the size facts the body learned, are memoised per
//! (function, receiver, arguments) for the rest of the analysis, so a function called from
//! many places is run once per distinct context and the cost is linear in the call graph.
//! At most [`MAX_CONTEXTS`] contexts per function and [`MAX_CALL_DEPTH`] nested calls are
//! followed; recursion and anything beyond the bounds give an unknown result. Every
//! statement run costs fuel; when an analysis runs out ([`ROOT_FUEL`], [`FILE_FUEL`]) no
//! further call is followed and the rest of the file is analysed function by function only.
//!
//! # The work budget
//! Fuel does not bound time: past it every statement still runs, and a statement's cost can
//! grow with the file (a path state of thousands of bindings copied at each `if`). So every
//! statement, expression node, binding of a path state copied or joined and op event recorded
//! also spends units of the file's work ([`Interpreter::spend`]), a budget fixed by the file's
//! size before the analysis starts; once it is spent the analysis halts where it is and the
//! file's results are partial. Units, not time: the result is the same on every run.

mod call;
mod class;
mod expr;
mod isinstance;
mod stmt;
mod writes;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::ir::{ExprKind, Function, Language, Span};
use crate::layout::{Assumptions, Dim};

use super::apply::{ApplyCtx, CallArgs};
use super::env::Env;
use super::event::OpEvent;
use super::foreign::{self, ForeignItem, ForeignKind, ForeignModule, Project, SourceText};
use super::frame::{CallContext, Facts, Frame, RootState};
use super::rank;
use super::tables::OpTables;
use super::value::same_bindings;
use super::value::{
    join, same_value, substitute, Bindings, ClassDef, Instance, Origin, Step, SymLayout, TensorAlt,
    TensorVal, UnknownReason, Value,
};

pub use class::ClassTable;

/// `base.attr`, built directly: a `format!` costs several times as much, and attribute
/// names are made on every attribute read and method call.
fn dotted(base: &str, attr: &str) -> String {
    let mut name = String::with_capacity(base.len() + 1 + attr.len());
    name.push_str(base);
    name.push('.');
    name.push_str(attr);
    name
}

/// How many calls deep an analysis follows calls into the analysed code.
pub const MAX_CALL_DEPTH: usize = 6;
/// How many distinct contexts of one function an analysis runs; more calls are unknown.
pub const MAX_CONTEXTS: usize = 8;
/// Statements one root analysis may run.
pub const ROOT_FUEL: u64 = 4_000;
/// Statements one file's analyses may run in all.
pub const FILE_FUEL: u64 = 40_000;
/// Units of work one file's analysis may spend at least (see [`Interpreter::spend`]). A
/// statement costs [`STATEMENT_WORK`], an expression node [`EXPR_WORK`], copying or joining
/// a path [`BINDING_WORK`] per binding it holds, an op event [`EVENT_WORK`]. Beyond the
/// budget the analysis stops where it is; the fuel above only stops it following calls,
/// and a file can take quadratic time without a single call (an `if` on each of thousands
/// of parameters). Set so that no file of the real-code trees comes near it (6.9 M at
/// most).
pub const FILE_WORK_BASE: u64 = 24_000_000;
/// Units of work one file's analysis may spend per byte of its source, on top: the densest
/// real model code spends up to 75 per byte, so a file of it is cut only past 2 MB.
pub const FILE_WORK_PER_BYTE: u64 = 64;
/// Op events one file's analysis keeps at most, besides one per [`SOURCE_BYTES_PER_EVENT`]
/// bytes of its source. An event holds about a kilobyte (its layouts and provenance), so the
/// work budget alone would let them take tens of times the file's size; past the bound the
/// analysis halts as when its work is spent. The real-code trees keep 1,900 at most.
pub const FILE_EVENTS_BASE: usize = 8_000;
/// Bytes of source that allow one more op event (see [`FILE_EVENTS_BASE`]).
pub const SOURCE_BYTES_PER_EVENT: usize = 1_024;
/// The work of running one statement.
const STATEMENT_WORK: u64 = 20;
/// The work of copying, comparing or joining one binding of a path state (a map entry,
/// often an allocation: costlier than its share of a statement's own work).
const BINDING_WORK: u64 = 4;
/// The work of evaluating one expression node.
const EXPR_WORK: u64 = 1;
/// The work of recording one op event: its memory (kilobytes with its layouts and
/// provenance), and the lints' reading it.
const EVENT_WORK: u64 = 400;
/// Loop bodies are re-run until the environment is stable, at most this often.
const MAX_LOOP_ITERATIONS: usize = 3;
/// A loop over a tuple of at most this many known elements is unrolled, one path per
/// element (`for k in topk`).
const MAX_UNROLL: usize = 8;
/// Nested comprehensions over known tuples evaluate their innermost element once per
/// combination of items: at most this many, else the outer ones take unknown items.
const MAX_COMPREHENSION_ITEMS: usize = 64;
/// Foreign modules one file's analysis loads at most (the index parses a module once while
/// it keeps it, but its top level runs once per importing file).
const MAX_FOREIGN_MODULES: usize = 32;
/// Expressions nested deeper than this are not evaluated (the frontend caps depth too).
const MAX_EXPR_DEPTH: usize = 256;

/// A memoised call: the result of running a function in one context.
#[derive(Debug, Clone)]
struct Summary {
    args: Vec<(String, Value)>,
    result: Value,
    /// Size facts the callee learned (they hold after the call too).
    facts: Facts,
    /// Equalities the callee learned about sizes of its arguments (`C := n_embd` from the
    /// `nn.Linear(n_embd, …)` it applied to the caller's tensor): they hold after the call.
    learned: Vec<(String, Dim)>,
    /// The receiver's attributes after the call, for a method of the caller's own object.
    self_attrs: Option<Bindings>,
    /// For such a method: the receiver's attributes at the call (part of the context).
    attrs_in: Option<Bindings>,
}

type SummaryKey = (usize, u32, u64);

/// What a call runs: a function, the object a method runs on and the class defining it,
/// and whether the object is the caller's own `self` (its attributes then go in and out).
pub struct Callee {
    pub function: Arc<Function>,
    pub this: Option<Arc<Instance>>,
    pub class: Option<Arc<ClassDef>>,
    pub share_attrs: bool,
}

/// Objects built by a constructor call in one analysis, with the arguments they were built
/// from.
type Constructed = Vec<(Vec<(String, Value)>, Arc<Instance>)>;

pub struct Interpreter<'a> {
    pub source: &'a str,
    pub language: Language,
    /// The op tables this file's calls resolve against (see [`OpTables`]).
    pub tables: OpTables,
    base_assumptions: &'a Assumptions,
    pub globals: Env,
    /// The size symbols the globals mention (computed once: every root starts with them).
    global_symbols: HashSet<String>,
    pub classes: ClassTable,
    pub events: Vec<OpEvent>,
    /// How many calls deep each event of `events` was recorded (a loop that re-runs its body
    /// drops the events of its own frame only: a call's events belong to its summary, which
    /// a later iteration reuses without recording them again).
    event_depths: Vec<usize>,
    pub frame: Frame,
    pub root: RootState,
    next_origin: Origin,
    next_instance: u32,
    /// Functions on the current call path (recursion guard).
    call_stack: Vec<*const Function>,
    /// The lambdas being run (`Value::Lambda`): one is not entered again from inside
    /// itself (`f = lambda t: f(f(t))`), as a function on `call_stack` is not.
    lambda_stack: Vec<*const super::value::LambdaVal>,
    summaries: HashMap<SummaryKey, Vec<Summary>>,
    /// [`rank::param_ranks`] of each function called with unknown arguments, by its
    /// address (as `summaries` keys it): a function is called from many contexts.
    param_ranks: HashMap<usize, Arc<HashMap<String, rank::ParamRank>>>,
    contexts: HashMap<usize, usize>,
    /// Objects built by a constructor call, per (class, arguments), for this analysis.
    constructed: HashMap<(usize, u64), Constructed>,
    /// Functions (by span start) entered from a caller with its argument values.
    pub reached_from_callers: HashSet<u32>,
    expr_depth: usize,
    /// How many item evaluations the comprehensions being evaluated multiply to (nested
    /// comprehensions unroll one inside the other): bounded by `MAX_COMPREHENSION_ITEMS`.
    pub(super) comprehension_items: usize,
    root_fuel: u64,
    file_fuel: u64,
    /// Units of work the file's analysis may still spend (see [`Interpreter::spend`]).
    work_left: u64,
    /// Op events the file's analysis may keep (see [`FILE_EVENTS_BASE`]), and how many its
    /// finished roots kept (`take_events`).
    max_events: usize,
    events_taken: usize,
    /// The work is spent: no further statement runs, in this analysis or the file's next.
    halted: bool,
    /// The first function in which an analysis ran out of fuel, or the file out of work.
    pub exhausted: Option<String>,
    /// The truth of each operand of the `and`/`or` tests evaluated since the last `if` began
    /// (by the operand's address), so that naming the branch need not evaluate them again.
    pub(super) operand_truths: Vec<(*const crate::ir::Expr, Option<bool>)>,
    /// The finding's spelling of each plain `if` test, by span (see `condition_text`).
    condition_texts: std::cell::RefCell<HashMap<Span, Option<Arc<str>>>>,
    /// What a path that took each branch of a named test records (see `branch_names`).
    branch_names: HashMap<Arc<str>, [Arc<str>; 2]>,
    /// The tree the file is in, when calls of imported names may be followed into it.
    pub project: Option<Project<'a>>,
    /// The foreign modules loaded so far (module slot `i + 1` is `foreign[i]`).
    foreign: Vec<Arc<ForeignModule>>,
    /// The names of each module but the one running (slot 0: the analysed file), whose
    /// names are `globals` and `classes`.
    module_names: Vec<ModuleNames>,
    /// The slot of the module whose code is running.
    current_module: usize,
    /// A foreign module's top level is running: it only binds names, no call is followed.
    loading_foreign: bool,
    /// What each dotted name asked of the tree is (`None`: nothing followed).
    foreign_kinds: HashMap<String, Option<ForeignKind>>,
    /// The files of the tree read to answer those questions, with their hashes (repeats
    /// are dropped once, in `foreign_files`).
    consulted: Vec<(Arc<std::path::Path>, Arc<str>)>,
    /// The function or class each followed name is, once loaded.
    foreign_values: HashMap<String, Option<Value>>,
    /// The layouts of tensor names, when the analysis records them (see
    /// [`super::AnalysisSettings::probe`]).
    pub probes: Option<Vec<OpEvent>>,
}

/// The units of work the analysis of a file of `source` may spend.
fn work_budget(source: &str) -> u64 {
    FILE_WORK_BASE.saturating_add(FILE_WORK_PER_BYTE.saturating_mul(source.len() as u64))
}

/// Does a call pass a tensor, a parameter that may be one, or a layer?
fn args_carry_layouts(args: &CallArgs) -> bool {
    let carries = |v: &Value| {
        matches!(
            v,
            Value::Tensor(_)
                | Value::Named { param: Some(_), .. }
                | Value::NnModule(_)
                | Value::Instance(_)
        )
    };
    args.positional.iter().any(carries) || args.keywords.iter().any(|(_, v)| carries(v))
}

/// A module's top-level names, kept aside while another module's code runs.
#[derive(Default)]
struct ModuleNames {
    globals: Env,
    classes: ClassTable,
}

/// Rewrite every value of a path with `name := with`: its variables, the attributes of
/// `self` it changed and the shapes it learned for tensors of unknown layout.
fn substitute_in_env(env: &mut Env, name: &str, with: &Dim) {
    for v in env.vars.values_mut().chain(env.self_attrs.values_mut()) {
        *v = substitute(v, name, with);
    }
    let shapes: Vec<Origin> = env.shapes.keys().copied().collect();
    for o in shapes {
        if let Some(l) = env.shapes.get(&o) {
            let v = Value::Tensor(TensorVal::single(Some(l.clone()), None));
            if let Value::Tensor(TensorVal::Alts(alts)) = substitute(&v, name, with) {
                if let Some(l) = alts.into_iter().next().and_then(|a| a.layout) {
                    env.shapes.insert(o, l);
                }
            }
        }
    }
}

impl<'a> Interpreter<'a> {
    pub fn new(source: &'a str, language: Language, assumptions: &'a Assumptions) -> Self {
        Interpreter {
            source,
            language,
            tables: OpTables::for_language(language, source),
            base_assumptions: assumptions,
            globals: Env::default(),
            global_symbols: HashSet::default(),
            classes: ClassTable::default(),
            events: Vec::new(),
            event_depths: Vec::new(),
            frame: Frame::default(),
            root: RootState::default(),
            next_origin: 0,
            next_instance: 0,
            call_stack: Vec::new(),
            lambda_stack: Vec::new(),
            summaries: HashMap::default(),
            param_ranks: HashMap::default(),
            branch_names: HashMap::default(),
            contexts: HashMap::default(),
            constructed: HashMap::default(),
            reached_from_callers: HashSet::default(),
            expr_depth: 0,
            comprehension_items: 1,
            root_fuel: ROOT_FUEL,
            file_fuel: FILE_FUEL,
            work_left: work_budget(source),
            max_events: FILE_EVENTS_BASE + source.len() / SOURCE_BYTES_PER_EVENT,
            events_taken: 0,
            halted: false,
            exhausted: None,
            operand_truths: Vec::new(),
            condition_texts: Default::default(),
            project: None,
            foreign: Vec::new(),
            module_names: vec![ModuleNames::default()],
            current_module: 0,
            loading_foreign: false,
            foreign_kinds: HashMap::default(),
            consulted: Vec::new(),
            foreign_values: HashMap::default(),
            probes: None,
        }
    }

    /// The module's names, once its body ran; roots start with them.
    pub fn set_globals(&mut self, globals: Env) {
        let mut symbols = HashSet::default();
        for v in globals.vars.values() {
            super::value::collect_symbols(v, &mut symbols, 0);
        }
        self.global_symbols = symbols;
        self.globals = globals;
    }

    /// Start a new analysis from a root function (or the module body): nothing learned in
    /// another analysis carries over.
    pub fn begin_root(&mut self, function: &str, this: Option<Arc<Instance>>) {
        self.root = RootState::default();
        self.summaries.clear();
        self.contexts.clear();
        self.constructed.clear();
        self.root_fuel = ROOT_FUEL;
        // Names already in use by the object's attributes and the module's globals.
        let mut taken = HashSet::default();
        if let Some(i) = &this {
            super::value::collect_symbols(&Value::Instance(i.clone()), &mut taken, 0);
        }
        taken.extend(self.global_symbols.iter().cloned());
        self.root.minted = taken;
        if let Some(i) = &this {
            // The object's sizes are its constructor's parameters.
            for (ctor, _) in self.constructors(&i.class) {
                for p in &ctor.params {
                    if defaults_to_zero_or_one(p) {
                        self.root.small_defaults.insert(p.name.clone());
                    }
                }
            }
        }
        let class = this.as_ref().map(|i| i.class.clone());
        self.frame = self.fresh_frame(function.to_string(), this, class, None);
    }

    fn fresh_frame(
        &self,
        function: String,
        this: Option<Arc<Instance>>,
        class: Option<Arc<ClassDef>>,
        context: Option<Arc<CallContext>>,
    ) -> Frame {
        let mut facts = Facts {
            assumptions: Arc::new(self.base_assumptions.clone()),
            ..Facts::default()
        };
        if let Some(i) = &this {
            for q in &i.exact_quotients {
                facts.add_quotient(q.clone());
            }
            for d in &i.divisibility {
                facts.add_divisibility(d.clone());
            }
        }
        Frame {
            id: Frame::next_id(),
            facts,
            this,
            class,
            context,
            function,
            ..Default::default()
        }
    }

    /// Record what `v`, read (`bind` false) or bound at `span`, holds on this path, when
    /// probes are on. Only in the analysed file's own code, and only for what may be a
    /// tensor: a tensor, a parameter, or a value the analysis lost (the hover then says
    /// why it is unknown).
    pub fn probe(&mut self, span: Span, v: &Value, bind: bool, env: &mut Env) {
        let may_be_tensor = matches!(
            v,
            Value::Tensor(_) | Value::Named { param: Some(_), .. } | Value::Unknown(_)
        );
        if !may_be_tensor || self.current_module != 0 || span.in_other_file() {
            return;
        }
        let mut recorded = Vec::new();
        {
            let mut ctx = self.apply_ctx(env);
            ctx.events = &mut recorded;
            super::apply::reveal(&mut ctx, v.clone(), span, span);
        }
        let probes = self.probes.get_or_insert_with(Vec::new);
        for mut ev in recorded {
            ev.op = super::event::PROBE_OP;
            ev.kind = match bind {
                true => super::event::PROBE_BIND,
                false => super::event::PROBE_READ,
            };
            probes.push(ev);
        }
    }

    /// The events recorded so far in this analysis, and their depths (see `event_depths`).
    pub fn take_events(&mut self) -> Vec<OpEvent> {
        self.event_depths.clear();
        self.events_taken += self.events.len();
        std::mem::take(&mut self.events)
    }

    /// Drop the events the current frame recorded since `mark` (a loop iteration that is
    /// run again), keeping those of the calls it made.
    fn drop_own_events_since(&mut self, mark: usize) {
        let depth = self.call_stack.len();
        self.event_depths.resize(self.events.len(), depth);
        let mut i = mark;
        let mut kept = mark;
        while i < self.events.len() {
            if self.event_depths[i] != depth {
                self.events.swap(kept, i);
                self.event_depths.swap(kept, i);
                kept += 1;
            }
            i += 1;
        }
        self.events.truncate(kept);
        self.event_depths.truncate(kept);
    }

    /// Spend one unit of fuel; false once the analysis must stop following calls.
    pub(super) fn burn(&mut self) -> bool {
        if !self.spend(STATEMENT_WORK) || self.root_fuel == 0 || self.file_fuel == 0 {
            if self.exhausted.is_none() {
                self.exhausted = Some(self.frame.function.clone());
            }
            return false;
        }
        self.root_fuel -= 1;
        self.file_fuel -= 1;
        true
    }

    /// Spend `units` of the file's work (see [`FILE_WORK_BASE`]); false once it is spent,
    /// and from then on the analysis halts: what ran so far is the file's partial result.
    /// Counted in units of work rather than time, so that the result is the same each run.
    pub(super) fn spend(&mut self, units: u64) -> bool {
        if self.halted || self.work_left < units {
            self.halt();
            return false;
        }
        self.work_left -= units;
        true
    }

    /// Do the events kept so far stay within the file's bound ([`FILE_EVENTS_BASE`])? If
    /// not, the analysis halts, as when its work is spent.
    fn room_for_events(&mut self) -> bool {
        if self.events_taken + self.events.len() <= self.max_events {
            return true;
        }
        self.halt();
        false
    }

    fn halt(&mut self) {
        self.halted = true;
        if self.exhausted.is_none() {
            self.exhausted = Some(self.frame.function.clone());
        }
    }

    /// Has the file's work been spent? Then no statement runs any more.
    pub fn halted(&self) -> bool {
        self.halted
    }

    /// Spend the work of copying, comparing or joining path states of `weight` bindings
    /// (see [`Env::weight`]).
    pub(super) fn spend_on_paths(&mut self, weight: u64) -> bool {
        self.spend(weight.saturating_mul(BINDING_WORK))
    }

    /// The units of work spent so far (for `STRIDELINT_TIME_FILES`).
    pub fn work_spent(&self) -> u64 {
        work_budget(self.source) - self.work_left
    }

    /// Has the budget of this analysis (or of the file) been spent? Then the interpreter only
    /// finishes what it is running, as cheaply as it can: no call is followed, paths are
    /// joined, loops run once.
    pub fn out_of_fuel(&self) -> bool {
        self.root_fuel == 0 || self.file_fuel == 0
    }

    pub fn fresh_origin(&mut self) -> Origin {
        self.next_origin += 1;
        self.next_origin
    }

    /// The small context [`super::apply`] works in, on the path `env`.
    pub fn apply_ctx<'e>(&'e mut self, env: &'e mut Env) -> ApplyCtx<'e> {
        let name_hint = self.frame.name_hint.as_ref().map(|(n, _)| n.clone());
        ApplyCtx {
            source: SourceText {
                own: self.source,
                foreign: &self.foreign,
            },
            language: self.language,
            tables: &self.tables,
            facts: &self.frame.facts,
            root: &mut self.root,
            shapes: &mut env.shapes,
            decisions: &env.decisions,
            settled: &env.settled,
            events: &mut self.events,
            context: self.frame.context.clone(),
            name_hint,
            next_origin: &mut self.next_origin,
            path: self.frame.path.clone(),
            learned: Vec::new(),
            quotients: Vec::new(),
            bounds: Vec::new(),
        }
    }

    /// Run `f` on an [`ApplyCtx`] for the path `env`, then learn the equalities the op
    /// needed to succeed (they hold from here on) and apply them to its result too.
    pub fn with_apply_ctx(
        &mut self,
        env: &mut Env,
        f: impl FnOnce(&mut ApplyCtx) -> Value,
    ) -> Value {
        let (v, learned, quotients, bounds) = {
            let mut ctx = self.apply_ctx(env);
            let v = f(&mut ctx);
            (
                v,
                std::mem::take(&mut ctx.learned),
                std::mem::take(&mut ctx.quotients),
                std::mem::take(&mut ctx.bounds),
            )
        };
        for q in quotients {
            self.frame.facts.add_quotient(q);
        }
        for b in bounds {
            self.frame.facts.add_upper_bound(b);
        }
        let depth = self.call_stack.len();
        let kept = self.event_depths.len().min(self.events.len());
        let recorded = (self.events.len() - kept) as u64;
        if !self.spend(EVENT_WORK * recorded) || !self.room_for_events() {
            // Past the budget nothing more is recorded: the events are the memory it bounds.
            self.events.truncate(kept);
        }
        self.event_depths.resize(self.events.len(), depth);
        if learned.is_empty() {
            return v;
        }
        for (a, b) in &learned {
            self.learn_equal(a, b, env);
        }
        self.apply_subst(v)
    }

    // ------------------------------------------------------------------ sizes

    /// Record `a == b` (the program only gets past this point if it holds) and rewrite the
    /// environment with it. A single symbol is replaced by the other side; when both are
    /// single symbols, the name minted in this analysis (`C` from `B, T, C = x.size()`)
    /// gives way to the one the module's configuration uses (`C := n_embd`), so that values
    /// built from the configuration (a `Linear`'s sizes) agree with the input's.
    pub fn learn_equal(&mut self, a: &Dim, b: &Dim, env: &mut Env) {
        if a == b {
            return;
        }
        let single = |d: &Dim| -> Option<String> {
            let syms = d.symbols();
            (syms.len() == 1 && *d == Dim::sym(&syms[0])).then(|| syms[0].clone())
        };
        let minted = |s: &String| self.root.minted.contains(s);
        let (name, with) = match (single(a), single(b)) {
            (Some(x), Some(y)) => {
                if !minted(&x) && minted(&y) {
                    (y, a.clone())
                } else {
                    (x, b.clone())
                }
            }
            (Some(x), None) if !b.symbols().contains(&x) => (x, b.clone()),
            (None, Some(y)) if !a.symbols().contains(&y) => (y, a.clone()),
            _ => return,
        };
        substitute_in_env(env, &name, &with);
        self.frame.facts.add_alias(&name, &with);
        self.frame.subst.push((name, with));
    }

    /// How many equalities have been learned so far in this frame (a value read before a
    /// later one was learned must be re-substituted, see [`Interpreter::apply_subst`]).
    pub fn learned_count(&self) -> usize {
        self.frame.subst.len()
    }

    /// Apply the learned equalities to a value.
    pub fn apply_subst(&self, mut v: Value) -> Value {
        for (name, with) in &self.frame.subst {
            v = substitute(&v, name, with);
        }
        v
    }

    /// Source text of a span (for naming minted symbols and steps).
    pub fn text(&self, span: Span) -> &str {
        self.source_text().text(span)
    }

    pub fn source_text(&self) -> SourceText<'_> {
        SourceText {
            own: self.source,
            foreign: &self.foreign,
        }
    }

    // ------------------------------------------------------------------ modules

    /// The slot of the module `span` is in (0: the analysed file).
    fn module_slot_of(&self, span: Span) -> usize {
        if !span.in_other_file() {
            return 0;
        }
        self.foreign
            .iter()
            .position(|m| m.contains(span))
            .map_or(0, |i| i + 1)
    }

    /// Make `slot`'s names the running module's; returns the slot that was running.
    fn switch_module(&mut self, slot: usize) -> usize {
        let prev = self.current_module;
        if slot == prev {
            return prev;
        }
        self.module_names[prev] = ModuleNames {
            globals: std::mem::take(&mut self.globals),
            classes: std::mem::take(&mut self.classes),
        };
        let next = std::mem::take(&mut self.module_names[slot]);
        self.globals = next.globals;
        self.classes = next.classes;
        self.current_module = slot;
        prev
    }

    /// The dotted name of the running module and whether it is a package, for relative
    /// imports.
    fn running_module_name(&self) -> Option<(&str, bool)> {
        match self.current_module {
            0 => self.project.map(|p| (p.module_name, p.is_package)),
            i => self
                .foreign
                .get(i - 1)
                .map(|m| (m.name.as_str(), m.is_package)),
        }
    }

    /// An import path as written in the running module, made absolute (`..layers.Mlp` →
    /// `timm.layers.Mlp`); unchanged when it cannot be.
    pub fn absolute_import(&self, path: String) -> String {
        if !path.starts_with('.') {
            return path;
        }
        self.running_module_name()
            .and_then(|(name, is_package)| foreign::absolute_import(name, is_package, &path))
            .unwrap_or(path)
    }

    /// Load a foreign module into this analysis (once): its classes, and its top-level
    /// names from running its top level in its own names. `None` beyond the bound.
    fn load_foreign(&mut self, m: Arc<ForeignModule>) -> Option<usize> {
        if let Some(i) = self.foreign.iter().position(|x| Arc::ptr_eq(x, &m)) {
            return Some(i + 1);
        }
        if self.foreign.len() >= MAX_FOREIGN_MODULES {
            return None;
        }
        self.foreign.push(m.clone());
        let slot = self.foreign.len();
        self.module_names.push(ModuleNames {
            globals: Env::default(),
            classes: ClassTable::build(&m.classes),
        });
        let prev = self.switch_module(slot);
        // Its top level runs apart from the caller's frame; nothing it records is reported.
        let fresh = self.fresh_frame("<module>".into(), None, None, None);
        let caller = std::mem::replace(&mut self.frame, fresh);
        let mark = self.events.len();
        // Only what binds names (`ForeignModule::top_level`); no call is followed there.
        let loading = std::mem::replace(&mut self.loading_foreign, true);
        let mut globals = self
            .exec_block(&m.top_level, Some(Env::default()))
            .unwrap_or_default();
        self.loading_foreign = loading;
        self.events.truncate(mark);
        self.event_depths
            .truncate(mark.min(self.event_depths.len()));
        self.frame = caller;
        for f in &m.module.functions {
            globals.set(&f.name, Value::Function(f.clone(), None));
        }
        for c in &m.module.classes {
            if let Some(def) = self.classes.get(&c.name) {
                globals.set(&c.name, Value::Class(def));
            }
        }
        self.globals = globals;
        self.switch_module(prev);
        Some(slot)
    }

    /// The files of the tree this analysis read (path, content hash): those it asked
    /// about names and those it loaded. Its results are stale when one changes.
    pub fn foreign_files(&self) -> Vec<(Arc<std::path::Path>, String)> {
        let mut files: Vec<(Arc<std::path::Path>, String)> = self
            .consulted
            .iter()
            .map(|(p, h)| (p.clone(), h.to_string()))
            .chain(
                self.foreign
                    .iter()
                    .map(|m| (m.path.clone(), m.hash.clone())),
            )
            .collect();
        files.sort();
        files.dedup();
        files
    }

    /// The function or class an absolute dotted name of the tree is, loaded into this
    /// analysis, when calling it with `args` can matter for a layout: a layer class (it has
    /// a `forward`), a function given a tensor or a layer, or a function called in a
    /// constructor (a layer factory: `create_conv2d(…)`). Not at a module's top level
    /// (`logger = logging.get_logger(__name__)`), not in a module being loaded, not beyond
    /// the bounds: `None` then.
    pub fn foreign_value(&mut self, path: &str, args: &CallArgs) -> Option<Value> {
        let project = self.project?;
        if self.language != Language::Python
            || self.loading_foreign
            || self.out_of_fuel()
            || path.starts_with('.')
            || self.frame.function == "<module>"
        {
            return None;
        }
        let in_constructor = self
            .frame
            .body_of
            .as_ref()
            .is_some_and(|f| f.is_constructor || f.name == "__init__");
        // The tree is asked once per name and file (most names asked are not in it:
        // `torch.finfo`, `np.sqrt`).
        let kind = match self.foreign_kinds.get(path) {
            Some(&k) => k,
            None => {
                let lookup = project.defs.kind(project.root, path);
                self.consulted.extend(lookup.files.iter().cloned());
                self.foreign_kinds.insert(path.to_string(), lookup.kind);
                lookup.kind
            }
        };
        let wanted = match kind? {
            ForeignKind::Layer => true,
            // A layer factory in a constructor, or a helper that rearranges the tensor
            // it is given.
            ForeignKind::Function { rearranges } => {
                in_constructor || (rearranges && args_carry_layouts(args))
            }
        };
        if !wanted {
            return None;
        }
        if let Some(v) = self.foreign_values.get(path) {
            return v.clone();
        }
        let v = self.load_definition(project, path);
        self.foreign_values.insert(path.to_string(), v.clone());
        v
    }

    /// The definition `path` names, its module loaded into this analysis.
    fn load_definition(&mut self, project: Project, path: &str) -> Option<Value> {
        let (module, item) = project.defs.resolve(project.root, path)?;
        let slot = self.load_foreign(module)?;
        Some(match item {
            ForeignItem::Function(f) => Value::Function(f, None),
            ForeignItem::Class(c) => {
                let def = if slot == self.current_module {
                    self.classes.get(&c.name)
                } else {
                    self.module_names[slot].classes.get(&c.name)
                }?;
                Value::Class(def)
            }
        })
    }

    /// A fresh size symbol named as written in the code (see [`RootState::mint`]).
    pub fn mint(&mut self, name: &str) -> Dim {
        self.root.mint(name)
    }

    // ------------------------------------------------------------------ functions

    /// Values for the parameters of `f` when it is analysed on its own: tensors that
    /// enter a function are assumed contiguous (assumption 1); jaxtyping annotations name
    /// their sizes; a parameter whose uses fix its rank (`B, T, C = x.shape` anywhere in the
    /// body, `x.permute(0, 2, 1, 3)`) gets a named size per dim.
    pub fn standalone_params(&mut self, f: &Function) -> Vec<(String, Value)> {
        let this = self.frame.this.clone();
        let ranks = rank::param_ranks_through(f, &|attr| {
            this.as_ref()
                .and_then(|i| i.attrs.get(attr))
                .is_some_and(layer_keeps_rank)
        });
        let mut out = Vec::new();
        for p in &f.params {
            let v = if p.variadic {
                Value::Unknown(UnknownReason::Unmodelled)
            } else if let Some(names) = &p.shape_annotation {
                self.annotated_tensor(&p.name, names, p.span)
            } else if let Some(rank) = ranks.get(&p.name) {
                self.ranked_param(&p.name, &rank.names, rank.span)
            } else if let Some(object) = self.annotated_object(p) {
                object
            } else {
                self.unknown_param(p)
            };
            out.push((p.name.clone(), v));
        }
        out
    }

    /// A Rust parameter whose type is a struct of this file (`rotary_emb:
    /// Arc<RotaryEmbedding>`): an object of it whose attributes are unknown, so that its
    /// methods run with the caller's arguments (`self.rotary_emb.apply_rotary_emb_qkv(&q,
    /// &k, offset)`).
    fn annotated_object(&mut self, p: &crate::ir::Param) -> Option<Value> {
        let name = p.annotated_type.as_deref()?;
        let Some(Value::Class(class)) = self.globals.get(name).cloned() else {
            return None;
        };
        Some(self.parameter_object(&class, &p.name))
    }

    /// A parameter whose value nothing tells: a name. One annotated `int` or defaulting to
    /// an integer (`key_dim=16`) is a number like the attribute `__init__` stores it in, so
    /// that `key_dim ** -0.5` is one; any other may be a tensor (`x * 0.5`). A default of 0
    /// or 1 is remembered: no finding may assume the size ≥ 2.
    fn unknown_param(&mut self, p: &crate::ir::Param) -> Value {
        if defaults_to_zero_or_one(p) {
            self.root.small_defaults.insert(p.name.clone());
        }
        let number = p.annotated_int
            || matches!(p.default.as_ref().map(|d| &d.kind), Some(ExprKind::Int(_)));
        Value::Named {
            name: p.name.as_str().into(),
            param: (!number).then(|| self.fresh_origin()),
        }
    }

    fn annotated_tensor(&mut self, param: &str, names: &[String], span: Span) -> Value {
        let variadic = names
            .iter()
            .any(|n| n.starts_with('*') || n == "..." || n.starts_with('#'));
        let layout = if variadic {
            None
        } else {
            let shape: Vec<Dim> = names
                .iter()
                .map(|n| match n.parse::<i64>() {
                    Ok(v) => Dim::lit(v),
                    Err(_) => Dim::sym(n),
                })
                .collect();
            for n in names {
                self.root.minted.insert(n.clone());
            }
            Some(SymLayout::contiguous(shape))
        };
        param_tensor(param, layout, span, self.frame.context.clone())
    }

    /// A parameter whose rank its uses fix: contiguous, one minted size per dim, named as
    /// the body names them where it does (`B, T, C = x.shape`), else `x.shape[i]`.
    fn ranked_param(&mut self, param: &str, names: &[Option<String>], span: Span) -> Value {
        let shape: Vec<Dim> = names
            .iter()
            .enumerate()
            .map(|(i, n)| match n {
                Some(n) => self.mint(n),
                None => self.mint(&format!("{param}.shape[{i}]")),
            })
            .collect();
        param_tensor(
            param,
            Some(SymLayout::contiguous(shape)),
            span,
            self.frame.context.clone(),
        )
    }

    /// Interpret `f` as the root of an analysis with the given parameter values; returns the
    /// joined return value.
    pub fn run_root(&mut self, f: &Arc<Function>, params: Vec<(String, Value)>) -> Value {
        self.call_stack.push(Arc::as_ptr(f));
        self.frame.body_of = Some(f.clone());
        let mut env = Env::default();
        for (name, v) in params {
            env.set(&name, v);
        }
        let (ret, _) = self.run_body(f, env);
        self.call_stack.pop();
        ret
    }

    /// Run a function body in the current frame from `env`; the joined return value and the
    /// receiver's attributes at the exits.
    fn run_body(&mut self, f: &Function, env: Env) -> (Value, Option<Bindings>) {
        let end = self.exec_block(&f.body, Some(env));
        let mut ret = self.frame.returns.take();
        let mut exits = std::mem::take(&mut self.frame.exit_attrs);
        if let Some(end) = &end {
            // Falling off the end returns None.
            ret = Some(match ret {
                Some(r) => join(&r, &Value::NoneVal),
                None => Value::NoneVal,
            });
            exits = Some(match exits {
                Some(x) => super::env::join_attrs(&x, &end.self_attrs),
                None => end.self_attrs.clone(),
            });
        }
        (
            ret.unwrap_or(Value::Unknown(UnknownReason::Unmodelled)),
            exits,
        )
    }

    /// A call into a function of the analysed code with the caller's argument values (see
    /// the module docs). `this` is the receiver of a method; `share_attrs` passes the
    /// caller's own `self` attributes in and takes the callee's back (`self.build()`,
    /// `super().__init__(…)` run on the caller's object).
    pub fn call_function(
        &mut self,
        callee: Callee,
        args: Vec<(Option<String>, Value)>,
        call_span: Span,
        env: &mut Env,
    ) -> Value {
        let slot = self.module_slot_of(callee.function.span);
        if slot == self.current_module {
            return self.call_function_here(callee, args, call_span, env);
        }
        // A function of another module runs in that module's names; what comes back into
        // the analysed file keeps one step for the call.
        let step = (self.current_module == 0 && slot > 0).then(|| {
            let function = match &callee.class {
                Some(c) => format!("{}.{}", c.name(), callee.function.name),
                None => callee.function.name.clone(),
            };
            format!("`{function}` ({})", self.foreign[slot - 1].name)
        });
        let prev = self.switch_module(slot);
        let v = self.call_function_here(callee, args, call_span, env);
        self.switch_module(prev);
        match step {
            Some(what) => foreign::collapse_foreign_steps(v, call_span, &what, &self.frame.context),
            None => v,
        }
    }

    /// [`Interpreter::call_function`] of a function of the running module: the summary of
    /// an earlier call in the same context if there is one, else the body run in a frame of
    /// its own, summarised for the next such call.
    fn call_function_here(
        &mut self,
        callee: Callee,
        args: Vec<(Option<String>, Value)>,
        call_span: Span,
        env: &mut Env,
    ) -> Value {
        let Callee {
            function: f,
            this,
            class,
            share_attrs,
        } = callee;
        let f = &f;
        let key_ptr = Arc::as_ptr(f);
        if self.loading_foreign
            || self.call_stack.contains(&key_ptr)
            || self.call_stack.len() > MAX_CALL_DEPTH
            || !self.burn()
        {
            return Value::Unknown(UnknownReason::UnresolvedCall);
        }
        let args = context_args(args, env);
        let attrs_in = share_attrs.then(|| env.self_attrs.clone());
        let key = (
            key_ptr as usize,
            this.as_ref().map_or(0, |i| i.id),
            fingerprint(&args, attrs_in.as_ref()),
        );
        if let Some(hit) = self.memoised_summary(&key, &args, attrs_in.as_ref()) {
            return self.finish_call(hit, env);
        }
        let call_args = args.clone();
        let params = self.bind_params(
            f,
            args.into_iter()
                .map(|(k, v)| ((!k.is_empty()).then_some(k), v))
                .collect(),
        );
        if !self.take_context(key_ptr as usize) {
            return Value::Unknown(UnknownReason::UnresolvedCall);
        }
        let (result, exits, callee) =
            self.run_in_own_frame(f, this, class, call_span, &params, attrs_in.as_ref());
        let summary = Summary {
            args: call_args,
            result,
            learned: learned_about_args(&callee, &params),
            facts: callee.facts,
            self_attrs: if share_attrs { exits } else { None },
            attrs_in,
        };
        self.summaries.entry(key).or_default().push(summary.clone());
        self.finish_call(summary, env)
    }

    /// The summary of an earlier call of the same function in the same context: the same
    /// arguments and, for a method of the caller's own object, the same attributes.
    fn memoised_summary(
        &self,
        key: &SummaryKey,
        args: &[(String, Value)],
        attrs_in: Option<&Bindings>,
    ) -> Option<Summary> {
        self.summaries.get(key).and_then(|entries| {
            entries
                .iter()
                .find(|s| {
                    same_params(&s.args, args)
                        && !(self.language == Language::Rust
                            && sizes_made_up_for_unknown_args(args, &s.result))
                        && match (&s.attrs_in, attrs_in) {
                            (None, None) => true,
                            (Some(a), Some(b)) => same_bindings(a, b),
                            _ => false,
                        }
                })
                .cloned()
        })
    }

    /// Counts one more context for the function at `key`; false once it has had
    /// `MAX_CONTEXTS` (the call is then not followed, which bounds the work per function).
    fn take_context(&mut self, key: usize) -> bool {
        let count = self.contexts.entry(key).or_insert(0);
        if *count >= MAX_CONTEXTS {
            return false;
        }
        *count += 1;
        true
    }

    /// Runs `f`'s body on its bound parameters in a new frame (the caller's frame is back
    /// afterwards): its result, the receiver's attributes at its exits, and the callee's
    /// frame, whose facts and learned sizes the summary keeps.
    fn run_in_own_frame(
        &mut self,
        f: &Arc<Function>,
        this: Option<Arc<Instance>>,
        class: Option<Arc<ClassDef>>,
        call_span: Span,
        params: &[(String, Value)],
        attrs_in: Option<&Bindings>,
    ) -> (Value, Option<Bindings>, Frame) {
        let name = match &class {
            Some(c) => format!("{}.{}", c.name(), f.name),
            None => f.name.clone(),
        };
        let context = Arc::new(CallContext {
            caller: self.frame.function.clone(),
            callee: name.clone(),
            call_span,
            call_file: None,
            parent: self.frame.context.clone(),
        });
        let mut callee = self.fresh_frame(name, this, class, Some(context));
        callee.body_of = Some(f.clone());
        // The caller's size facts hold in the callee (its arguments were built under them).
        callee.facts.absorb(&self.frame.facts);
        let caller = std::mem::replace(&mut self.frame, callee);
        let mut callee_env = Env::default();
        for (n, v) in params {
            callee_env.set(n, v.clone());
        }
        if let Some(attrs) = attrs_in {
            callee_env.self_attrs = attrs.clone();
        }
        self.reached_from_callers.insert(f.span.start);
        self.call_stack.push(Arc::as_ptr(f));
        let (result, exits) = self.run_body(f, callee_env);
        self.call_stack.pop();
        let callee = std::mem::replace(&mut self.frame, caller);
        (result, exits, callee)
    }

    /// Take a call's summary into the caller: its facts, its result, its attributes.
    fn finish_call(&mut self, s: Summary, env: &mut Env) -> Value {
        self.frame.facts.absorb(&s.facts);
        if let Some(attrs) = s.self_attrs {
            env.replace_self_attrs(attrs);
        }
        for (name, with) in &s.learned {
            self.learn_equal(&Dim::sym(name), with, env);
        }
        s.result
    }

    /// [`rank::param_ranks`] of `f`, worked out once per analysis.
    fn param_ranks_of(&mut self, f: &Function) -> Arc<HashMap<String, rank::ParamRank>> {
        let key = f as *const Function as usize;
        self.param_ranks
            .entry(key)
            .or_insert_with(|| Arc::new(rank::param_ranks(f)))
            .clone()
    }

    /// Does a call pass nothing that `*args` / `**kwargs` would collect (every positional
    /// argument has a parameter before the first `*`, every keyword names a parameter)?
    /// Then both are empty: `self.fn(x, **kwargs)` passes nothing more.
    fn variadics_get_nothing(
        &self,
        f: &Function,
        args: &[(Option<String>, Value)],
        spread: bool,
    ) -> bool {
        let positional_slots = f.params.iter().take_while(|p| !p.variadic).count();
        let named = |k: &str| f.params.iter().any(|p| !p.variadic && p.name == k);
        !spread
            && args.iter().filter(|(k, _)| k.is_none()).count() <= positional_slots
            && args.iter().all(|(k, _)| k.as_deref().is_none_or(named))
    }

    /// The callee's parameters from a call's arguments: positional, then by keyword, then
    /// literal defaults. An argument the caller knows nothing about enters like a parameter
    /// analysed on its own (a tensor of it is assumed contiguous).
    fn bind_params(
        &mut self,
        f: &Function,
        args: Vec<(Option<String>, Value)>,
    ) -> Vec<(String, Value)> {
        let mut params: Vec<(String, Value)> = Vec::new();
        let mut ranks = None;
        // A `**kwargs` spread of unknown contents may hold any parameter the call does not
        // name: those enter unknown rather than at their defaults.
        let spread = args
            .iter()
            .any(|(k, _)| k.as_deref() == Some(call::KEYWORD_SPREAD));
        let mut positional = args
            .iter()
            .filter(|(k, _)| k.is_none())
            .map(|(_, v)| v.clone());
        let nothing_more = self.variadics_get_nothing(f, &args, spread);
        for p in &f.params {
            if p.variadic {
                let v = match nothing_more {
                    true => Value::Tuple(Vec::new()),
                    false => Value::Unknown(UnknownReason::Unmodelled),
                };
                params.push((p.name.clone(), v));
                continue;
            }
            let v = args
                .iter()
                .find(|(k, _)| k.as_deref() == Some(p.name.as_str()))
                .map(|(_, v)| v.clone())
                .or_else(|| positional.next())
                .unwrap_or_else(|| {
                    if spread {
                        Value::Unknown(UnknownReason::Unmodelled)
                    } else {
                        literal_default(p.default.as_ref())
                    }
                });
            let v = match v {
                Value::Unknown(_) | Value::Tensor(TensorVal::Unknown(..)) => {
                    let ranks = ranks.get_or_insert_with(|| self.param_ranks_of(f));
                    match ranks.get(&p.name) {
                        Some(rank) => self.ranked_param(&p.name, &rank.names, rank.span),
                        None => self.unknown_param(p),
                    }
                }
                other => other,
            };
            params.push((p.name.clone(), v));
        }
        params
    }
}

/// Is `v` a library layer whose output has its input's rank (`nn.Linear`, a norm, an
/// activation, a convolution)? A pooling layer asked for its indices returns a pair.
/// `None` (`self.norm = nn.LayerNorm(d) if prenorm else None`) counts: a call of it raises,
/// so nothing after it runs on that path.
fn layer_keeps_rank(v: &Value) -> bool {
    let m = match v {
        Value::NnModule(m) => m,
        Value::NoneVal => return true,
        _ => return false,
    };
    let pair = m
        .args
        .get("return_indices")
        .is_some_and(|a| !matches!(a, crate::ops::ArgValue::Bool(false)));
    m.spec.call.keeps_rank() && !pair
}

/// The value of a parameter default the interpreter can read (`k=1`, `x=None`, `dims=(1, 5)`).
fn literal_default(default: Option<&crate::ir::Expr>) -> Value {
    let Some(d) = default else {
        return Value::Unknown(UnknownReason::Unmodelled);
    };
    match &d.kind {
        ExprKind::Int(v) => Value::int(*v),
        ExprKind::None => Value::NoneVal,
        ExprKind::Bool(b) => Value::Bool(Some(*b)),
        ExprKind::Float(_) => Value::Float,
        ExprKind::Str(s) => Value::Str(s.clone()),
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            let vals: Vec<Value> = items.iter().map(|e| literal_default(Some(e))).collect();
            if vals.iter().any(|v| matches!(v, Value::Unknown(_))) {
                Value::Unknown(UnknownReason::Unmodelled)
            } else {
                Value::Tuple(vals)
            }
        }
        _ => Value::Unknown(UnknownReason::Unmodelled),
    }
}

/// A parameter tensor with a known (or unknown: `None`) contiguous layout.
fn param_tensor(
    param: &str,
    layout: Option<SymLayout>,
    span: Span,
    context: Option<Arc<CallContext>>,
) -> Value {
    let what = format!("parameter `{param}` (assumed contiguous)");
    Value::Tensor(TensorVal::Alts(vec![TensorAlt::new(
        layout.clone(),
        Some(Arc::new(Step::parameter(span, what, layout, context))),
    )]))
}

/// A call's arguments as the caller has them (`""` names a positional one), the context
/// its summary is kept for: binding gives the unknown ones fresh names, which would make
/// equal contexts look different.
fn context_args(args: Vec<(Option<String>, Value)>, env: &Env) -> Vec<(String, Value)> {
    args.into_iter()
        .map(|(k, v)| {
            (
                k.unwrap_or_default(),
                super::apply::resolve_value(&env.shapes, v),
            )
        })
        .collect()
}

/// The equalities a callee learned about sizes of its arguments (`C := n_embd`): the ones
/// whose symbol occurs in a parameter's value.
fn learned_about_args(callee: &Frame, params: &[(String, Value)]) -> Vec<(String, Dim)> {
    let mut arg_symbols = HashSet::default();
    for (_, v) in params {
        super::value::collect_symbols(v, &mut arg_symbols, 0);
    }
    callee
        .subst
        .iter()
        .filter(|(name, _)| arg_symbols.contains(name))
        .cloned()
        .collect()
}

/// Does a call's result hold layouts although some of its arguments are values the
/// analysis lost? Then the callee named the lost tensors' sizes itself (`let (t, h, d) =
/// xs.dims3()?`), and another call with other lost tensors (a query, then a key) must not
/// get the same names: equal unknowns are not equal tensors. (Asked of Rust code only for
/// now: Python's findings would change, which needs its own measurement on that corpus.)
fn sizes_made_up_for_unknown_args(args: &[(String, Value)], result: &Value) -> bool {
    let unknown =
        |v: &Value| matches!(v, Value::Unknown(_) | Value::Tensor(TensorVal::Unknown(..)));
    args.iter().any(|(_, v)| unknown(v)) && holds_layout(result)
}

/// A tensor of known layout, or a tuple holding one.
fn holds_layout(v: &Value) -> bool {
    match v {
        Value::Tensor(TensorVal::Alts(alts)) => alts.iter().any(|a| a.layout.is_some()),
        Value::Tuple(items) => items.iter().any(holds_layout),
        _ => false,
    }
}

fn same_params(a: &[(String, Value)], b: &[(String, Value)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((n, x), (m, y))| n == m && same_value(x, y))
}

/// A hash of a call's context that equal contexts share (chains are ignored).
fn fingerprint(params: &[(String, Value)], attrs: Option<&Bindings>) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for (n, v) in params {
        n.hash(&mut h);
        hash_value(v, &mut h, 0);
    }
    if let Some(attrs) = attrs {
        let mut keys: Vec<&Arc<str>> = attrs.keys().collect();
        keys.sort();
        keys.len().hash(&mut h);
        for k in keys {
            k.hash(&mut h);
        }
    }
    h.finish()
}

fn hash_value(v: &Value, h: &mut rustc_hash::FxHasher, depth: usize) {
    std::mem::discriminant(v).hash(h);
    if depth > 4 {
        return;
    }
    match v {
        Value::Tensor(TensorVal::Alts(alts)) => {
            alts.len().hash(h);
            for a in alts {
                a.layout.hash(h);
                a.origin.hash(h);
            }
        }
        Value::Int(d) => d.hash(h),
        Value::PackedSizes(d) => {
            "packed".hash(h);
            d.hash(h);
        }
        Value::Tuple(items) => {
            items.len().hash(h);
            for i in items {
                hash_value(i, h, depth + 1);
            }
        }
        Value::Str(s) => s.hash(h),
        Value::Bool(b) => b.hash(h),
        Value::Named { name, param } => {
            name.hash(h);
            param.hash(h);
        }
        Value::Import(p) => p.hash(h),
        Value::Instance(i) => i.id.hash(h),
        Value::Function(f, _) => (Arc::as_ptr(f) as usize).hash(h),
        _ => {}
    }
}

/// A parameter that defaults to 0 or 1 (`num_dummy_heads: int = 0`).
fn defaults_to_zero_or_one(p: &crate::ir::Param) -> bool {
    matches!(
        p.default.as_ref().map(|d| &d.kind),
        Some(ExprKind::Int(0 | 1))
    )
}
