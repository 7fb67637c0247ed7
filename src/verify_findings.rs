//! `--verify` for findings: turn the symbolic layout an SL001/SL002 finding is about into
//! numbers, re-check the static verdict with the concrete algorithm, and measure the copy.
//!
//! This is the bridge between diagnostics and the verify engine: it knows rule codes, op
//! kinds and source languages, so that `verify/` itself only ever sees numbers (concrete
//! layouts, dtypes, engines).
//!
//! A finding's [`Subject`] holds the tensor's layout just before the offending op, with
//! sizes named as in the code (`B`, `n_embd/n_head`, `x.shape[2]`). Verification runs in
//! three steps, each of which can stop it with a reason the user can act on:
//!
//! 1. **Concretize** ([`concretize`]): evaluate every size with the bound names
//!    (`--dim B=16`, `[tool.stridelint.dims]`). Unbound names are listed; a quotient that is
//!    not exact for the given values (`n_embd/n_head` with 100 and 12) is reported too.
//! 2. **Re-check** ([`recheck`]): run the concrete layout algebra on the numbers. SL001
//!    claims `view` finds no strides, SL002 claims the op copies. The symbolic and concrete
//!    paths share the algebra but not the reasoning about symbols, so a disagreement at
//!    sizes the finding's assumptions allow is a bug in stridelint and is reported as one.
//! 3. **Measure** ([`FindingVerifier`]): materialise the input layout on the engine — the
//!    copy `reshape`/`flatten` make silently, and the one `.contiguous()` adds to fix a
//!    failing `view` — and scale it by the layers per forward pass.
//!
//! The result is a JSON object stored in `Diagnostic::verify`; every reporter prints it and
//! the full output prints its `summary`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use crate::diagnostic::{Claim, CopySize, Diagnostic, Subject};
use crate::layout::{self, Decider, Dim, Layout, Tri, ViewOutcome};
use crate::ops::{OpKind, OpTable, Semantics};

use crate::verify::budget;
use crate::verify::replay::{format_bytes, format_ms, per_forward, replay, Replay};
use crate::verify::{DType, Engine, MeasureOptions, StridedLayout, VerifyError};

/// What to verify with: the sizes, the element type and how often the op runs.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyRequest {
    /// Values of the names the code uses for sizes (`B`, `n_head`, `x.shape[2]`).
    pub dims: BTreeMap<String, i64>,
    pub dtype: DType,
    /// How many times the op runs per forward pass (one per layer, typically).
    pub layers: u64,
    pub options: MeasureOptions,
    /// The smallest value the analysis assumed for a named size. A disagreement at sizes
    /// below it is the assumption failing, not a bug.
    pub min_symbolic_size: i64,
}

/// `NAME=SIZE` as given to `--dim`. The name is everything before the last `=`, so names
/// such as `x.shape[2]` work; the size must be a positive integer.
pub fn parse_dim_binding(text: &str) -> Result<(String, i64), String> {
    let (name, value) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=SIZE (for example B=16)"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("`{text}` has no name before `=`"));
    }
    if name.contains('=') {
        return Err(format!(
            "`{text}` has more than one `=` (give one NAME=SIZE per --dim)"
        ));
    }
    match value.trim().parse::<i64>() {
        Ok(size) if size >= 1 => Ok((name.to_string(), size)),
        Ok(size) => Err(format!("size {size} for `{name}` must be at least 1")),
        Err(_) => Err(format!(
            "size `{}` for `{name}` is not an integer",
            value.trim()
        )),
    }
}

/// The sizes `--verify` uses: the configuration's `dims`, with `--dim` values on top.
pub fn merge_dims(
    config: Option<&BTreeMap<String, i64>>,
    cli: &[(String, i64)],
) -> BTreeMap<String, i64> {
    let mut dims = config.cloned().unwrap_or_default();
    dims.extend(cli.iter().cloned());
    dims
}

/// A subject with every size a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcreteSubject {
    pub op: String,
    pub layout: Layout<i64>,
    /// The target shape as written (may hold `-1`).
    pub target: Option<Vec<i64>>,
    /// Every name the sizes mention, with the value used.
    pub dims: BTreeMap<String, i64>,
    /// The library rules the op follows (see [`Subject::semantics`]); `None` when the
    /// finding does not say, and then a Rust `reshape` may be candle's or tch-rs's.
    pub semantics: Option<Semantics>,
}

/// The answer of [`concretize`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Concretization {
    Bound(ConcreteSubject),
    /// These names have no value (sorted).
    Unbound(Vec<String>),
    /// Every name has a value, but these sizes are not integers with them (an inexact
    /// quotient, an overflow); the text says which and why.
    NotIntegral(String),
    /// The sizes are integers, but the tensor they describe cannot be computed with in
    /// 64-bit arithmetic (more than 2^63 elements, storage indices beyond 2^63).
    TooLarge(String),
}

