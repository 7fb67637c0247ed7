//! Rank from use: how many dims a tensor parameter has, read from what the function does
//! with it (and with tensors derived from it by rank-keeping ops) — `B, T, C = x.shape` (3),
//! `x.permute(0, 2, 1, 3)` (4), `rearrange(x, "b c h w -> …")` (4), or bounds that meet:
//! `_, pred = output.topk(k, 1)` (≥ 2) then `pred.t()` (≤ 2). Each of those uses fails at run
//! time for any other rank, so giving the parameter that many fresh sizes is sound — as long
//! as the use is certain to run whenever the function runs. So only the statements every
//! call executes count: the body's top-level statements (and `with` blocks) up to the first
//! block that may leave the function early; a use inside a branch or a loop says nothing
//! about the other paths. Sizes the body names (`B`, `T`, `C`; `n = x.size(1)`) keep those
//! names.

use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Arg, Expr, ExprKind, Function, Span, Stmt, Target};
use crate::ops::einops::{parse_pattern, Composition};

/// What one use says about a rank: exactly, or at least, this many dims.
enum RankUse {
    Exact(i64),
    AtLeast(i64),
}

/// A parameter's rank as its uses fix it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamRank {
    /// The name the body gives each dim, where it names it.
    pub names: Vec<Option<String>>,
    /// The use that fixed the rank (`y.shape` in `B, nh, T, hs = y.shape`), for diagnostics.
    pub span: Span,
}

/// For each parameter whose rank its uses fix: the names of its dims and where it was fixed.
pub fn param_ranks(f: &Function) -> HashMap<String, ParamRank> {
    param_ranks_through(f, &|_| false)
}

/// [`param_ranks`], following tensors also through the layers `self.<name>(x)` for which
/// `keeps_rank(name)` holds (`self.to_qkv = nn.Linear(…)`: its output has `x`'s rank).
pub fn param_ranks_through(
    f: &Function,
    keeps_rank: &dyn Fn(&str) -> bool,
) -> HashMap<String, ParamRank> {
    let mut scan = Scan::new(keeps_rank);
    for p in &f.params {
        if !p.variadic && p.shape_annotation.is_none() {
            scan.derived.insert(p.name.clone(), (p.name.clone(), 0));
        }
    }
    scan.block(&f.body);
    scan.facts
        .into_iter()
        .filter_map(|(name, fact)| {
            let n = fact.rank()?;
            let span = fact.span?;
            let names = (0..n)
                .map(|i| {
                    let i = i as i64;
                    fact.names
                        .get(&i)
                        .or_else(|| fact.names.get(&(i - n as i64)))
                        .cloned()
                })
                .collect();
            Some((name, ParamRank { names, span }))
        })
        .collect()
}

#[derive(Debug, Default)]
struct Facts {
    exact: Option<usize>,
    lower: usize,
    upper: Option<usize>,
    /// Two uses disagree: the function fails whatever the rank; say nothing.
    conflict: bool,
    /// Names the body gives dim `i` (negative: from the end).
    names: HashMap<i64, String>,
    /// The first use that said something about the rank.
    span: Option<Span>,
}

impl Facts {
    fn exact(&mut self, n: i64) {
        if n < 0 {
            self.conflict = true;
            return;
        }
        let n = n as usize;
        match self.exact {
            Some(m) if m != n => self.conflict = true,
            _ => self.exact = Some(n),
        }
    }
    fn at_least(&mut self, n: i64) {
        self.lower = self.lower.max(n.max(0) as usize);
    }
    fn at_most(&mut self, n: i64) {
        if n < 0 {
            self.conflict = true;
            return;
        }
        let n = n as usize;
        self.upper = Some(self.upper.map_or(n, |u| u.min(n)));
    }
    fn rank(&self) -> Option<usize> {
        if self.conflict {
            return None;
        }
        let n = match (self.exact, self.upper) {
            (Some(n), _) => n,
            (None, Some(u)) if u == self.lower => u,
            _ => return None,
        };
        let fits = n >= self.lower && self.upper.is_none_or(|u| n <= u);
        (fits && (1..=8).contains(&n)).then_some(n)
    }
}

/// Beyond this many names known to be derived (see `Scan`), an `if` is not scanned branch
/// by branch: what it assigns is forgotten.
const MAX_BRANCHED_NAMES: usize = 256;

struct Scan<'a> {
    /// Does the layer `self.<name>` keep its input's rank?
    keeps_rank: &'a dyn Fn(&str) -> bool,
    /// A variable that holds a tensor derived from a parameter by rank-keeping ops:
    /// `(parameter, rank of the variable − rank of the parameter)`.
    derived: HashMap<String, (String, i64)>,
    /// Derived variables whose dims are the parameter's in another order
    /// (`x = x.transpose(0, 1)`): their sizes do not name the parameter's dims.
    reordered: std::collections::HashSet<String>,
    /// A variable that holds the parts of a derived tensor (`qkv = v.chunk(3, dim=-1)`):
    /// each part is derived alike (`qkv[0]`, `for t in qkv`).
    parts: HashMap<String, (String, i64)>,
    /// A variable that holds the shape of a derived tensor (`orig_shape = x.shape`, also
    /// as one item of `res, orig_shape = x, x.shape`): unpacking it is unpacking the shape.
    shapes: HashMap<String, (String, i64)>,
    facts: HashMap<String, Facts>,
    stopped: bool,
}

impl<'a> Scan<'a> {
    fn new(keeps_rank: &'a dyn Fn(&str) -> bool) -> Self {
        Scan {
            keeps_rank,
            derived: HashMap::default(),
            reordered: Default::default(),
            parts: HashMap::default(),
            shapes: HashMap::default(),
            facts: HashMap::default(),
            stopped: false,
        }
    }

