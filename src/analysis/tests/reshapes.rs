//! `reshape`, `flatten`, `unflatten` and `contiguous`: a view where strides allow it, a copy
//! where they do not; `view` errors that are not about strides.

use super::check;

#[test]
fn reshape_of_a_contiguous_tensor_does_not_copy() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.reshape(B, -1): reshape
          (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn reshape_after_permute_copies() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.permute(0, 2, 1).reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.permute(0, 2, 1): permute
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.permute(0, 2, 1).reshape(B, -1): reshape
          (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
        "#,
    );
}

#[test]
fn reshape_to_the_same_shape_does_not_copy() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2).reshape(B, C, T)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).reshape(B, C, T): reshape
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C)
        "#,
    );
}

#[test]
fn merging_heads_after_transpose_copies() {
    check(
        r#"
        def f(x):
            B, H, T, D = x.shape
            return x.transpose(1, 2).reshape(B, T, H * D)
        "#,
        r#"
        x.shape: size
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> ok
        x.transpose(1, 2): transpose
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> (B, T, H, D) strides (D·H·T, D, D·T, 1)
        x.transpose(1, 2).reshape(B, T, H * D): reshape
          (B, T, H, D) strides (D·H·T, D, D·T, 1) -> (B, T, D·H) strides (D·H·T, D·H, 1), copies
        "#,
    );
}

#[test]
fn flatten_of_a_contiguous_tensor() {
    check(
        r#"
        def f(x):
            B, C, H, W = x.shape
            return x.flatten(1)
        "#,
        r#"
        x.shape: size
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        x.flatten(1): flatten
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> (B, C·H·W) strides (C·H·W, 1)
        "#,
    );
}

#[test]
fn flatten_after_transpose_copies() {
    check(
        r#"
        def f(x):
            B, H, T, D = x.shape
            return x.transpose(1, 2).flatten(2)
        "#,
        r#"
        x.shape: size
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> ok
        x.transpose(1, 2): transpose
          (B, H, T, D) strides (D·H·T, D·T, D, 1) -> (B, T, H, D) strides (D·H·T, D, D·T, 1)
        x.transpose(1, 2).flatten(2): flatten
          (B, T, H, D) strides (D·H·T, D, D·T, 1) -> (B, T, D·H) strides (D·H·T, D·H, 1), copies
        "#,
    );
}

#[test]
fn flatten_of_the_untouched_dims_of_a_permuted_tensor() {
    check(
        r#"
        def f(x):
            B, C, H, W = x.shape
            return x.permute(1, 0, 2, 3).flatten(2)
        "#,
        r#"
        x.shape: size
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        x.permute(1, 0, 2, 3): permute
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> (C, B, H, W) strides (H·W, C·H·W, W, 1)
        x.permute(1, 0, 2, 3).flatten(2): flatten
          (C, B, H, W) strides (H·W, C·H·W, W, 1) -> (C, B, H·W) strides (H·W, C·H·W, 1)
        "#,
    );
}

#[test]
fn unflatten_splits_a_dim() {
    check(
        r#"
        def f(x, h):
            B, T, C = x.shape
            return x.unflatten(-1, (h, -1))
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.unflatten(-1, (h, -1)): unflatten
          (B, T, C) strides (C·T, C, 1) -> (B, T, h, C/h) strides (C·T, C, C/h, 1)
        "#,
    );
}

#[test]
fn view_minus_one_of_a_contiguous_tensor() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.view(-1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(-1): view
          (B, T, C) strides (C·T, C, 1) -> (B·C·T,) strides (1,)
        "#,
    );
}

#[test]
fn two_inferred_sizes_fail() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.view(-1, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(-1, -1): view
          (B, T, C) strides (C·T, C, 1) -> fails TwoInferred, target (-1, -1)
        "#,
    );
}

#[test]
fn view_with_the_wrong_element_count_fails() {
    check(
        r#"
        import torch

        def f():
            x = torch.zeros(2, 3)
            return x.view(4)
        "#,
        r#"
        torch.zeros(2, 3): factory
          contiguous, shape unknown -> (2, 3) strides (3, 1)
        x.view(4): view
          (2, 3) strides (3, 1) -> fails ElementCount, target (4,)
        "#,
    );
}

#[test]
fn reshape_of_a_narrowed_last_dim_copies() {
    check(
        r#"
        def f(x):
            n = x.shape[0]
            y = x.view(n, 8)
            return y[:, :4].reshape(-1)
        "#,
        r#"
        x.view(n, 8): view
          contiguous, shape unknown -> (n, 8) strides (8, 1)
        y[:, :4]: getitem
          (n, 8) strides (8, 1) -> (n, 4) strides (8, 1)
        y[:, :4].reshape(-1): reshape
          (n, 4) strides (8, 1) -> (4·n,) strides (1,), copies
        "#,
    );
}

#[test]
fn contiguous_of_a_transposed_tensor_copies() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2).contiguous()
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).contiguous(): contiguous
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, T, 1), copies
        "#,
    );
}

#[test]
fn contiguous_of_a_contiguous_tensor_does_not() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.contiguous()
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.contiguous(): contiguous
          (B, T, C) strides (C·T, C, 1) -> (B, T, C) strides (C·T, C, 1)
        "#,
    );
}

#[test]
fn torch_flatten_as_a_function() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            return torch.flatten(x.transpose(1, 2), 1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        torch.flatten(x.transpose(1, 2), 1): flatten
          (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
        "#,
    );
}

#[test]
fn torch_reshape_as_a_function() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            return torch.reshape(x, (B * T, C))
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        torch.reshape(x, (B * T, C)): torch.reshape
          (B, T, C) strides (C·T, C, 1) -> (B·T, C) strides (C, 1)
        "#,
    );
}

#[test]
fn reshape_of_the_mt_property_copies() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.mT.reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.mT: mT
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.mT.reshape(B, -1): reshape
          (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
        "#,
    );
}

#[test]
fn view_as_of_a_transposed_tensor_is_undecided() {
    check(
        r#"
        def f(x, y):
            B, T, C = x.shape
            z = y.view(B, T, C)
            return z.transpose(1, 2).view_as(x)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        y.view(B, T, C): view
          contiguous, shape unknown -> (B, T, C) strides (C·T, C, 1)
        z.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        z.transpose(1, 2).view_as(x): view_as
          (B, C, T) strides (C·T, 1, C) -> undecided, may copy
        "#,
    );
}
