//! `einops.rearrange` / `reduce` / `repeat` and the `Rearrange` / `Reduce` layers (spec §8):
//! the pattern is compiled into einops' own step sequence (see `ops::einops::recipe`), and
//! each step is replayed on the layout with the torch backend's ops — `reshape`, `permute`,
//! a reduction (contiguous output), `unsqueeze` + `expand` — so a merge after a real
//! permutation is seen to copy, exactly as `x.permute(…).reshape(…)` would.

use super::Outcome;
use crate::layout::geometry::{expand, permute, unsqueeze};
use crate::layout::{reshape, Decider, Layout, LayoutError, Size, Tri};
use crate::ops::bind::BoundArgs;
use crate::ops::einops::recipe::{
    prepare, GroupCheck, Operation, Plan, PlanError, Recipe, Reduction,
};
use crate::ops::shape_rules::{stack_shape, torch_list};
use crate::ops::transfer::{OpErrorKind, Transfer};
use crate::ops::value::ArgValue;

/// Which einops function a kind stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Rearrange,
    Reduce,
    Repeat,
}

pub fn einops<S: Size>(flavor: Flavor, args: &BoundArgs<S>, d: &Decider) -> Outcome<S> {
    let call = Call::read(flavor, args, d)?;
    let plan = call
        .recipe
        .plan(&call.input.shape, &call.lengths, d)
        .map_err(|e| match e {
            PlanError::Einops(e) => {
                Transfer::error(OpErrorKind::ElementCount, call.einops_error(&e.0))
            }
            PlanError::Undecided => Transfer::unknown(),
        })?;
    run(&call.input, &plan, call.operation, d)
}

/// The input dims whose keyword lengths an einops call checks and the decider cannot (see
/// `Recipe::undecided_groups`): `(the dim's size, the product of the given lengths, what
/// einops checks)`. Empty when the call cannot be read.
pub fn undecided_groups<S: Size>(
    flavor: Flavor,
    args: &BoundArgs<S>,
    d: &Decider,
) -> Vec<(S, S, GroupCheck)> {
    let Ok(call) = Call::read(flavor, args, d) else {
        return Vec::new();
    };
    call.recipe
        .undecided_groups(&call.input.shape, &call.lengths, d)
        .into_iter()
        .map(|(axis, k, check)| (call.input.shape[axis].clone(), k, check))
        .collect()
}

/// An einops call read from its arguments: the input, the compiled pattern, the keyword
/// lengths.
struct Call<'a, S: Size> {
    input: Layout<S>,
    pattern: &'a str,
    operation: Operation,
    operation_name: String,
    lengths: Vec<(String, S)>,
    recipe: Recipe,
}

impl<'a, S: Size> Call<'a, S> {
    fn read(flavor: Flavor, args: &'a BoundArgs<S>, d: &Decider) -> Result<Self, Transfer<S>> {
        let input = input_layout(args, d)?;
        let pattern = args
            .get("pattern")
            .and_then(ArgValue::as_str)
            .ok_or_else(|| Transfer::unknown_tensor())?;
        let (operation, operation_name) = operation(flavor, args)?;
        let mut lengths = Vec::new();
        for (name, value) in args.extra_keywords() {
            let size = value.as_size().ok_or_else(|| Transfer::unknown_tensor())?;
            lengths.push((name.clone(), size));
        }
        let names: Vec<String> = lengths.iter().map(|(n, _)| n.clone()).collect();
        let recipe = prepare(pattern, operation, &names, input.rank());
        let error = |e: &str| einops_error(&operation_name, pattern, &input.shape, &lengths, e);
        let recipe =
            recipe.map_err(|e| Transfer::error(OpErrorKind::InvalidArgument, error(&e.0)))?;
        Ok(Call {
            input,
            pattern,
            operation,
            operation_name,
            lengths,
            recipe,
        })
    }

