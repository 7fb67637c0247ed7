//! Abstract values of the interpreter.
//!
//! A [`Value`] over-approximates what a Python/Rust expression may evaluate to. Tensors
//! carry one or more *alternative* layouts (one per control-flow path that reached the
//! value, capped at [`MAX_ALTERNATIVES`]); each alternative remembers the chain of steps
//! that produced it, so a diagnostic can show how the tensor became non-contiguous.

use std::fmt::Write as _;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Class, Function, Name, Span};
use crate::layout::{Assumption, Dim, Layout, Tri};
use crate::ops::{ModuleSpec, OpError, OpSpec};

pub type SymLayout = Layout<Dim>;

/// Names bound to values (a path's variables, an object's attributes). Keys are shared
/// strings: paths and joins copy these maps often.
pub type Bindings = HashMap<Arc<str>, Value>;

/// Beyond this many alternative layouts a tensor is treated as unknown.
pub const MAX_ALTERNATIVES: usize = 4;

/// Where an analysis came from: the function analysed on its own (no context), or a call
/// followed from another function, which names its caller in findings.
#[derive(Debug)]
pub struct CallContext {
    /// The function that made the call, as findings name it (`Block.forward`).
    pub caller: String,
    /// The function called, named the same way (`split_heads`, `Block.attend`).
    pub callee: String,
    /// The call expression in the caller.
    pub call_span: Span,
    /// The file of the call, when it is not the file of the finding.
    pub call_file: Option<Arc<std::path::Path>>,
    /// The caller's own context.
    pub parent: Option<Arc<CallContext>>,
}

impl CallContext {
    /// How many calls deep this context is.
    pub fn depth(&self) -> usize {
        1 + self.parent.as_ref().map_or(0, |p| p.depth())
    }
}

/// One step in the history of a layout: the op at `span` produced `layout`.
/// A persistent list, newest first, shared between values that derive from each other.
#[derive(Debug)]
pub struct Step {
    pub span: Span,
    /// What happened, e.g. "`.transpose(1, 2)`" or "parameter `x` (assumed contiguous)".
    pub what: String,
    /// Layout after the step (`None`: contiguous, shape unknown).
    pub layout: Option<SymLayout>,
    pub prev: Option<Arc<Step>>,
    /// What the layout ultimately rests on (see [`Basis`]); carried by every later step
    /// whose layout follows from this one's, also where the chain restarts at a contiguous
    /// result (`x.view(B * T, C)` of a parameter `x` is contiguous only if `x` is).
    pub basis: Basis,
    /// The call that led into the function where the step ran (`None`: the root function
    /// of the analysis), so that a finding can say when its chain went through a helper.
    pub context: Option<Arc<CallContext>>,
}

/// What a layout rests on, at the end of its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// A tensor parameter (or an argument of unknown layout) taken to be contiguous, as the
    /// open context assumes.
    Parameter,
    /// A tensor an op wrote anew at this span (a factory, a matmul, a `Linear` layer),
    /// whatever its inputs' layouts.
    NewTensor(Span),
    /// Neither is known.
    Unknown,
}

impl Step {
    /// The first step of a parameter's history: its layout is the assumption.
    pub fn parameter(span: Span, what: String, layout: Option<SymLayout>, context: Ctx) -> Step {
        Step {
            span,
            what,
            layout,
            prev: None,
            basis: Basis::Parameter,
            context,
        }
    }

    /// A tensor the op writes anew, whatever its inputs' layouts.
    pub fn fresh(span: Span, what: String, layout: Option<SymLayout>, context: Ctx) -> Step {
        Step {
            span,
            what,
            layout,
            prev: None,
            basis: Basis::NewTensor(span),
            context,
        }
    }

    /// A step after `prev`, whose layout follows from it.
    pub fn after(
        span: Span,
        what: String,
        layout: Option<SymLayout>,
        prev: Chain,
        context: Ctx,
    ) -> Step {
        let basis = basis_of(&prev);
        Step {
            span,
            what,
            layout,
            prev,
            basis,
            context,
        }
    }

    /// A step that starts a new chain (a contiguous result's history cannot explain a later
    /// non-contiguity) but whose layout still follows from the input behind `from`.
    pub fn restart(
        span: Span,
        what: String,
        layout: Option<SymLayout>,
        from: &Chain,
        context: Ctx,
    ) -> Step {
        Step {
            span,
            what,
            layout,
            prev: None,
            basis: basis_of(from),
            context,
        }
    }
}

/// The call context a step ran in (see [`Step::context`]).
type Ctx = Option<Arc<CallContext>>;

/// What the layout at the end of this chain rests on.
pub fn basis_of(chain: &Chain) -> Basis {
    chain.as_deref().map_or(Basis::Unknown, |s| s.basis)
}

/// Does the layout at the end of this chain rest on a parameter assumed contiguous?
pub fn rests_on_assumption(chain: &Chain) -> bool {
    basis_of(chain) == Basis::Parameter
}

/// The chain of steps behind an alternative, newest first.
pub type Chain = Option<Arc<Step>>;

/// Iterate a chain from the newest step to the oldest. Steps taken in another file of the
/// tree are left out: a value coming back from there keeps one step for the call
/// (`foreign::collapse_foreign_steps`), and no other step of that file can be shown here.
pub fn chain_steps(chain: &Chain) -> impl Iterator<Item = &Step> {
    let mut cur = chain.as_deref();
    std::iter::from_fn(move || loop {
        let s = cur?;
        cur = s.prev.as_deref();
        if !s.span.in_other_file() {
            return Some(s);
        }
    })
}

/// Which contiguous tensor of unknown shape an alternative is: every alias of it shares
/// the number, so that when one use reveals its rank (`x.permute(0, 2, 1, 3)`,
/// `B, T, C = x.shape`) all of them get the same sizes (see `Frame::shapes`).
pub type Origin = u32;

