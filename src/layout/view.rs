//! ATen's `computeStride` (spec §3): the strides `view(new_shape)` gives a tensor, or the
//! proof that no strides exist — the error PyTorch reports as "view size is not compatible
//! with input tensor's size and stride".

use super::decided::{known, product, Undecided};
use super::layout::{contiguous_strides, Layout};
use super::size::{Decider, Size};
use super::tri::Tri;

/// The answer of [`view_strides`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ViewStrides<S> {
    /// `view` succeeds with these strides (the offset is unchanged).
    Strides(Vec<S>),
    /// No strides describe the new shape over the same storage: `view` raises E_VIEW,
    /// `reshape` copies.
    NotViewable,
    /// Symbolic sizes prevent deciding.
    Unknown,
}

/// The strides of `layout` viewed as `new_shape` (already resolved by
/// [`infer_size`](super::infer_size::infer_size), same element count), exactly as ATen's
/// `computeStride` decides them.
///
/// **How it decides.** The old dimensions are cut into *chunks*: runs of neighbouring
/// dimensions that together form one evenly strided block, i.e. that could be merged into a
/// single dimension. Scanning from the innermost dimension outward, the dimension on the
/// left joins the current chunk when its size is 1 (a size-1 dimension never breaks a
/// block) or when its stride equals `chunk numel × chunk base stride`, the base stride
/// being the stride of the chunk's innermost dimension.
///
/// The new dimensions are then handed out, innermost first, greedily to the chunks,
/// innermost chunk first: a chunk keeps taking dimensions while the product taken so far is
/// below its element count, *or* while the next dimension has size 1 — so size-1 new
/// dimensions right after a finished group are absorbed by it. Each taken dimension gets
/// stride `product so far × base stride`. A chunk must end with a product exactly equal
/// to its element count, and every new dimension must be taken; otherwise a new dimension
/// would have to span two blocks, and there is no stride for that.
///
/// Special cases first: a 0-d tensor views to all strides 1; a zero-element tensor keeps
/// its strides if the shape is unchanged and otherwise gets fresh contiguous strides — it
/// is always viewable.
///
/// The loop interleaves chunk detection and hand-out (as ATen does), so with symbolic sizes
/// a chunk that fails is reported as `NotViewable` even when a later, undecidable chunk
/// boundary was never examined. Any undecidable comparison that matters gives `Unknown`.
///
/// When the hand-out is undecided, the view still fails if the new shape has fewer dims
/// that may exceed 1 than the input has blocks ([`too_few_dims_for_blocks`]).
pub fn view_strides<S: Size>(layout: &Layout<S>, new_shape: &[S], dec: &Decider) -> ViewStrides<S> {
    match compute_stride(&layout.shape, &layout.strides, new_shape, dec) {
        Ok(Some(strides)) => ViewStrides::Strides(strides),
        Ok(None) => ViewStrides::NotViewable,
        Err(Undecided) if too_few_dims_for_blocks(layout, new_shape, dec) => {
            ViewStrides::NotViewable
        }
        Err(Undecided) => ViewStrides::Unknown,
    }
}

/// No view of `layout` as `new_shape` exists, whatever the sizes of `new_shape` are, when
/// it has fewer dims that may exceed 1 (`-1` counts as one) than `layout` has *blocks*:
/// computeStride's chunks, the maximal runs of dims that form one evenly strided block.
/// Every block of ≥ 2 elements must be covered exactly by consecutive new dims, and a block
/// can only share a new dim with nothing, so it needs a new dim of its own that exceeds 1.
/// `(B, T, H, D)` strides `(T·H·D, D, T·D, 1)` (heads transposed back) has 4 blocks, so
/// `view(B, T, -1)` fails for any `B`, `T`: this decides targets whose sizes the analysis
/// cannot relate to the input. Any undecided block boundary or a possibly empty tensor
/// (zero-element tensors view to anything) answers false, and so does a decider that
/// takes different-looking sizes to differ (its boundaries would only hold "unless
/// `D·T == D`": the count is meant as an exact argument).
pub fn too_few_dims_for_blocks<S: Size>(
    layout: &Layout<S>,
    new_shape: &[S],
    dec: &Decider,
) -> bool {
    if dec.assumptions().distinct_sizes {
        return false;
    }
    let may_exceed_one = new_shape
        .iter()
        .filter(|size| !dec.eq_lit(*size, 1).is_yes())
        .count();
    match blocks_of_two_or_more(layout, dec) {
        Some(blocks) => blocks > may_exceed_one,
        None => false,
    }
}