    /// A sequence of statements every call runs in order.
    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            if self.stopped {
                return;
            }
            match s {
                Stmt::Assign { targets, value, .. } => {
                    self.assign(targets, value);
                }
                Stmt::AugAssign { target, value, .. } => {
                    self.expr(value);
                    self.forget_target(target);
                }
                Stmt::Expr(e) | Stmt::Assert { test: e, .. } => {
                    self.expr(e);
                }
                Stmt::Return { value, .. } => {
                    if let Some(e) = value {
                        self.expr(e);
                    }
                    self.stopped = true;
                }
                Stmt::Raise { .. } => self.stopped = true,
                Stmt::If { body, orelse, .. } if !may_leave(s) => {
                    self.branches(s, [body, orelse]);
                }
                Stmt::With { items, body, .. } => {
                    for (e, t) in items {
                        self.expr(e);
                        if let Some(t) = t {
                            self.forget_target(t);
                        }
                    }
                    self.block(body);
                }
                other => {
                    // A branch, loop or `try`: its uses run on some paths only. One that may
                    // leave the function early ends the scan (the later uses do not run on
                    // that path); any other only forgets what it reassigns.
                    if may_leave(other) {
                        self.stopped = true;
                    }
                    for n in assigned_names(other) {
                        self.derived.remove(&n);
                    }
                }
            }
        }
    }

    /// An `if` that cannot leave the function: its uses run on some paths only (they say
    /// nothing), but a name both branches derive alike (`if self.norm: x = self.norm(x)`)
    /// stays derived.
    fn branches(&mut self, s: &Stmt, blocks: [&[Stmt]; 2]) {
        if self.derived.len() + self.reordered.len() + self.parts.len() > MAX_BRANCHED_NAMES {
            // Each branch scans a copy of what is known: with thousands of names (as many
            // parameters), thousands of `if`s would copy them all each time.
            self.forget_assigned(s);
            return;
        }
        let outcomes = blocks.map(|b| {
            let mut sub = Scan::new(self.keeps_rank);
            sub.derived = self.derived.clone();
            sub.reordered = self.reordered.clone();
            sub.parts = self.parts.clone();
            sub.block(b);
            (sub.derived, sub.reordered)
        });
        for n in assigned_names(s) {
            let [(a, ra), (b, rb)] = &outcomes;
            match (a.get(&n), b.get(&n)) {
                (Some(x), Some(y)) if x == y => {
                    self.derived.insert(n.clone(), x.clone());
                    if ra.contains(&n) || rb.contains(&n) {
                        self.reordered.insert(n.clone());
                    } else {
                        self.reordered.remove(&n);
                    }
                }
                _ => {
                    self.derived.remove(&n);
                    self.reordered.remove(&n);
                }
            }
            self.parts.remove(&n);
        }
    }

    /// What `s` assigns is no longer known to be derived.
    fn forget_assigned(&mut self, s: &Stmt) {
        for n in assigned_names(s) {
            self.derived.remove(&n);
            self.reordered.remove(&n);
            self.parts.remove(&n);
            self.shapes.remove(&n);
        }
    }

    fn forget_target(&mut self, t: &Target) {
        let mut names = Vec::new();
        target_names(t, &mut names);
        for n in names {
            self.derived.remove(&n);
            self.reordered.remove(&n);
            self.parts.remove(&n);
            self.shapes.remove(&n);
        }
    }

    /// Does `e` hold its parameter's dims in another order (a transpose or permute on the
    /// way from the parameter)?
    fn reorders(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(n) => self.reordered.contains(n.as_str()),
            ExprKind::Call(call) => match &call.func().kind {
                ExprKind::Attr { value, attr } => {
                    matches!(
                        attr.as_str(),
                        "t" | "transpose" | "permute" | "movedim" | "mT"
                    ) || self.reorders(value)
                }
                _ => false,
            },
            ExprKind::Subscript(subscript) => self.reorders(subscript.value()),
            ExprKind::Attr { value, .. } => self.reorders(value),
            _ => false,
        }
    }

    fn fact(&mut self, param: &str) -> &mut Facts {
        self.facts.entry(param.to_string()).or_default()
    }

    /// The facts of `param`, noting `span` as the use when it is the first.
    fn fact_at(&mut self, param: &str, span: Span) -> &mut Facts {
        let fact = self.fact(param);
        fact.span.get_or_insert(span);
        fact
    }

    fn assign(&mut self, targets: &[Target], value: &Expr) {
        self.expr(value);
        let wanted = match targets {
            [Target::Tuple(items, _)] => items.len(),
            _ => 1,
        };
        let per_item = self.per_item(value, wanted);
        match targets {
            [Target::Tuple(items, _)] => {
                self.unpacked_sizes(items, value);
                self.unpacked_size_slice(items, value);
            }
            [Target::Name(n, _)] => self.one_size_named(n, value),
            _ => {}
        }
        self.derive_targets(targets, value, per_item);
        self.name_shapes(targets, value);
    }

    /// `orig_shape = x.shape` / `res, orig_shape = x, x.shape`: the names now holding a
    /// derived tensor's shape (after `derive_targets` forgot what they held before).
    fn name_shapes(&mut self, targets: &[Target], value: &Expr) {
        let pairs: Vec<(&Target, &Expr)> = match (targets, &value.kind) {
            ([Target::Tuple(items, _)], ExprKind::Tuple(values)) if items.len() == values.len() => {
                items.iter().zip(values.iter()).collect()
            }
            ([t @ Target::Name(..)], _) => vec![(t, value)],
            _ => return,
        };
        for (t, v) in pairs {
            if let (Target::Name(n, _), Some(r)) = (t, self.size_query(v)) {
                if !self.reorders(v) {
                    self.shapes.insert(n.to_string(), r);
                }
            }
        }
    }

    /// `B, T, C = v.shape`: the rank and the names of the sizes; `B, *rest = v.shape`: at
    /// least the named ones.
    fn unpacked_sizes(&mut self, items: &[Target], value: &Expr) {
        let Some((p, d)) = self.size_query(value) else {
            return;
        };
        let reordered = self.reorders(value);
        match plain_names(items) {
            Some(names) => {
                let fact = self.fact_at(&p, value.span);
                fact.exact(names.len() as i64 - d);
                if d == 0 && !reordered {
                    for (i, n) in names.iter().enumerate() {
                        if *n != "_" {
                            fact.names.entry(i as i64).or_insert_with(|| n.to_string());
                        }
                    }
                }
            }
            None => {
                let fixed = items
                    .iter()
                    .filter(|t| !matches!(t, Target::Starred(..)))
                    .count();
                self.fact_at(&p, value.span).at_least(fixed as i64 - d);
            }
        }
    }

    /// `B, T = v.shape[:-1]` / `H, W = v.size()[2:]`: a slice of literal bounds whose
    /// length only one rank gives (the rank, and the names where the slice starts at a
    /// known dim), or every rank from some on (`v.shape[:2]`: at least that).
    fn unpacked_size_slice(&mut self, items: &[Target], value: &Expr) {
        let Some((p, d, lower, upper)) = self.sliced_size_query(value) else {
            return;
        };
        let Some(names) = plain_names(items) else {
            return;
        };
        let reordered = self.reorders(value);
        let fact = self.fact_at(&p, value.span);
        match ranks_with_slice_len(lower, upper, names.len()) {
            SliceRanks::Exactly(r) => {
                fact.exact(r as i64 - d);
                if d == 0 && !reordered {
                    let first = lower.unwrap_or(0);
                    let first = if first < 0 { first + r as i64 } else { first };
                    for (i, n) in names.iter().enumerate() {
                        if *n != "_" {
                            let dim = first + i as i64;
                            fact.names.entry(dim).or_insert_with(|| n.to_string());
                        }
                    }
                }
            }
            SliceRanks::AtLeast(r) => fact.at_least(r as i64 - d),
            SliceRanks::Impossible => fact.conflict = true,
            SliceRanks::Other => {}
        }
    }

    /// `n = v.shape[1]` / `n = v.size(1)`: the name of one size.
    fn one_size_named(&mut self, n: &str, value: &Expr) {
        if let Some((p, d, i)) = self.one_size(value) {
            if d == 0 && !self.reorders(value) {
                self.fact(&p)
                    .names
                    .entry(i)
                    .or_insert_with(|| n.to_string());
            }
        }
    }

    /// What the assigned names now derive from: the value's parameter (`h = self.norm(x)`),
    /// an item each (`per_item`, from [`Scan::per_item`]), or the parts of a split.
    fn derive_targets(
        &mut self,
        targets: &[Target],
        value: &Expr,
        per_item: Vec<(Option<(String, i64)>, bool)>,
    ) {
        let result = self.derive(value);
        let reordered = self.reorders(value);
        for t in targets {
            self.forget_target(t);
        }
        match (targets, result) {
            ([Target::Tuple(items, _)], _) if per_item.len() == items.len() => {
                for (t, (r, reordered)) in items.iter().zip(per_item) {
                    if let (Target::Name(n, _), Some(r)) = (t, r) {
                        self.derive_name(n, r, reordered);
                    }
                }
            }
            ([Target::Name(n, _)], Some(r)) => self.derive_name(n, r, reordered),
            // `_, pred = v.topk(k, 1)` (values and indices keep the rank).
            ([Target::Tuple(items, _)], _) if self.parts_keeping_rank(value).is_some() => {
                let r = self.parts_keeping_rank(value).unwrap_or_default();
                for t in items {
                    if let Target::Name(n, _) = t {
                        if n != "_" {
                            self.derive_name(n, r.clone(), reordered);
                        }
                    }
                }
            }
            // `qkv = v.chunk(3, dim=-1)`: the parts, for `qkv[0]` and `for t in qkv`.
            ([Target::Name(n, _)], None) if self.parts_keeping_rank(value).is_some() => {
                let r = self.parts_keeping_rank(value).unwrap_or_default();
                self.parts.insert(n.to_string(), r);
                if reordered {
                    self.reordered.insert(n.to_string());
                }
            }
            _ => {}
        }
    }

    /// `n` now derives from `r` (its parameter and rank offset), in another order of dims
    /// when `reordered`.
    fn derive_name(&mut self, n: &str, r: (String, i64), reordered: bool) {
        self.derived.insert(n.to_string(), r);
        if reordered {
            self.reordered.insert(n.to_string());
        }
    }

    /// `map(lambda t: body, (q, k, v))` / `(body for t in (q, k, v))`: the body's uses, once
    /// per item it derives from a parameter, and what the body derives for each item (with
    /// whether it reorders the dims); empty for any other expression.
    /// Over the parts of a chunk (`for t in qkv`), the body runs once and each of the
    /// `wanted` results is its.
    fn per_item(&mut self, value: &Expr, wanted: usize) -> Vec<(Option<(String, i64)>, bool)> {
        let Some((param, body, items)) = per_item_body(value) else {
            return Vec::new();
        };
        let items: Vec<Option<((String, i64), bool)>> = match items {
            Items::Listed(items) => items
                .iter()
                .map(|i| Some((self.derive(i)?, self.reorders(i))))
                .collect(),
            Items::Parts(name) => match self.parts.get(name) {
                Some(r) => vec![Some((r.clone(), self.reordered.contains(name))); wanted],
                None => return Vec::new(),
            },
        };
        let saved = (self.derived.remove(param), self.reordered.remove(param));
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Some((r, item_reordered)) = item else {
                out.push((None, false));
                continue;
            };
            self.derived.insert(param.to_string(), r);
            if item_reordered {
                self.reordered.insert(param.to_string());
            }
            self.expr(body);
            out.push((self.derive(body), item_reordered || self.reorders(body)));
            self.derived.remove(param);
            self.reordered.remove(param);
        }
        if let Some(r) = saved.0 {
            self.derived.insert(param.to_string(), r);
        }
        if saved.1 {
            self.reordered.insert(param.to_string());
        }
        out
    }

    /// The derived tensor `e` is a method call on, with the method and its arguments.
    fn method_call<'e>(&self, e: &'e Expr) -> Option<((String, i64), &'e str, &'e [Arg])> {
        let (func, args) = e.kind.as_call()?;
        let ExprKind::Attr { value, attr } = &func.kind else {
            return None;
        };
        let recv = self.derive(value)?;
        Some((recv, attr.as_str(), args))
    }

    /// `(values, indices)` of `v.topk(…)`/`v.sort(…)`, the parts of `v.chunk(…)`/`v.split(…)`:
    /// each keeps `v`'s rank.
    fn parts_keeping_rank(&self, e: &Expr) -> Option<(String, i64)> {
        let (recv, method, _) = self.method_call(e)?;
        matches!(
            method,
            "topk"
                | "sort"
                | "kthvalue"
                | "cummax"
                | "cummin"
                | "chunk"
                | "split"
                | "tensor_split"
                | "split_with_sizes"
        )
        .then_some(recv)
    }

    /// What rank-keeping ops make of a derived tensor.
    fn derive(&self, e: &Expr) -> Option<(String, i64)> {
        match &e.kind {
            ExprKind::Name(n) => self.derived.get(n.as_str()).cloned(),
            ExprKind::Call(call) if self.layer_input(call.func(), call.args()).is_some() => {
                self.derive(self.layer_input(call.func(), call.args())?)
            }
            ExprKind::Call(_) => {
                let ((p, d), method, args) = self.method_call(e)?;
                match method {
                    "t" | "transpose" | "permute" | "contiguous" | "float" | "half" | "double"
                    | "bool" | "long" | "int" | "to" | "type_as" | "clone" | "detach" | "abs"
                    | "exp" | "sigmoid" | "relu" | "tanh" | "softmax" | "log_softmax" | "eq"
                    | "ne" | "gt" | "lt" | "ge" | "le" | "masked_fill" | "mul_" | "add_"
                    | "div_" | "sub_" | "neg" | "cumsum" | "flip" | "roll" | "sqrt" | "pow" => {
                        Some((p, d))
                    }
                    "unsqueeze" => Some((p, d + 1)),
                    _ => {
                        let _ = args;
                        None
                    }
                }
            }
            // `v[:k]`, `v[a:b, :]`: slices keep the rank; `v[None]` adds a dim; `qkv[0]` of
            // the parts of a chunk is one part.
            ExprKind::Subscript(subscript) => {
                let (value, index) = (subscript.value(), subscript.index());
                if let (ExprKind::Name(n), [ix]) = (&value.kind, index) {
                    if let (Some(part), ExprKind::Int(_)) = (self.parts.get(n.as_str()), &ix.kind) {
                        return Some(part.clone());
                    }
                }
                let (p, d) = self.derive(value)?;
                let mut delta = 0;
                for ix in index {
                    match &ix.kind {
                        ExprKind::Slice { .. } => {}
                        ExprKind::None => delta += 1,
                        ExprKind::Int(_) => delta -= 1,
                        _ => return None,
                    }
                }
                Some((p, d + delta))
            }
            _ => None,
        }
    }

    /// `self.proj(x)` of a layer that keeps the rank: `x`.
    fn layer_input<'e>(&self, func: &Expr, args: &'e [Arg]) -> Option<&'e Expr> {
        let ExprKind::Attr { value, attr } = &func.kind else {
            return None;
        };
        let [a] = args else { return None };
        let plain = a.name().is_none() && !a.is_star() && !a.is_double_star();
        let on_self = matches!(&value.kind, ExprKind::Name(n) if n == "self");
        (plain && on_self && (self.keeps_rank)(attr)).then_some(a.value())
    }

    /// Rank facts from the uses inside an expression.
    fn expr(&mut self, e: &Expr) {
        let mut stack = vec![e];
        let mut visited = 0usize;
        while let Some(e) = stack.pop() {
            visited += 1;
            if visited > 10_000 {
                return;
            }
            if let Some(((p, d), method, args)) = self.method_call(e) {
                self.method_use(&p, d, method, args, e.span);
            }
            match self.einops_rank(e) {
                Some((p, RankUse::Exact(n))) => self.fact_at(&p, e.span).exact(n),
                Some((p, RankUse::AtLeast(n))) => self.fact_at(&p, e.span).at_least(n),
                None => {}
            }
            if let Some((p, d, i)) = self.one_size(e) {
                self.fact_at(&p, e.span)
                    .at_least(if i >= 0 { i + 1 } else { -i } - d);
            }
            if let ExprKind::Attr { value, attr } = &e.kind {
                if matches!(attr.as_str(), "mT" | "mH") {
                    if let Some((p, d)) = self.derive(value) {
                        self.fact_at(&p, e.span).at_least(2 - d);
                    }
                }
            }
            match &e.kind {
                ExprKind::Call(call) => {
                    stack.push(call.func());
                    stack.extend(call.args().iter().map(|a| a.value()));
                }
                ExprKind::Attr { value, .. } => stack.push(value),
                ExprKind::Subscript(subscript) => {
                    stack.push(subscript.value());
                    stack.extend(subscript.index().iter());
                }
                ExprKind::BinOp { operands, .. } | ExprKind::Compare { operands, .. } => {
                    stack.extend(operands.iter())
                }
                ExprKind::Neg(inner) | ExprKind::Starred(inner) => stack.push(inner),
                ExprKind::Tuple(items) | ExprKind::List(items) => stack.extend(items.iter()),
                // Only one side of a conditional runs.
                ExprKind::IfExp(parts) => stack.push(&parts[0]),
                _ => {}
            }
        }
    }

    /// What one method call on a derived tensor says about the parameter's rank.
    fn method_use(&mut self, p: &str, d: i64, method: &str, args: &[Arg], span: Span) {
        let dims = literal_dims(args);
        match method {
            "permute" => {
                if let Some(n) = permutation_len(args) {
                    self.fact_at(p, span).exact(n as i64 - d);
                }
            }
            // `t()` accepts rank ≤ 2 only.
            "t" => self.fact_at(p, span).at_most(2 - d),
            "transpose" | "swapaxes" | "swapdims" => {
                if let [a, b] = dims.as_slice() {
                    self.fact_at(p, span)
                        .at_least(needed_rank(*a).max(needed_rank(*b)) - d);
                }
            }
            "topk" | "kthvalue" => {
                if let Some(dim) = keyword_or_positional(args, "dim", 1) {
                    self.fact_at(p, span).at_least(needed_rank(dim) - d);
                }
            }
            // `expand(-1, -1, t, -1, -1)`: as many dims as sizes or fewer (new dims lead),
            // and a `-1` keeps a dim of the input, so the first one bounds the new ones.
            "expand" => {
                if let Some((n, first_kept)) = expand_sizes(args) {
                    let facts = self.fact_at(p, span);
                    facts.at_most(n - d);
                    if let Some(i) = first_kept {
                        facts.at_least(n - i - d);
                    }
                }
            }
            "softmax" | "log_softmax" | "size" | "sum" | "mean" | "argmax" | "cumsum" | "flip" => {
                if let Some(dim) = keyword_or_positional(args, "dim", 0) {
                    self.fact_at(p, span).at_least(needed_rank(dim) - d);
                }
            }
            _ => {}
        }
    }

    /// `rearrange(v, "b c (h p1) (w p2) -> …")` (any einops function): the number of
    /// dimensions on the left of the pattern (a parenthesised group is one), exactly, or at
    /// least that many besides a `...`.
    fn einops_rank(&self, e: &Expr) -> Option<(String, RankUse)> {
        let (func, args) = e.kind.as_call()?;
        let name = match &func.kind {
            ExprKind::Name(n) => n.as_str(),
            ExprKind::Attr { attr, .. } => attr.as_str(),
            _ => return None,
        };
        if !matches!(name, "rearrange" | "reduce" | "repeat") {
            return None;
        }
        let [first, second, ..] = args else {
            return None;
        };
        let (p, d) = self.derive(first.value())?;
        let ExprKind::Str(pattern) = &second.value().kind else {
            return None;
        };
        let (lhs, _) = parse_pattern(pattern).ok()?;
        let dims = lhs
            .composition
            .iter()
            .filter(|c| !matches!(c, Composition::Ellipsis))
            .count() as i64;
        let rank = dims - d;
        if rank < 0 {
            return None;
        }
        Some(if lhs.has_ellipsis {
            (p, RankUse::AtLeast(rank))
        } else {
            (p, RankUse::Exact(rank))
        })
    }

    /// `v.shape` / `v.size()` of a derived tensor.
    fn size_query(&self, e: &Expr) -> Option<(String, i64)> {
        if let ExprKind::Name(n) = &e.kind {
            return self.shapes.get(n.as_str()).cloned();
        }
        let recv = match &e.kind {
            ExprKind::Attr { value, attr } if attr == "shape" => value,
            ExprKind::Call(call) if call.args().is_empty() => match &call.func().kind {
                ExprKind::Attr { value, attr } if attr == "size" => value,
                _ => return None,
            },
            _ => return None,
        };
        self.derive(recv)
    }

    /// `v.shape[a:b]` / `v.size()[a:b]` with literal (or absent) bounds and no step.
    fn sliced_size_query(&self, e: &Expr) -> Option<(String, i64, Option<i64>, Option<i64>)> {
        let (value, index) = e.kind.as_subscript()?;
        let [ix] = index else { return None };
        let ExprKind::Slice(bounds) = &ix.kind else {
            return None;
        };
        let crate::ir::SliceBounds { lower, upper, step } = &**bounds;
        let literal = |b: &Option<Expr>| match b.as_ref().map(|b| &b.kind) {
            None => Some(None),
            Some(ExprKind::Int(i)) => Some(Some(*i)),
            Some(_) => None,
        };
        if step.is_some() {
            return None;
        }
        let (lower, upper) = (literal(lower)?, literal(upper)?);
        self.size_query(value).map(|(p, d)| (p, d, lower, upper))
    }

    /// `v.shape[i]` / `v.size(i)` / `v.size()[i]` with a literal `i`.
    fn one_size(&self, e: &Expr) -> Option<(String, i64, i64)> {
        match &e.kind {
            ExprKind::Subscript(subscript) => {
                let (value, index) = (subscript.value(), subscript.index());
                let [ix] = index else { return None };
                let ExprKind::Int(i) = ix.kind else {
                    return None;
                };
                self.size_query(value).map(|(p, d)| (p, d, i))
            }
            ExprKind::Call(call) => {
                let ExprKind::Attr { value, attr } = &call.func().kind else {
                    return None;
                };
                let [a] = call.args() else { return None };
                let ExprKind::Int(i) = a.value().kind else {
                    return None;
                };
                if attr != "size" {
                    return None;
                }
                self.derive(value).map(|(p, d)| (p, d, i))
            }
            _ => None,
        }
    }
}

