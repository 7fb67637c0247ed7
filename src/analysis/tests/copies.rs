//! Which ops materialise their input: `contiguous`, `clone`, `reshape` of an expanded
//! tensor, dtype conversions, and writes.

use super::check;

#[test]
fn contiguous_twice_copies_once() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2).contiguous()
            return y.contiguous()
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).contiguous(): contiguous
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, T, 1), copies
        y.contiguous(): contiguous
          (B, C, T) strides (C·T, T, 1) -> (B, C, T) strides (C·T, T, 1)
        "#,
    );
}

#[test]
fn clone_of_a_transposed_tensor() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2).clone()
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).clone(): clone
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C), copies
        "#,
    );
}

#[test]
fn reshape_of_an_expanded_tensor_copies() {
    check(
        r#"
        def f(x):
            B, C = x.shape
            return x.unsqueeze(1).expand(B, 4, C).reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, C) strides (C, 1) -> ok
        x.unsqueeze(1): unsqueeze
          (B, C) strides (C, 1) -> (B, 1, C) strides (C, C, 1)
        x.unsqueeze(1).expand(B, 4, C): expand
          (B, 1, C) strides (C, C, 1) -> (B, 4, C) strides (C, 0, 1)
        x.unsqueeze(1).expand(B, 4, C).reshape(B, -1): reshape
          (B, 4, C) strides (C, 0, 1) -> (B, 4·C) strides (4·C, 1), copies
        "#,
    );
}

#[test]
fn contiguous_of_an_expanded_tensor_copies() {
    check(
        r#"
        def f(x):
            B, C = x.shape
            return x[:, None].expand(B, 4, C).contiguous()
        "#,
        r#"
        x.shape: size
          (B, C) strides (C, 1) -> ok
        x[:, None]: getitem
          (B, C) strides (C, 1) -> (B, 1, C) strides (C, C, 1)
        x[:, None].expand(B, 4, C): expand
          (B, 1, C) strides (C, C, 1) -> (B, 4, C) strides (C, 0, 1)
        x[:, None].expand(B, 4, C).contiguous(): contiguous
          (B, 4, C) strides (C, 0, 1) -> (B, 4, C) strides (4·C, C, 1), copies
        "#,
    );
}

#[test]
fn float_keeps_the_layout() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2).float()
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).float(): dtype conversion
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C), may copy
        "#,
    );
}

#[test]
fn to_a_device() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2).to('cuda')
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).to('cuda'): to
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C), may copy
        "#,
    );
}

#[test]
fn in_place_add_on_a_view() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2)
            y.add_(1)
            return y
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.add_(1): in-place
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C)
        "#,
    );
}

#[test]
fn write_into_a_reshape_copy_is_lost() {
    check(
        r#"
        def f(w, src):
            n, m = w.shape
            w.t().reshape(-1).copy_(src)
        "#,
        r#"
        w.shape: size
          (n, m) strides (m, 1) -> ok
        w.t(): t
          (n, m) strides (m, 1) -> (m, n) strides (1, m)
        w.t().reshape(-1): reshape
          (m, n) strides (1, m) -> (m·n,) strides (1,), copies
        w.t().reshape(-1).copy_(src): in-place [write]
          (m·n,) strides (1,) -> (m·n,) strides (1,)
        "#,
    );
}

#[test]
fn contiguous_of_a_narrowed_row_copies() {
    check(
        r#"
        def f(x):
            n, m = x.shape
            return x[:, 1:].contiguous()
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x[:, 1:]: getitem
          (n, m) strides (m, 1) -> (n, m - 1) strides (m, 1)
        x[:, 1:].contiguous(): contiguous
          (n, m - 1) strides (m, 1) -> (n, m - 1) strides (m - 1, 1), copies
        "#,
    );
}

#[test]
fn reshape_of_a_transposed_matrix_to_a_vector_copies() {
    check(
        r#"
        def f(w):
            n, m = w.shape
            return w.T.reshape(-1)
        "#,
        r#"
        w.shape: size
          (n, m) strides (m, 1) -> ok
        w.T: T
          (n, m) strides (m, 1) -> (m, n) strides (1, m)
        w.T.reshape(-1): reshape
          (m, n) strides (1, m) -> (m·n,) strides (1,), copies
        "#,
    );
}

#[test]
fn repeat_writes_a_new_tensor() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            return x.transpose(1, 2).repeat(1, 2, 1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).repeat(1, 2, 1): repeat
          (B, C, T) strides (C·T, 1, C) -> (B, 2·C, T) strides (2·C·T, T, 1)
        "#,
    );
}