/// One possible layout of a tensor.
#[derive(Debug, Clone)]
pub struct TensorAlt {
    /// `None` means "contiguous, shape not known" (e.g. a parameter whose sizes were never read).
    pub layout: Option<SymLayout>,
    pub chain: Chain,
    /// For `layout: None`: which tensor it is, when that is known.
    pub origin: Option<Origin>,
    /// The branch conditions under which this alternative is the value (`use_cache` is
    /// true), when they can be named; `None` on the join of every path.
    pub condition: Option<Arc<str>>,
    /// What the passes of `analysis::facts` found about this tensor, for the rules that
    /// read them (see [`TensorFacts`]).
    pub facts: TensorFacts,
    /// The op call that computed this tensor, and what it computed it from (see
    /// [`Producer`]); `None` for a parameter, or where the paths that reach here disagree.
    pub made_by: Option<Arc<Producer>>,
}

/// The table op whose call computed a tensor, and the producers of the tensors it read:
/// the dataflow between calls, as far as the analysis follows it. A lint reads it to
/// recognise a sequence of ops (SL008: `softmax(q @ kᵀ) @ v`). Shared between values like
/// chains, and cut off beyond [`MAX_PRODUCER_DEPTH`] calls so that a loop cannot grow it.
#[derive(Debug)]
pub struct Producer {
    pub spec: &'static OpSpec,
    /// The call expression.
    pub span: Span,
    /// The producers of its arguments: the input first, then the others that are not
    /// numbers, in the order they were passed (`None`: not made by an op the analysis saw).
    pub inputs: Vec<Option<Arc<Producer>>>,
    /// Every argument besides the tensors is a number (`scores * 0.125`).
    pub numbers_only: bool,
    /// The op's `dim` argument counted from the end (1: the last dim), when known.
    pub dim_from_end: Option<usize>,
    /// Calls from here down to the oldest producer kept.
    pub depth: u8,
}

/// How many calls back a [`Producer`] remembers.
pub const MAX_PRODUCER_DEPTH: u8 = 12;

impl Producer {
    pub fn new(
        spec: &'static OpSpec,
        span: Span,
        inputs: Vec<Option<Arc<Producer>>>,
        numbers_only: bool,
        dim_from_end: Option<usize>,
    ) -> Producer {
        let deepest = inputs.iter().flatten().map(|p| p.depth).max().unwrap_or(0);
        let (inputs, depth) = if deepest >= MAX_PRODUCER_DEPTH {
            (vec![None; inputs.len()], 1)
        } else {
            (inputs, deepest + 1)
        };
        Producer {
            spec,
            span,
            inputs,
            numbers_only,
            dim_from_end,
            depth,
        }
    }

    /// Does the tables' entry of the op carry this tag?
    pub fn tagged(&self, tag: &str) -> bool {
        self.spec.tags.iter().any(|t| t == tag)
    }
}

/// The producer two alternatives share: the same call's result, or none.
fn same_producer(a: &Option<Arc<Producer>>, b: &Option<Arc<Producer>>) -> Option<Arc<Producer>> {
    match (a, b) {
        (Some(p), Some(q)) if Arc::ptr_eq(p, q) => Some(p.clone()),
        _ => None,
    }
}

/// The producer of every alternative of a tensor value, when they share one (or of a
/// tensor whose layout is unknown).
pub fn producer_of(v: &Value) -> Option<Arc<Producer>> {
    let alts = match v {
        Value::Tensor(TensorVal::Alts(alts)) => alts,
        Value::Tensor(TensorVal::Unknown(_, p)) => return p.clone(),
        _ => return None,
    };
    let first = alts.first()?.made_by.clone();
    alts[1..]
        .iter()
        .try_fold(first, |p, a| Some(same_producer(&p, &a.made_by)))
        .flatten()
}

/// `v` with `producer` as the producer of each of its tensor alternatives, or of the tensor
/// of unknown layout it is.
pub fn with_producer(v: Value, producer: &Arc<Producer>) -> Value {
    match v {
        Value::Tensor(TensorVal::Alts(mut alts)) => {
            for a in &mut alts {
                a.made_by = Some(producer.clone());
            }
            Value::Tensor(TensorVal::Alts(alts))
        }
        Value::Tensor(TensorVal::Unknown(why, _)) => {
            Value::Tensor(TensorVal::Unknown(why, Some(producer.clone())))
        }
        other => other,
    }
}

impl TensorAlt {
    pub fn new(layout: Option<SymLayout>, chain: Chain) -> TensorAlt {
        TensorAlt {
            layout,
            chain,
            origin: None,
            condition: None,
            facts: TensorFacts::default(),
            made_by: None,
        }
    }
    /// Same layout, and the same tensor where that matters (the origin of one of unknown
    /// shape, the facts on it).
    pub fn same_layout(&self, other: &TensorAlt) -> bool {
        self.layout == other.layout
            && (self.layout.is_some() || self.origin == other.origin)
            && self.facts == other.facts
    }
}

/// A fact a pass of `analysis::facts` puts on a tensor for the rules that need it (that
/// the tensor is the copy an op made, say). The interpreter carries it with the
/// tensor's alternative (copies of the value, its paths, its joins) and knows nothing else
/// of it.
pub trait TensorFact: std::any::Any + std::fmt::Debug + Send + Sync {
    /// The fact as an `Any`, to be read back as its own type.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Which fact of its type it is: two alternatives are the same tensor only if their
    /// facts of each type have the same identity (a copy: the call that made it).
    fn identity(&self) -> u64;
    /// Does a write into the tensor matter to the rule that reads this fact (a write into
    /// a copy may be lost)? Then the interpreter records whether anything can
    /// observe a write into it (`event::LostWrite`).
    fn watches_writes(&self) -> bool {
        false
    }
}

/// The facts on one alternative, at most one of each type; usually none, and then it
/// allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct TensorFacts(Vec<Arc<dyn TensorFact>>);

impl TensorFacts {
    /// The fact of type `T`, if a pass put one here.
    pub fn get<T: TensorFact>(&self) -> Option<&T> {
        self.0.iter().find_map(|f| f.as_any().downcast_ref::<T>())
    }

    /// The fact of type `T` as it is shared, to put on another alternative.
    pub fn shared<T: TensorFact>(&self) -> Option<&Arc<dyn TensorFact>> {
        self.0.iter().find(|f| f.as_any().is::<T>())
    }