/// How many of `layout`'s computeStride chunks hold ≥ 2 elements (a lower bound: a chunk
/// whose size might be 1 is not counted); `None` when a chunk boundary is undecided or the
/// tensor may be empty.
pub fn blocks_of_two_or_more<S: Size>(layout: &Layout<S>, dec: &Decider) -> Option<usize> {
    let (shape, strides) = (&layout.shape, &layout.strides);
    if shape.is_empty() || !dec.eq_lit(&product(shape), 0).is_no() {
        return None;
    }
    let one = S::lit(1);
    let mut blocks = 0;
    let mut chunk_base = strides[strides.len() - 1].clone();
    let mut chunk_numel = one.clone();
    for d in (0..shape.len()).rev() {
        chunk_numel = chunk_numel.mul(&shape[d]);
        let chunk_ends = d == 0
            || left_is_separate(shape, strides, d - 1, &chunk_numel, &chunk_base, dec).known()?;
        if chunk_ends {
            if dec.ne(&chunk_numel, &one).is_yes() {
                blocks += 1;
            }
            if d > 0 {
                chunk_base = strides[d - 1].clone();
                chunk_numel = one.clone();
            }
        }
    }
    Some(blocks)
}

/// Does dim `left` start a new chunk, left of the chunk of `chunk_numel` elements whose
/// innermost stride is `chunk_base`? Not when its size is 1 (a size-1 dim never breaks a
/// block) or its stride continues the block.
fn left_is_separate<S: Size>(
    shape: &[S],
    strides: &[S],
    left: usize,
    chunk_numel: &S,
    chunk_base: &S,
    dec: &Decider,
) -> Tri {
    dec.ne(&shape[left], &S::lit(1))
        .and(dec.ne(&strides[left], &chunk_numel.mul(chunk_base)))
}

fn compute_stride<S: Size>(
    old_shape: &[S],
    old_strides: &[S],
    new_shape: &[S],
    dec: &Decider,
) -> Result<Option<Vec<S>>, Undecided> {
    let one = S::lit(1);
    if old_shape.is_empty() {
        return Ok(Some(vec![one; new_shape.len()]));
    }
    if known(dec.eq_lit(&product(old_shape), 0))? {
        return zero_element_strides(old_shape, old_strides, new_shape, dec).map(Some);
    }

    let mut new_strides = vec![S::lit(0); new_shape.len()];
    // New dimensions `0..unassigned` have not been handed to a chunk yet.
    let mut unassigned = new_shape.len();
    let mut chunk_base = old_strides[old_strides.len() - 1].clone();
    let mut chunk_numel = one.clone();
    for old_d in (0..old_shape.len()).rev() {
        chunk_numel = chunk_numel.mul(&old_shape[old_d]);
        let chunk_ends = old_d == 0
            || known(left_is_separate(
                old_shape,
                old_strides,
                old_d - 1,
                &chunk_numel,
                &chunk_base,
                dec,
            ))?;
        if !chunk_ends {
            continue;
        }

        let mut taken = one.clone();
        while unassigned > 0 {
            let candidate = &new_shape[unassigned - 1];
            let below = dec.lt(&taken, &chunk_numel);
            let keep_taking = if below.is_yes() {
                true
            } else if below.is_no() && dec.ne(&taken, &chunk_numel).is_yes() {
                // Past the chunk already: more dims of size 1 leave `taken` as it is, so
                // the chunk can never be matched, whether the next size is 1 or not.
                return Ok(None);
            } else {
                known(below.or(dec.eq(candidate, &one)))?
            };
            if !keep_taking {
                break;
            }
            new_strides[unassigned - 1] = taken.mul(&chunk_base);
            taken = taken.mul(candidate);
            unassigned -= 1;
        }
        if !known(dec.eq(&taken, &chunk_numel))? {
            return Ok(None);
        }
        if old_d > 0 {
            chunk_base = old_strides[old_d - 1].clone();
            chunk_numel = one.clone();
        }
    }
    Ok(if unassigned == 0 {
        Some(new_strides)
    } else {
        None
    })
}

