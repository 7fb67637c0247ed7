//! From a pattern to the concrete sequence of tensor operations einops runs
//! (spec §8; einops `_prepare_transformation_recipe` and `_reconstruct_from_shape`).
//!
//! einops turns every `rearrange` / `reduce` / `repeat` call into the same pipeline:
//!
//! 1. `reshape(init_shape)` — split the input's composed dims into elementary axes; only
//!    done when some input dim is not exactly one axis (a pure split is always a view);
//! 2. `permute(order)` — put the axes in output order, reduced axes last; skipped if identity;
//! 3. reduce the trailing reduced axes (`reduce` only);
//! 4. `unsqueeze` + `expand` the axes that only the output mentions (`repeat` only);
//! 5. `reshape(final_shape)` — merge output groups; only done when some output dim is not
//!    exactly one axis. A merge after a real permutation is where the hidden copy happens.
//!
//! [`prepare`] does the shape-independent part (validating the pattern against the
//! operation and the input rank); [`Recipe::plan`] binds it to an input shape (concrete or
//! symbolic) and yields a [`Plan`].

use std::collections::BTreeSet;

use super::pattern::{parse_pattern, Axis, Composition, EinopsError, Expression};
use crate::layout::{Assumption, Decider, Size, Tri};

/// The einops function being applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Rearrange,
    Repeat,
    Reduce(Reduction),
}

/// The reduction of `einops.reduce` (`Custom` = a callable the analysis cannot see into).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    Min,
    Max,
    Sum,
    Mean,
    Prod,
    Any,
    All,
    Custom,
}

impl Reduction {
    /// einops' accepted reduction names.
    pub fn from_name(name: &str) -> Option<Reduction> {
        Some(match name {
            "min" => Reduction::Min,
            "max" => Reduction::Max,
            "sum" => Reduction::Sum,
            "mean" => Reduction::Mean,
            "prod" => Reduction::Prod,
            "any" => Reduction::Any,
            "all" => Reduction::All,
            _ => return None,
        })
    }
}

impl Operation {
    fn describe(self) -> &'static str {
        match self {
            Operation::Rearrange => "rearrange",
            Operation::Repeat => "repeat",
            Operation::Reduce(Reduction::Min) => "min",
            Operation::Reduce(Reduction::Max) => "max",
            Operation::Reduce(Reduction::Sum) => "sum",
            Operation::Reduce(Reduction::Mean) => "mean",
            Operation::Reduce(Reduction::Prod) => "prod",
            Operation::Reduce(Reduction::Any) => "any",
            Operation::Reduce(Reduction::All) => "all",
            Operation::Reduce(Reduction::Custom) => "<callable>",
        }
    }
}

/// What is known about an elementary axis' length before seeing the input shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KnownLength {
    /// Inferred from the input shape.
    Unknown,
    /// An anonymous axis' literal length.
    Literal(u64),
    /// Given as a keyword argument (`h=8`).
    FromKeyword,
}

/// The shape-independent part of an einops call.
#[derive(Debug, Clone)]
pub struct Recipe {
    lengths: Vec<KnownLength>,
    /// Keyword-given axes and their elementary position.
    keyword_axes: Vec<(String, usize)>,
    /// Per input dim: elementary axes of known length, and (at most one) of unknown length.
    input_known_unknown: Vec<(Vec<usize>, Vec<usize>)>,
    /// Permutation of the elementary input axes: output order first, reduced axes last.
    axes_permutation: Vec<usize>,
    first_reduced_axis: usize,
    /// Output position → elementary axis, for axes only the output mentions.
    added_axes: Vec<(usize, usize)>,
    /// Per output dim, the elementary axes merged into it.
    output_groups: Vec<Vec<usize>>,
}