/// What a `map` or a generator runs over.
enum Items<'e> {
    /// A literal tuple or list: `(q, k, v)`.
    Listed(&'e [Expr]),
    /// A variable that may hold parts of a chunk: `qkv`.
    Parts(&'e str),
}

/// `map(lambda t: body, (a, b))`, `(body for t in (a, b))` (also inside `tuple(…)`/`list(…)`):
/// the parameter, the body and the items.
fn per_item_body(value: &Expr) -> Option<(&str, &Expr, Items<'_>)> {
    fn items_of(e: &Expr) -> Option<Items<'_>> {
        match &e.kind {
            ExprKind::Tuple(items) | ExprKind::List(items) => Some(Items::Listed(items)),
            ExprKind::Name(n) => Some(Items::Parts(n)),
            _ => None,
        }
    }
    match &value.kind {
        ExprKind::Call(call) => {
            let ExprKind::Name(f) = &call.func().kind else {
                return None;
            };
            match (f.as_str(), call.args()) {
                ("map", [l, items]) => {
                    let ExprKind::Lambda(lambda) = &l.value().kind else {
                        return None;
                    };
                    let [param] = &lambda.params[..] else {
                        return None;
                    };
                    Some((param.as_str(), &lambda.body, items_of(items.value())?))
                }
                ("tuple" | "list", [inner]) => per_item_body(inner.value()),
                _ => None,
            }
        }
        ExprKind::Comprehension(c) => {
            let Target::Name(param, _) = &c.target else {
                return None;
            };
            Some((param.as_str(), &c.element, items_of(&c.iter)?))
        }
        _ => None,
    }
}