    fn einops_error(&self, inner: &str) -> String {
        einops_error(
            &self.operation_name,
            self.pattern,
            &self.input.shape,
            &self.lengths,
            inner,
        )
    }
}

/// einops' message for an error in a call.
fn einops_error<S: Size>(
    operation_name: &str,
    pattern: &str,
    shape: &[S],
    lengths: &[(String, S)],
    inner: &str,
) -> String {
    let info: Vec<String> = lengths.iter().map(|(n, v)| format!("'{n}': {v}")).collect();
    format!(
        " Error while processing {operation_name}-reduction pattern \"{pattern}\".\n Input tensor shape: torch.Size({}). Additional info: {{{}}}.\n {inner}",
        torch_list(shape),
        info.join(", ")
    )
}

/// The einops operation a flavour runs, and its name in einops' messages.
fn operation<S: Size>(
    flavor: Flavor,
    args: &BoundArgs<S>,
) -> Result<(Operation, String), Transfer<S>> {
    Ok(match flavor {
        Flavor::Rearrange => (Operation::Rearrange, "rearrange".to_string()),
        Flavor::Repeat => (Operation::Repeat, "repeat".to_string()),
        Flavor::Reduce => match args.get("reduction") {
            Some(ArgValue::Str(name)) => match Reduction::from_name(name) {
                Some(r) => (Operation::Reduce(r), name.clone()),
                None => {
                    return Err(Transfer::error(
                        OpErrorKind::InvalidArgument,
                        format!("Unknown reduction {name}. Expect one of ('min', 'max', 'sum', 'mean', 'prod', 'any', 'all')."),
                    ))
                }
            },
            _ => (Operation::Reduce(Reduction::Custom), "<callable>".to_string()),
        },
    })
}

/// The tensor argument: a tensor, or a list of equal-shape tensors that einops stacks.
fn input_layout<S: Size>(args: &BoundArgs<S>, d: &Decider) -> Result<Layout<S>, Transfer<S>> {
    match args.get("tensor") {
        Some(ArgValue::Tensor(Some(layout))) => Ok(layout.clone()),
        Some(ArgValue::TensorList(items)) => {
            let layouts: Option<Vec<&Layout<S>>> = items.iter().map(Option::as_ref).collect();
            let layouts = layouts.ok_or_else(|| Transfer::unknown_tensor())?;
            let shapes: Vec<&[S]> = layouts.iter().map(|l| l.shape.as_slice()).collect();
            let shape = stack_shape(&shapes, 0, d)
                .map_err(|e| Transfer::from_layout_error(e, OpErrorKind::ElementCount))?;
            Ok(Layout::contiguous(shape))
        }
        _ => Err(Transfer::unknown_tensor()),
    }
}

/// Replay the plan on the layout, tracking whether a reshape copied.
fn run<S: Size>(
    input: &Layout<S>,
    plan: &Plan<S>,
    operation: Operation,
    d: &Decider,
) -> Outcome<S> {
    let error = |e: LayoutError| Transfer::from_layout_error(e, OpErrorKind::ElementCount);
    let mut layout = input.clone();
    let mut copies = Tri::No;
    let mut copied_reshape = None;
    let mut reshape_step =
        |layout: &Layout<S>, shape: &[S], copies: &mut Tri| -> Result<Layout<S>, Transfer<S>> {
            let result = reshape(layout, shape, d).map_err(error)?;
            *copies = copies.or(result.copies);
            if result.copies.is_yes() {
                copied_reshape = Some((layout.clone(), shape.to_vec()));
            }
            result.layout.ok_or_else(|| Transfer::unknown_tensor())
        };
    if let Some(shape) = &plan.init_shape {
        layout = reshape_step(&layout, shape, &mut copies)?;
    }
    if let Some(order) = &plan.permutation {
        let order: Vec<i64> = order.iter().map(|&a| a as i64).collect();
        layout = permute(&layout, &order).map_err(error)?;
    }
    if !plan.reduced_axes.is_empty() {
        if operation == Operation::Reduce(Reduction::Custom) {
            // A user callable: neither its layout nor, strictly, its shape is known.
            return Err(Transfer::unknown_tensor());
        }
        let kept = layout.shape[..plan.reduced_axes[0]].to_vec();
        layout = Layout::contiguous(kept);
    }
    if !plan.added_axes.is_empty() {
        let mut sizes = vec![S::lit(-1); plan.rank_after_adding];
        for (position, length) in &plan.added_axes {
            layout = unsqueeze(&layout, *position as i64).map_err(error)?;
            sizes[*position] = length.clone();
        }
        layout = expand(&layout, &sizes, d).map_err(error)?;
    }
    if let Some(shape) = &plan.final_shape {
        layout = reshape_step(&layout, shape, &mut copies)?;
    }
    let mut transfer = Transfer::tensor(layout);
    transfer.copies = copies;
    transfer.copied_numel = copied_reshape.as_ref().map(|(copied, _)| copied.numel());
    transfer.copied_reshape = copied_reshape;
    Ok(transfer)
}

