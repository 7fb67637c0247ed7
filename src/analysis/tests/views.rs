//! Views: the strides of `transpose`, `permute`, slicing, indexing, `expand`, `chunk`, and
//! `view` succeeding or failing on what they make.

use super::check;

#[test]
fn transpose_swaps_sizes_and_strides() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        "#,
    );
}

#[test]
fn view_after_transpose_fails() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2)
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn permute_moves_strides_with_sizes() {
    check(
        r#"
        def f(x):
            B, C, H, W = x.shape
            return x.permute(0, 2, 3, 1)
        "#,
        r#"
        x.shape: size
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        x.permute(0, 2, 3, 1): permute
          [if `x` has the default memory format (channels-last would make the permute contiguous)] (B, C, H, W) strides (C·H·W, H·W, W, 1) -> (B, H, W, C) strides (C·H·W, W, 1, H·W)
          [if `x` is channels-last] (B, C, H, W) strides (C·H·W, 1, C·W, C) -> (B, H, W, C) strides (C·H·W, C·W, C, 1)
        "#,
    );
}

#[test]
fn t_of_a_matrix() {
    check(
        r#"
        def f(w):
            n, m = w.shape
            return w.t()
        "#,
        r#"
        w.shape: size
          (n, m) strides (m, 1) -> ok
        w.t(): t
          (n, m) strides (m, 1) -> (m, n) strides (1, m)
        "#,
    );
}

#[test]
fn slice_of_last_dim_keeps_row_stride() {
    check(
        r#"
        def f(x):
            n, m = x.shape
            return x[:, 1:]
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x[:, 1:]: getitem
          (n, m) strides (m, 1) -> (n, m - 1) strides (m, 1)
        "#,
    );
}

#[test]
fn slice_stop_past_an_unknown_size_is_undecided() {
    check(
        r#"
        def f(x):
            n, m = x.shape
            return x[:, :4]
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x[:, :4]: getitem
          (n, m) strides (m, 1) -> undecided, may copy
        "#,
    );
}

#[test]
fn view_of_a_narrowed_last_dim_fails() {
    check(
        r#"
        def f(x):
            n = x.shape[0]
            y = x.view(n, 8)
            return y[:, :4].view(-1)
        "#,
        r#"
        x.view(n, 8): view
          contiguous, shape unknown -> (n, 8) strides (8, 1)
        y[:, :4]: getitem
          (n, 8) strides (8, 1) -> (n, 4) strides (8, 1)
        y[:, :4].view(-1): view
          (n, 4) strides (8, 1) -> fails ViewIncompatible, target (-1,)
        "#,
    );
}

#[test]
fn view_of_a_leading_slice_is_fine() {
    check(
        r#"
        def f(x):
            n, m = x.shape
            return x[1:].view(-1)
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x[1:]: getitem
          (n, m) strides (m, 1) -> (n - 1, m) strides (m, 1)
        x[1:].view(-1): view
          (n - 1, m) strides (m, 1) -> (m·(n - 1),) strides (1,)
        "#,
    );
}

#[test]
fn step_slice_doubles_the_stride() {
    check(
        r#"
        def f(x):
            n, m = x.shape
            return x[:, ::2]
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x[:, ::2]: getitem
          (n, m) strides (m, 1) -> (n, (m + 1) // 2) strides (m, 2)
        "#,
    );
}

#[test]
fn integer_index_drops_the_dim() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x[:, 0]
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x[:, 0]: getitem
          (B, T, C) strides (C·T, C, 1) -> (B, C) strides (C·T, 1)
        "#,
    );
}

#[test]
fn unsqueeze_then_expand_has_stride_zero() {
    check(
        r#"
        def f(x):
            B, C = x.shape
            return x.unsqueeze(1).expand(B, 4, C)
        "#,
        r#"
        x.shape: size
          (B, C) strides (C, 1) -> ok
        x.unsqueeze(1): unsqueeze
          (B, C) strides (C, 1) -> (B, 1, C) strides (C, C, 1)
        x.unsqueeze(1).expand(B, 4, C): expand
          (B, 1, C) strides (C, C, 1) -> (B, 4, C) strides (C, 0, 1)
        "#,
    );
}

#[test]
fn view_merging_an_expanded_dim_fails() {
    check(
        r#"
        def f(x):
            B, C = x.shape
            y = x.unsqueeze(1).expand(B, 4, C)
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, C) strides (C, 1) -> ok
        x.unsqueeze(1): unsqueeze
          (B, C) strides (C, 1) -> (B, 1, C) strides (C, C, 1)
        x.unsqueeze(1).expand(B, 4, C): expand
          (B, 1, C) strides (C, C, 1) -> (B, 4, C) strides (C, 0, 1)
        y.view(B, -1): view
          (B, 4, C) strides (C, 0, 1) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn view_merging_leading_dims_is_fine() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.view(B * T, C)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B * T, C): view
          (B, T, C) strides (C·T, C, 1) -> (B·T, C) strides (C, 1)
        "#,
    );
}