    /// Put `fact` here, in place of the fact of its type there was.
    pub fn put(&mut self, fact: Arc<dyn TensorFact>) {
        let kind = fact.as_any().type_id();
        match self.0.iter_mut().find(|f| f.as_any().type_id() == kind) {
            Some(old) => *old = fact,
            None => self.0.push(fact),
        }
    }

    /// Does a fact here watch writes into the tensor (see [`TensorFact::watches_writes`])?
    pub fn watch_writes(&self) -> bool {
        self.0.iter().any(|f| f.watches_writes())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The same facts: of the same types, with the same identities.
impl PartialEq for TensorFacts {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self.0.iter().all(|f| {
                let kind = f.as_any().type_id();
                other
                    .0
                    .iter()
                    .any(|g| g.as_any().type_id() == kind && g.identity() == f.identity())
            })
    }
}

impl Eq for TensorFacts {}

/// Consistent with `eq` whatever the order the facts were put in.
impl std::hash::Hash for TensorFacts {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut sum = 0u64;
        for f in &self.0 {
            let mut h = rustc_hash::FxHasher::default();
            (f.as_any().type_id(), f.identity()).hash(&mut h);
            sum = sum.wrapping_add(std::hash::Hasher::finish(&h));
        }
        (self.0.len(), sum).hash(state);
    }
}

#[derive(Debug, Clone)]
pub enum TensorVal {
    /// The tensor has one of these layouts (at least one entry).
    Alts(Vec<TensorAlt>),
    /// Nothing is known about the layout, for this reason; the op call that computed the
    /// tensor, when one did (see [`Producer`]).
    Unknown(UnknownReason, Option<Arc<Producer>>),
}

impl TensorVal {
    pub fn single(layout: Option<SymLayout>, chain: Chain) -> TensorVal {
        TensorVal::Alts(vec![TensorAlt::new(layout, chain)])
    }
    pub fn alts(&self) -> Option<&[TensorAlt]> {
        match self {
            TensorVal::Alts(a) => Some(a),
            TensorVal::Unknown(..) => None,
        }
    }
}

/// An abstract value.
#[derive(Debug, Clone)]
pub enum Value {
    Tensor(TensorVal),
    /// An integer or size, possibly symbolic.
    Int(Dim),
    Float,
    Bool(Option<bool>),
    Str(Name),
    NoneVal,
    /// Tuples, lists and `torch.Size` (element-wise abstract values).
    Tuple(Vec<Value>),
    /// Inside a tuple: the leading sizes of a tensor whose rank is unknown
    /// (`x.shape[:-1]`), as one size, their product (see `analysis::prefix`). The tuple's
    /// length and the positions after this element are unknown.
    PackedSizes(Dim),
    /// A value without a known type but with a readable name (`config.n_head`, a parameter).
    /// Used as a size it becomes the symbol of that name; used as a tensor it is a contiguous
    /// tensor only if it is a parameter (assumption 1).
    Named {
        name: Name,
        /// For a parameter of the function: the origin its tensor has when it is used as one.
        param: Option<Origin>,
    },
    /// An imported module or name: the dotted path it stands for (`F` → `torch.nn.functional`).
    Import(Name),
    /// An `nn.Module`-like object created by a known constructor, with its bound arguments.
    NnModule(Arc<NnModuleVal>),
    /// An `nn.Sequential` of these layers (rules/helpers.toml `[[container]]`): calling it
    /// calls each in turn.
    Sequential(Arc<[Value]>),
    /// A function defined in the analysed code; a method read from an object is bound to it.
    Function(Arc<Function>, Option<Arc<Instance>>),
    /// A class defined in the analysed code (calling it constructs an [`Instance`]).
    Class(Arc<ClassDef>),
    /// `lambda d: body`, called only in the frame that made it (see [`LambdaVal`]).
    Lambda(Arc<LambdaVal>),
    /// `functools.partial(f, *args, **kwargs)`: calling it calls `f` with those arguments
    /// first (`partial(nn.LayerNorm, eps=1e-6)`, `partial(torch.cat, dim=-2)`).
    Partial(Arc<PartialVal>),
    /// An object of a class defined in the analysed code: `self` in a method, or a module
    /// built in a constructor (`self.attn = Attention(dim, heads)`).
    Instance(Arc<Instance>),
    /// A subscript entry `start:stop:step` (omitted parts are `NoneVal`).
    Slice(Box<[Value; 3]>),
    /// `...` in a subscript.
    Ellipsis,
    /// A list or `nn.ModuleList` of unknown length whose every item is this value: built by
    /// `append` in a loop or by a comprehension over an unknown range
    /// (`[Block(dim) for _ in range(depth)]`). Only objects and layers (and tuples of them)
    /// are kept so: iterating it runs the loop body on the item. Also: the pieces of a
    /// `split` the analysis cannot count (read by a loop or at a loop's index), and
    /// `list(xs)` of anything else, a list of unknown items (an einops call stacks it).
    Repeated(Arc<Value>),
    /// One of these layers, by path, each of a kind of its own (`Downsample(dim) if not
    /// is_last else nn.Conv2d(dim, dim, 3)`, `norm(dim) if use_norm else nn.Identity()`):
    /// calling it calls each, and the results join. At most [`MAX_EITHER`] alternatives.
    Either(Arc<[Value]>),
    /// `range(...)` whose bounds are not literals: integers, how many unknown; with the
    /// bound `stop` they stay below when they start at 0 or more. A loop over it binds its
    /// target to one integer symbol, the same in every iteration, so `pred[b]` keeps its
    /// layout.
    IntRange(Option<Dim>),
    /// Nothing is known, for this reason.
    Unknown(UnknownReason),
}

