//! The layouts `scaled_dot_product_attention` may give its output, one per kernel family
//! (docs/stride-semantics.md §7). Which kernel runs is decided at run time (device, dtype,
//! head size, mask, dropout), so the analysis keeps each as an alternative of its own,
//! named by the kernel.

use super::dense::infer_dense_strides;
use super::{Decider, Layout, Size};

/// The kernel families whose outputs differ in layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdpaKernel {
    /// `_scaled_dot_product_attention_math`: a matmul output, contiguous.
    Math,
    /// Flash (CUDA and CPU) and cuDNN: allocated like the query.
    LikeQuery,
    /// CUDA memory-efficient: `(B, S, H, D)` storage, returned transposed.
    MemoryEfficient,
}

impl SdpaKernel {
    /// The kernel's name in a note ("runs its math kernel").
    pub fn name(self) -> &'static str {
        match self {
            SdpaKernel::Math => "math",
            SdpaKernel::LikeQuery => "flash/cuDNN",
            SdpaKernel::MemoryEfficient => "memory-efficient",
        }
    }
}

/// The output layout of each kernel family for `query` (…, L, E) and a value whose last
/// size is `value_dim` (…, S, Ev): shape (…, L, Ev). `None` when the query has fewer than
/// two dims or its dim order cannot be decided.
pub fn sdpa_output_layouts<S: Size>(
    query: &Layout<S>,
    value_dim: &S,
    d: &Decider,
) -> Option<Vec<(SdpaKernel, Layout<S>)>> {
    let rank = query.rank();
    if rank < 2 {
        return None;
    }
    let mut shape = query.shape.clone();
    shape[rank - 1] = value_dim.clone();
    let mut out = vec![(SdpaKernel::Math, Layout::contiguous(shape.clone()))];
    let like_query = infer_dense_strides(&shape, &query.strides, d).ok()?;
    out.push((
        SdpaKernel::LikeQuery,
        Layout::new(shape.clone(), like_query, S::lit(0)),
    ));
    if rank == 4 {
        // Contiguous (B, L, H, Ev), seen through `transpose(1, 2)`.
        let (b, h, l, e) = (&shape[0], &shape[1], &shape[2], &shape[3]);
        let bshd = Layout::contiguous(vec![b.clone(), l.clone(), h.clone(), e.clone()]);
        let strides = vec![
            bshd.strides[0].clone(),
            bshd.strides[2].clone(),
            bshd.strides[1].clone(),
            bshd.strides[3].clone(),
        ];
        out.push((
            SdpaKernel::MemoryEfficient,
            Layout::new(shape, strides, S::lit(0)),
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Assumptions;

    #[test]
    fn each_kernel_family_has_its_layout() {
        let assumptions = Assumptions::default();
        let d = Decider::new(&assumptions);
        // A query split from tokens: (B, T, H, D) storage seen as (B, H, T, D); torch 2.15
        // on CPU: (60, 4, 12, 1) from its flash kernel, (60, 20, 4, 1) with dropout (math).
        let query = Layout::new(vec![2, 3, 5, 4], vec![60, 4, 12, 1], 0);
        let layouts = sdpa_output_layouts(&query, &4, &d).unwrap();
        let strides: Vec<(SdpaKernel, Vec<i64>)> =
            layouts.into_iter().map(|(k, l)| (k, l.strides)).collect();
        assert_eq!(
            strides,
            vec![
                (SdpaKernel::Math, vec![60, 20, 4, 1]),
                (SdpaKernel::LikeQuery, vec![60, 4, 12, 1]),
                (SdpaKernel::MemoryEfficient, vec![60, 4, 12, 1]),
            ]
        );
    }
}
