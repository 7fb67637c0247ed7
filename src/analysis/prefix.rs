//! Leading dims of unknown number: `input_shape = hidden_states.shape[:-1]` of a tensor
//! whose rank nothing in the function fixes, then `view(*input_shape, -1, head_dim)`.
//!
//! Such a tensor is laid out with its leading dims *packed* into one size at dim 0, named
//! `*input_shape` (their product). The packed dims are contiguous among themselves (they
//! come from a tensor assumed contiguous and no op that could separate them is applied),
//! so for the ops below the packed layout behaves exactly like the real one: a view or
//! reshape sees the packed dims as one mergeable block, and an op on trailing dims
//! (`chunk(2, dim=-1)`, `transpose(-1, -2)`, `x[..., :k]`, a `Linear`) never looks inside
//! it. Every other op gets an input of unknown layout (`unsafe_on_packed`): a positive dim
//! (`transpose(1, 2)`) or a rank (`x.ndim`) would count the packed dims as one.
//!
//! In values, the packed dims are one `Value::PackedSizes` element of a tuple: its
//! length and the positions after it are unknown, its splat (`*input_shape`) is one size
//! of a shape.

use crate::layout::{Dim, Layout};
use crate::ops::{ArgValue, BoundArgs, OpKind, OpSpec, ParamType};

type SymLayout = Layout<Dim>;

/// The first character of a packed size's name (as `*name` splats in Python).
const PACKED_MARK: char = '*';

/// The name a packed size is minted under.
pub fn packed_name(name: &str) -> String {
    format!("{PACKED_MARK}{name}")
}

/// Is `d` a packed size (one symbol minted by [`packed_name`])?
pub fn is_packed(d: &Dim) -> bool {
    packed_base_name(d).is_some()
}

/// The name a packed size was minted from (`input_shape` for `*input_shape`).
pub fn packed_base_name(d: &Dim) -> Option<&str> {
    d.as_symbol()?.strip_prefix(PACKED_MARK)
}

/// Would applying `spec` with these arguments need to know how many dims are packed in
/// one of its tensors? Then the op's result is left unknown.
pub fn unsafe_on_packed(spec: &OpSpec, bound: &BoundArgs<Dim>) -> bool {
    // A view or reshape sees the packed dims as the one block they are, as an input dim
    // or as a target entry.
    if matches!(spec.kind, OpKind::View | OpKind::Reshape) {
        return false;
    }
    fn packed_size_arg(v: &ArgValue<Dim>) -> bool {
        match v {
            ArgValue::Int(d) => is_packed(d),
            ArgValue::IntList(items) => items.iter().any(packed_size_arg),
            _ => false,
        }
    }
    // Elsewhere sizes align with dims (`expand(*input_shape, -1)` from the right): their
    // number matters.
    let mut tensors: Vec<&SymLayout> = Vec::new();
    for (_, v) in bound.iter() {
        match v {
            ArgValue::Tensor(Some(l)) => tensors.push(l),
            ArgValue::TensorList(ls) => tensors.extend(ls.iter().flatten()),
            v if packed_size_arg(v) => return true,
            _ => {}
        }
    }
    let Some(packed) = tensors
        .iter()
        .find(|l| l.shape.iter().any(is_packed))
        .copied()
    else {
        return false;
    };
    let rank = packed.shape.len();
    if !is_packed(&packed.shape[0]) {
        return true;
    }
    let safe_kind = matches!(
        spec.kind,
        OpKind::Contiguous
            | OpKind::Clone
            | OpKind::Convert
            | OpKind::Alias
            | OpKind::Dropout
            | OpKind::Elementwise
            | OpKind::ContiguousResult
            | OpKind::Reduction
            | OpKind::ReductionWithIndices
            | OpKind::Topk
            | OpKind::Transpose
            | OpKind::Narrow
            | OpKind::Select
            | OpKind::Split
            | OpKind::Chunk
            | OpKind::Unbind
            | OpKind::Squeeze
            | OpKind::Unsqueeze
            | OpKind::Flatten
            | OpKind::Size
            | OpKind::Index
            | OpKind::Linear
            | OpKind::LinearModule
    );
    if !safe_kind {
        return true;
    }
    // Every dim the op is given must name a trailing dim, counted from the end.
    let trailing = |d: &ArgValue<Dim>| {
        d.as_i64()
            .is_some_and(|v| v < 0 && v.unsigned_abs() < rank as u64)
    };
    for p in &spec.params {
        if !matches!(p.ty, ParamType::Dim | ParamType::Dims) {
            continue;
        }
        match bound.get(&p.name) {
            // `x.shape`: the whole shape, the packed element first.
            None | Some(ArgValue::None) if spec.kind == OpKind::Size => {}
            Some(ArgValue::IntList(dims)) if !dims.is_empty() && dims.iter().all(trailing) => {}
            Some(d) if trailing(d) => {}
            // No dim (`squeeze()`, `sum()`) reaches every dim; a positive one counts from
            // the packed dims.
            _ => return true,
        }
    }
    // `x[..., :k]` addresses trailing dims only; `x[:, 0]` counts from the front.
    if spec.kind == OpKind::Index {
        let first = match bound.get("indices") {
            Some(ArgValue::IntList(items)) => items.first(),
            other => other,
        };
        if !matches!(first, Some(ArgValue::Ellipsis)) {
            return true;
        }
    }
    // An operand broadcast against the packed dims would need their number: one of lower
    // rank aligns with trailing dims only, one packed the same way matches them.
    tensors
        .iter()
        .any(|l| l.shape.len() > rank || (l.shape.len() == rank && l.shape[0] != packed.shape[0]))
}