/// Why the analysis does not know a value, or could not decide what an op does with it:
/// set where the unknown value arises (the value carries it on, through assignments and
/// calls) and where an op's outcome is left undecided, so `--statistics` can say what the
/// analysis did not understand. One byte: values that carry it grow no larger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UnknownReason {
    /// The result of a call the analysis cannot follow (`foo(...)`: neither an op of the
    /// tables nor a function of the analysed code).
    UnresolvedCall,
    /// An attribute or name of something the analysis knows nothing about (`config.x`, an
    /// attribute another method reassigns, a global bound elsewhere).
    UnknownObject,
    /// The output of an op whose result layout the tables leave to the backend
    /// (convolution, pooling, interpolation: kind `unknown_layout`).
    BackendDependent,
    /// The result of an op whose outcome the analysis could not decide on its input.
    UndecidedOp,
    /// The paths that reach the value disagree on what it is (a tensor on one, `None` on
    /// another), or give it more layouts than are tracked.
    PathsDisagree,
    /// A construct the interpreter does not model (a comprehension, an element of a list
    /// of unknown length, an in-place change of layout, `*args`).
    Unmodelled,
    /// The op's input is not a tensor as far as the analysis knows (a number, a module, a
    /// name that is no parameter).
    NotATensor,
    /// The input is a tensor whose rank is unknown (sizes never read).
    UnknownRank,
    /// Another operand of the op (`other` of a matmul) has an unknown layout.
    UnknownOperand,
    /// The target shape cannot be read (`view(*shape)`, a shape computed elsewhere).
    UnreadableTarget,
    /// A size of the target shape is not related to the input's sizes.
    UnrelatedTargetSize,
    /// The algebra cannot decide a comparison of sizes the outcome depends on.
    UndecidedComparison,
}

impl UnknownReason {
    /// How `--statistics` and `reveal_layout` name the reason.
    pub fn describe(self) -> &'static str {
        match self {
            UnknownReason::UnresolvedCall => "input from a call the analysis cannot follow",
            UnknownReason::UnknownObject => "input read from an unknown object or name",
            UnknownReason::BackendDependent => "input from a backend-dependent op",
            UnknownReason::UndecidedOp => "input from an op whose outcome is undecided",
            UnknownReason::PathsDisagree => "paths disagree on the input",
            UnknownReason::Unmodelled => "input from a construct the analysis does not model",
            UnknownReason::NotATensor => "input not known to be a tensor",
            UnknownReason::UnknownRank => "input of unknown rank",
            UnknownReason::UnknownOperand => "another operand of unknown layout",
            UnknownReason::UnreadableTarget => "a target shape the analysis cannot read",
            UnknownReason::UnrelatedTargetSize => "a target size unrelated to the input's sizes",
            UnknownReason::UndecidedComparison => "undecided comparison of sizes",
        }
    }

    /// Of two paths' reasons, the one a join keeps: the same reason stays; otherwise the
    /// paths disagree.
    pub fn join(self, other: UnknownReason) -> UnknownReason {
        if self == other {
            self
        } else {
            UnknownReason::PathsDisagree
        }
    }
}

#[derive(Debug)]
pub struct LambdaVal {
    pub params: Vec<String>,
    pub body: crate::ir::Expr,
    /// The frame the lambda was made in ([`super::frame::Frame::id`]). Called there, its
    /// body runs in that frame's variables, as Python's closures see them at the call;
    /// elsewhere the analysis does not know the variables it closes over.
    pub frame: u64,
    /// The body reads no variable of that frame (only its parameters and the module's
    /// names: `lambda t: t.transpose(1, 2).flatten(-2)`): it runs the same in any frame of
    /// the module it was made in (`module`, the interpreter's module slot).
    pub closed: bool,
    pub module: usize,
    /// The making frame's variables the body reads, with their values, when each is bound
    /// once there (see `Interpreter::lambda_captures`): it then runs the same wherever it is
    /// called in that module (`self.split = lambda t: …` in `__init__`, called in `forward`).
    pub captured: Option<Arc<[(String, Value)]>>,
}

#[derive(Debug)]
pub struct PartialVal {
    pub func: Value,
    pub positional: Vec<Value>,
    pub keywords: Vec<(String, Value)>,
}

#[derive(Debug)]
pub struct NnModuleVal {
    pub spec: &'static ModuleSpec,
    pub args: crate::ops::BoundArgs<Dim>,
}

/// A class of the analysed code with its bases resolved (the ones defined in the analysed
/// code; library bases such as `nn.Module` are only named).
#[derive(Debug)]
pub struct ClassDef {
    pub class: Arc<Class>,
    /// Bases defined in the analysed code, in declaration order.
    pub bases: Vec<Arc<ClassDef>>,
    /// Attributes that some method other than a constructor assigns (on this class or a
    /// base): their value at a method's entry is not the constructor's.
    pub reassigned: rustc_hash::FxHashSet<String>,
}

impl ClassDef {
    pub fn name(&self) -> &str {
        &self.class.name
    }
    /// The method `name` by Python's lookup order (own methods, then bases depth-first,
    /// left to right: the MRO of every hierarchy without diamonds).
    pub fn method(&self, name: &str) -> Option<(Arc<Function>, &ClassDef)> {
        if let Some(m) = self.class.methods.iter().find(|m| m.name == name) {
            return Some((m.clone(), self));
        }
        self.bases.iter().find_map(|b| b.method(name))
    }
    /// The class-level value `name = …` by the same lookup order as [`ClassDef::method`]
    /// (`rnn_class = nn.GRU` in a base, `rnn_class = nn.LSTM` in a subclass).
    pub fn class_attr(&self, name: &str) -> Option<&crate::ir::Expr> {
        if let Some((_, e)) = self.class.attrs.iter().rev().find(|(n, _)| n == name) {
            return Some(e);
        }
        self.bases.iter().find_map(|b| b.class_attr(name))
    }
    /// The first base (in lookup order) that defines `name`, for `super().name(…)` in a
    /// method of this class.
    pub fn super_method(&self, name: &str) -> Option<(Arc<Function>, &ClassDef)> {
        self.bases.iter().find_map(|b| b.method(name))
    }
}