#[cfg(test)]
mod tests {
    use crate::layout::{Decider, Layout, Tri};
    use crate::ops::{
        apply, bind, bind_module_call, bind_module_init, ArgValue, OpTable, Transfer,
    };

    type A = ArgValue<i64>;

    fn l(shape: &[i64], strides: &[i64]) -> Layout<i64> {
        Layout::new(shape.to_vec(), strides.to_vec(), 0)
    }

    fn einops(
        function: &str,
        input: A,
        pattern: &str,
        extra: Vec<A>,
        kw: &[(&str, i64)],
    ) -> Transfer<i64> {
        let spec = OpTable::torch().function(function).unwrap();
        let mut positional = vec![input, A::Str(pattern.into())];
        positional.extend(extra);
        let kw = kw
            .iter()
            .map(|(k, v)| (k.to_string(), A::Int(*v)))
            .collect();
        apply(
            spec,
            &bind(spec, None, positional, kw).unwrap(),
            &Decider::concrete(),
        )
    }

    fn rearrange(input: Layout<i64>, pattern: &str, kw: &[(&str, i64)]) -> Transfer<i64> {
        einops("einops.rearrange", A::tensor(input), pattern, vec![], kw)
    }

    /// Results observed with einops 0.8.2 on torch 2.15 (result strides; copy = the result
    /// does not share the input's storage).
    #[test]
    fn rearrange_copies_exactly_when_torch_does() {
        // Spec §8: 'b h s d -> b s (h d)' copies on contiguous BHSD…
        let t = rearrange(
            Layout::contiguous(vec![2, 4, 5, 8]),
            "b h n d -> b n (h d)",
            &[],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies, t.copied_numel),
            (
                Some(Layout::contiguous(vec![2, 5, 32])),
                Tri::Yes,
                Some(320)
            )
        );
        // …and is a view on BSHD storage seen as BHSD.
        let t = rearrange(
            l(&[2, 4, 5, 8], &[160, 8, 32, 1]),
            "b h n d -> b n (h d)",
            &[],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 5, 32], &[160, 32, 1])), Tri::No)
        );
        // Splitting then permuting is always a view.
        let t = rearrange(
            Layout::contiguous(vec![2, 5, 32]),
            "b n (h d) -> b h n d",
            &[("h", 4)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[2, 4, 5, 8], &[160, 8, 32, 1])), Tri::No)
        );
        // qkv split of a fused projection.
        let t = rearrange(
            Layout::contiguous(vec![2, 5, 96]),
            "b n (qkv h d) -> qkv b h n d",
            &[("qkv", 3), ("h", 4)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[3, 2, 4, 5, 8], &[32, 480, 8, 96, 1])), Tri::No)
        );
        // ViT patchify copies.
        let t = rearrange(
            Layout::contiguous(vec![2, 3, 32, 32]),
            "b c (h p1) (w p2) -> b (h w) (p1 p2 c)",
            &[("p1", 16), ("p2", 16)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(Layout::contiguous(vec![2, 4, 768])), Tri::Yes)
        );
    }

    #[test]
    fn reduce_and_repeat_replay_their_steps() {
        // 2x2 max-pool: contiguous output of the pooled shape.
        let t = einops(
            "einops.reduce",
            A::tensor(Layout::contiguous(vec![2, 3, 8, 8])),
            "b c (h h2) (w w2) -> b c h w",
            vec![A::Str("max".into())],
            &[("h2", 2), ("w2", 2)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(Layout::contiguous(vec![2, 3, 4, 4])), Tri::No)
        );
        // repeat 'h w -> h w c' is an expanded view (stride 0)…
        let t = einops(
            "einops.repeat",
            A::tensor(Layout::contiguous(vec![4, 5])),
            "h w -> h w c",
            vec![],
            &[("c", 3)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(l(&[4, 5, 3], &[5, 1, 0])), Tri::No)
        );
        // …and merging a repeated axis copies.
        let t = einops(
            "einops.repeat",
            A::tensor(Layout::contiguous(vec![4, 5])),
            "h w -> (h h2) (w w2)",
            vec![],
            &[("h2", 2), ("w2", 3)],
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(Layout::contiguous(vec![8, 15])), Tri::Yes)
        );
        let e = einops(
            "einops.reduce",
            A::tensor(Layout::contiguous(vec![2, 3])),
            "a b -> a",
            vec![A::Str("median".into())],
            &[],
        );
        assert!(e
            .op_error()
            .unwrap()
            .message
            .starts_with("Unknown reduction median."));
    }

    #[test]
    fn pattern_errors_carry_einops_messages() {
        let t = rearrange(
            Layout::contiguous(vec![2, 4, 5, 8]),
            "b h n d -> b n (h x)",
            &[],
        );
        let message = t.op_error().unwrap().message.clone();
        assert!(message.starts_with(" Error while processing rearrange-reduction pattern \"b h n d -> b n (h x)\".\n Input tensor shape: torch.Size([2, 4, 5, 8]). Additional info: {}.\n Identifiers only on one side"), "{message}");
        let t = rearrange(
            Layout::contiguous(vec![2, 5, 30]),
            "b n (h d) -> b h n d",
            &[("h", 4)],
        );
        assert!(t
            .op_error()
            .unwrap()
            .message
            .ends_with("Shape mismatch, can't divide axis of length 30 in chunks of 4"));
    }

    #[test]
    fn rearrange_layer_reads_its_constructor() {
        let table = OpTable::torch();
        let layer = table.module("Rearrange").unwrap();
        let init = bind_module_init::<i64>(
            layer,
            vec![A::Str("b (h d) n -> b h d n".into())],
            vec![("h".into(), A::Int(4))],
        )
        .unwrap();
        let t = apply(
            &layer.call,
            &bind_module_call(
                layer,
                &init,
                vec![A::tensor(Layout::contiguous(vec![2, 32, 5]))],
                vec![],
            )
            .unwrap(),
            &Decider::concrete(),
        );
        assert_eq!(
            (t.layout().cloned(), t.copies),
            (Some(Layout::contiguous(vec![2, 4, 8, 5])), Tri::No)
        );
        // A list of tensors is stacked first.
        let list = A::TensorList(vec![
            Some(Layout::contiguous(vec![3, 4])),
            Some(Layout::contiguous(vec![3, 4])),
        ]);
        let t = einops("einops.rearrange", list, "b h w -> b (h w)", vec![], &[]);
        assert_eq!(t.layout(), Some(&Layout::contiguous(vec![2, 12])));
    }
}

