//! Replaying an op chain on concrete sizes: each step goes through the op table
//! (`ops::bind` + `ops::apply`, the same transfer functions the analysis uses, here on
//! `i64` sizes), and every step that copies has its copy measured on the engine.

use std::collections::HashMap;

use stridelint::layout::size::detect_overflow;
use stridelint::layout::{Decider, Layout, Tri};
use stridelint::ops::{self, ArgValue, OpResult, OpSpec, OpTable, ParamType};
use stridelint::verify::replay::summarize;
use stridelint::verify::{
    replay, select_engine, DType, Engine, EngineChoice, MeasureOptions, Replay, StridedLayout,
    VerifyError,
};

use super::replay_syntax::{Call, Step};

/// Measures copies on an engine chosen on first use, each distinct layout once.
pub struct Meter {
    choice: EngineChoice,
    dtype: DType,
    options: MeasureOptions,
    engine: Option<Box<dyn Engine>>,
    /// Why CUDA was not used when `auto` fell back to the CPU.
    pub fallback_note: Option<String>,
    measured: HashMap<StridedLayout, Replay>,
}

/// A measured copy; `reused` when the same layout was measured earlier in this run.
#[derive(Debug, Clone)]
pub struct MeasuredCopy {
    pub replay: Replay,
    pub reused: bool,
}

/// Why a measurement could not be made: the requested engine does not work here or the
/// copy is refused (too large for the memory limit or for 64-bit arithmetic): the command
/// fails; or this one copy failed (it is reported and the replay goes on).
#[derive(Debug, Clone)]
pub enum MeterError {
    Engine(VerifyError),
    Copy(VerifyError),
}

/// A measurement error that ends the command: a refusal is not a measurement that failed.
fn classify(error: VerifyError) -> MeterError {
    match error {
        VerifyError::TooLarge(_) => MeterError::Engine(error),
        other => MeterError::Copy(other),
    }
}

impl Meter {
    pub fn new(choice: EngineChoice, dtype: DType, options: MeasureOptions) -> Self {
        Meter {
            choice,
            dtype,
            options,
            engine: None,
            fallback_note: None,
            measured: HashMap::new(),
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The engine, selecting it on first use.
    pub fn engine(&mut self) -> Result<&dyn Engine, VerifyError> {
        if self.engine.is_none() {
            let (engine, note) = select_engine(self.choice)?;
            self.fallback_note = note;
            self.engine = Some(engine);
        }
        Ok(self.engine.as_deref().expect("selected above"))
    }

    /// `engine` and `device` of the engine when one was selected.
    pub fn identity(&self) -> Option<(&'static str, String)> {
        self.engine.as_ref().map(|e| (e.name(), e.device()))
    }

    /// Measures the copy an op makes of `input` to produce `result`: the engine gathers
    /// `input` in the result's memory order into a new buffer and times it.
    pub fn measure(
        &mut self,
        input: &Layout<i64>,
        result: &Layout<i64>,
    ) -> Result<MeasuredCopy, MeterError> {
        let strided = gather_order(input, result).map_err(MeterError::Copy)?;
        if let Some(replay) = self.measured.get(&strided) {
            return Ok(MeasuredCopy {
                replay: replay.clone(),
                reused: true,
            });
        }
        let (dtype, options) = (self.dtype, self.options.clone());
        // Refused before an engine is chosen or anything allocated.
        stridelint::verify::budget::precheck(&strided, dtype, &options).map_err(classify)?;
        let engine = self.engine().map_err(MeterError::Engine)?;
        let mut replayed = replay(engine, &strided, dtype, &options).map_err(classify)?;
        // The op copies even when the gather is a plain memcpy (`clone()` of a contiguous
        // tensor, a copy that keeps the strides): it always allocates a new tensor.
        let m = &mut replayed.measurement;
        if m.extra_bytes == 0 && m.bytes_copied > 0 {
            m.extra_bytes = m.bytes_copied;
            replayed.summary = summarize(m, replayed.ceiling_gbps);
        }
        self.measured.insert(strided, replayed.clone());
        Ok(MeasuredCopy {
            replay: replayed,
            reused: false,
        })
    }
}

/// The source of the copy that turns `input` into `result`, in the order the engine writes
/// (row-major). A copy that keeps the shape (`contiguous(memory_format=…)`, `clone()`, a
/// dtype change) writes in the result's memory order, so `input`'s dimensions are permuted
/// into the result's order, outermost (largest stride) first. A copy that changes the shape
/// (`reshape`, `flatten`, `ravel`) writes a row-major copy of `input` and views it.
fn gather_order(input: &Layout<i64>, result: &Layout<i64>) -> Result<StridedLayout, VerifyError> {
    let source = StridedLayout::new(input.shape.clone(), input.strides.clone(), input.offset);
    if result.shape != input.shape {
        return Ok(source);
    }
    let mut order: Vec<usize> = (0..result.rank()).collect();
    // Stable: dimensions with equal strides (size 1) keep their order.
    order.sort_by(|&a, &b| result.strides[b].cmp(&result.strides[a]));
    source.permute(&order)
}

/// What one step did.
// A replay holds a handful of these; boxing the measurement would only obscure the matches.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum StepOutcome {
    /// The op returned a tensor with this layout.
    Tensor {
        layout: Layout<i64>,
        /// Did the op copy its input to produce the layout?
        copies: Tri,
        /// `first of 3 results` for ops returning several tensors.
        note: Option<String>,
        /// The measured copy of the step's input, when it copies.
        copy: Option<Result<MeasuredCopy, VerifyError>>,
    },
    /// The op raises; PyTorch's message.
    Raises(String),
    /// The replay cannot go on after this step (no tensor, or a layout the input alone
    /// does not determine).
    Stops(String),
}

#[derive(Debug, Clone)]
pub struct ReplayedStep {
    pub text: String,
    pub outcome: StepOutcome,
}

/// The op table entry a step calls, or why there is none (a usage error).
pub fn resolve(step: &Step) -> Result<&'static OpSpec, String> {
    let table = OpTable::torch();
    let spec = match &step.call {
        Call::Subscript(_) => table.method("__getitem__"),
        Call::Method {
            name,
            parenthesized: false,
            ..
        } => table.attribute(name).or_else(|| table.method(name)),
        Call::Method { name, .. } => table.method(name),
    };
    spec.ok_or_else(|| {
        format!(
            "`{}`: no tensor method or attribute of that name in the torch op table",
            step.text
        )
    })
}