/// An object of a class of the analysed code, with what its constructor left on it.
#[derive(Debug)]
pub struct Instance {
    pub class: Arc<ClassDef>,
    /// Attributes after construction (without those another method reassigns).
    pub attrs: Bindings,
    /// Exact quotients and divisibility the constructor relied on: they hold in every
    /// method of the object.
    pub exact_quotients: Vec<crate::layout::dim::ExactQuotient>,
    pub divisibility: Vec<Assumption>,
    /// Distinguishes objects in call contexts.
    pub id: u32,
    /// The parameter an object stands for when the analysis made it from the parameter's
    /// annotation (`config: Config`): its unknown attributes are named after it
    /// (`config.hidden_size`), as those of an unannotated parameter are.
    pub named: Option<String>,
}
impl Value {
    pub fn unknown_tensor(why: UnknownReason) -> Value {
        Value::Tensor(TensorVal::Unknown(why, None))
    }
    pub fn int(v: i64) -> Value {
        Value::Int(Dim::lit(v))
    }
    pub fn is_tensor(&self) -> bool {
        matches!(self, Value::Tensor(_))
    }
}

/// Does a tuple hold packed leading sizes (`Value::PackedSizes`)? Its length, and what
/// follows them, are then unknown.
pub fn holds_packed(items: &[Value]) -> bool {
    items.iter().any(|v| matches!(v, Value::PackedSizes(_)))
}

/// The most values a tuple may hold, counting those of the tuples inside it. Every path
/// state that binds a tuple copies it, at every statement that splits or joins paths: a
/// megabyte-long list literal kept whole would make each of those cost its length. No
/// shape, loop unrolling or index the analysis models needs this many.
pub const MAX_TUPLE_WEIGHT: usize = 1024;

/// A tuple of `items`, or an unknown value when they weigh more than [`MAX_TUPLE_WEIGHT`].
pub fn bounded_tuple(items: Vec<Value>) -> Value {
    // Counting stops past the bound: a megabyte-long literal costs no more than a short one.
    if tuple_weight(&items, MAX_TUPLE_WEIGHT) > MAX_TUPLE_WEIGHT {
        return Value::Unknown(UnknownReason::Unmodelled);
    }
    Value::Tuple(items)
}

/// How many values `items` hold, nested tuples' included; counting stops past `limit`.
fn tuple_weight(items: &[Value], limit: usize) -> usize {
    let mut weight = 0;
    for v in items {
        weight += match v {
            Value::Tuple(inner) => 1 + tuple_weight(inner, limit - weight.min(limit)),
            _ => 1,
        };
        if weight > limit {
            break;
        }
    }
    weight
}

/// Join the values of two control-flow paths.
pub fn join(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => Value::Tensor(join_tensors(x, y)),
        (Value::Int(x), Value::Int(y)) if x == y => a.clone(),
        (Value::PackedSizes(x), Value::PackedSizes(y)) if x == y => a.clone(),
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            Value::Tuple(x.iter().zip(y).map(|(p, q)| join(p, q)).collect())
        }
        (Value::Bool(x), Value::Bool(y)) if x == y => a.clone(),
        (Value::Str(x), Value::Str(y)) if x == y => a.clone(),
        (Value::NoneVal, Value::NoneVal) | (Value::Float, Value::Float) => a.clone(),
        (Value::Named { name: n1, .. }, Value::Named { name: n2, .. }) if n1 == n2 => a.clone(),
        (Value::Import(x), Value::Import(y)) if x == y => a.clone(),
        (Value::Function(f, s1), Value::Function(g, s2))
            if Arc::ptr_eq(f, g) && same_receiver(s1, s2) =>
        {
            a.clone()
        }
        (Value::NnModule(x), Value::NnModule(y)) if Arc::ptr_eq(x, y) => a.clone(),
        // The same module built with arguments that differ by path: one module whose
        // differing arguments are unknown.
        (Value::NnModule(x), Value::NnModule(y)) if std::ptr::eq(x.spec, y.spec) => {
            match x.args.join(&y.args) {
                Some(args) => Value::NnModule(Arc::new(NnModuleVal { spec: x.spec, args })),
                None => Value::Unknown(UnknownReason::PathsDisagree),
            }
        }
        (Value::Class(x), Value::Class(y)) if Arc::ptr_eq(x, y) => a.clone(),
        (Value::Lambda(x), Value::Lambda(y)) if Arc::ptr_eq(x, y) => a.clone(),
        (Value::Partial(x), Value::Partial(y)) if Arc::ptr_eq(x, y) => a.clone(),
        (Value::Instance(x), Value::Instance(y)) if Arc::ptr_eq(x, y) => a.clone(),
        (Value::Instance(x), Value::Instance(y)) if Arc::ptr_eq(&x.class, &y.class) => {
            join_instances(x, y)
        }
        (Value::Sequential(x), Value::Sequential(y)) if x.len() == y.len() => {
            Value::Sequential(x.iter().zip(y.iter()).map(|(p, q)| join(p, q)).collect())
        }
        // The pieces of a `split` the analysis cannot count, on both paths: an item of
        // either.
        (Value::Repeated(x), Value::Repeated(y)) if x.is_tensor() && y.is_tensor() => {
            Value::Repeated(Arc::new(join(x, y)))
        }
        // A list one path grew further than the other (`append` in a loop): any number of
        // its items, when they are objects or layers that join.
        (Value::Tuple(_) | Value::Repeated(_), Value::Tuple(_) | Value::Repeated(_)) => {
            repeated_items([a, b]).unwrap_or(Value::Unknown(UnknownReason::PathsDisagree))
        }
        // One path has a tensor, the other something else (e.g. `None` for an optional mask):
        // the result may be either, which no certain finding can rest on.
        (Value::Tensor(TensorVal::Unknown(why, _)), _)
        | (_, Value::Tensor(TensorVal::Unknown(why, _))) => Value::unknown_tensor(*why),
        (Value::Tensor(_), Value::Unknown(why)) | (Value::Unknown(why), Value::Tensor(_)) => {
            Value::unknown_tensor(*why)
        }
        (Value::Tensor(_), _) | (_, Value::Tensor(_)) => {
            Value::unknown_tensor(UnknownReason::PathsDisagree)
        }
        (Value::Unknown(x), Value::Unknown(y)) => Value::Unknown(x.join(*y)),
        (Value::Unknown(why), _) | (_, Value::Unknown(why)) => Value::Unknown(*why),
        _ if is_single_layer(a) && is_single_layer(b) => either(a, b),
        _ => Value::Unknown(UnknownReason::PathsDisagree),
    }
}