/// A recipe bound to an input shape: the operations einops will run, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<S> {
    /// `reshape` splitting the input into elementary axes, when needed.
    pub init_shape: Option<Vec<S>>,
    /// `permute` of the elementary axes, when not the identity.
    pub permutation: Option<Vec<usize>>,
    /// Axes reduced after the permutation (always the trailing ones), possibly empty.
    pub reduced_axes: Vec<usize>,
    /// `(position, length)` of axes inserted (unsqueeze + expand) after the reduction.
    pub added_axes: Vec<(usize, S)>,
    /// Rank after the axes were added.
    pub rank_after_adding: usize,
    /// `reshape` merging into the output dims, when needed.
    pub final_shape: Option<Vec<S>>,
    /// The output shape (equal to `final_shape` when that reshape runs).
    pub output_shape: Vec<S>,
}

/// What einops checks of an input dim against the product `k` of a group's keyword lengths
/// (see [`Recipe::undecided_groups`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupCheck {
    /// `(h p1)` with `p1` given: `k` divides the dim.
    Divides,
    /// `(x y)` with both given: `k` is the dim.
    Equals,
}

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// einops raises for every size satisfying the assumptions.
    Einops(EinopsError),
    /// The sizes are symbolic and the check could not be decided.
    Undecided,
}

fn show_set(items: &[&Axis]) -> String {
    let shown: Vec<String> = items
        .iter()
        .map(|a| match a {
            Axis::Named(n) => format!("'{n}'"),
            Axis::Anonymous { length, .. } => format!("{length}-axis"),
            Axis::Ellipsis => "'…'".to_string(),
        })
        .collect();
    format!("{{{}}}", shown.join(", "))
}

/// Name of the i-th axis an ellipsis expands to (cannot clash with a user's axis name).
fn ellipsis_axis(i: usize) -> Axis {
    Axis::Named(format!("…{i}"))
}

/// Validate `pattern` for `operation` on a tensor of rank `ndim`, given the names of the
/// keyword-supplied axis lengths (einops `_prepare_transformation_recipe`).
pub fn prepare(
    pattern: &str,
    operation: Operation,
    keyword_axes: &[String],
    ndim: usize,
) -> Result<Recipe, EinopsError> {
    let (left, right) = parse_pattern(pattern)?;
    if !left.has_ellipsis && right.has_ellipsis {
        return Err(EinopsError(format!(
            "Ellipsis found in right side, but not left side of a pattern {pattern}"
        )));
    }
    if left.has_ellipsis && left.ellipsis_parenthesized == Some(true) {
        return Err(EinopsError(format!(
            "Ellipsis inside parenthesis in the left side is not allowed: {pattern}"
        )));
    }
    check_identifiers(&left, &right, operation, keyword_axes)?;

    let (left_groups, right_groups, left_ids, right_ids) = expand_ellipsis(left, right, ndim)?;

    // Elementary axes in order of first appearance: the left side, then output-only axes.
    let mut axes: Vec<Axis> = Vec::new();
    let mut lengths: Vec<KnownLength> = Vec::new();
    for axis in left_groups.iter().flatten() {
        axes.push(axis.clone());
        lengths.push(match axis {
            Axis::Anonymous { length, .. } => KnownLength::Literal(*length),
            _ => KnownLength::Unknown,
        });
    }
    for axis in right_groups.iter().flatten() {
        if !axes.contains(axis) {
            axes.push(axis.clone());
            lengths.push(match axis {
                Axis::Anonymous { length, .. } => KnownLength::Literal(*length),
                _ => KnownLength::Unknown,
            });
        }
    }
    let position = |axis: &Axis| {
        axes.iter()
            .position(|a| a == axis)
            .expect("axis collected above")
    };

    let mut keyword_positions = Vec::new();
    for name in keyword_axes {
        if super::pattern::check_axis_name(name).is_err() {
            return Err(EinopsError(format!("Invalid name for an axis {name}")));
        }
        let axis = Axis::Named(name.clone());
        let Some(pos) = axes.iter().position(|a| *a == axis) else {
            return Err(EinopsError(format!("Axis {name} is not used in transform")));
        };
        lengths[pos] = KnownLength::FromKeyword;
        keyword_positions.push((name.clone(), pos));
    }

    let mut input_known_unknown = Vec::with_capacity(left_groups.len());
    for group in &left_groups {
        let (unknown, known): (Vec<&Axis>, Vec<&Axis>) = group
            .iter()
            .partition(|a| lengths[position(a)] == KnownLength::Unknown);
        if unknown.len() > 1 {
            return Err(EinopsError(format!(
                "Could not infer sizes for {}",
                show_set(&unknown)
            )));
        }
        input_known_unknown.push((
            known.iter().map(|a| position(a)).collect(),
            unknown.iter().map(|a| position(a)).collect(),
        ));
    }

    let ordered_left: Vec<&Axis> = left_groups.iter().flatten().collect();
    let ordered_right: Vec<&Axis> = right_groups.iter().flatten().collect();
    let reduced: Vec<&Axis> = ordered_left
        .iter()
        .copied()
        .filter(|a| !right_ids.contains(*a))
        .collect();
    let mut order: Vec<&Axis> = ordered_right
        .iter()
        .copied()
        .filter(|a| left_ids.contains(*a))
        .collect();
    let first_reduced_axis = order.len();
    order.extend(reduced.iter().copied());
    let axes_permutation = order
        .iter()
        .map(|a| {
            ordered_left
                .iter()
                .position(|b| b == a)
                .expect("every ordered axis is on the left")
        })
        .collect();
    let added_axes = ordered_right
        .iter()
        .enumerate()
        .filter(|(_, a)| !left_ids.contains(**a))
        .map(|(i, a)| (i, position(a)))
        .collect();
    let output_groups = right_groups
        .iter()
        .map(|g| g.iter().map(position).collect())
        .collect();

    Ok(Recipe {
        lengths,
        keyword_axes: keyword_positions,
        input_known_unknown,
        axes_permutation,
        first_reduced_axis,
        added_axes,
        output_groups,
    })
}

