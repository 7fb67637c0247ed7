//! The symbolic algebra against real PyTorch.
//!
//! Each recorded chain (`tests/data/oracle/chains.jsonl`) starts from a tensor whose sizes
//! ≥ 2 are named `s0, s1, …`, and records how every size-valued argument was derived from
//! them (`sym_args`, e.g. `view(["*", "s0", "s1"], 4)`). This test replays each chain with
//! **symbolic** sizes (`Dim`) through the ops API under the default assumptions (a named
//! size is ≥ 2), and wherever the algebra *decides* a step — a layout, a value, or a
//! certain error — checks that answer by instantiating it (`Dim::eval`) at two size
//! assignments:
//!
//! 1. the recorded sizes, against what torch did;
//! 2. a second assignment (each size multiplied by 1, 2 or 3, so divisibility facts the
//!    chain relies on still hold), against the concrete algebra replaying the chain with
//!    the arguments re-derived at those sizes. The concrete algebra itself is checked
//!    against torch by `tests/it/oracle.rs`. An assignment counts only if that concrete
//!    replay takes the same path as torch did (every step succeeds or fails at the same
//!    place); otherwise another one is drawn.
//!
//! A symbolic claim is a claim for *every* size satisfying the assumptions, so any
//! disagreement is a bug. Undecided steps are counted, never held against the algebra.

use crate::oracle_support;

use std::collections::{BTreeMap, HashMap};

use oracle_support::{evaluated_number, load, run_step, start_layout, symbolic_number};
use serde_json::Value;
use stridelint::layout::{Assumptions, Decider, Dim, Layout, Size};
use stridelint::ops::{ArgValue, OpResult};

/// What replaying one step produced.
#[derive(Debug, Clone)]
enum Outcome<S> {
    Tensor(Layout<S>),
    Value(ArgValue<S>),
    /// The call fails (for every size satisfying the assumptions, when symbolic).
    Error(String),
    /// Not decided; the replay stops here.
    Unknown,
}

impl<S> Outcome<S> {
    fn status(&self) -> &'static str {
        match self {
            Outcome::Tensor(_) => "tensor",
            Outcome::Value(_) => "value",
            Outcome::Error(_) => "error",
            Outcome::Unknown => "unknown",
        }
    }
}

/// Replay a chain through the ops API, feeding each step's result to the next, until it
/// ends, fails, or is undecided.
fn replay<S: Size>(
    chain: &Value,
    num: &dyn Fn(&Value) -> Option<S>,
    symbolic: bool,
    dec: &Decider,
) -> Vec<Outcome<S>> {
    let mut input: Layout<S> = start_layout(chain, num, symbolic);
    let mut out = Vec::new();
    for step in chain["steps"].as_array().expect("steps") {
        let outcome = match run_step(step, &input, num, symbolic, dec) {
            Err(_) => Outcome::Unknown,
            Ok((_, transfer)) => match transfer.result {
                OpResult::Tensor(layout) => Outcome::Tensor(layout),
                OpResult::Tensors(layouts) => {
                    let index = step["output_index"].as_u64().expect("output_index") as usize;
                    layouts
                        .get(index)
                        .cloned()
                        .map_or(Outcome::Unknown, Outcome::Tensor)
                }
                OpResult::Size(value) => Outcome::Value(value),
                OpResult::Error(error) => Outcome::Error(error.message),
                OpResult::Unknown | OpResult::UnknownTensor => Outcome::Unknown,
            },
        };
        let next = match &outcome {
            Outcome::Tensor(layout) => Some(layout.clone()),
            _ => None,
        };
        out.push(outcome);
        match next {
            Some(layout) => input = layout,
            None => break,
        }
    }
    out
}

/// torch's record of a step as an outcome (concrete).
fn torch_outcome(step: &Value) -> Outcome<i64> {
    let result = &step["result"];
    if result["ok"].as_bool() != Some(true) {
        return Outcome::Error(result["message"].as_str().unwrap_or_default().to_string());
    }
    if let Some(value) = result.get("value") {
        return Outcome::Value(json_value(value));
    }
    let ints = |key: &str| -> Vec<i64> {
        result[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|v| v.as_i64().expect("int"))
            .collect()
    };
    Outcome::Tensor(Layout::new(
        ints("shape"),
        ints("strides"),
        result["offset"].as_i64().expect("offset"),
    ))
}

fn json_value(v: &Value) -> ArgValue<i64> {
    match v {
        Value::Bool(b) => ArgValue::Bool(*b),
        Value::Array(items) => ArgValue::IntList(items.iter().map(json_value).collect()),
        other => ArgValue::Int(other.as_i64().expect("an int value")),
    }
}