#[cfg(test)]
mod symbolic_tests {
    use crate::layout::{Assumptions, Decider, Dim, Layout, Tri};
    use crate::ops::einops::GroupCheck;
    use crate::ops::{apply, bind, einops_undecided_groups, ArgValue, BoundArgs, OpTable};

    type A = ArgValue<Dim>;

    fn args(shape: &[Dim], pattern: &str, kw: &[(&str, Dim)]) -> BoundArgs<Dim> {
        let spec = OpTable::torch().function("einops.rearrange").unwrap();
        let input = Layout::contiguous(shape.to_vec());
        let kw = kw
            .iter()
            .map(|(k, v)| (k.to_string(), A::Int(v.clone())))
            .collect();
        bind(
            spec,
            None,
            vec![A::tensor(input), A::Str(pattern.into())],
            kw,
        )
        .unwrap()
    }

    fn copies(shape: &[Dim], pattern: &str, kw: &[(&str, Dim)]) -> Tri {
        let spec = OpTable::torch().function("einops.rearrange").unwrap();
        let assumptions = Assumptions::default();
        apply(spec, &args(shape, pattern, kw), &Decider::new(&assumptions)).copies
    }

    /// With the splits learned, `rearrange` of a patch or axial split copies (einops 0.8.2
    /// copies for p = 2 and 4, y = 4).
    #[test]
    fn a_split_by_a_literal_is_decided_once_learned() {
        let four = |s: &str| Dim::lit(4).mul(&Dim::sym(&format!("{s}/4")));
        let patchify = "b c (h p1) (w p2) -> b (h w) (p1 p2 c)";
        let p = [("p1", Dim::lit(4)), ("p2", Dim::lit(4))];
        let shape = [Dim::sym("B"), Dim::sym("C"), four("H"), four("W")];
        assert_eq!(copies(&shape, patchify, &p), Tri::Yes);
        let axial = "b h (x y) d -> b (h d) x y";
        let shape = [Dim::sym("B"), Dim::sym("H"), four("N"), Dim::sym("D")];
        assert_eq!(copies(&shape, axial, &[("y", Dim::lit(4))]), Tri::Yes);
    }