/// Beyond this many layers of different kinds a joined layer is unknown.
pub const MAX_EITHER: usize = 4;

/// A layer a path calls: an object, a library layer or a chain of them; or what makes one,
/// a class of the analysed code or a `partial` of one (`attn_klass = FullAttention if full
/// else LinearAttention`), whose call builds the object of the path's choice.
fn is_single_layer(v: &Value) -> bool {
    match v {
        Value::Instance(_) | Value::NnModule(_) | Value::Sequential(_) | Value::Either(_) => true,
        Value::Class(_) => true,
        Value::Partial(p) => matches!(p.func, Value::Class(_)),
        _ => false,
    }
}

/// The layers `a` and `b` may be, as one [`Value::Either`]: alternatives of one kind
/// (objects of one class, one library layer) join into one.
fn either(a: &Value, b: &Value) -> Value {
    let parts = |v: &Value| match v {
        Value::Either(alts) => alts.to_vec(),
        other => vec![other.clone()],
    };
    let mut alts = parts(a);
    for v in parts(b) {
        let same_kind = alts.iter().position(|alt| joins_in_kind(alt, &v));
        match same_kind {
            Some(i) => alts[i] = join(&alts[i], &v),
            None => alts.push(v),
        }
    }
    if alts.len() > MAX_EITHER || alts.iter().any(|v| matches!(v, Value::Unknown(_))) {
        return Value::Unknown(UnknownReason::PathsDisagree);
    }
    Value::Either(alts.into())
}

/// Do two layers join as one of a kind (see [`join`]), not as alternatives?
fn joins_in_kind(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Instance(x), Value::Instance(y)) => Arc::ptr_eq(&x.class, &y.class),
        (Value::NnModule(x), Value::NnModule(y)) => std::ptr::eq(x.spec, y.spec),
        (Value::Sequential(x), Value::Sequential(y)) => x.len() == y.len(),
        _ => false,
    }
}

/// Join the bindings of two paths: a name bound on one path only is unknown.
pub fn join_bindings(a: &Bindings, b: &Bindings) -> Bindings {
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
        Value::unknown_tensor(UnknownReason::PathsDisagree)
    } else {
        Value::Unknown(UnknownReason::PathsDisagree)
    }
}

/// Do two maps bind the same names to the same abstract values?
pub fn same_bindings(a: &Bindings, b: &Bindings) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| same_value(v, w)))
}

/// Two objects of one class, made on two paths (or two iterations of a loop): one object
/// whose attributes are the joins of theirs. What the constructors relied on is kept where
/// both did.
fn join_instances(x: &Arc<Instance>, y: &Arc<Instance>) -> Value {
    if same_bindings(&x.attrs, &y.attrs) {
        return Value::Instance(x.clone());
    }
    static JOINED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(u32::MAX);
    let kept =
        |a: &[Assumption], b: &[Assumption]| a.iter().filter(|p| b.contains(p)).cloned().collect();
    Value::Instance(Arc::new(Instance {
        class: x.class.clone(),
        attrs: join_bindings(&x.attrs, &y.attrs),
        exact_quotients: x
            .exact_quotients
            .iter()
            .filter(|q| y.exact_quotients.contains(q))
            .cloned()
            .collect(),
        divisibility: kept(&x.divisibility, &y.divisibility),
        // Told apart from the objects of this analysis, whose ids count up from 1.
        id: JOINED.fetch_sub(1, std::sync::atomic::Ordering::Relaxed),
        named: x.named.clone().filter(|n| y.named.as_ref() == Some(n)),
    }))
}

/// The list of any number of the items of `lists` (tuples or repeated lists), when all
/// items are objects or layers that join into one; `None` otherwise.
pub fn repeated_items<'a>(lists: impl IntoIterator<Item = &'a Value>) -> Option<Value> {
    let mut item: Option<Value> = None;
    for list in lists {
        let items: &[Value] = match list {
            Value::Tuple(items) => items,
            Value::Repeated(one) => std::slice::from_ref(&**one),
            _ => return None,
        };
        for v in items {
            item = Some(match &item {
                Some(acc) => join(acc, v),
                None => v.clone(),
            });
        }
    }
    let item = item?;
    is_layer_like(&item).then(|| Value::Repeated(Arc::new(item)))
}

/// Objects, layers and callables, or tuples of them: what a list of layers holds.
pub fn is_layer_like(v: &Value) -> bool {
    match v {
        Value::Tuple(items) => !items.is_empty() && items.iter().all(is_layer_like),
        Value::Repeated(item) => is_layer_like(item),
        other => is_single_layer(other),
    }
}