/// Would an `nn` layer of this kind need to know how many dims are packed in `input`?
/// Layers on the last dims (`Linear`, norms, activations, dropout) do not; the others
/// read the rank (a convolution's or a batch norm's format).
pub fn unsafe_layer_on_packed(kind: OpKind, input: &SymLayout) -> bool {
    input.shape.iter().any(is_packed)
        && !(is_packed(&input.shape[0])
            && matches!(
                kind,
                OpKind::LinearModule
                    | OpKind::Elementwise
                    | OpKind::Dropout
                    | OpKind::Alias
                    | OpKind::ContiguousResult
                    | OpKind::EmbeddingModule
            ))
}

/// How many dims the packed block of `layout` (at dim 0, the only one) holds when the
/// tensor has `rank` dims in all; `None` if it has no such block or `rank` is too small.
pub fn packed_count(layout: &SymLayout, rank: usize) -> Option<usize> {
    let (first, rest) = layout.shape.split_first()?;
    (is_packed(first) && !rest.iter().any(is_packed) && rank >= layout.shape.len())
        .then(|| rank - layout.shape.len() + 1)
}

/// `layout` with its packed block (dim 0) replaced by the dims `sizes`, laid out
/// contiguously among themselves where the block was; and, when `sizes` is one dim, the
/// equality `packed = that dim`, a fact about every alias for the caller to learn (several
/// dims are this layout's only: elsewhere the packed size stays one dim of a layout).
pub fn unpack(layout: &SymLayout, sizes: Vec<Dim>) -> (SymLayout, Option<(Dim, Dim)>) {
    let learned = match sizes.as_slice() {
        [one] => Some((layout.shape[0].clone(), one.clone())),
        _ => None,
    };
    (split_packed(layout, sizes), learned)
}