    /// A split by a symbol is named for the interpreter to learn `H = p·(H/p)`; once it
    /// has, the call is decided.
    #[test]
    fn a_split_by_a_symbol_is_reported_then_decided() {
        let spec = OpTable::torch().function("einops.rearrange").unwrap();
        let patchify = "b c (h p1) (w p2) -> b (h w) (p1 p2 c)";
        let p = [("p1", Dim::sym("p")), ("p2", Dim::sym("p"))];
        let assumptions = Assumptions::default();
        let d = Decider::new(&assumptions);
        let splits = einops_undecided_groups(
            spec,
            &args(
                &[Dim::sym("B"), Dim::sym("C"), Dim::sym("H"), Dim::sym("W")],
                patchify,
                &p,
            ),
            &d,
        );
        assert_eq!(
            splits,
            vec![
                (Dim::sym("H"), Dim::sym("p"), GroupCheck::Divides),
                (Dim::sym("W"), Dim::sym("p"), GroupCheck::Divides)
            ]
        );
        let learned = |s: &str| Dim::sym("p").mul(&Dim::sym(&format!("{s}/p")));
        let shape = [Dim::sym("B"), Dim::sym("C"), learned("H"), learned("W")];
        assert_eq!(copies(&shape, patchify, &p), Tri::Yes);
        assert!(einops_undecided_groups(spec, &args(&shape, patchify, &p), &d).is_empty());
        // `(x y)` with both given: the dim must be their product.
        let whole = "b h (x y) d -> b (h d) x y";
        let xy = [("x", Dim::sym("X")), ("y", Dim::sym("Y"))];
        let shape = [Dim::sym("B"), Dim::sym("H"), Dim::sym("N"), Dim::sym("D")];
        assert_eq!(
            einops_undecided_groups(spec, &args(&shape, whole, &xy), &d),
            vec![(
                Dim::sym("N"),
                Dim::sym("X").mul(&Dim::sym("Y")),
                GroupCheck::Equals
            )]
        );
    }
}