/// The names of `a, b, c = …` when every target is a plain name.
pub fn plain_names(items: &[Target]) -> Option<Vec<&str>> {
    items
        .iter()
        .map(|t| match t {
            Target::Name(n, _) => Some(n.as_str()),
            _ => None,
        })
        .collect()
}

/// The ranks for which `shape[lower:upper]` has `len` sizes (Python's slice rules).
#[derive(Debug, PartialEq)]
enum SliceRanks {
    Exactly(usize),
    /// Every rank from this one on.
    AtLeast(usize),
    /// No rank: the unpacking fails whatever the tensor is.
    Impossible,
    /// Some other set of ranks: nothing is said.
    Other,
}

fn ranks_with_slice_len(lower: Option<i64>, upper: Option<i64>, len: usize) -> SliceRanks {
    // Ranks past the bounds' magnitudes all behave alike; look a little past that.
    const SEEN: usize = 24;
    let slice_len = |r: i64| {
        let clamp = |b: i64| if b < 0 { (b + r).max(0) } else { b.min(r) };
        let (a, b) = (clamp(lower.unwrap_or(0)), clamp(upper.unwrap_or(r)));
        (b - a).max(0) as usize
    };
    let fits: Vec<usize> = (0..=SEEN).filter(|&r| slice_len(r as i64) == len).collect();
    match fits.as_slice() {
        [] => SliceRanks::Impossible,
        [r] => SliceRanks::Exactly(*r),
        [first, .., last] if *last == SEEN && fits.len() == SEEN + 1 - first => {
            SliceRanks::AtLeast(*first)
        }
        _ => SliceRanks::Other,
    }
}

