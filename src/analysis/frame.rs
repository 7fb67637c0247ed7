//! What the interpreter knows while it runs one function body (a *frame*) and while it
//! runs one analysis from its root function down through the calls it follows.
//!
//! Facts about sizes are learned as the code runs: `h = C // n_head` makes `n_head` divide
//! `C` (an exact quotient the decisions may rely on), `assert x.shape[-1] == dim` makes the
//! two sizes one. Those facts hold on the path that learned them, so they live in the
//! [`Frame`] and travel into the functions it calls (and back out of them). The names of
//! minted sizes and the sizes given to contiguous tensors of unknown shape must agree across
//! every function one analysis passes through, so they live in [`RootState`].

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use crate::ir::Span;
use crate::layout::names::primed;
use crate::layout::{Assumption, Assumptions, Dim};

use super::value::{Bindings, Instance, Value};

// Defined beside the chains whose steps carry it (a step remembers the call it ran in),
// so that `value` needs nothing from here.
pub use super::value::CallContext;

/// Size facts learned on the current path (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The settings' assumptions plus the exact quotients learned on this path.
    /// Shared, copied on write: every event recorded on the path holds them.
    pub assumptions: Arc<Assumptions>,
    /// Divisibility assumptions made by `//` on sizes.
    pub divisibility: Arc<Vec<Assumption>>,
    /// Sizes the path made one (`C` := `n_embd` when `nn.Linear(n_embd, …)` read `x`'s `C`):
    /// the name that went, and what it is now. `--dim C=…` then sizes `n_embd`.
    pub aliases: Arc<Vec<(String, Dim)>>,
}

impl Facts {
    pub fn add_quotient(&mut self, fact: crate::layout::dim::ExactQuotient) {
        if !self.assumptions.exact_quotients.contains(&fact) {
            Arc::make_mut(&mut self.assumptions)
                .exact_quotients
                .push(fact);
        }
    }
    pub fn add_loop_index(&mut self, symbol: &str, stop: Dim) {
        let fact = (symbol.to_string(), stop);
        if !self.assumptions.loop_indices.contains(&fact) {
            Arc::make_mut(&mut self.assumptions).loop_indices.push(fact);
        }
    }
    pub fn add_upper_bound(&mut self, fact: (String, Dim)) {
        if !self.assumptions.upper_bounds.contains(&fact) {
            Arc::make_mut(&mut self.assumptions).upper_bounds.push(fact);
        }
    }
    pub fn add_divisibility(&mut self, a: Assumption) {
        if !self.divisibility.contains(&a) {
            Arc::make_mut(&mut self.divisibility).push(a);
        }
    }
    /// Everything `other` knows, added to these facts (copying only what is new: mostly
    /// the two know the same).
    pub fn absorb(&mut self, other: &Facts) {
        if Arc::ptr_eq(&self.assumptions, &other.assumptions)
            && Arc::ptr_eq(&self.divisibility, &other.divisibility)
            && Arc::ptr_eq(&self.aliases, &other.aliases)
        {
            return;
        }
        for q in &other.assumptions.exact_quotients {
            if !self.assumptions.exact_quotients.contains(q) {
                self.add_quotient(q.clone());
            }
        }
        for b in &other.assumptions.upper_bounds {
            if !self.assumptions.upper_bounds.contains(b) {
                self.add_upper_bound(b.clone());
            }
        }
        for d in other.divisibility.iter() {
            if !self.divisibility.contains(d) {
                self.add_divisibility(d.clone());
            }
        }
        for (name, now) in other.aliases.iter() {
            self.add_alias(name, now);
        }
    }
    pub fn add_alias(&mut self, name: &str, now: &Dim) {
        if !self.aliases.iter().any(|(n, _)| n == name) {
            Arc::make_mut(&mut self.aliases).push((name.to_string(), now.clone()));
        }
    }
}