/// The per-operation identifier rules (new axes only in `repeat`, vanishing ones only in `reduce`).
fn check_identifiers(
    left: &Expression,
    right: &Expression,
    op: Operation,
    keyword_axes: &[String],
) -> Result<(), EinopsError> {
    match op {
        Operation::Rearrange => {
            if left.has_non_unitary_anonymous_axes || right.has_non_unitary_anonymous_axes {
                return Err(EinopsError(
                    "Non-unitary anonymous axes are not supported in rearrange (exception is length 1)".into(),
                ));
            }
            let diff: Vec<&Axis> = left
                .identifiers
                .symmetric_difference(&right.identifiers)
                .collect();
            if !diff.is_empty() {
                return Err(EinopsError(format!(
                    "Identifiers only on one side of expression (should be on both): {}",
                    show_set(&diff)
                )));
            }
        }
        Operation::Repeat => {
            let diff: Vec<&Axis> = left.identifiers.difference(&right.identifiers).collect();
            if !diff.is_empty() {
                return Err(EinopsError(format!(
                    "Unexpected identifiers on the left side of repeat: {}",
                    show_set(&diff)
                )));
            }
            let without_size: Vec<&Axis> = right
                .identifiers
                .iter()
                .filter(|a| {
                    matches!(a, Axis::Named(n) if !keyword_axes.contains(n))
                        && !left.identifiers.contains(*a)
                })
                .collect();
            if !without_size.is_empty() {
                return Err(EinopsError(format!(
                    "Specify sizes for new axes in repeat: {}",
                    show_set(&without_size)
                )));
            }
        }
        Operation::Reduce(_) => {
            let diff: Vec<&Axis> = right.identifiers.difference(&left.identifiers).collect();
            if !diff.is_empty() {
                return Err(EinopsError(format!(
                    "Unexpected identifiers on the right side of reduce {}: {}",
                    op.describe(),
                    show_set(&diff)
                )));
            }
        }
    }
    Ok(())
}