/// Replays `steps` from `start`. Stops after a step that raises or stops; every step must
/// [`resolve`] (check that first). An engine that cannot be selected ends the replay
/// with that error.
pub fn replay_chain(
    start: &Layout<i64>,
    steps: &[Step],
    meter: &mut Meter,
) -> Result<Vec<ReplayedStep>, VerifyError> {
    let mut layout = start.clone();
    let mut replayed = Vec::with_capacity(steps.len());
    for step in steps {
        let outcome = apply_step(&layout, step, meter)?;
        let go_on = match &outcome {
            StepOutcome::Tensor { layout: next, .. } => {
                layout = next.clone();
                true
            }
            StepOutcome::Raises(_) | StepOutcome::Stops(_) => false,
        };
        replayed.push(ReplayedStep {
            text: step.text.clone(),
            outcome,
        });
        if !go_on {
            break;
        }
    }
    Ok(replayed)
}

fn apply_step(
    input: &Layout<i64>,
    step: &Step,
    meter: &mut Meter,
) -> Result<StepOutcome, VerifyError> {
    let spec = match resolve(step) {
        Ok(spec) => spec,
        Err(why) => return Ok(StepOutcome::Stops(why)),
    };
    if let Some(error) = float_where_integer(spec, step) {
        return Ok(StepOutcome::Raises(error));
    }
    let receiver = Some(ArgValue::tensor(input.clone()));
    // The concrete algebra wraps on overflow; a step whose arithmetic overflowed, or whose
    // result cannot be addressed in 64 bits, is refused rather than reported.
    let (applied, overflowed) = detect_overflow(|| {
        let bound = match &step.call {
            Call::Subscript(entries) => ops::bind(spec, receiver, entries.clone(), Vec::new()),
            Call::Method {
                positional,
                keywords,
                ..
            } => ops::bind(spec, receiver, positional.clone(), keywords.clone()),
        };
        bound.map(|bound| ops::apply(spec, &bound, &Decider::concrete()))
    });
    let too_large = |why: String| {
        VerifyError::TooLarge(format!(
            "`{}` on {}: {why}; replay works in 64-bit arithmetic",
            step.text,
            StridedLayout::new(input.shape.clone(), input.strides.clone(), input.offset)
        ))
    };
    if overflowed {
        return Err(too_large("its sizes overflow".to_string()));
    }
    let transfer = match applied {
        Ok(transfer) => transfer,
        Err(error) => return Ok(StepOutcome::Raises(format!("TypeError: {error}"))),
    };
    let results: Vec<&Layout<i64>> = match &transfer.result {
        OpResult::Tensor(layout) => vec![layout],
        OpResult::Tensors(layouts) => layouts.iter().collect(),
        _ => Vec::new(),
    };
    for layout in results {
        addressable(layout).map_err(too_large)?;
    }
    let (layout, note) = match transfer.result {
        OpResult::Tensor(layout) => (layout, None),
        OpResult::Tensors(mut layouts) if !layouts.is_empty() => {
            let note = format!("first of {} results", layouts.len());
            (layouts.swap_remove(0), Some(note))
        }
        OpResult::Tensors(_) => return Ok(StepOutcome::Stops("returns no tensors".into())),
        OpResult::Error(error) => return Ok(StepOutcome::Raises(error.message)),
        OpResult::Size(_) => {
            return Ok(StepOutcome::Stops("returns a value, not a tensor".into()))
        }
        OpResult::UnknownTensor => {
            return Ok(StepOutcome::Stops(
                "the result's layout is not determined by the input's layout (backend-chosen, data-dependent, or an argument replay cannot express)".into(),
            ))
        }
        OpResult::Unknown => {
            return Ok(StepOutcome::Stops("the op table cannot decide this call".into()))
        }
    };
    let copy = match transfer.copies {
        Tri::Yes => match meter.measure(input, &layout) {
            Ok(measured) => Some(Ok(measured)),
            Err(MeterError::Copy(error)) => Some(Err(error)),
            Err(MeterError::Engine(error)) => return Err(error),
        },
        Tri::No | Tri::Unknown => None,
    };
    Ok(StepOutcome::Tensor {
        layout,
        copies: transfer.copies,
        note,
        copy,
    })
}