/// `dims` plus the values they give through the subject's aliases: `C = 4096` sizes
/// `n_embd` when the analysis made `C` into `n_embd` (an alias of an alias too).
fn with_aliases(subject: &Subject, dims: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let mut dims = dims.clone();
    for _ in 0..subject.aliases.len() {
        let mut changed = false;
        for (name, now) in &subject.aliases {
            let symbols = now.symbols();
            let (Some(&v), [symbol]) = (dims.get(name), symbols.as_slice()) else {
                continue;
            };
            if *now == Dim::sym(symbol) && !dims.contains_key(symbol) {
                dims.insert(symbol.clone(), v);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    dims
}

/// Evaluates the subject's sizes with `dims`.
pub fn concretize(subject: &Subject, dims: &BTreeMap<String, i64>) -> Concretization {
    let dims = &with_aliases(subject, dims);
    let target = subject.target.as_deref().unwrap_or(&[]);
    let sizes: Vec<&Dim> = subject
        .layout
        .shape
        .iter()
        .chain(&subject.layout.strides)
        .chain(std::iter::once(&subject.layout.offset))
        .chain(target)
        .collect();

    let missing = unbound_names(&sizes, dims);
    if !missing.is_empty() {
        return Concretization::Unbound(missing);
    }

    let used = RefCell::new(BTreeMap::new());
    let env = |name: &str| {
        let value = dims.get(name).copied();
        if let Some(v) = value {
            used.borrow_mut().insert(name.to_string(), v);
        }
        value
    };
    let eval = |d: &Dim| d.eval(&env).ok_or_else(|| d.to_string());
    let eval_all = |ds: &[Dim]| ds.iter().map(eval).collect::<Result<Vec<i64>, String>>();
    let evaluated = (|| {
        let shape = eval_all(&subject.layout.shape)?;
        let strides = eval_all(&subject.layout.strides)?;
        let offset = eval(&subject.layout.offset)?;
        let target = subject.target.as_deref().map(eval_all).transpose()?;
        Ok::<_, String>((Layout::new(shape, strides, offset), target))
    })();
    let dims = used.into_inner();
    let values = || {
        let values: Vec<String> = dims.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        values.join(", ")
    };
    if let Ok((layout, target)) = &evaluated {
        if let Err(why) = fits_in_64_bits(layout, target.as_deref()) {
            return Concretization::TooLarge(format!("with {}, {why}", values()));
        }
    }
    match evaluated {
        Ok((layout, target)) => Concretization::Bound(ConcreteSubject {
            op: subject.op.clone(),
            layout,
            target,
            dims,
            semantics: Some(subject.semantics),
        }),
        Err(size) => Concretization::NotIntegral(format!(
            "size {size} is not an integer (or not a 64-bit one) with {}",
            values()
        )),
    }
}

/// Whether every product the concrete algebra forms from `layout` and `target` fits in
/// `i64`: the element counts (zero sizes counted as one, as the algebra multiplies the
/// others) and the storage indices the layout reaches.
fn fits_in_64_bits(layout: &Layout<i64>, target: Option<&[i64]>) -> Result<(), String> {
    let product = |sizes: &[i64]| {
        sizes
            .iter()
            .try_fold(1i64, |n, &s| n.checked_mul(s.unsigned_abs().max(1) as i64))
    };
    if product(&layout.shape).is_none() {
        return Err(format!(
            "the tensor {} has more than 2^63 elements",
            tuple(&layout.shape)
        ));
    }
    if target.is_some_and(|t| product(t).is_none()) {
        return Err(format!(
            "the target shape {} has more than 2^63 elements",
            tuple(target.unwrap_or_default())
        ));
    }
    let strided = StridedLayout::new(layout.shape.clone(), layout.strides.clone(), layout.offset);
    strided.validate().map_err(|e| e.to_string())
}

/// Every name the sizes mention that `dims` does not bind, sorted. Evaluation asks for
/// names one at a time and stops at the first unbound one, so a stand-in value keeps it
/// going; `Dim::symbols` adds the names inside expressions too large to evaluate.
fn unbound_names(sizes: &[&Dim], dims: &BTreeMap<String, i64>) -> Vec<String> {
    // Any non-zero value works as a stand-in; a large prime avoids accidental zero divisors.
    const STAND_IN: i64 = 7919;
    let missing = RefCell::new(std::collections::BTreeSet::new());
    let env = |name: &str| {
        Some(dims.get(name).copied().unwrap_or_else(|| {
            missing.borrow_mut().insert(name.to_string());
            STAND_IN
        }))
    };
    for size in sizes {
        let _ = size.eval(&env);
        for symbol in size.symbols() {
            if !dims.contains_key(&symbol) {
                missing.borrow_mut().insert(symbol);
            }
        }
    }
    missing.into_inner().into_iter().collect()
}

/// What the concrete algorithm says about a finding's claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recheck {
    /// Same verdict. `complete` is false when the finding records too little to run the
    /// whole op, and only a necessary condition was checked (`flatten`: the input is not
    /// contiguous).
    Agrees { concrete: String, complete: bool },
    /// The concrete algorithm contradicts the finding.
    Disagrees { concrete: String },
    /// The finding does not record enough to re-check or replay it.
    NotReplayable(String),
}

/// The claim a rule makes about its subject, in words.
pub fn static_verdict(claim: Claim, op: &str) -> String {
    match claim {
        Claim::NoView => format!("`{op}` fails: no strides express the target shape"),
        _ => format!("`{op}` copies its input"),
    }
}

/// The language of the file a finding is in: it decides whose copy semantics apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceLanguage {
    /// PyTorch (and einops) code.
    Python,
    /// candle or tch-rs code. The subject does not say which, and their `reshape` differ:
    /// candle copies exactly when the input is not contiguous, tch-rs is PyTorch.
    Rust,
}

impl SourceLanguage {
    /// By the file's extension, as the linter chooses its frontend.
    pub fn of(path: &std::path::Path) -> Self {
        if path.extension().is_some_and(|e| e == "rs") {
            SourceLanguage::Rust
        } else {
            SourceLanguage::Python
        }
    }
}

/// Re-checks the claim of finding `code` (that no view exists, or that the op copies) on
/// the concrete subject.
pub fn recheck(code: &str, subject: &ConcreteSubject, language: SourceLanguage) -> Recheck {
    let claim = crate::lints::claim(code);
    let tables = match language {
        SourceLanguage::Python => vec![OpTable::torch()],
        SourceLanguage::Rust => vec![OpTable::candle(), OpTable::tch(), OpTable::torch()],
    };
    let Some(spec) = tables.iter().find_map(|t| t.op(&subject.op)) else {
        return Recheck::NotReplayable(format!("`{}` is not in the op tables", subject.op));
    };
    let dec = Decider::concrete();
    let input = &subject.layout;
    match (claim, spec.kind) {
        (Claim::NoView, OpKind::View) => {
            let Some(target) = &subject.target else {
                return no_target(&subject.op);
            };
            match layout::view(input, target, &dec) {
                ViewOutcome::NotViewable { shape } => Recheck::Agrees {
                    concrete: format!("no strides exist for {}: `{}` raises", tuple(&shape), subject.op),
                    complete: true,
                },
                ViewOutcome::View(result) => Recheck::Disagrees {
                    concrete: format!("`{}` succeeds with strides {}", subject.op, tuple(&result.strides)),
                },
                ViewOutcome::InvalidShape(error) => Recheck::Disagrees {
                    concrete: format!("the target shape is invalid: {}", error.message()),
                },
                ViewOutcome::Unknown => undecided(),
            }
        }
        // candle copies exactly when the input is not contiguous; a finding that does not
        // say whose rules it follows may be candle or tch-rs, whose copies need that too.
        // tch-rs (PyTorch's rules) is replayed as PyTorch below.
        (Claim::HiddenCopy, OpKind::Reshape | OpKind::Flatten | OpKind::Ravel)
            if language == SourceLanguage::Rust && subject.semantics != Some(Semantics::Torch) =>
        {
            let candle = subject.semantics == Some(Semantics::Candle);
            match input.is_contiguous(&dec) {
                Tri::No if candle => Recheck::Agrees {
                    concrete: "the input is not contiguous, and candle's reshape copies exactly then".to_string(),
                    complete: true,
                },
                Tri::No => Recheck::Agrees {
                    concrete: "the input is not contiguous: candle's reshape copies exactly then, and tch-rs (PyTorch) only then".to_string(),
                    complete: false,
                },
                Tri::Yes => Recheck::Disagrees {
                    concrete: format!("the input is contiguous, so `{}` returns a view", subject.op),
                },
                Tri::Unknown => undecided(),
            }
        }
        // `flatten(start, end)` is `reshape` to its output shape, which the finding records
        // as the target (PyTorch passes the multiplied sizes, never `-1`).
        (Claim::HiddenCopy, OpKind::Reshape | OpKind::Flatten) if subject.target.is_some() => {
            let target = subject.target.as_deref().unwrap_or_default();
            match layout::reshape(input, target, &dec) {
                Ok(result) => copy_verdict(&subject.op, result.copies, result.layout.as_ref()),
                Err(error) => Recheck::Disagrees {
                    concrete: format!("`{}` fails: {error}", subject.op),
                },
            }
        }
        (Claim::HiddenCopy, OpKind::Reshape) => no_target(&subject.op),
        // `ravel()` is `contiguous().view(-1)`: it copies whenever the input is not contiguous,
        // even where `reshape(-1)` would be a view.
        (Claim::HiddenCopy, OpKind::Ravel) => {
            let result = layout::ravel(input, &dec);
            copy_verdict(&subject.op, result.copies, result.layout.as_ref())
        }
        (Claim::HiddenCopy, OpKind::Flatten) => match input.is_contiguous(&dec) {
            Tri::No => Recheck::Agrees {
                concrete: "the input is not contiguous, which a copy needs (the finding does not record flatten's output shape, so only this was re-checked)".to_string(),
                complete: false,
            },
            Tri::Yes => Recheck::Disagrees {
                concrete: "the input is contiguous, so `flatten` returns a view".to_string(),
            },
            Tri::Unknown => undecided(),
        },
        // The finding records the step that copies: a reshape of the permuted intermediate.
        (Claim::HiddenCopy, OpKind::EinopsRearrange | OpKind::EinopsReduce | OpKind::EinopsRepeat) => {
            match subject.target.as_deref() {
                Some(target) => match layout::reshape(input, target, &dec) {
                    Ok(result) => copy_verdict(&subject.op, result.copies, result.layout.as_ref()),
                    Err(error) => Recheck::Disagrees {
                        concrete: format!("`{}` fails: {error}", subject.op),
                    },
                },
                None => Recheck::NotReplayable(format!(
                    "`{}` copies an intermediate permuted layout that the finding does not record",
                    subject.op
                )),
            }
        }
        _ => Recheck::NotReplayable(format!(
            "{code} on `{}` (kind `{}`) is not a claim --verify knows how to re-check",
            subject.op, spec.kind
        )),
    }
}

fn copy_verdict(op: &str, copies: Tri, result: Option<&Layout<i64>>) -> Recheck {
    match copies {
        Tri::Yes => Recheck::Agrees {
            concrete: format!("no strides express the result: `{op}` copies"),
            complete: true,
        },
        Tri::No => Recheck::Disagrees {
            concrete: match result {
                Some(view) => format!(
                    "`{op}` returns a view with strides {}",
                    tuple(&view.strides)
                ),
                None => format!("`{op}` returns a view"),
            },
        },
        Tri::Unknown => undecided(),
    }
}

fn no_target(op: &str) -> Recheck {
    Recheck::NotReplayable(format!(
        "the finding does not record the target shape of `{op}`"
    ))
}

/// Concrete sizes always decide; reaching this is itself worth reporting.
fn undecided() -> Recheck {
    Recheck::Disagrees {
        concrete: "the concrete algorithm could not decide (it always should)".to_string(),
    }
}

/// Named sizes below the analysis's minimum, as `B = 1`: the finding does not claim to hold
/// for them. Literal sizes are not assumptions, so only sizes that mention a name count.
fn sizes_below_minimum(subject: &Subject, concrete: &ConcreteSubject, min: i64) -> Vec<String> {
    let mut below: Vec<String> = concrete
        .dims
        .iter()
        .filter(|(_, &v)| v < min)
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    for (symbolic, &value) in subject.layout.shape.iter().zip(&concrete.layout.shape) {
        let text = symbolic.to_string();
        if !symbolic.is_lit() && value < min && !concrete.dims.contains_key(&text) {
            below.push(format!("{text} = {value}"));
        }
    }
    below
}

/// Runs `--verify` for findings on one engine, measuring each distinct layout once.
pub struct FindingVerifier<'e> {
    engine: &'e dyn Engine,
    measured: HashMap<(StridedLayout, DType), Result<Replay, VerifyError>>,
    disagreements: usize,
    refusals: usize,
}