fn same_receiver(a: &Option<Arc<Instance>>, b: &Option<Arc<Instance>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

fn join_tensors(a: &TensorVal, b: &TensorVal) -> TensorVal {
    match (a, b) {
        (TensorVal::Alts(x), TensorVal::Alts(y)) => {
            if let Some(merged) = join_unknown_shapes(x, y) {
                return TensorVal::Alts(vec![merged]);
            }
            let mut out = x.clone();
            for alt in y {
                match out.iter_mut().find(|o| o.same_layout(alt)) {
                    // One layout from two paths: its producer only if both paths share it.
                    Some(o) => {
                        o.made_by = same_producer(&o.made_by, &alt.made_by);
                        if let (Some(a), Some(b)) = (&o.condition, &alt.condition) {
                            if let Some(either) = either_side(a, b) {
                                o.condition = either;
                            }
                        }
                    }
                    None => out.push(alt.clone()),
                }
            }
            if out.len() > MAX_ALTERNATIVES {
                TensorVal::Unknown(UnknownReason::PathsDisagree, None)
            } else {
                TensorVal::Alts(out)
            }
        }
        (TensorVal::Unknown(x, p), TensorVal::Unknown(y, q)) => {
            TensorVal::Unknown(x.join(*y), same_producer(p, q))
        }
        (TensorVal::Unknown(why, _), _) | (_, TensorVal::Unknown(why, _)) => {
            TensorVal::Unknown(*why, None)
        }
    }
}

/// How many pairs of sides [`record_sides`] keeps per thread (the latest).
const KEPT_SIDES: usize = 64;

thread_local! {
    /// The two sides (`yes`, `no`) of the conditions joins have tagged alternatives with,
    /// latest last.
    static SIDES: std::cell::RefCell<std::collections::VecDeque<(Arc<str>, Arc<str>)>> =
        Default::default();
}

/// Remember that `yes` and `no` are the two sides of one condition: a layout that turns
/// out the same on both (a later op makes two alternatives one) holds on either.
pub fn record_sides(yes: &str, no: &str) {
    SIDES.with(|sides| {
        let mut sides = sides.borrow_mut();
        if sides.iter().any(|(y, n)| &**y == yes && &**n == no) {
            return;
        }
        if sides.len() == KEPT_SIDES {
            sides.pop_front();
        }
        sides.push_back((Arc::from(yes), Arc::from(no)));
    });
}

/// Forget the pairs [`record_sides`] kept: each file's analysis starts without them, so
/// what it finds does not depend on the files its thread analysed before.
pub fn forget_sides() {
    SIDES.with(|sides| sides.borrow_mut().clear());
}

/// Two conditions that are the same but for one part, where one says `yes` and the other
/// `no` of a pair [`record_sides`] keeps (`P and yes and S`, `P and no and S`): the
/// condition without that part (`P and S`; `None`: no condition left). `None` otherwise.
fn either_side(a: &str, b: &str) -> Option<Option<Arc<str>>> {
    const AND: &str = " and ";
    let rest = |x: &str, y: &str| {
        let at = a.find(x)?;
        let (before, after) = (&a[..at], &a[at + x.len()..]);
        let bounded = (before.is_empty() || before.ends_with(AND))
            && (after.is_empty() || after.starts_with(AND));
        let other = format!("{before}{y}{after}");
        (bounded && other == b).then(|| {
            let (before, after) = (before.strip_suffix(AND), after.strip_prefix(AND));
            match (before, after) {
                (Some(p), Some(s)) => Some(Arc::from(format!("{p}{AND}{s}"))),
                (Some(p), None) => Some(Arc::from(p)),
                (None, Some(s)) => Some(Arc::from(s)),
                (None, None) => None,
            }
        })
    };
    SIDES.with(|sides| {
        let sides = sides.borrow();
        sides
            .iter()
            .rev()
            .find_map(|(yes, no)| rest(yes, no).or_else(|| rest(no, yes)))
    })
}

/// Two sides that are each one contiguous tensor of unknown shape are one such tensor after
/// the join: the same abstract layout, whichever side ran. It is a new tensor (its own
/// origin, derived from both sides'), not an alias of either: a use that fixes its rank says
/// nothing about the tensor of the side that did not run.
pub fn join_unknown_shapes(x: &[TensorAlt], y: &[TensorAlt]) -> Option<TensorAlt> {
    let ([a], [b]) = (x, y) else {
        return None;
    };
    if a.layout.is_some() || b.layout.is_some() || a.origin == b.origin {
        return None;
    }
    let origin = match (a.origin, b.origin) {
        (Some(p), Some(q)) => Some(joined_origin(p, q)),
        _ => None,
    };
    Some(TensorAlt {
        layout: None,
        chain: a.chain.clone(),
        origin,
        condition: None,
        facts: TensorFacts::default(),
        made_by: same_producer(&a.made_by, &b.made_by),
    })
}

/// The origin of the join of two tensors of unknown shape: a function of both (so that the
/// same join twice, as a loop re-runs, gives the same value), outside the range the
/// interpreter's counter hands out.
fn joined_origin(p: Origin, q: Origin) -> Origin {
    let (lo, hi) = if p < q { (p, q) } else { (q, p) };
    let mixed = (u64::from(lo) << 32 | u64::from(hi)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((mixed >> 33) as Origin) | 0x8000_0000
}

/// Structural equality used to detect loop fixpoints (chains are ignored).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Unknown either way: a tensor op's result of unknown layout and a value of unknown
        // type tell the paths apart no more than two unknown tensors do.
        (
            Value::Tensor(TensorVal::Unknown(..)) | Value::Unknown(_),
            Value::Tensor(TensorVal::Unknown(..)) | Value::Unknown(_),
        ) => true,
        (Value::Tensor(TensorVal::Alts(x)), Value::Tensor(TensorVal::Alts(y))) => {
            x.len() == y.len() && x.iter().all(|p| y.iter().any(|q| p.same_layout(q)))
        }
        (Value::Int(x), Value::Int(y)) | (Value::PackedSizes(x), Value::PackedSizes(y)) => x == y,
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Named { name: x, .. }, Value::Named { name: y, .. }) => x == y,
        (Value::Import(x), Value::Import(y)) => x == y,
        (Value::Function(f, s1), Value::Function(g, s2)) => {
            Arc::ptr_eq(f, g) && same_receiver(s1, s2)
        }
        (Value::NnModule(x), Value::NnModule(y)) => {
            Arc::ptr_eq(x, y) || (std::ptr::eq(x.spec, y.spec) && x.args == y.args)
        }
        (Value::Class(x), Value::Class(y)) => Arc::ptr_eq(x, y),
        (Value::Lambda(x), Value::Lambda(y)) => Arc::ptr_eq(x, y),
        (Value::Partial(x), Value::Partial(y)) => Arc::ptr_eq(x, y),
        (Value::Instance(x), Value::Instance(y)) => {
            Arc::ptr_eq(x, y)
                || (Arc::ptr_eq(&x.class, &y.class) && same_bindings(&x.attrs, &y.attrs))
        }
        (Value::Repeated(x), Value::Repeated(y)) => same_value(x, y),
        (Value::Either(x), Value::Either(y)) => {
            x.len() == y.len() && x.iter().all(|p| y.iter().any(|q| same_value(p, q)))
        }
        (Value::Sequential(x), Value::Sequential(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_value(p, q))
        }
        (Value::Float, Value::Float) | (Value::NoneVal, Value::NoneVal) => true,
        _ => false,
    }
}