/// PyTorch's TypeError for a float given where the op takes integers (a size, a
/// dimension): the op table, written for source code where a float may stand for a value
/// it cannot see, only says it cannot tell the result.
fn float_where_integer(spec: &OpSpec, step: &Step) -> Option<String> {
    let Call::Method {
        positional,
        keywords,
        ..
    } = &step.call
    else {
        return None;
    };
    let receiver = Some(ArgValue::tensor(Layout::contiguous(Vec::new())));
    let bound = ops::bind(spec, receiver, positional.clone(), keywords.clone()).ok()?;
    let takes_integers = |name: &str| {
        spec.params.iter().any(|p| {
            p.answers_to(name)
                && matches!(
                    p.ty,
                    ParamType::Int
                        | ParamType::Dim
                        | ParamType::Dims
                        | ParamType::Ints
                        | ParamType::Shape
                        | ParamType::IntOrInts
                )
        })
    };
    fn first_float(value: &ArgValue<i64>) -> Option<f64> {
        match value {
            ArgValue::Float(f) => Some(*f),
            ArgValue::IntList(items) => items.iter().find_map(first_float),
            _ => None,
        }
    }
    let (name, float) = bound
        .iter()
        .filter(|(name, _)| takes_integers(name))
        .find_map(|(name, value)| Some((name.to_string(), first_float(value)?)))?;
    Some(format!(
        "TypeError: {}(): argument '{name}' must be an int or a sequence of ints, not float \
         ({float})",
        spec.name
    ))
}