impl<'e> FindingVerifier<'e> {
    pub fn new(engine: &'e dyn Engine) -> Self {
        FindingVerifier {
            engine,
            measured: HashMap::new(),
            disagreements: 0,
            refusals: 0,
        }
    }

    /// How many findings were not measured because their sizes exceed the memory limit or
    /// 64-bit arithmetic (their `verify` object has `"refused": true`).
    pub fn refusals(&self) -> usize {
        self.refusals
    }

    fn refused(&mut self, why: String) -> Value {
        self.refusals += 1;
        let mut value = skipped(why);
        value["refused"] = json!(true);
        value
    }

    /// How many findings the concrete algorithm contradicted at sizes their assumptions
    /// allow (each one is a stridelint bug).
    pub fn disagreements(&self) -> usize {
        self.disagreements
    }

    /// Fills `diagnostic.verify` when it is an SL001/SL002 finding with a subject.
    pub fn verify_diagnostic(&mut self, diagnostic: &mut Diagnostic, request: &VerifyRequest) {
        if let Some(value) = self.verify(diagnostic, request) {
            diagnostic.verify = Some(value);
        }
    }

    /// The `verify` object of one finding; `None` for rules `--verify` does not replay.
    pub fn verify(&mut self, diagnostic: &Diagnostic, request: &VerifyRequest) -> Option<Value> {
        let claim = crate::lints::claim(diagnostic.code);
        if !claim.verifiable() {
            return None;
        }
        let Some(subject) = &diagnostic.subject else {
            return Some(skipped(
                "the finding does not record its layout".to_string(),
            ));
        };
        let concrete = match concretize(subject, &request.dims) {
            Concretization::Bound(concrete) => concrete,
            Concretization::Unbound(names) => {
                let mut value = skipped(format!("unbound sizes: {}", names.join(", ")));
                value["summary"] = json!(format!(
                    "not verified: unbound sizes: {} (bind them with --dim NAME=SIZE or [tool.stridelint.dims])",
                    names.join(", ")
                ));
                value["unbound"] = json!(names);
                return Some(value);
            }
            Concretization::NotIntegral(why) => return Some(skipped(why)),
            Concretization::TooLarge(why) => return Some(self.refused(why)),
        };
        let verdict = static_verdict(claim, &subject.op);
        let mut value = json!({
            "dtype": request.dtype.name(),
            "dims": concrete.dims,
            "layout": layout_json(&concrete.layout),
            "target": concrete.target,
        });
        let (rechecked, overflowed) = crate::layout::size::detect_overflow(|| {
            recheck(
                diagnostic.code,
                &concrete,
                SourceLanguage::of(&diagnostic.file.path),
            )
        });
        if overflowed {
            let mut refusal = self.refused(format!(
                "the concrete algorithm overflows 64-bit arithmetic on {} with {}",
                tuple(&concrete.layout.shape),
                format_dims(&concrete.dims)
            ));
            merge(&mut refusal, value);
            return Some(refusal);
        }
        match rechecked {
            Recheck::NotReplayable(why) => {
                let mut skip = skipped(why);
                merge(&mut skip, value);
                Some(skip)
            }
            Recheck::Disagrees { concrete: found } => {
                value["recheck"] = json!({ "static": verdict, "concrete": found, "agrees": false });
                let below = sizes_below_minimum(subject, &concrete, request.min_symbolic_size);
                if below.is_empty() {
                    self.disagreements += 1;
                    let why =
                        format!("the static analysis says {verdict}, but at these sizes {found}");
                    value["disagreement"] = json!(why);
                    value["summary"] =
                        json!(format!("BUG: {why} — please report it with this finding"));
                } else {
                    let why = format!(
                        "the finding assumes named sizes ≥ {}, but {}; at these sizes {found}",
                        request.min_symbolic_size,
                        below.join(", ")
                    );
                    value["skipped"] = json!(why);
                    value["summary"] = json!(format!("not verified: {why}"));
                }
                Some(value)
            }
            Recheck::Agrees {
                concrete: found,
                complete,
            } => {
                value["recheck"] = json!({
                    "static": verdict, "concrete": found, "agrees": true, "complete": complete,
                });
                let strided = StridedLayout::new(
                    concrete.layout.shape.clone(),
                    concrete.layout.strides.clone(),
                    concrete.layout.offset,
                );
                // Refuse before measuring what cannot be measured or totalled: buffers above
                // the memory limit, a per-forward total beyond 64 bits.
                let admitted = budget::precheck(&strided, request.dtype, &request.options)
                    .and_then(|()| budget::buffer_bytes(&strided, request.dtype))
                    .and_then(|(_, copy)| budget::per_forward_bytes(copy, request.layers));
                if let Err(error) = admitted {
                    let mut refusal = self.refused(error.to_string());
                    merge(&mut refusal, value);
                    return Some(refusal);
                }
                match self.measure(&strided, request) {
                    Ok(replayed) => {
                        merge(&mut value, measurement_json(&replayed, request.layers));
                        value["summary"] = json!(summary(
                            claim,
                            &subject.op,
                            &replayed,
                            request.layers,
                            complete
                        ));
                    }
                    Err(error) => {
                        if matches!(error, VerifyError::TooLarge(_)) {
                            self.refusals += 1;
                            value["refused"] = json!(true);
                        }
                        value["error"] = json!(error.to_string());
                        value["summary"] = json!(format!("verification failed: {error}"));
                    }
                }
                Some(value)
            }
        }
    }