/// The state of one function body being interpreted.
#[derive(Debug, Default)]
pub struct Frame {
    /// Tells frames apart (0 for none made by [`Frame::numbered`]): a lambda is run in
    /// place only in the frame that made it.
    pub id: u64,
    pub facts: Facts,
    /// Equalities learned on the way (`symbol := size`), applied to every value read.
    pub subst: Vec<(String, Dim)>,
    /// Returned values so far (joined).
    pub returns: Option<Value>,
    /// The attributes of `self` at the returns so far (joined), for calls that share the
    /// caller's object.
    pub exit_attrs: Option<Bindings>,
    /// The object `self` stands for in a method.
    pub this: Option<Arc<Instance>>,
    /// The class whose method this is (for `super()`), when it is a method.
    pub class: Option<Arc<super::value::ClassDef>>,
    /// `None` for the root of an analysis; the call that led here otherwise.
    pub context: Option<Arc<CallContext>>,
    /// The qualified name of the function being run (`Block.forward`), for contexts.
    pub function: String,
    /// The path the statements being run are on, when it was split off from the others (an
    /// iteration of an unrolled loop): events made here carry it.
    pub path: Option<Arc<str>>,
    /// The variable an assignment binds (`C = x.shape[-1]` names the size `C`), and the
    /// span of the assigned expression it names.
    pub name_hint: Option<(String, Span)>,
    /// While a constructor runs: the environment at each of its `return`s (a Rust
    /// constructor ends with `return Self { .. }`, lowered to `self.field = …; return`).
    pub constructor_exits: Option<Vec<super::env::Env>>,
    /// The function whose body this is (`None` for a module body).
    pub body_of: Option<Arc<crate::ir::Function>>,
}

impl Frame {
    /// A fresh, distinct [`Frame::id`].
    pub fn next_id() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

/// State shared by every frame of one analysis (one root function and the calls it
/// follows): names must not collide across the functions a value passes through.
#[derive(Debug, Default)]
pub struct RootState {
    /// Names of the size symbols minted so far.
    pub minted: HashSet<String>,
    /// Per name given to [`RootState::mint`], how many primes its last minting took: the
    /// next starts there (`minted` only grows), not at none, so minting the same name `n`
    /// times costs `n` lookups rather than `n²`.
    primes_used: HashMap<String, usize>,
    /// Number parameters whose default is 0 or 1 (`num_dummy_heads: int = 0`): the value a
    /// caller may well pass, so no failure may rest on their being ≥ 2.
    pub small_defaults: HashSet<String>,
    /// One size read from a tensor of unknown shape (`batch_size = x.size(0)`), by the
    /// tensor's origin and the dim as written (negative counts from the end): a later read,
    /// or an op that fixes the tensor's rank (`x.permute(0, 2, 1, 3, 4)`), names that dim
    /// the same.
    pub dim_names: HashMap<(super::value::Origin, i64), Dim>,
}

impl RootState {
    /// The name dim `i` of the tensor `origin` (of rank `rank`, if known) was given when
    /// it was read as `x.size(i)` / `x.shape[i]`.
    pub fn dim_name(
        &self,
        origin: super::value::Origin,
        i: i64,
        rank: Option<usize>,
    ) -> Option<Dim> {
        if let Some(d) = self.dim_names.get(&(origin, i)) {
            return Some(d.clone());
        }
        let rank = rank? as i64;
        let other = if i < 0 { i + rank } else { i - rank };
        self.dim_names.get(&(origin, other)).cloned()
    }

    /// Whether a decision rests on a size ≥ 2 that a parameter's default says may be 0 or 1,
    /// and that no test the path `settled` showed to be ≥ 2.
    pub fn rests_on_small_default(
        &self,
        assumptions: &[crate::layout::Assumption],
        settled: &[super::env::SettledTest],
    ) -> bool {
        let shown_large = |name: &str| {
            settled
                .iter()
                .any(|t| t.at_least_two.as_deref() == Some(name))
        };
        assumptions.iter().any(|a| {
            matches!(a, crate::layout::Assumption::MinSize { name, .. }
                if self.small_defaults.contains(name) && !shown_large(name))
        })
    }

    /// A fresh size symbol named as written in the code; a second, different quantity with
    /// the same name gets primes (`T′`) so the two are never confused.
    pub fn mint(&mut self, name: &str) -> Dim {
        let mut primes = self.primes_used.get(name).copied().unwrap_or(0);
        let mut n = primed(name, primes);
        while self.minted.contains(&n) {
            primes += 1;
            n = primed(name, primes);
        }
        self.primes_used.insert(name.to_string(), primes);
        self.minted.insert(n.clone());
        Dim::sym(&n)
    }
}