/// Whether a concrete layout can be computed with: an element count (zero sizes counted as
/// one) and storage indices within `i64`.
pub fn addressable(layout: &Layout<i64>) -> Result<(), String> {
    let elements = layout
        .shape
        .iter()
        .try_fold(1i64, |n, &s| n.checked_mul(s.unsigned_abs().max(1) as i64));
    if elements.is_none() {
        return Err(format!(
            "the result {:?} has more than 2^63 elements",
            layout.shape
        ));
    }
    StridedLayout::new(layout.shape.clone(), layout.strides.clone(), layout.offset)
        .validate()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::replay_syntax::parse_chain;
    use super::*;

    fn chain(texts: &[&str]) -> Vec<Step> {
        texts.iter().flat_map(|t| parse_chain(t).unwrap()).collect()
    }

    fn meter() -> Meter {
        Meter::new(EngineChoice::Cpu, DType::F32, MeasureOptions::quick())
    }

    #[test]
    fn views_follow_the_stride_algebra_and_copies_are_measured() {
        let mut meter = meter();
        let start = Layout::contiguous(vec![2i64, 6, 3, 4]);
        let steps = replay_chain(
            &start,
            &chain(&["permute(0,2,1,3)", "reshape(2,3,-1)"]),
            &mut meter,
        )
        .unwrap();
        // torch.empty(2, 6, 3, 4).permute(0, 2, 1, 3).stride() == (72, 4, 12, 1)
        match &steps[0].outcome {
            StepOutcome::Tensor {
                layout,
                copies: Tri::No,
                copy: None,
                ..
            } => {
                assert_eq!(
                    layout,
                    &Layout::new(vec![2, 3, 6, 4], vec![72, 4, 12, 1], 0)
                )
            }
            other => panic!("{other:?}"),
        }
        // …and reshape(2, 3, -1) of it copies: a fresh (2, 3, 24) tensor.
        match &steps[1].outcome {
            StepOutcome::Tensor {
                layout,
                copies: Tri::Yes,
                copy: Some(Ok(measured)),
                ..
            } => {
                assert_eq!(layout, &Layout::new(vec![2, 3, 24], vec![72, 24, 1], 0));
                assert_eq!(measured.replay.measurement.bytes_copied, 2 * 6 * 3 * 4 * 4);
                assert!(!measured.reused);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_raising_step_ends_the_replay_with_torchs_message() {
        let mut meter = meter();
        let start = Layout::contiguous(vec![2i64, 6, 3, 4]);
        let steps = replay_chain(
            &start,
            &chain(&["transpose(1,2).view(2,3,-1)", "t()"]),
            &mut meter,
        )
        .unwrap();
        assert_eq!(steps.len(), 2);
        match &steps[1].outcome {
            StepOutcome::Raises(message) => {
                assert!(
                    message.starts_with("view size is not compatible"),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(
            meter.identity().is_none(),
            "no copy, so no engine was needed"
        );
    }

    #[test]
    fn the_same_copy_is_measured_once() {
        let mut meter = meter();
        let start = Layout::contiguous(vec![4i64, 8]);
        let copy_of = |steps: &[ReplayedStep]| match &steps.last().unwrap().outcome {
            StepOutcome::Tensor {
                copy: Some(Ok(m)), ..
            } => m.clone(),
            other => panic!("{other:?}"),
        };
        // `contiguous()` and `reshape(-1)` of the same transpose copy the same layout.
        let first = replay_chain(&start, &chain(&["t().contiguous()"]), &mut meter).unwrap();
        let second = replay_chain(&start, &chain(&["t().reshape(-1)"]), &mut meter).unwrap();
        assert!(!copy_of(&first).reused);
        assert!(copy_of(&second).reused);
        assert_eq!(copy_of(&first).replay, copy_of(&second).replay);
    }

    #[test]
    fn a_copy_into_another_memory_order_is_measured_in_that_order() {
        let mut meter = meter();
        let start = Layout::contiguous(vec![2i64, 3, 4, 5]);
        let steps = replay_chain(
            &start,
            &chain(&["contiguous(memory_format=torch.channels_last)", "clone()"]),
            &mut meter,
        )
        .unwrap();
        // torch.empty(2, 3, 4, 5).contiguous(memory_format=torch.channels_last).stride()
        // == (60, 1, 15, 3): a real NCHW -> NHWC transpose of 480 bytes.
        match &steps[0].outcome {
            StepOutcome::Tensor {
                layout,
                copy: Some(Ok(m)),
                ..
            } => {
                assert_eq!(layout.strides, vec![60, 1, 15, 3]);
                assert_eq!(m.replay.layout.shape, vec![2, 4, 5, 3]);
                assert_eq!(m.replay.layout.strides, vec![60, 5, 1, 20]);
                assert_eq!(m.replay.measurement.extra_bytes, 480);
                assert!(
                    m.replay.summary.starts_with("copies 480 B in "),
                    "{}",
                    m.replay.summary
                );
            }
            other => panic!("{other:?}"),
        }
        // clone() keeps the channels-last strides: a plain memcpy, but still a new tensor.
        match &steps[1].outcome {
            StepOutcome::Tensor {
                copy: Some(Ok(m)), ..
            } => {
                assert_eq!(m.replay.measurement.extra_bytes, 480);
                assert!(
                    m.replay.summary.starts_with("copies 480 B in "),
                    "{}",
                    m.replay.summary
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn subscripts_attributes_and_bind_errors() {
        let mut meter = meter();
        let start = Layout::contiguous(vec![4i64, 6]);
        let steps = replay_chain(
            &start,
            &chain(&["[:, 1::2].T", "view(1, 2, 3, 4, 5, x=1)"]),
            &mut meter,
        )
        .unwrap();
        // torch.empty(4, 6)[:, 1::2] has shape (4, 3), strides (6, 2), offset 1; .T reverses.
        match &steps[1].outcome {
            StepOutcome::Tensor { layout, .. } => {
                assert_eq!(layout, &Layout::new(vec![3, 4], vec![2, 6], 1))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&steps[2].outcome, StepOutcome::Raises(m) if m.starts_with("TypeError")));
    }

    #[test]
    fn unknown_names_do_not_resolve() {
        let step = &parse_chain("frobnicate(1)").unwrap()[0];
        assert!(resolve(step).unwrap_err().contains("frobnicate"));
        assert!(resolve(&parse_chain("mT").unwrap()[0]).is_ok());
    }
}