    fn measure(
        &mut self,
        layout: &StridedLayout,
        request: &VerifyRequest,
    ) -> Result<Replay, VerifyError> {
        let engine = self.engine;
        self.measured
            .entry((layout.clone(), request.dtype))
            .or_insert_with(|| replay(engine, layout, request.dtype, &request.options))
            .clone()
    }
}

/// Verifies every finding of `diagnostics` with one request; returns the number of
/// disagreements (stridelint bugs).
pub fn verify_findings(
    diagnostics: &mut [Diagnostic],
    engine: &dyn Engine,
    request: &VerifyRequest,
) -> usize {
    let mut verifier = FindingVerifier::new(engine);
    for diagnostic in diagnostics.iter_mut() {
        verifier.verify_diagnostic(diagnostic, request);
    }
    verifier.disagreements()
}

/// The fields every measured finding reports (see `README.md`, "Measuring copies").
pub fn measurement_json(replayed: &Replay, layers: u64) -> Value {
    let m = &replayed.measurement;
    let forward = per_forward(m, layers);
    json!({
        "engine": replayed.engine,
        "device": replayed.device,
        "dtype": replayed.dtype.name(),
        "bytes_copied": m.bytes_copied,
        "extra_bytes": m.extra_bytes,
        "median_ms": m.median_ms,
        "p10_ms": m.p10_ms,
        "p90_ms": m.p90_ms,
        "runs": m.runs,
        "gbps": m.gbps,
        "copy_ceiling_gbps": replayed.ceiling_gbps,
        "kernel": m.kernel,
        "checked": m.checked,
        "layers": layers,
        "per_forward": {
            "bytes_copied": forward.bytes,
            "extra_bytes": forward.extra_bytes,
            "ms": forward.ms,
        },
    })
}