/// A zero-element tensor: same shape → same strides, otherwise §1.5 contiguous strides.
fn zero_element_strides<S: Size>(
    old_shape: &[S],
    old_strides: &[S],
    new_shape: &[S],
    dec: &Decider,
) -> Result<Vec<S>, Undecided> {
    if same_shape(old_shape, new_shape, dec)? {
        return Ok(old_strides.to_vec());
    }
    // Decide which new sizes are 0 (they count as 1) so contiguous_strides sees literals.
    let mut sizes = Vec::with_capacity(new_shape.len());
    for size in new_shape {
        sizes.push(if known(dec.eq_lit(size, 0))? {
            S::lit(0)
        } else {
            size.clone()
        });
    }
    Ok(contiguous_strides(&sizes))
}

/// Element-wise equality of two shapes; `Undecided` only when no element decides "different".
pub(crate) fn same_shape<S: Size>(a: &[S], b: &[S], dec: &Decider) -> Result<bool, Undecided> {
    if a.len() != b.len() {
        return Ok(false);
    }
    let mut undecided = false;
    for (x, y) in a.iter().zip(b) {
        match dec.eq(x, y).known() {
            Some(false) => return Ok(false),
            Some(true) => {}
            None => undecided = true,
        }
    }
    if undecided {
        Err(Undecided)
    } else {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strides(shape: &[i64], strides: &[i64], target: &[i64]) -> ViewStrides<i64> {
        view_strides(
            &Layout::new(shape.to_vec(), strides.to_vec(), 0),
            target,
            &Decider::concrete(),
        )
    }

    #[test]
    fn worked_examples_of_the_spec() {
        // §3.3 (E): (2,4,3).transpose(1,2) → (2,3,4)/(12,1,3): no merge is possible.
        assert_eq!(
            strides(&[2, 3, 4], &[12, 1, 3], &[2, 12]),
            ViewStrides::NotViewable
        );
        assert_eq!(
            strides(&[2, 3, 4], &[12, 1, 3], &[6, 4]),
            ViewStrides::NotViewable
        );
        // (2,6,4)[:, :3] → (2,3,4)/(24,4,1): chunks {1,2} and {0}.
        assert_eq!(
            strides(&[2, 3, 4], &[24, 4, 1], &[2, 12]),
            ViewStrides::Strides(vec![24, 1])
        );
        assert_eq!(
            strides(&[2, 3, 4], &[24, 4, 1], &[6, 4]),
            ViewStrides::NotViewable
        );
        // empty(1,1).expand(3,4): one chunk with base 0, every view works.
        assert_eq!(
            strides(&[3, 4], &[0, 0], &[6, 2, 1]),
            ViewStrides::Strides(vec![0, 0, 0])
        );
        // (5,4)/(0,1): split the stride-1 dim, never merge across the stride-0 one.
        assert_eq!(
            strides(&[5, 4], &[0, 1], &[5, 2, 2]),
            ViewStrides::Strides(vec![0, 2, 1])
        );
        assert_eq!(strides(&[5, 4], &[0, 1], &[20]), ViewStrides::NotViewable);
        // (2,3)/(1,2) → view(1,2,1,3): size-1 dims take the stride of the group to their right.
        assert_eq!(
            strides(&[2, 3], &[1, 2], &[1, 2, 1, 3]),
            ViewStrides::Strides(vec![2, 1, 6, 2])
        );
    }

    #[test]
    fn size_one_dims_start_chunks_but_never_end_them() {
        // (3,1)/(1,100): chunk {1} = (1, base 100), chunk {0} = (3, base 1).
        assert_eq!(
            strides(&[3, 1], &[1, 100], &[3]),
            ViewStrides::Strides(vec![1])
        );
        assert_eq!(
            strides(&[3, 1], &[1, 100], &[1, 3]),
            ViewStrides::Strides(vec![3, 1])
        );
        // §11.1: (2,1,3)/(5,3,1) — the size-1 dim is skipped, dims 0 and 2 do not line up.
        assert_eq!(
            strides(&[2, 1, 3], &[5, 3, 1], &[6]),
            ViewStrides::NotViewable
        );
    }

    #[test]
    fn zero_d_and_zero_element_inputs() {
        assert_eq!(strides(&[], &[], &[1, 1]), ViewStrides::Strides(vec![1, 1]));
        assert_eq!(
            strides(&[2, 0, 3], &[1, 1, 0], &[2, 0, 3]),
            ViewStrides::Strides(vec![1, 1, 0])
        );
        assert_eq!(
            strides(&[2, 0, 3], &[1, 1, 0], &[6, 0]),
            ViewStrides::Strides(vec![1, 1])
        );
        assert_eq!(
            strides(&[0], &[1], &[0, 3, 0, 1]),
            ViewStrides::Strides(vec![3, 1, 1, 1])
        );
    }

    #[test]
    fn fewer_dims_than_blocks_fail_whatever_the_target_sizes() {
        use crate::layout::{Assumptions, Dim};
        let (b, t, h, d) = (Dim::sym("B"), Dim::sym("T"), Dim::sym("H"), Dim::sym("D"));
        // (B, H, T, D) contiguous, heads transposed back: (B, T, H, D) in four blocks.
        let strides = vec![h.mul(&t).mul(&d), d.clone(), t.mul(&d), Dim::lit(1)];
        let transposed = Layout::new(
            vec![b.clone(), t.clone(), h.clone(), d.clone()],
            strides,
            Dim::lit(0),
        );
        let (n, m) = (Dim::sym("n"), Dim::sym("m"));
        let target = [b.clone(), n.clone(), m.clone()];
        let sizes_two = Assumptions::default();
        let dec = Decider::new(&sizes_two);
        assert_eq!(blocks_of_two_or_more(&transposed, &dec), Some(4));
        assert!(too_few_dims_for_blocks(&transposed, &target, &dec));
        assert_eq!(
            view_strides(&transposed, &target, &dec),
            ViewStrides::NotViewable
        );
        // Four dims of size > 1 may cover four blocks: not decided by the count.
        assert!(!too_few_dims_for_blocks(
            &transposed,
            &[b.clone(), n.clone(), m.clone(), Dim::sym("k")],
            &dec
        ));
        // A size-1 target dim covers no block.
        assert!(too_few_dims_for_blocks(
            &transposed,
            &[b.clone(), n.clone(), Dim::lit(1), m.clone()],
            &dec
        ));
        // Contiguous: one block.
        let contiguous = Layout::contiguous(vec![b.clone(), t.clone(), h.clone(), d.clone()]);
        assert_eq!(blocks_of_two_or_more(&contiguous, &dec), Some(1));
        assert!(!too_few_dims_for_blocks(
            &contiguous,
            std::slice::from_ref(&n),
            &dec
        ));
        // Sizes that may be 1 leave the boundaries undecided.
        let sizes_one = Assumptions {
            min_symbolic_size: 1,
            ..Assumptions::default()
        };
        let dec = Decider::new(&sizes_one);
        assert_eq!(blocks_of_two_or_more(&transposed, &dec), None);
        assert!(!too_few_dims_for_blocks(&transposed, &target, &dec));
    }
}