fn split_packed(layout: &SymLayout, sizes: Vec<Dim>) -> SymLayout {
    let mut strides = Vec::with_capacity(sizes.len());
    let mut stride = layout.strides[0].clone();
    for size in sizes.iter().rev() {
        strides.push(stride.clone());
        stride = stride.mul(size);
    }
    strides.reverse();
    SymLayout {
        shape: sizes
            .into_iter()
            .chain(layout.shape[1..].iter().cloned())
            .collect(),
        strides: strides
            .into_iter()
            .chain(layout.strides[1..].iter().cloned())
            .collect(),
        offset: layout.offset.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tables::OpTables;
    use crate::ir::Language;

    fn packed(rest: &[&str]) -> SymLayout {
        let mut shape = vec![Dim::sym(&packed_name("input_shape"))];
        shape.extend(rest.iter().map(|s| Dim::sym(s)));
        Layout::contiguous(shape)
    }

    /// Is `x.method(args…)` on a `(*input_shape, H, D)` tensor refused?
    fn refused(method: &str, args: Vec<ArgValue<Dim>>) -> bool {
        let tables = OpTables::for_language(Language::Python, "");
        let spec = tables.method(method).expect(method);
        let input = ArgValue::Tensor(Some(packed(&["H", "D"])));
        let bound = crate::ops::bind(spec, Some(input), args, Vec::new()).expect("binds");
        unsafe_on_packed(spec, &bound)
    }

    fn int(v: i64) -> ArgValue<Dim> {
        ArgValue::Int(Dim::lit(v))
    }

    #[test]
    fn ops_on_trailing_dims_are_exact_on_the_packed_block() {
        assert!(!refused("transpose", vec![int(-1), int(-2)]));
        assert!(!refused("chunk", vec![int(2), int(-1)]));
        assert!(!refused("softmax", vec![int(-1)]));
        assert!(!refused("view", vec![int(-1), int(4)]));
        assert!(!refused("contiguous", vec![]));
    }

    #[test]
    fn ops_that_count_dims_from_the_front_are_refused() {
        assert!(refused("transpose", vec![int(1), int(2)]));
        // The packed block itself, counted from the end.
        assert!(refused("transpose", vec![int(-3), int(-1)]));
        assert!(refused("chunk", vec![int(2)]));
        assert!(refused("permute", vec![int(0), int(2), int(1)]));
        assert!(refused("squeeze", vec![]));
        let packed = ArgValue::Int(Dim::sym(&packed_name("input_shape")));
        assert!(refused("expand", vec![packed, int(-1), int(-1)]));
    }

    #[test]
    fn operands_may_broadcast_only_over_trailing_dims() {
        let other = |l: SymLayout| refused("__mul__", vec![ArgValue::Tensor(Some(l))]);
        assert!(!other(Layout::contiguous(vec![Dim::sym("D")])));
        let mut per_head = packed(&["H", "D"]);
        per_head.shape[2] = Dim::lit(1);
        assert!(!other(per_head));
        assert!(other(Layout::contiguous(vec![
            Dim::sym("B"),
            Dim::sym("H"),
            Dim::sym("D")
        ])));
    }

    #[test]
    fn a_split_block_is_contiguous_in_itself_where_the_block_was() {
        let l = Layout {
            shape: vec![Dim::sym(&packed_name("p")), Dim::sym("H"), Dim::sym("D")],
            strides: vec![Dim::sym("S"), Dim::sym("D"), Dim::lit(1)],
            offset: Dim::lit(0),
        };
        assert_eq!(packed_count(&l, 4), Some(2));
        assert_eq!(packed_count(&l, 2), None);
        let (split, learned) = unpack(&l, vec![Dim::sym("B"), Dim::sym("T")]);
        assert_eq!(learned, None, "two dims are this layout's only");
        assert_eq!(split.shape[..2], [Dim::sym("B"), Dim::sym("T")]);
        assert_eq!(
            split.strides[..2],
            [Dim::sym("T").mul(&Dim::sym("S")), Dim::sym("S")]
        );
        let (_, learned) = unpack(&l, vec![Dim::sym("B")]);
        assert_eq!(learned, Some((l.shape[0].clone(), Dim::sym("B"))));
    }
}