type Groups = Vec<Vec<Axis>>;

/// Replace `...` by as many single-axis dims as the input rank requires.
fn expand_ellipsis(
    left: Expression,
    right: Expression,
    ndim: usize,
) -> Result<(Groups, Groups, BTreeSet<Axis>, BTreeSet<Axis>), EinopsError> {
    let mut left_ids = left.identifiers.clone();
    let mut right_ids = right.identifiers.clone();
    if !left.has_ellipsis {
        if ndim != left.composition.len() {
            return Err(EinopsError(format!(
                "Wrong shape: expected {} dims. Received {ndim}-dim tensor.",
                left.composition.len()
            )));
        }
        let to_groups = |e: &Expression| -> Groups {
            e.composition
                .iter()
                .map(|c| match c {
                    Composition::Group(g) => g.clone(),
                    // Only reachable with an ellipsis, excluded above.
                    Composition::Ellipsis => Vec::new(),
                })
                .collect()
        };
        return Ok((to_groups(&left), to_groups(&right), left_ids, right_ids));
    }
    let n_other = left.composition.len() - 1;
    if ndim < n_other {
        return Err(EinopsError(format!(
            "Wrong shape: expected >={n_other} dims. Received {ndim}-dim tensor."
        )));
    }
    let ell: Vec<Axis> = (0..ndim - n_other).map(ellipsis_axis).collect();
    let mut left_groups = Vec::new();
    for c in &left.composition {
        match c {
            Composition::Ellipsis => left_groups.extend(ell.iter().map(|a| vec![a.clone()])),
            Composition::Group(g) => left_groups.push(g.clone()),
        }
    }
    let mut right_groups = Vec::new();
    for c in &right.composition {
        match c {
            Composition::Ellipsis => right_groups.extend(ell.iter().map(|a| vec![a.clone()])),
            Composition::Group(g) => {
                let mut group = Vec::new();
                for a in g {
                    if *a == Axis::Ellipsis {
                        group.extend(ell.iter().cloned());
                    } else {
                        group.push(a.clone());
                    }
                }
                right_groups.push(group);
            }
        }
    }
    left_ids.remove(&Axis::Ellipsis);
    left_ids.extend(ell.iter().cloned());
    if right.has_ellipsis {
        right_ids.remove(&Axis::Ellipsis);
        right_ids.extend(ell.iter().cloned());
    }
    Ok((left_groups, right_groups, left_ids, right_ids))
}

fn product<S: Size>(items: impl IntoIterator<Item = S>) -> S {
    items.into_iter().fold(S::lit(1), |acc, x| acc.mul(&x))
}