/// The smallest rank for which `dim` is valid (`1` for 0 and -1, `3` for 2 and -3).
fn needed_rank(dim: i64) -> i64 {
    if dim >= 0 {
        dim + 1
    } else {
        -dim
    }
}

/// The integer literals among the positional arguments.
fn literal_dims(args: &[Arg]) -> Vec<i64> {
    args.iter()
        .filter(|a| a.name().is_none() && !a.is_star() && !a.is_double_star())
        .filter_map(|a| match a.value().kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// A literal dim given by keyword, or as the positional argument at `position`.
fn keyword_or_positional(args: &[Arg], keyword: &str, position: usize) -> Option<i64> {
    let arg = args
        .iter()
        .find(|a| a.name().is_some_and(|n| n == keyword))
        .or_else(|| {
            args.iter()
                .filter(|a| a.name().is_none() && !a.is_star())
                .nth(position)
        })?;
    match arg.value().kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    }
}

/// `permute(0, 2, 1, 3)` / `permute((0, 2, 1, 3))` / `permute(dims=[…])`: the number of dims,
/// when every entry is an integer literal.
fn permutation_len(args: &[Arg]) -> Option<usize> {
    let ints = |items: &[Expr]| items.iter().all(|i| matches!(i.kind, ExprKind::Int(_)));
    match args {
        [a] if !a.is_star() && !a.is_double_star() => match &a.value().kind {
            ExprKind::Tuple(items) | ExprKind::List(items) if ints(items) => Some(items.len()),
            ExprKind::Int(_) if a.name().is_none() => Some(1),
            _ => None,
        },
        many if !many.is_empty()
            && many.iter().all(|a| {
                a.name().is_none()
                    && !a.is_star()
                    && !a.is_double_star()
                    && matches!(&a.value().kind, ExprKind::Int(_))
            }) =>
        {
            Some(many.len())
        }
        _ => None,
    }
}

/// The sizes of `expand(a, b, c)` / `expand((a, b, c))`: how many, and the position of
/// the first `-1`.
fn expand_sizes(args: &[Arg]) -> Option<(i64, Option<i64>)> {
    let plain = |a: &Arg| a.name().is_none() && !a.is_star() && !a.is_double_star();
    let items: Vec<&Expr> = match args {
        [a] if plain(a) => match &a.value().kind {
            ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().collect(),
            _ => vec![a.value()],
        },
        many if many.iter().all(plain) => many.iter().map(|a| a.value()).collect(),
        _ => return None,
    };
    if items.is_empty() || items.iter().any(|e| matches!(e.kind, ExprKind::Starred(_))) {
        return None;
    }
    let first_kept = items
        .iter()
        .position(|e| matches!(e.kind, ExprKind::Int(-1)))
        .map(|i| i as i64);
    Some((items.len() as i64, first_kept))
}

/// May a statement leave the function (or the loop it is in) before the next statement?
fn may_leave(s: &Stmt) -> bool {
    match s {
        Stmt::Return { .. } | Stmt::Raise { .. } | Stmt::Jump { .. } => true,
        Stmt::If { body, orelse, .. } => body.iter().chain(orelse).any(may_leave),
        Stmt::Loop { body, orelse, .. } => body.iter().chain(orelse).any(may_leave),
        Stmt::With { body, .. } => body.iter().any(may_leave),
        // Any statement of a `try` body may raise into a handler.
        Stmt::Try { .. } => true,
        _ => false,
    }
}

fn target_names(t: &Target, out: &mut Vec<String>) {
    match t {
        Target::Name(n, _) => out.push(n.to_string()),
        Target::Tuple(items, _) => items.iter().for_each(|i| target_names(i, out)),
        Target::Starred(inner, _) => target_names(inner, out),
        _ => {}
    }
}

/// How many times each name is bound in `f` (its parameters once, a binding in a loop
/// twice: it runs any number of times).
pub fn binding_counts(f: &crate::ir::Function) -> rustc_hash::FxHashMap<String, usize> {
    fn walk(stmts: &[Stmt], in_loop: bool, out: &mut rustc_hash::FxHashMap<String, usize>) {
        let times = if in_loop { 2 } else { 1 };
        for s in stmts {
            match s {
                Stmt::Loop {
                    target,
                    body,
                    orelse,
                    ..
                } => {
                    let mut names = Vec::new();
                    if let Some(t) = target {
                        target_names(t, &mut names);
                    }
                    names
                        .into_iter()
                        .for_each(|n| *out.entry(n).or_default() += 2);
                    walk(body, true, out);
                    walk(orelse, in_loop, out);
                }
                Stmt::If { body, orelse, .. } => {
                    walk(body, in_loop, out);
                    walk(orelse, in_loop, out);
                }
                Stmt::With { items, body, .. } => {
                    let mut names = Vec::new();
                    items
                        .iter()
                        .flat_map(|(_, t)| t)
                        .for_each(|t| target_names(t, &mut names));
                    names
                        .into_iter()
                        .for_each(|n| *out.entry(n).or_default() += times);
                    walk(body, in_loop, out);
                }
                Stmt::Try { .. } => s.for_each_block(|b| walk(b, in_loop, out)),
                _ => {
                    for n in assigned_names(s) {
                        *out.entry(n).or_default() += times;
                    }
                }
            }
        }
    }
    let mut out: rustc_hash::FxHashMap<String, usize> = Default::default();
    for p in &f.params {
        *out.entry(p.name.clone()).or_default() += 1;
    }
    walk(&f.body, false, &mut out);
    out
}

/// The names a statement binds anywhere inside it.
fn assigned_names(s: &Stmt) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(s: &Stmt, out: &mut Vec<String>) {
        match s {
            Stmt::Assign { targets, .. } => targets.iter().for_each(|t| target_names(t, out)),
            Stmt::AugAssign { target: t, .. } => target_names(t, out),
            Stmt::If { body, orelse, .. } => body.iter().chain(orelse).for_each(|s| walk(s, out)),
            Stmt::Loop {
                target: t,
                body,
                orelse,
                ..
            } => {
                if let Some(t) = t {
                    target_names(t, out);
                }
                body.iter().chain(orelse).for_each(|s| walk(s, out));
            }
            Stmt::With { items, body, .. } => {
                for (_, t) in items {
                    if let Some(t) = t {
                        target_names(t, out);
                    }
                }
                body.iter().for_each(|s| walk(s, out));
            }
            Stmt::Try { .. } => s.for_each_block(|b| b.iter().for_each(|s| walk(s, out))),
            Stmt::FunctionDef(f) => out.push(f.name.clone()),
            Stmt::ClassDef(c) => out.push(c.name.clone()),
            Stmt::Import { alias: Some(a), .. } => out.push(a.to_string()),
            _ => {}
        }
    }
    walk(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::python::parse_python;

    fn ranks(src: &str) -> Vec<(String, Vec<Option<String>>)> {
        let m = parse_python(src).module;
        let mut out: Vec<_> = param_ranks(&m.functions[0])
            .into_iter()
            .map(|(p, r)| (p, r.names))
            .collect();
        out.sort();
        out
    }

    fn ranks_through(src: &str, layers: &[&str]) -> Vec<(String, usize)> {
        let m = parse_python(src).module;
        let keeps = |a: &str| layers.contains(&a);
        let mut out: Vec<_> = param_ranks_through(&m.functions[0], &keeps)
            .into_iter()
            .map(|(p, r)| (p, r.names.len()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn rank_follows_layers_that_keep_it_and_the_parts_of_a_chunk() {
        // An attention block: `x` reaches a rank-3 pattern through a Linear and a chunk.
        let src = "def forward(self, x):\n    q, k, v = self.to_qkv(x).chunk(3, dim=-1)\n    \
                   k = rearrange(k, 'b n (h d) -> b h n d', h=self.heads)\n    return k\n";
        assert_eq!(ranks_through(src, &["to_qkv"]), vec![("x".into(), 3)]);
        // A layer not known to keep the rank (a user's module) says nothing.
        assert_eq!(ranks_through(src, &[]), vec![]);
    }

    #[test]
    fn rank_follows_each_item_of_a_map_or_a_generator() {
        for each in [
            "map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=8), (q, k))",
            "(rearrange(t, 'b n (h d) -> b h n d', h=8) for t in (q, k))",
        ] {
            let src = format!(
                "def forward(self, x, y):\n    q = self.to_q(x)\n    k = self.to_k(y)\n    \
                 q, k = {each}\n    return q\n"
            );
            assert_eq!(
                ranks_through(&src, &["to_q", "to_k"]),
                vec![("x".into(), 3), ("y".into(), 3)],
                "{each}"
            );
        }
        // The results are derived too: a later use of `q` counts.
        let src = "def f(x):\n    q, = map(lambda t: t.float(), (x,))\n    B, T = q.shape\n    return q\n";
        assert_eq!(ranks_through(src, &[]), vec![("x".into(), 2)]);
    }

    #[test]
    fn rank_follows_the_parts_of_a_chunk_kept_whole() {
        let src = "def forward(self, x):\n    qkv = self.to_qkv(x).chunk(3, dim=-1)\n    \
                   b, p, n, hd = qkv[0].shape\n    return qkv\n";
        assert_eq!(ranks_through(src, &["to_qkv"]), vec![("x".into(), 4)]);
        let src = "def forward(self, x):\n    qkv = x.chunk(3, dim=-1)\n    \
                   q, k, v = (rearrange(t, 'b n (h d) -> b h n d', h=8) for t in qkv)\n    return q\n";
        assert_eq!(ranks_through(src, &[]), vec![("x".into(), 3)]);
    }

    #[test]
    fn a_branch_that_keeps_the_rank_keeps_the_derivation() {
        let src =
            "def forward(self, x):\n    if self.norm is not None:\n        x = self.norm(x)\n    \
                   B, T, C = x.shape\n    return x\n";
        assert_eq!(ranks_through(src, &["norm"]), vec![("x".into(), 3)]);
        // A branch that makes something else of `x` ends the derivation.
        let src = "def forward(self, x):\n    if self.flat:\n        x = x[0]\n    B, T, C = x.shape\n    return x\n";
        assert_eq!(ranks_through(src, &[]), vec![]);
        // Uses inside a branch run on some paths only: they fix nothing.
        let src =
            "def forward(self, x):\n    if self.flat:\n        B, T, C = x.shape\n    return x\n";
        assert_eq!(ranks_through(src, &[]), vec![]);
    }

    #[test]
    fn a_shape_kept_in_a_variable_fixes_the_rank_when_unpacked() {
        let src =
            "def f(x):\n    res, orig_shape = x, x.shape\n    b, c, t = orig_shape\n    return x\n";
        assert_eq!(
            ranks(src),
            vec![(
                "x".into(),
                vec![Some("b".into()), Some("c".into()), Some("t".into())]
            )]
        );
        let reassigned = "def f(x, y):\n    s = x.shape\n    s = y\n    b, c = s\n    return x\n";
        assert_eq!(ranks(reassigned), vec![]);
    }

    #[test]
    fn unpacking_anywhere_before_reassignment_fixes_the_rank() {
        let src = "def f(x, y):\n    z = y + 1\n    B, T, C = x.shape\n    return x\n";
        assert_eq!(
            ranks(src),
            vec![(
                "x".into(),
                vec![Some("B".into()), Some("T".into()), Some("C".into())]
            )]
        );
    }

    #[test]
    fn unpacking_a_slice_of_the_shape_fixes_the_rank_and_names_its_dims() {
        let src = "def f(x, y):\n    B, T = x.shape[:-1]\n    H, W = y.size()[2:]\n    return x\n";
        assert_eq!(
            ranks(src),
            vec![
                ("x".into(), vec![Some("B".into()), Some("T".into()), None]),
                (
                    "y".into(),
                    vec![None, None, Some("H".into()), Some("W".into())]
                ),
            ]
        );
        // `x.shape[:2]` has two sizes for every rank from 2 on: a lower bound only.
        let src = "def f(x):\n    B, T = x.shape[:2]\n    return x\n";
        assert_eq!(ranks(src), vec![]);
    }

    #[test]
    fn slice_lengths_give_exact_ranks_lower_bounds_or_nothing() {
        use SliceRanks::*;
        assert_eq!(ranks_with_slice_len(None, Some(-1), 2), Exactly(3));
        assert_eq!(ranks_with_slice_len(Some(1), None, 3), Exactly(4));
        assert_eq!(ranks_with_slice_len(Some(-2), None, 2), AtLeast(2));
        assert_eq!(ranks_with_slice_len(Some(-2), None, 1), Exactly(1));
        assert_eq!(ranks_with_slice_len(None, Some(2), 2), AtLeast(2));
        assert_eq!(ranks_with_slice_len(None, Some(1), 2), Impossible);
        assert_eq!(ranks_with_slice_len(Some(1), Some(-1), 0), Other);
    }

    #[test]
    fn permute_fixes_the_rank_and_sizes_are_named() {
        let src = "def f(x):\n    n = x.size(1)\n    return x.permute(0, 2, 1, 3)\n";
        assert_eq!(
            ranks(src),
            vec![("x".into(), vec![None, Some("n".into()), None, None])]
        );
    }

    #[test]
    fn expand_bounds_the_rank_and_a_leading_minus_one_fixes_it() {
        let src = "def f(x, t):\n    return x.unsqueeze(2).expand(-1, -1, t, -1, -1)\n";
        assert_eq!(ranks(src), vec![("x".into(), vec![None; 4])]);
        let src = "def f(x, t):\n    return x.expand(t, t, -1)\n";
        assert!(ranks(src).is_empty());
    }

    #[test]
    fn bounds_that_meet_fix_the_rank_through_rank_keeping_ops() {
        // The ImageNet `accuracy()` helper: `topk(…, 1)` needs rank ≥ 2, `t()` rank ≤ 2.
        let src = "def accuracy(output, target, topk=(1,)):\n    with torch.no_grad():\n        maxk = max(topk)\n        _, pred = output.topk(maxk, 1, True, True)\n        pred = pred.t()\n        return pred\n";
        assert_eq!(ranks(src), vec![("output".into(), vec![None, None])]);
    }

    #[test]
    fn uses_after_a_reassignment_or_inside_a_branch_do_not_count() {
        let src = "def f(x):\n    x = x.flatten(1)\n    B, C = x.shape\n    return x\n";
        assert!(ranks(src).is_empty());
        let branch =
            "def f(x, c):\n    if c:\n        x = x[0]\n    B, C = x.shape\n    return x\n";
        assert!(ranks(branch).is_empty());
        let inside = "def f(x, c):\n    if c:\n        a, b, d = x.shape\n    return x\n";
        assert!(ranks(inside).is_empty());
    }

    #[test]
    fn uses_after_an_early_return_do_not_count() {
        let src = "def f(x):\n    if x.dim() == 4:\n        return x.permute(0, 2, 3, 1)\n    B, T, C = x.shape\n    return x\n";
        assert!(ranks(src).is_empty());
    }

    #[test]
    fn conflicting_ranks_say_nothing() {
        let src = "def f(x):\n    a, b = x.shape\n    return x.permute(0, 2, 1)\n";
        assert!(ranks(src).is_empty());
    }

    #[test]
    fn einops_patterns_give_the_rank() {
        let src = "def f(x):\n    return rearrange(x, 'b c h w -> b (h w) c')\n";
        assert_eq!(ranks(src), vec![("x".into(), vec![None, None, None, None])]);
    }

    #[test]
    fn an_einops_group_that_splits_an_axis_is_one_dim() {
        let src = "def f(img, p):\n    return rearrange(img, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=p, p2=p)\n";
        assert_eq!(
            ranks(src),
            vec![("img".into(), vec![None, None, None, None])]
        );
    }

    #[test]
    fn an_einops_ellipsis_gives_a_lower_bound_only() {
        let src = "def f(x):\n    return rearrange(x, '... (h d) -> ... h d', h=2)\n";
        assert_eq!(ranks(src), vec![]);
        let src = "def f(x):\n    y = rearrange(x, 'b ... d -> b d ...')\n    return x.t()\n";
        assert_eq!(ranks(src), vec![("x".into(), vec![None, None])]);
    }
}

#[cfg(test)]
mod binding_count_tests {
    use super::binding_counts;

    #[test]
    fn a_binding_in_a_loop_counts_as_many() {
        let module = crate::frontend::python::parse_python(
            "def f(dim, heads, n):\n    inner = dim * heads\n    for i in range(n):\n        last = i\n    with open(n) as fh:\n        pass\n    heads = 2\n",
        )
        .module;
        let counts = binding_counts(&module.functions[0]);
        let count = |n: &str| counts.get(n).copied().unwrap_or(0);
        assert_eq!(
            [count("dim"), count("inner"), count("fh"), count("heads")],
            [1, 1, 1, 2]
        );
        assert_eq!([count("i"), count("last")], [2, 2]);
    }
}