/// `(B, T, C)`
pub fn format_shape(shape: &[Dim]) -> String {
    let mut s = String::from("(");
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{d}");
    }
    if shape.len() == 1 {
        s.push(',');
    }
    s.push(')');
    s
}

/// `(B, T, H, D) strides (T·H·D, D, H·D, 1)`
pub fn format_layout(layout: &Option<SymLayout>) -> String {
    match layout {
        None => "contiguous, shape unknown".to_string(),
        Some(l) => format!(
            "{} strides {}",
            format_shape(&l.shape),
            format_shape(&l.strides)
        ),
    }
}

/// Replace symbol `name` by `with` everywhere in a value (an equality the interpreter learned).
pub fn substitute(v: &Value, name: &str, with: &Dim) -> Value {
    let layout = |l: &SymLayout| SymLayout {
        shape: l.shape.iter().map(|d| d.substitute(name, with)).collect(),
        strides: l.strides.iter().map(|d| d.substitute(name, with)).collect(),
        offset: l.offset.substitute(name, with),
    };
    match v {
        Value::Int(d) => Value::Int(d.substitute(name, with)),
        // Packed sizes learned to be one dim are a size like any other.
        Value::PackedSizes(d) => {
            let d = d.substitute(name, with);
            if super::prefix::is_packed(&d) {
                Value::PackedSizes(d)
            } else {
                Value::Int(d)
            }
        }
        Value::Tuple(items) => {
            Value::Tuple(items.iter().map(|i| substitute(i, name, with)).collect())
        }
        Value::Tensor(TensorVal::Alts(alts)) => Value::Tensor(TensorVal::Alts(
            alts.iter()
                .map(|a| TensorAlt {
                    layout: a.layout.as_ref().map(layout),
                    ..a.clone()
                })
                .collect(),
        )),
        other => other.clone(),
    }
}

/// Every size symbol a value mentions (to keep names minted later from colliding with it).
pub fn collect_symbols(v: &Value, out: &mut rustc_hash::FxHashSet<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    let dims = |d: &Dim, out: &mut rustc_hash::FxHashSet<String>| out.extend(d.symbols());
    match v {
        Value::Int(d) | Value::PackedSizes(d) => dims(d, out),
        Value::Tuple(items) => items
            .iter()
            .for_each(|i| collect_symbols(i, out, depth + 1)),
        Value::Tensor(TensorVal::Alts(alts)) => {
            for a in alts {
                if let Some(l) = &a.layout {
                    l.shape.iter().chain(&l.strides).for_each(|d| dims(d, out));
                }
            }
        }
        Value::Instance(i) => i
            .attrs
            .values()
            .for_each(|a| collect_symbols(a, out, depth + 1)),
        _ => {}
    }
}

/// What applying an op to one input alternative gave.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The op succeeds; its result layout when known.
    Ok(Option<SymLayout>),
    /// The op fails for every size satisfying the assumptions.
    Error(OpError),
    /// The algebra could not decide.
    Unknown,
}

#[derive(Debug, Clone)]
pub struct AltOutcome {
    /// The input (receiver) alternative, with the chain of steps that produced it.
    pub input: TensorAlt,
    /// The resolved target shape of `view`/`reshape`-like ops, when known.
    pub target: Option<Vec<Dim>>,
    pub outcome: Outcome,
    /// Does the op materialise a copy of its input?
    pub copies: Tri,
    pub copied_numel: Option<Dim>,
    /// For an op made of steps (einops), the reshape that copies: this intermediate layout
    /// to this shape. `None` when the copy is of the input itself.
    pub copied_reshape: Option<(SymLayout, Vec<Dim>)>,
    /// The input is a list einops stacked first (`rearrange(xs, 'l b n d -> b n l d')`):
    /// the op copies every tensor of the list, whatever its pattern does.
    pub stacks_list: bool,
    /// Assumptions the decisions used.
    pub assumptions: Vec<Assumption>,
    /// The op's other tensor arguments as it received them, by parameter name (`other`
    /// of a matmul, `cos`/`sin` of candle's `rope`); `None` for a tensor whose layout is
    /// unknown. Lints that compare operands read them (SL005, candle's matmul strides).
    pub operands: Vec<(String, Option<SymLayout>)>,
    /// The branches taken on the path this outcome was found on (see `Env::decisions`);
    /// the analysis turns the ones that tell the paths apart into `input.condition`.
    pub decisions: Vec<Arc<str>>,
}

impl AltOutcome {
    /// An outcome with nothing beyond its input, result and copy: no target, operands or
    /// assumptions (an undecided op, a revealed value).
    pub fn bare(input: TensorAlt, outcome: Outcome, copies: Tri, decisions: Vec<Arc<str>>) -> Self {
        AltOutcome {
            input,
            target: None,
            outcome,
            copies,
            copied_numel: None,
            copied_reshape: None,
            stacks_list: false,
            assumptions: Vec::new(),
            operands: Vec::new(),
            decisions,
        }
    }
}

#[cfg(test)]
mod either_side_tests {
    use super::{either_side, record_sides};

    #[test]
    fn the_two_sides_of_one_condition_leave_the_rest() {
        record_sides("`blocks` is empty", "`blocks` is not empty");
        let rest = |a: &str, b: &str| either_side(a, b).map(|r| r.map(|c| c.to_string()));
        assert_eq!(
            rest(
                "`blocks` is empty and `x` is channels-last",
                "`blocks` is not empty and `x` is channels-last"
            ),
            Some(Some("`x` is channels-last".into()))
        );
        assert_eq!(
            rest("`blocks` is not empty", "`blocks` is empty"),
            Some(None)
        );
        // Other parts differ too, or the sides were never recorded as one condition's.
        assert_eq!(
            rest("`blocks` is empty and a", "`blocks` is not empty and b"),
            None
        );
        assert_eq!(rest("`c` is true", "`c` is false"), None);
    }
}