/// A symbolic answer at concrete sizes.
fn instantiate(outcome: &Outcome<Dim>, env: &HashMap<String, i64>) -> Option<Outcome<i64>> {
    let eval = |d: &Dim| d.eval(&|name| env.get(name).copied());
    let list = |ds: &[Dim]| ds.iter().map(eval).collect::<Option<Vec<i64>>>();
    Some(match outcome {
        Outcome::Tensor(l) => Outcome::Tensor(Layout::new(
            list(&l.shape)?,
            list(&l.strides)?,
            eval(&l.offset)?,
        )),
        Outcome::Value(v) => Outcome::Value(instantiate_value(v, &eval)?),
        Outcome::Error(message) => Outcome::Error(message.clone()),
        Outcome::Unknown => Outcome::Unknown,
    })
}

fn instantiate_value(
    v: &ArgValue<Dim>,
    eval: &dyn Fn(&Dim) -> Option<i64>,
) -> Option<ArgValue<i64>> {
    match v {
        ArgValue::Int(d) => eval(d).map(ArgValue::Int),
        ArgValue::Bool(b) => Some(ArgValue::Bool(*b)),
        ArgValue::IntList(items) => items
            .iter()
            .map(|x| instantiate_value(x, eval))
            .collect::<Option<Vec<_>>>()
            .map(ArgValue::IntList),
        _ => None,
    }
}

/// Does a decided symbolic step, instantiated, agree with a concrete outcome? Errors agree
/// on the fact of failing (symbolic messages print sizes symbolically).
fn agrees(symbolic: &Outcome<i64>, concrete: &Outcome<i64>) -> bool {
    match (symbolic, concrete) {
        (Outcome::Tensor(a), Outcome::Tensor(b)) => a == b,
        (Outcome::Value(a), Outcome::Value(b)) => a == b,
        (Outcome::Error(_), Outcome::Error(_)) => true,
        _ => false,
    }
}

/// splitmix64: a tiny deterministic generator, so the second assignments are reproducible.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The recorded start sizes by name.
fn recorded_sizes(chain: &Value) -> HashMap<String, i64> {
    let start = &chain["start"];
    let (names, values) = (
        start["sym_shape"].as_array().expect("sym_shape"),
        start["shape"].as_array().expect("shape"),
    );
    names
        .iter()
        .zip(values)
        .filter_map(|(n, v)| Some((n.as_str()?.to_string(), v.as_i64()?)))
        .collect()
}

/// Start sizes by name, and the concrete algebra's replay of the chain at those sizes.
struct Assignment {
    sizes: HashMap<String, i64>,
    replay: Vec<Outcome<i64>>,
}

/// A second assignment whose concrete replay takes torch's path, if one is found.
fn second_assignment(
    chain: &Value,
    base: &HashMap<String, i64>,
    torch: &[Outcome<i64>],
) -> Option<Assignment> {
    let mut rng = SplitMix(chain["id"].as_u64().unwrap_or(0) ^ 0x5EED);
    let mut names: Vec<&String> = base.keys().collect();
    names.sort();
    for _ in 0..8 {
        let env: HashMap<String, i64> = names
            .iter()
            .map(|n| ((*n).clone(), base[*n] * (1 + (rng.next() % 3) as i64)))
            .collect();
        if env == *base {
            continue;
        }
        let replayed = replay(
            chain,
            &|v| evaluated_number(v, &env),
            true,
            &Decider::concrete(),
        );
        if same_path(&replayed, torch) {
            return Some(Assignment {
                sizes: env,
                replay: replayed,
            });
        }
    }
    None
}

/// Does a concrete replay take torch's path: every step succeeds (with a tensor or a value)
/// or fails where torch's did? A replay may end early on a step whose layout the algebra
/// does not model (SDPA, einsum); nothing after it is compared.
fn same_path(replayed: &[Outcome<i64>], torch: &[Outcome<i64>]) -> bool {
    let ended_on_unknown = matches!(replayed.last(), Some(Outcome::Unknown));
    let comparable = if ended_on_unknown {
        replayed.len() - 1
    } else {
        replayed.len()
    };
    (ended_on_unknown || replayed.len() == torch.len())
        && replayed.len() <= torch.len()
        && replayed[..comparable]
            .iter()
            .zip(torch)
            .all(|(a, b)| a.status() == b.status())
}