/// How one file's hidden copies are sized: the sizes and dtype, whether the dtype was given
/// (else the note says which it assumed), and the smallest copy worth reporting.
#[derive(Debug, Clone)]
pub struct CopySizing {
    pub request: VerifyRequest,
    pub dtype_given: bool,
    /// `hidden-copy-min-bytes`: a copy of known size below this is not reported.
    pub min_bytes: u64,
}

/// Each hidden copy (SL002) whose sizes are all known states its size ([`Diagnostic::copy`],
/// and a note when `note`: `--verify` states the measured size instead); the ones smaller
/// than their file's `min_bytes` are removed. Hand-written attention (SL008) states the size
/// of its score matrix the same way, whatever its size. Returns how many were removed. `sizing_for`
/// gives a file's sizing (asked once per file).
pub fn state_copy_sizes(
    diagnostics: &mut Vec<Diagnostic>,
    note: bool,
    sizing_for: &dyn Fn(&Diagnostic) -> CopySizing,
) -> usize {
    let mut sizings: HashMap<std::path::PathBuf, CopySizing> = HashMap::new();
    let before = diagnostics.len();
    diagnostics.retain_mut(|diagnostic| {
        // What the size is of: the copy, or the score matrix hand-written attention stores.
        let (noun, threshold) = match crate::lints::claim(diagnostic.code) {
            Claim::HiddenCopy => ("the copy", true),
            Claim::StoredMemory => ("the score matrix", false),
            _ => return true,
        };
        let Some(subject) = diagnostic.subject.as_ref() else {
            return true;
        };
        let path = &diagnostic.file.path;
        if !sizings.contains_key(path) {
            sizings.insert(path.clone(), sizing_for(diagnostic));
        }
        let sizing = &sizings[path];
        let Some((text, size)) = size_note(noun, subject, &sizing.request, sizing.dtype_given)
        else {
            return true;
        };
        if threshold && size.bytes < sizing.min_bytes {
            return false;
        }
        if note {
            diagnostic.notes.push(text);
        }
        diagnostic.copy = Some(size);
        true
    });
    before - diagnostics.len()
}

/// What a tensor (`noun`: the copy, the score matrix) costs at sizes that are all known
/// (literals, `dims`, `--dim`), without measuring it: `the copy at B = 16, T = 4096: 33554432 elements, 64.0 MiB in bf16; ×32
/// layers: 2.0 GiB per forward pass`. `None` while a size has no value.
pub fn size_note(
    noun: &str,
    subject: &Subject,
    request: &VerifyRequest,
    dtype_given: bool,
) -> Option<(String, CopySize)> {
    let Concretization::Bound(concrete) = concretize(subject, &request.dims) else {
        return None;
    };
    let elements = concrete
        .layout
        .shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))?;
    let bytes = elements.checked_mul(request.dtype.size_bytes() as u64)?;
    let at = if concrete.dims.is_empty() {
        String::new()
    } else {
        format!(" at {}", format_dims(&concrete.dims))
    };
    let dtype = if dtype_given {
        request.dtype.name().to_string()
    } else {
        format!("{} (set `dtype` for another)", request.dtype.name())
    };
    let mut note = format!(
        "{noun}{at}: {elements} elements, {} in {dtype}",
        format_bytes(bytes)
    );
    let per_forward_pass = bytes.checked_mul(request.layers);
    if let (true, Some(forward)) = (request.layers > 1, per_forward_pass) {
        note.push_str(&format!(
            "; ×{} layers: {} per forward pass",
            request.layers,
            format_bytes(forward)
        ));
    }
    let size = CopySize {
        at: concrete.dims.clone(),
        elements,
        bytes,
        dtype: request.dtype.name().to_string(),
        layers: request.layers,
        bytes_per_forward_pass: per_forward_pass,
    };
    Some((note, size))
}

