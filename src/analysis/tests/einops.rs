//! einops: `rearrange`, `repeat`, `reduce` patterns as steps of views and reshapes; and
//! `torch.einsum`.

use super::check;

#[test]
fn rearrange_splitting_heads_is_a_view() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            B, T, C = x.shape
            return rearrange(x, 'b n (h d) -> b h n d', h=8)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        rearrange(x, 'b n (h d) -> b h n d', h=8): einops.rearrange
          (B, T, C) strides (C·T, C, 1) -> (B, 8, T, C/8) strides (8·C/8·T, C/8, 8·C/8, 1)
        "#,
    );
}

#[test]
fn rearrange_merging_heads_copies() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            B, H, T, D = x.shape
            return rearrange(x, 'b h n d -> b n (h d)')
        "#,
        r#"
        x.shape: size
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> ok
        rearrange(x, 'b h n d -> b n (h d)'): einops.rearrange
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> (B, T, D·H) strides (D·H·T, D·H, 1), copies
        "#,
    );
}

#[test]
fn rearrange_merging_adjacent_dims_is_a_view() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            b, c, h, w = x.shape
            return rearrange(x, 'b c h w -> b c (h w)')
        "#,
        r#"
        x.shape: size
          (b, c, h, w) strides (c·h·w, h·w, w, 1) -> ok
        rearrange(x, 'b c h w -> b c (h w)'): einops.rearrange
          (b, c, h, w) strides (c·h·w, h·w, w, 1) -> (b, c, h·w) strides (c·h·w, h·w, 1)
        "#,
    );
}

#[test]
fn rearrange_channels_last_is_a_view() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            b, c, h, w = x.shape
            return rearrange(x, 'b c h w -> b (h w) c')
        "#,
        r#"
        x.shape: size
          (b, c, h, w) strides (c·h·w, h·w, w, 1) -> ok
        rearrange(x, 'b c h w -> b (h w) c'): einops.rearrange
          (b, c, h, w) strides (c·h·w, h·w, w, 1) -> (b, h·w, c) strides (c·h·w, 1, h·w)
        "#,
    );
}

#[test]
fn rearrange_of_a_transposed_input() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            B, T, C = x.shape
            return rearrange(x.transpose(1, 2), 'b c t -> (b c) t')
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        rearrange(x.transpose(1, 2), 'b c t -> (b c) t'): einops.rearrange
          (B, C, T) strides (C·T, 1, C) -> (B·C, T) strides (T, 1), copies
        "#,
    );
}

#[test]
fn rearrange_permutation_only() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            B, T, C = x.shape
            return rearrange(x, 'b t c -> b c t')
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        rearrange(x, 'b t c -> b c t'): einops.rearrange
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        "#,
    );
}

#[test]
fn repeat_adds_a_dim() {
    check(
        r#"
        from einops import repeat

        def f(x):
            B, D = x.shape
            return repeat(x, 'b d -> b n d', n=4)
        "#,
        r#"
        x.shape: size
          (B, D) strides (D, 1) -> ok
        repeat(x, 'b d -> b n d', n=4): einops.repeat
          (B, D) strides (D, 1) -> (B, 4, D) strides (D, 0, 1)
        "#,
    );
}

#[test]
fn reduce_mean_over_a_dim() {
    check(
        r#"
        from einops import reduce

        def f(x):
            B, T, C = x.shape
            return reduce(x, 'b t c -> b c', 'mean')
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        reduce(x, 'b t c -> b c', 'mean'): einops.reduce
          (B, T, C) strides (C·T, C, 1) -> (B, C) strides (C, 1)
        "#,
    );
}

#[test]
fn einsum_output_is_left_undecided() {
    check(
        r#"
        import torch

        def f(q, k):
            B, H, T, D = q.shape
            S = k.shape[2]
            return torch.einsum('bhid,bhjd->bhij', q, k)
        "#,
        r#"
        q.shape: size
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> ok
        torch.einsum('bhid,bhjd->bhij', q, k): einsum [unknown input: input from a construct the analysis does not model]
          contiguous, shape unknown -> undecided
        "#,
    );
}

#[test]
fn view_merging_heads_after_rearrange_fails() {
    check(
        r#"
        from einops import rearrange

        def f(x):
            B, T, C = x.shape
            y = rearrange(x, 'b n (h d) -> b h n d', h=4)
            return y.view(y.shape[0], -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        rearrange(x, 'b n (h d) -> b h n d', h=4): einops.rearrange
          (B, T, C) strides (C·T, C, 1) -> (B, 4, T, C/4) strides (4·C/4·T, C/4, 4·C/4, 1)
        y.shape: size
          (B, 4, T, C/4) strides (4·C/4·T, C/4, 4·C/4, 1) -> ok
        y.view(y.shape[0], -1): view
          (B, 4, T, C/4) strides (4·C/4·T, C/4, 4·C/4, 1) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}