#[derive(Default)]
struct Report {
    chains: usize,
    chains_with_symbols: usize,
    fully_decided: usize,
    partly_decided: usize,
    undecided: usize,
    steps_decided: usize,
    steps_unknown: usize,
    checked_at_recorded: usize,
    checked_at_second: usize,
    no_second_assignment: usize,
    decided_per_op: BTreeMap<String, (usize, usize)>,
    mismatches: Vec<String>,
}

#[test]
fn symbolic_chains_agree_with_torch() {
    let chains = load("chains.jsonl");
    let assumptions = Assumptions::default();
    let mut report = Report::default();
    for chain in &chains {
        report.chains += 1;
        let steps = chain["steps"].as_array().expect("steps");
        let torch: Vec<Outcome<i64>> = steps.iter().map(torch_outcome).collect();
        let base = recorded_sizes(chain);
        report.chains_with_symbols += usize::from(!base.is_empty());

        let dec = Decider::new(&assumptions);
        let symbolic = replay(chain, &symbolic_number, true, &dec);
        let decided: Vec<&Outcome<Dim>> = symbolic
            .iter()
            .take_while(|o| !matches!(o, Outcome::Unknown))
            .collect();
        for (k, step) in steps.iter().enumerate() {
            let entry = report
                .decided_per_op
                .entry(step["op"].as_str().unwrap_or("?").to_string())
                .or_default();
            if k < decided.len() {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
        report.steps_decided += decided.len();
        report.steps_unknown += steps.len() - decided.len();
        match decided.len() {
            0 => report.undecided += 1,
            n if n == steps.len() => report.fully_decided += 1,
            _ => report.partly_decided += 1,
        }
        if decided.is_empty() {
            continue;
        }

        let mut check = |env: &HashMap<String, i64>,
                         concrete: &[Outcome<i64>],
                         label: &str,
                         count: &mut usize| {
            for (k, claim) in decided.iter().enumerate() {
                *count += 1;
                let got = instantiate(claim, env);
                let ok = match (&got, concrete.get(k)) {
                    (Some(got), Some(want)) => agrees(got, want),
                    _ => false,
                };
                if !ok {
                    report.mismatches.push(format!(
                        "chain #{} step {k} {} at {label} {env:?}: symbolic {claim:?} → {got:?}, concrete {:?}",
                        chain["id"],
                        steps[k]["op"],
                        concrete.get(k)
                    ));
                    break;
                }
            }
        };
        let mut at_recorded = 0;
        check(
            &base,
            &torch,
            "the recorded sizes (torch)",
            &mut at_recorded,
        );
        report.checked_at_recorded += at_recorded;
        match second_assignment(chain, &base, &torch) {
            Some(second) => {
                let mut at_second = 0;
                check(
                    &second.sizes,
                    &second.replay,
                    "a second assignment (concrete algebra)",
                    &mut at_second,
                );
                report.checked_at_second += at_second;
            }
            None => report.no_second_assignment += 1,
        }
    }

    println!(
        "\nchains.jsonl replayed with symbolic start sizes ({} chains, {} with named sizes)",
        report.chains, report.chains_with_symbols
    );
    println!(
        "chains: {} fully decided, {} decided up to some step, {} undecided at the first step",
        report.fully_decided, report.partly_decided, report.undecided
    );
    println!(
        "steps: {} decided symbolically, {} unknown (not replayed)",
        report.steps_decided, report.steps_unknown
    );
    println!(
        "checks: {} at the recorded sizes against torch, {} at a second assignment against the concrete algebra ({} chains found no valid second assignment)",
        report.checked_at_recorded, report.checked_at_second, report.no_second_assignment
    );
    println!("{:<52} {:>8} {:>8}", "op", "decided", "unknown");
    for (op, (decided, unknown)) in &report.decided_per_op {
        println!("{op:<52} {decided:>8} {unknown:>8}");
    }
    assert!(report.steps_decided > 0, "no step was decided symbolically");
    if let Some(path) = std::env::var_os("ORACLE_MISMATCHES_TO") {
        // Every disagreement, one per line, for investigating more than the first 20.
        std::fs::write(&path, report.mismatches.join("\n")).expect("write the mismatch list");
    }
    if !report.mismatches.is_empty() {
        let shown: Vec<&str> = report
            .mismatches
            .iter()
            .take(20)
            .map(String::as_str)
            .collect();
        panic!(
            "{} symbolic answers disagree; the first {}:\n{}",
            report.mismatches.len(),
            shown.len(),
            shown.join("\n")
        );
    }
}