/// `verified on <device>: copies 512.0 MiB in 1.84 ms (…); ×32 layers = 58.9 ms and
/// 16.0 GiB per forward pass`.
fn summary(claim: Claim, op: &str, replayed: &Replay, layers: u64, complete: bool) -> String {
    let what = if claim == Claim::NoView {
        format!(
            "`{op}` fails at these sizes; `.contiguous()` before it {}",
            replayed.summary
        )
    } else {
        replayed.summary.clone()
    };
    let mut line = format!("verified on {}: {what}", replayed.device);
    if layers > 1 && replayed.measurement.extra_bytes > 0 {
        let forward = per_forward(&replayed.measurement, layers);
        line.push_str(&format!(
            "; ×{layers} layers = {} and {} per forward pass",
            format_ms(forward.ms),
            format_bytes(forward.bytes)
        ));
    }
    if !complete {
        line.push_str(" (verdict re-checked only in part: see recheck.concrete)");
    }
    line
}

fn skipped(why: String) -> Value {
    json!({ "summary": format!("not verified: {why}"), "skipped": why })
}

fn layout_json(layout: &Layout<i64>) -> Value {
    json!({ "shape": layout.shape, "strides": layout.strides, "offset": layout.offset })
}

/// Adds `extra`'s fields to `into` (both objects); existing fields win.
fn merge(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (key, value) in extra {
            into.entry(key).or_insert(value);
        }
    }
}

fn format_dims(dims: &BTreeMap<String, i64>) -> String {
    let values: Vec<String> = dims.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    values.join(", ")
}