#[test]
fn view_splitting_the_last_dim_into_heads() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.view(B, T, 8, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, 8, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, 8, C/8) strides (C·T, C, C/8, 1)
        "#,
    );
}

#[test]
fn view_after_transpose_and_contiguous_is_fine() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(0, 1).contiguous().view(-1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(0, 1): transpose
          (B, T, C) strides (C·T, C, 1) -> (T, B, C) strides (C, C·T, 1)
        x.transpose(0, 1).contiguous(): contiguous
          (T, B, C) strides (C, C·T, 1) -> (T, B, C) strides (B·C, C, 1), copies
        x.transpose(0, 1).contiguous().view(-1): view
          (T, B, C) strides (B·C, C, 1) -> (B·C·T,) strides (1,)
        "#,
    );
}

#[test]
fn view_splitting_a_strided_dim_is_fine() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2)
            return y.view(B, C, 2, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.view(B, C, 2, -1): view
          (B, C, T) strides (C·T, 1, C) -> (B, C, 2, T/2) strides (C·T, 1, C·T/2, C)
        "#,
    );
}

#[test]
fn chunk_keeps_the_full_row_stride() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            q, k, v = x.view(B, T, 192).chunk(3, dim=-1)
            return q
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, 192): view
          (B, T, C) strides (C·T, C, 1) -> undecided, may copy
        x.view(B, T, 192).chunk(3, dim=-1): chunk
          (B, T, 192) strides (192·T, 192, 1) -> ok
        "#,
    );
}

#[test]
fn view_merging_leading_dims_of_a_chunk_is_fine() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            q, k, v = x.view(B, T, 192).chunk(3, dim=-1)
            return q.view(B * T, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, 192): view
          (B, T, C) strides (C·T, C, 1) -> undecided, may copy
        x.view(B, T, 192).chunk(3, dim=-1): chunk
          (B, T, 192) strides (192·T, 192, 1) -> ok
        q.view(B * T, -1): view
          (B, T, 64) strides (192·T, 192, 1) -> (B·T, 64) strides (192, 1)
        "#,
    );
}

#[test]
fn view_merging_the_chunked_dim_fails() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            q, k, v = x.view(B, T, 192).chunk(3, dim=-1)
            return q.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, 192): view
          (B, T, C) strides (C·T, C, 1) -> undecided, may copy
        x.view(B, T, 192).chunk(3, dim=-1): chunk
          (B, T, 192) strides (192·T, 192, 1) -> ok
        q.view(B, -1): view
          (B, T, 64) strides (192·T, 192, 1) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn attention_heads_split_then_transposed() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.view(B, T, 4, -1).transpose(1, 2)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, 4, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, 4, C/4) strides (C·T, C, C/4, 1)
        x.view(B, T, 4, -1).transpose(1, 2): transpose
          (B, T, 4, C/4) strides (C·T, C, C/4, 1) -> (B, 4, T, C/4) strides (C·T, C/4, C, 1)
        "#,
    );
}

#[test]
fn squeeze_and_unsqueeze() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.unsqueeze(0)
            return y.squeeze(0)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.unsqueeze(0): unsqueeze
          (B, T, C) strides (C·T, C, 1) -> (1, B, T, C) strides (B·C·T, C·T, C, 1)
        y.squeeze(0): squeeze
          (1, B, T, C) strides (B·C·T, C·T, C, 1) -> (B, T, C) strides (C·T, C, 1)
        "#,
    );
}

#[test]
fn mt_swaps_the_last_two_dims() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.mT
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.mT: mT
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        "#,
    );
}

#[test]
fn movedim_is_a_permutation() {
    check(
        r#"
        def f(x):
            B, C, H, W = x.shape
            return x.movedim(1, -1)
        "#,
        r#"
        x.shape: size
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        x.movedim(1, -1): movedim
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> (B, H, W, C) strides (C·H·W, W, 1, H·W)
        "#,
    );
}

#[test]
fn narrow_keeps_strides() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.narrow(1, 0, 2)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.narrow(1, 0, 2): narrow
          (B, T, C) strides (C·T, C, 1) -> (B, 2, C) strides (C·T, C, 1)
        "#,
    );
}

#[test]
fn torch_transpose_as_a_function() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            return torch.transpose(x, 1, 2).view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        torch.transpose(x, 1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        torch.transpose(x, 1, 2).view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn swapaxes_is_a_transpose() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.swapaxes(0, 2)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.swapaxes(0, 2): swapaxes
          (B, T, C) strides (C·T, C, 1) -> (C, T, B) strides (1, C, C·T)
        "#,
    );
}

#[test]
fn expand_as_another_tensor() {
    check(
        r#"
        def f(x, y):
            B, T, C = y.shape
            return x.view(B, 1, C).expand_as(y)
        "#,
        r#"
        y.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, 1, C): view
          contiguous, shape unknown -> (B, 1, C) strides (C, C, 1)
        x.view(B, 1, C).expand_as(y): expand_as
          (B, 1, C) strides (C, C, 1) -> (B, T, C) strides (C, 0, 1)
        "#,
    );
}