impl Recipe {
    /// The length of each elementary axis that the pattern or a keyword gives.
    fn given_lengths<S: Size>(&self, keyword_lengths: &[(String, S)]) -> Vec<Option<S>> {
        let mut lengths: Vec<Option<S>> = self
            .lengths
            .iter()
            .map(|l| match l {
                KnownLength::Literal(v) => Some(S::lit(*v as i64)),
                KnownLength::Unknown | KnownLength::FromKeyword => None,
            })
            .collect();
        for (name, pos) in &self.keyword_axes {
            let value = keyword_lengths
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone());
            lengths[*pos] = value;
        }
        lengths
    }

    /// The input dims whose keyword lengths einops checks against them and the decider
    /// cannot: a group of given lengths and one axis to infer whose product `k` does not
    /// divide the dim by construction ([`GroupCheck::Divides`]), or a group of given lengths
    /// only whose product may differ from the dim ([`GroupCheck::Equals`]), as `(input dim,
    /// k, check)`. einops raises unless the check holds, so a caller may take it as true past
    /// the call.
    pub fn undecided_groups<S: Size>(
        &self,
        shape: &[S],
        keyword_lengths: &[(String, S)],
        d: &Decider,
    ) -> Vec<(usize, S, GroupCheck)> {
        let lengths = self.given_lengths(keyword_lengths);
        let group = |(axis, (known_axes, unknown_axes)): (usize, &(Vec<usize>, Vec<usize>))| {
            if known_axes.is_empty() || unknown_axes.len() > 1 {
                return None;
            }
            let given: Option<Vec<S>> = known_axes.iter().map(|&i| lengths[i].clone()).collect();
            let k = product(given?);
            let length = shape.get(axis)?;
            if !unknown_axes.is_empty() {
                let undecided = d.eq(&length.floordiv(&k).mul(&k), length) == Tri::Unknown;
                // `N // y` of symbols is exact only by assumption: the quotient `N·y⁻¹` then
                // leaves comparisons undecided that a size of its own decides.
                return (undecided || !k.divides_by_construction(length)).then_some((
                    axis,
                    k,
                    GroupCheck::Divides,
                ));
            }
            (d.eq(length, &k) == Tri::Unknown).then_some((axis, k, GroupCheck::Equals))
        };
        self.input_known_unknown
            .iter()
            .enumerate()
            .filter_map(group)
            .collect()
    }

    /// Bind the recipe to an input `shape` and the keyword lengths (einops
    /// `_reconstruct_from_shape`). Symbolic checks that cannot be decided give
    /// [`PlanError::Undecided`]; an exact division of symbolic sizes is recorded in the
    /// decider as a divisibility assumption.
    pub fn plan<S: Size>(
        &self,
        shape: &[S],
        keyword_lengths: &[(String, S)],
        d: &Decider,
    ) -> Result<Plan<S>, PlanError> {
        let mut lengths = self.given_lengths(keyword_lengths);
        let known =
            |lengths: &[Option<S>], i: usize| lengths[i].clone().ok_or(PlanError::Undecided);

        let mut need_init_reshape = false;
        for (input_axis, (known_axes, unknown_axes)) in self.input_known_unknown.iter().enumerate()
        {
            let length = shape[input_axis].clone();
            if known_axes.is_empty() && unknown_axes.len() == 1 {
                lengths[unknown_axes[0]] = Some(length);
                continue;
            }
            let known_product = product(
                known_axes
                    .iter()
                    .map(|&i| known(&lengths, i))
                    .collect::<Result<Vec<S>, _>>()?,
            );
            if let Some(&unknown) = unknown_axes.first() {
                if known_product.as_lit() == Some(0) {
                    return Err(PlanError::Einops(EinopsError(
                        "integer modulo by zero".into(),
                    )));
                }
                let floor_quotient = length.floordiv(&known_product);
                let quotient = match d.eq(&floor_quotient.mul(&known_product), &length) {
                    Tri::Yes => floor_quotient,
                    Tri::No => {
                        return Err(PlanError::Einops(EinopsError(format!(
                            "Shape mismatch, can't divide axis of length {length} in chunks of {known_product}"
                        ))))
                    }
                    // The interpreter learns `H = p1·(H/p1)` (`undecided_groups`) and asks again.
                    Tri::Unknown => return Err(PlanError::Undecided),
                };
                if length.as_lit().is_none() || known_product.as_lit().is_none() {
                    d.record(Assumption::Divides {
                        divisor: known_product.to_string(),
                        dividend: length.to_string(),
                    });
                }
                lengths[unknown] = Some(quotient);
            } else {
                match d.eq(&length, &known_product) {
                    Tri::Yes => {}
                    Tri::No => {
                        return Err(PlanError::Einops(EinopsError(format!(
                            "Shape mismatch, {length} != {known_product}"
                        ))))
                    }
                    Tri::Unknown => return Err(PlanError::Undecided),
                }
            }
            if known_axes.len() + unknown_axes.len() != 1 {
                need_init_reshape = true;
            }
        }

        let n_elementary = self.axes_permutation.len();
        let init_shape = if need_init_reshape {
            Some(
                (0..n_elementary)
                    .map(|i| known(&lengths, i))
                    .collect::<Result<Vec<S>, _>>()?,
            )
        } else {
            None
        };
        let mut need_final_reshape = false;
        let mut output_shape = Vec::with_capacity(self.output_groups.len());
        for group in &self.output_groups {
            let parts = group
                .iter()
                .map(|&i| known(&lengths, i))
                .collect::<Result<Vec<S>, _>>()?;
            if parts.len() != 1 {
                need_final_reshape = true;
            }
            output_shape.push(product(parts));
        }
        let added_axes = self
            .added_axes
            .iter()
            .map(|&(pos, elem)| Ok((pos, known(&lengths, elem)?)))
            .collect::<Result<Vec<(usize, S)>, PlanError>>()?;
        let identity = self
            .axes_permutation
            .iter()
            .enumerate()
            .all(|(i, &p)| i == p);
        Ok(Plan {
            init_shape,
            permutation: (!identity).then(|| self.axes_permutation.clone()),
            reduced_axes: (self.first_reduced_axis..n_elementary).collect(),
            rank_after_adding: added_axes.len() + n_elementary,
            added_axes,
            final_shape: need_final_reshape.then(|| output_shape.clone()),
            output_shape,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Decider;

    fn plan(
        pattern: &str,
        op: Operation,
        shape: &[i64],
        kw: &[(&str, i64)],
    ) -> Result<Plan<i64>, String> {
        let names: Vec<String> = kw.iter().map(|(n, _)| n.to_string()).collect();
        let recipe = prepare(pattern, op, &names, shape.len()).map_err(|e| e.0)?;
        let kw: Vec<(String, i64)> = kw.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        recipe
            .plan(shape, &kw, &Decider::concrete())
            .map_err(|e| match e {
                PlanError::Einops(e) => e.0,
                PlanError::Undecided => "undecided".into(),
            })
    }

    /// Real-model patterns: (pattern, op, input shape, keyword lengths, expected output shape,
    /// init reshape?, permutation, final reshape?). Output shapes follow from einops'
    /// definition (C-order merging); the step structure is `_reconstruct_from_shape`'s.
    #[test]
    fn plans_for_patterns_from_real_models() {
        use Operation::*;
        type Case<'a> = (
            &'a str,
            Operation,
            &'a [i64],
            &'a [(&'a str, i64)],
            &'a [i64],
            bool,
            Option<&'a [usize]>,
            bool,
        );
        let cases: &[Case] = &[
            // attention head merge / split
            (
                "b h n d -> b n (h d)",
                Rearrange,
                &[2, 4, 5, 8],
                &[],
                &[2, 5, 32],
                false,
                Some(&[0, 2, 1, 3]),
                true,
            ),
            (
                "b n (h d) -> b h n d",
                Rearrange,
                &[2, 5, 32],
                &[("h", 4)],
                &[2, 4, 5, 8],
                true,
                Some(&[0, 2, 1, 3]),
                false,
            ),
            (
                "b (h d) n -> b h d n",
                Rearrange,
                &[2, 32, 5],
                &[("h", 4)],
                &[2, 4, 8, 5],
                true,
                None,
                false,
            ),
            (
                "b n (qkv h d) -> qkv b h n d",
                Rearrange,
                &[2, 5, 96],
                &[("qkv", 3), ("h", 4)],
                &[3, 2, 4, 5, 8],
                true,
                Some(&[2, 0, 3, 1, 4]),
                false,
            ),
            (
                "... (h d) -> ... h d",
                Rearrange,
                &[2, 5, 32],
                &[("h", 4)],
                &[2, 5, 4, 8],
                true,
                None,
                false,
            ),
            (
                "b h n d -> (b h) n d",
                Rearrange,
                &[2, 4, 5, 8],
                &[],
                &[8, 5, 8],
                false,
                None,
                true,
            ),
            // ViT patch embedding
            (
                "b c (h p1) (w p2) -> b (h w) (p1 p2 c)",
                Rearrange,
                &[2, 3, 32, 32],
                &[("p1", 16), ("p2", 16)],
                &[2, 4, 768],
                true,
                Some(&[0, 2, 4, 3, 5, 1]),
                true,
            ),
            (
                "b (h w) (p1 p2 c) -> b c (h p1) (w p2)",
                Rearrange,
                &[2, 4, 768],
                &[("h", 2), ("p1", 16), ("p2", 16)],
                &[2, 3, 32, 32],
                true,
                Some(&[0, 5, 1, 3, 2, 4]),
                true,
            ),
            // channels-last / transpose-like
            (
                "b c h w -> b h w c",
                Rearrange,
                &[2, 3, 4, 5],
                &[],
                &[2, 4, 5, 3],
                false,
                Some(&[0, 2, 3, 1]),
                false,
            ),
            (
                "b c h w -> b (h w) c",
                Rearrange,
                &[2, 3, 4, 5],
                &[],
                &[2, 20, 3],
                false,
                Some(&[0, 2, 3, 1]),
                true,
            ),
            (
                "b n d -> b d n",
                Rearrange,
                &[2, 5, 8],
                &[],
                &[2, 8, 5],
                false,
                Some(&[0, 2, 1]),
                false,
            ),
            // unsqueeze / squeeze with 1 and ()
            (
                "b d -> b 1 d",
                Rearrange,
                &[2, 8],
                &[],
                &[2, 1, 8],
                false,
                None,
                true,
            ),
            (
                "b 1 d -> b d",
                Rearrange,
                &[2, 1, 8],
                &[],
                &[2, 8],
                true,
                None,
                false,
            ),
            (
                "b n -> b n ()",
                Rearrange,
                &[2, 5],
                &[],
                &[2, 5, 1],
                false,
                None,
                true,
            ),
            // flatten
            (
                "b c h w -> b (c h w)",
                Rearrange,
                &[2, 3, 4, 5],
                &[],
                &[2, 60],
                false,
                None,
                true,
            ),
            (
                "b ... -> b (...)",
                Rearrange,
                &[2, 3, 4, 5],
                &[],
                &[2, 60],
                false,
                None,
                true,
            ),
            // reduce (pooling, global average)
            (
                "b c (h h2) (w w2) -> b c h w",
                Reduce(Reduction::Max),
                &[2, 3, 8, 8],
                &[("h2", 2), ("w2", 2)],
                &[2, 3, 4, 4],
                true,
                Some(&[0, 1, 2, 4, 3, 5]),
                false,
            ),
            (
                "b n d -> b d",
                Reduce(Reduction::Mean),
                &[2, 5, 8],
                &[],
                &[2, 8],
                false,
                Some(&[0, 2, 1]),
                false,
            ),
            (
                "b c h w -> b c",
                Reduce(Reduction::Mean),
                &[2, 3, 4, 5],
                &[],
                &[2, 3],
                false,
                None,
                false,
            ),
            // repeat (broadcast new axes)
            (
                "h w -> h w c",
                Repeat,
                &[4, 5],
                &[("c", 3)],
                &[4, 5, 3],
                false,
                None,
                false,
            ),
            (
                "b n d -> b h n d",
                Repeat,
                &[2, 5, 8],
                &[("h", 4)],
                &[2, 4, 5, 8],
                false,
                None,
                false,
            ),
            (
                "h w -> (h h2) (w w2)",
                Repeat,
                &[4, 5],
                &[("h2", 2), ("w2", 3)],
                &[8, 15],
                false,
                None,
                true,
            ),
            (
                "d -> b d",
                Repeat,
                &[8],
                &[("b", 2)],
                &[2, 8],
                false,
                None,
                false,
            ),
        ];
        for (pattern, op, shape, kw, out, init, perm, fin) in cases {
            let p = plan(pattern, *op, shape, kw).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            assert_eq!(p.output_shape, *out, "{pattern}: output shape");
            assert_eq!(p.init_shape.is_some(), *init, "{pattern}: init reshape");
            assert_eq!(p.permutation.as_deref(), *perm, "{pattern}: permutation");
            assert_eq!(p.final_shape.is_some(), *fin, "{pattern}: final reshape");
        }
        assert!(cases.len() >= 15);
    }

    #[test]
    fn reduce_puts_reduced_axes_last_and_repeat_records_added_axes() {
        let p = plan(
            "b c (h h2) (w w2) -> b c h w",
            Operation::Reduce(Reduction::Max),
            &[2, 3, 8, 8],
            &[("h2", 2), ("w2", 2)],
        )
        .unwrap();
        assert_eq!(p.init_shape, Some(vec![2, 3, 4, 2, 4, 2]));
        assert_eq!(p.reduced_axes, vec![4, 5]);
        let p = plan(
            "b n d -> b h n d",
            Operation::Repeat,
            &[2, 5, 8],
            &[("h", 4)],
        )
        .unwrap();
        assert_eq!(p.added_axes, vec![(1, 4)]);
        assert_eq!(p.rank_after_adding, 4);
    }

    #[test]
    fn inconsistent_patterns_are_rejected_with_einops_messages() {
        use Operation::*;
        let e = plan("b h n d -> b n (h x)", Rearrange, &[2, 4, 5, 8], &[]).unwrap_err();
        assert_eq!(
            e,
            "Identifiers only on one side of expression (should be on both): {'d', 'x'}"
        );
        let e = plan("b n (h d) -> b h n d", Rearrange, &[2, 5, 30], &[("h", 4)]).unwrap_err();
        assert_eq!(
            e,
            "Shape mismatch, can't divide axis of length 30 in chunks of 4"
        );
        let e = plan(
            "b (h d) -> b h d",
            Rearrange,
            &[2, 30],
            &[("h", 4), ("d", 8)],
        )
        .unwrap_err();
        assert_eq!(e, "Shape mismatch, 30 != 32");
        let e = plan("b n (h d) -> b h n d", Rearrange, &[2, 5, 32], &[]).unwrap_err();
        assert_eq!(e, "Could not infer sizes for {'h', 'd'}");
        let e = plan("b h n d -> b n (h d)", Rearrange, &[2, 5, 8], &[]).unwrap_err();
        assert_eq!(e, "Wrong shape: expected 4 dims. Received 3-dim tensor.");
        let e = plan("b ... d -> b d", Reduce(Reduction::Sum), &[2], &[]).unwrap_err();
        assert_eq!(e, "Wrong shape: expected >=2 dims. Received 1-dim tensor.");
        let e = plan("b d -> b d c", Repeat, &[2, 8], &[]).unwrap_err();
        assert_eq!(e, "Specify sizes for new axes in repeat: {'c'}");
        let e = plan("b d -> b", Repeat, &[2, 8], &[]).unwrap_err();
        assert_eq!(
            e,
            "Unexpected identifiers on the left side of repeat: {'d'}"
        );
        let e = plan("b d -> b d e", Reduce(Reduction::Sum), &[2, 8], &[]).unwrap_err();
        assert_eq!(
            e,
            "Unexpected identifiers on the right side of reduce sum: {'e'}"
        );
        let e = plan("b d -> b d", Rearrange, &[2, 8], &[("z", 3)]).unwrap_err();
        assert_eq!(e, "Axis z is not used in transform");
        let e = plan("b (c 2) -> b c", Rearrange, &[2, 8], &[]).unwrap_err();
        assert!(e.starts_with("Non-unitary anonymous axes are not supported in rearrange"));
        let e = plan("b d -> ... d", Rearrange, &[2, 8], &[]).unwrap_err();
        assert!(e.starts_with("Ellipsis found in right side, but not left side"));
        let e = plan("(b ...) d -> b d", Rearrange, &[2, 8], &[]).unwrap_err();
        assert!(e.starts_with("Ellipsis inside parenthesis in the left side is not allowed"));
    }
}