fn tuple(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("({})", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::CpuEngine;

    fn dims(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    fn sym(name: &str) -> Dim {
        Dim::sym(name)
    }

    /// `y.transpose(1, 2)` of a contiguous (B, H, T, D): what SL001/SL002 report in
    /// `examples/attention.py`.
    fn merged_heads_subject(op: &str, target: Option<Vec<Dim>>) -> Subject {
        let (b, h, t, d) = (sym("B"), sym("H"), sym("T"), sym("D"));
        let contiguous = Layout::contiguous(vec![b, h, t, d]);
        let transposed = layout::transpose(&contiguous, 1, 2).unwrap();
        Subject {
            op: op.to_string(),
            layout: transposed,
            target,
            semantics: Semantics::Torch,
            aliases: Vec::new(),
        }
    }

    fn merge_target() -> Vec<Dim> {
        vec![sym("B"), sym("T"), sym("H").mul(&sym("D"))]
    }

    #[test]
    fn dim_bindings_parse_names_with_brackets_and_reject_bad_sizes() {
        assert_eq!(parse_dim_binding("B=16"), Ok(("B".to_string(), 16)));
        assert_eq!(
            parse_dim_binding(" x.shape[2] = 64"),
            Ok(("x.shape[2]".to_string(), 64))
        );
        assert!(parse_dim_binding("B").is_err());
        assert!(parse_dim_binding("=3").is_err());
        assert!(parse_dim_binding("B=0").unwrap_err().contains("at least 1"));
        assert!(parse_dim_binding("B=x")
            .unwrap_err()
            .contains("not an integer"));
    }

    #[test]
    fn command_line_dims_override_the_configuration() {
        let config = dims(&[("B", 8), ("T", 512)]);
        let merged = merge_dims(
            Some(&config),
            &[("T".to_string(), 4096), ("H".to_string(), 32)],
        );
        assert_eq!(merged, dims(&[("B", 8), ("H", 32), ("T", 4096)]));
        assert_eq!(merge_dims(None, &[]), BTreeMap::new());
    }

    #[test]
    fn concretize_lists_every_unbound_name() {
        let subject = merged_heads_subject("view", Some(merge_target()));
        assert_eq!(
            concretize(&subject, &dims(&[("B", 2), ("D", 4)])),
            Concretization::Unbound(vec!["H".to_string(), "T".to_string()])
        );
    }

    #[test]
    fn concretize_evaluates_sizes_strides_and_target() {
        let subject = merged_heads_subject("view", Some(merge_target()));
        let Concretization::Bound(c) = concretize(
            &subject,
            &dims(&[("B", 2), ("H", 3), ("T", 5), ("D", 4), ("unused", 9)]),
        ) else {
            panic!("all names are bound")
        };
        // torch.empty(2, 3, 5, 4).transpose(1, 2).stride() == (60, 4, 20, 1)
        assert_eq!(
            c.layout,
            Layout::new(vec![2, 5, 3, 4], vec![60, 4, 20, 1], 0)
        );
        assert_eq!(c.target, Some(vec![2, 5, 12]));
        assert_eq!(c.dims, dims(&[("B", 2), ("D", 4), ("H", 3), ("T", 5)]));
    }

    #[test]
    fn concretize_reports_inexact_quotients() {
        // (B, C/h) with C = 100, h = 12: the finding assumed h divides C.
        let c = sym("C");
        let quotient = c.floordiv(&sym("h"));
        let subject = Subject {
            op: "view".into(),
            layout: Layout::contiguous(vec![sym("B"), quotient]),
            target: None,
            semantics: Semantics::Torch,
            aliases: Vec::new(),
        };
        match concretize(&subject, &dims(&[("B", 2), ("C", 100), ("h", 12)])) {
            Concretization::NotIntegral(why) => {
                assert!(why.contains("C = 100") && why.contains("h = 12"), "{why}")
            }
            other => panic!("expected NotIntegral, got {other:?}"),
        }
    }

    #[test]
    fn opaque_size_names_are_bound_by_their_text() {
        let subject = Subject {
            op: "view".into(),
            layout: Layout::contiguous(vec![Dim::opaque("x.shape[2]"), Dim::lit(3)]),
            target: None,
            semantics: Semantics::Torch,
            aliases: Vec::new(),
        };
        assert_eq!(
            concretize(&subject, &BTreeMap::new()),
            Concretization::Unbound(vec!["x.shape[2]".to_string()])
        );
        let Concretization::Bound(c) = concretize(&subject, &dims(&[("x.shape[2]", 7)])) else {
            panic!("bound by text")
        };
        assert_eq!(c.layout.shape, vec![7, 3]);
    }

    const PY: SourceLanguage = SourceLanguage::Python;

    fn concrete(op: &str, layout: Layout<i64>, target: Option<Vec<i64>>) -> ConcreteSubject {
        ConcreteSubject {
            op: op.into(),
            layout,
            target,
            dims: BTreeMap::new(),
            semantics: None,
        }
    }

    #[test]
    fn recheck_agrees_when_torch_would_fail_or_copy() {
        // torch.empty(2, 3, 5, 4).transpose(1, 2).view(2, 5, 12) raises E_VIEW;
        // .reshape(2, 5, 12) returns a tensor whose data_ptr differs (a copy).
        let transposed = Layout::new(vec![2, 5, 3, 4], vec![60, 4, 20, 1], 0);
        for (code, op) in [("SL001", "view"), ("SL002", "reshape")] {
            let r = recheck(
                code,
                &concrete(op, transposed.clone(), Some(vec![2, 5, -1])),
                PY,
            );
            assert!(
                matches!(r, Recheck::Agrees { complete: true, .. }),
                "{op}: {r:?}"
            );
        }
        let r = recheck("SL002", &concrete("ravel", transposed.clone(), None), PY);
        assert!(matches!(r, Recheck::Agrees { complete: true, .. }), "{r:?}");
        let r = recheck("SL002", &concrete("flatten", transposed.clone(), None), PY);
        assert!(
            matches!(
                r,
                Recheck::Agrees {
                    complete: false,
                    ..
                }
            ),
            "{r:?}"
        );
        // .flatten(2) of the transpose: output shape (2, 5, 12), a copy in torch.
        let r = recheck(
            "SL002",
            &concrete("flatten", transposed, Some(vec![2, 5, 12])),
            PY,
        );
        assert!(matches!(r, Recheck::Agrees { complete: true, .. }), "{r:?}");
    }

    #[test]
    fn recheck_disagrees_when_the_view_exists() {
        // A finding claiming that a contiguous (2, 5, 3, 4) cannot view as (2, 5, 12) is
        // wrong: torch returns strides (60, 12, 1).
        let contiguous = Layout::contiguous(vec![2i64, 5, 3, 4]);
        match recheck(
            "SL001",
            &concrete("view", contiguous.clone(), Some(vec![2, 5, 12])),
            PY,
        ) {
            Recheck::Disagrees { concrete } => {
                assert!(concrete.contains("(60, 12, 1)"), "{concrete}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            recheck(
                "SL002",
                &concrete("reshape", contiguous.clone(), Some(vec![2, 5, 12])),
                PY
            ),
            Recheck::Disagrees { .. }
        ));
        assert!(matches!(
            recheck("SL002", &concrete("flatten", contiguous, None), PY),
            Recheck::Disagrees { .. }
        ));
    }

    #[test]
    fn rust_reshapes_are_rechecked_by_contiguity() {
        // The slice x[:, :4] of a (3, 6) tensor, strides (6, 1), is not contiguous.
        // reshape((3, 2, 2)) only splits its last dimension: a view in torch (strides
        // (6, 2, 1)), a copy in candle (`Tensor::reshape` copies whenever the input is not
        // contiguous, stride-semantics §10).
        let sliced = Layout::new(vec![3i64, 4], vec![6, 1], 0);
        let split = concrete("reshape", sliced.clone(), Some(vec![3, 2, 2]));
        assert!(matches!(
            recheck("SL002", &split, SourceLanguage::Rust),
            Recheck::Agrees {
                complete: false,
                ..
            }
        ));
        assert!(matches!(
            recheck("SL002", &split, PY),
            Recheck::Disagrees { .. }
        ));
        let contiguous = concrete("reshape", Layout::contiguous(vec![3i64, 4]), Some(vec![12]));
        assert!(matches!(
            recheck("SL002", &contiguous, SourceLanguage::Rust),
            Recheck::Disagrees { .. }
        ));
        // With the table recorded the answer is complete: candle copies, tch-rs (PyTorch's
        // rule) returns a view.
        let candle = ConcreteSubject {
            semantics: Some(Semantics::Candle),
            ..split.clone()
        };
        assert!(matches!(
            recheck("SL002", &candle, SourceLanguage::Rust),
            Recheck::Agrees { complete: true, .. }
        ));
        let tch = ConcreteSubject {
            semantics: Some(Semantics::Torch),
            ..split.clone()
        };
        assert!(matches!(
            recheck("SL002", &tch, SourceLanguage::Rust),
            Recheck::Disagrees { .. }
        ));
        assert_eq!(
            SourceLanguage::of(std::path::Path::new("m.rs")),
            SourceLanguage::Rust
        );
        assert_eq!(SourceLanguage::of(std::path::Path::new("m.py")), PY);
    }

    /// An einops finding records the permuted intermediate its final reshape copies:
    /// `b h n d -> b n (h d)` on a contiguous (2, 3, 5, 4) copies the (2, 5, 3, 4) permutation.
    #[test]
    fn einops_findings_replay_the_reshape_that_copies() {
        let permuted = Layout::new(vec![2, 5, 3, 4], vec![60, 4, 20, 1], 0);
        let subject = concrete("einops.rearrange", permuted.clone(), Some(vec![2, 5, 12]));
        assert!(
            matches!(recheck("SL002", &subject, PY), Recheck::Agrees { .. }),
            "{:?}",
            recheck("SL002", &subject, PY)
        );
        let contiguous = Layout::new(vec![2, 5, 3, 4], vec![60, 12, 4, 1], 0);
        let subject = concrete("einops.rearrange", contiguous, Some(vec![2, 5, 12]));
        assert!(matches!(
            recheck("SL002", &subject, PY),
            Recheck::Disagrees { .. }
        ));
    }

    #[test]
    fn recheck_refuses_what_the_finding_does_not_record() {
        let transposed = Layout::new(vec![2, 5, 3, 4], vec![60, 4, 20, 1], 0);
        assert!(matches!(
            recheck("SL001", &concrete("view", transposed.clone(), None), PY),
            Recheck::NotReplayable(_)
        ));
        assert!(matches!(
            recheck(
                "SL002",
                &concrete("einops.rearrange", transposed.clone(), None),
                PY
            ),
            Recheck::NotReplayable(_)
        ));
        assert!(matches!(
            recheck("SL002", &concrete("no_such_op", transposed, None), PY),
            Recheck::NotReplayable(_)
        ));
    }

    fn diagnostic(code: &'static str, subject: Subject) -> Diagnostic {
        let file = std::sync::Arc::new(crate::source::SourceFile::new(
            std::path::Path::new("model.py"),
            "y = x\n".to_string(),
        ));
        Diagnostic {
            code,
            severity: crate::diagnostic::Severity::Error,
            message: String::new(),
            file,
            span: crate::ir::Span::new(0, 1),
            chain: Vec::new(),
            notes: Vec::new(),
            help: None,
            fix: None,
            unsafe_fix: None,
            verify: None,
            copy: None,
            subject: Some(subject),
        }
    }

    fn request(pairs: &[(&str, i64)], layers: u64) -> VerifyRequest {
        VerifyRequest {
            dims: dims(pairs),
            dtype: DType::BF16,
            layers,
            options: MeasureOptions::quick(),
            min_symbolic_size: 2,
        }
    }

    #[test]
    fn a_verified_finding_reports_the_measured_copy() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let mut verifier = FindingVerifier::new(&engine);
        let finding = diagnostic(
            "SL002",
            merged_heads_subject("reshape", Some(merge_target())),
        );
        let v = verifier
            .verify(
                &finding,
                &request(&[("B", 2), ("H", 4), ("T", 64), ("D", 32)], 3),
            )
            .unwrap();
        // 2·4·64·32 bf16 elements = 32 KiB, copied into a new buffer of the same size.
        assert_eq!(v["bytes_copied"], 32768);
        assert_eq!(v["extra_bytes"], 32768);
        assert_eq!(v["engine"], "cpu");
        assert_eq!(v["dtype"], "bf16");
        assert_eq!(v["dims"]["H"], 4);
        assert_eq!(v["recheck"]["agrees"], true);
        assert_eq!(v["per_forward"]["bytes_copied"], 3 * 32768);
        assert!(v["median_ms"].as_f64().unwrap() > 0.0);
        assert!(v["copy_ceiling_gbps"].as_f64().unwrap() > 0.0);
        let summary = v["summary"].as_str().unwrap();
        assert!(summary.starts_with("verified on "), "{summary}");
        assert!(summary.contains("copies 32.0 KiB in "), "{summary}");
        assert!(
            summary.contains("×3 layers = ") && summary.ends_with("and 96.0 KiB per forward pass"),
            "{summary}"
        );
        assert_eq!(verifier.disagreements(), 0);
    }

    #[test]
    fn unbound_sizes_are_named_in_the_skip() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let mut verifier = FindingVerifier::new(&engine);
        let finding = diagnostic("SL001", merged_heads_subject("view", Some(merge_target())));
        let v = verifier
            .verify(&finding, &request(&[("H", 4), ("D", 32)], 1))
            .unwrap();
        assert_eq!(v["skipped"], "unbound sizes: B, T");
        assert!(v["summary"]
            .as_str()
            .unwrap()
            .starts_with("not verified: unbound sizes: B, T"));
    }

    #[test]
    fn a_disagreement_is_reported_as_a_bug_unless_an_assumption_failed() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let mut verifier = FindingVerifier::new(&engine);
        // A (wrong) SL001 finding on a contiguous tensor: the concrete view succeeds.
        let (b, t, h, d) = (sym("B"), sym("T"), sym("H"), sym("D"));
        let wrong = Subject {
            op: "view".into(),
            layout: Layout::contiguous(vec![b, t, h, d]),
            target: Some(merge_target()),
            semantics: Semantics::Torch,
            aliases: Vec::new(),
        };
        let v = verifier
            .verify(
                &diagnostic("SL001", wrong),
                &request(&[("B", 2), ("H", 4), ("T", 8), ("D", 2)], 1),
            )
            .unwrap();
        assert_eq!(v["recheck"]["agrees"], false);
        assert!(v["summary"].as_str().unwrap().starts_with("BUG: "), "{v}");
        assert!(
            v.get("bytes_copied").is_none(),
            "nothing is measured on a disagreement"
        );
        assert_eq!(verifier.disagreements(), 1);

        // The real finding with H = 1: a size-1 dimension never blocks a view, and the
        // finding only claimed sizes ≥ 2.
        let finding = diagnostic("SL001", merged_heads_subject("view", Some(merge_target())));
        let v = verifier
            .verify(
                &finding,
                &request(&[("B", 2), ("H", 1), ("T", 8), ("D", 2)], 1),
            )
            .unwrap();
        assert_eq!(v["recheck"]["agrees"], false);
        assert!(v["skipped"].as_str().unwrap().contains("H = 1"), "{v}");
        assert_eq!(verifier.disagreements(), 1);
    }

    #[test]
    fn other_rules_are_left_alone() {
        let engine = CpuEngine::new(Some(1)).unwrap();
        let mut verifier = FindingVerifier::new(&engine);
        let finding = diagnostic("SL003", merged_heads_subject("view", None));
        assert_eq!(verifier.verify(&finding, &request(&[], 1)), None);
    }
}
