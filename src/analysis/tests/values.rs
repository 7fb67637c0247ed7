//! Values other than tensors that decide layouts: sizes read from shapes, tuple unpacking,
//! lists and tuples of tensors, walrus, module constants, arithmetic on sizes.

use super::check;

#[test]
fn sizes_from_size() {
    check(
        r#"
        def f(x):
            B, T, C = x.size()
            return x.view(B * T, C)
        "#,
        r#"
        x.size(): size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B * T, C): view
          (B, T, C) strides (C·T, C, 1) -> (B·T, C) strides (C, 1)
        "#,
    );
}

#[test]
fn size_of_one_dim() {
    check(
        r#"
        def f(x):
            C = x.size(-1)
            return x.view(-1, C)
        "#,
        r#"
        x.size(-1): size
          contiguous, shape unknown -> ok
        x.view(-1, C): view
          contiguous, shape unknown -> (x[0], C) strides (C, 1)
        "#,
    );
}

#[test]
fn shape_index_names_one_dim() {
    check(
        r#"
        def f(x):
            B = x.shape[0]
            return x.view(B, -1).t()
        "#,
        r#"
        x.view(B, -1): view
          contiguous, shape unknown -> (B, x[1]) strides (x[1], 1)
        x.view(B, -1).t(): t
          (B, x[1]) strides (x[1], 1) -> (x[1], B) strides (1, x[1])
        "#,
    );
}

#[test]
fn starred_unpacking_of_a_shape() {
    check(
        r#"
        def f(x):
            *rest, C = x.shape
            return x.view(-1, C)
        "#,
        r#"
        x.shape: size [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.view(-1, C): view
          contiguous, shape unknown -> ok
        "#,
    );
}

#[test]
fn module_constant_as_a_size() {
    check(
        r#"
        HEADS = 4

        def f(x):
            B, T, C = x.shape
            return x.view(B, T, HEADS, C // HEADS)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, HEADS, C // HEADS): view
          (B, T, C) strides (C·T, C, 1) -> undecided, may copy
        "#,
    );
}

#[test]
fn walrus_binds_a_tensor() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            if (y := x.transpose(1, 2)) is not None:
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
fn tuple_unpacking_swaps_tensors() {
    check(
        r#"
        def f(x, y):
            B, T, C = x.shape
            a, b = x.transpose(1, 2), x
            a, b = b, a
            return a.view(B, -1), b.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        a.view(B, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        b.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn list_of_tensors_indexed() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            ts = [x, x.transpose(1, 2)]
            return ts[1].view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        ts[1].view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn unbind_parts_are_left_undecided() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            a, b = x.unbind(1)
            return a
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.unbind(1): unbind
          (B, T, C) strides (C·T, C, 1) -> undecided, may copy
        "#,
    );
}

#[test]
fn view_of_a_split_part_is_undecided() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            a, b = x.split([2, C - 2], dim=-1)
            return b.view(B * T, C - 2)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.split([2, C - 2], dim=-1): split
          (B, T, C) strides (C·T, C, 1) -> ok
        b.view(B * T, C - 2): view
          (B, T, C - 2) strides (C·T, C, 1) -> undecided, may copy
        "#,
    );
}

#[test]
fn reshape_with_a_shape_tuple_variable() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            shape = (B, T * C)
            return x.transpose(1, 2).reshape(shape)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).reshape(shape): reshape
          (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
        "#,
    );
}

#[test]
fn augmented_assignment_of_a_size() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            n = T
            n *= C
            return x.view(B, n)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, n): view
          (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn numel_and_dim_are_numbers() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            n = x.numel()
            return x.view(n // B, B)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.numel(): numel
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(n // B, B): view
          (B, T, C) strides (C·T, C, 1) -> (C·T, B) strides (B, 1)
        "#,
    );
}

#[test]
fn assert_learns_an_equality() {
    check(
        r#"
        def f(x, y):
            B, T, C = x.shape
            b, c = y.shape
            assert c == C
            return y.view(b, 1, C).expand(b, T, C)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        y.shape: size
          (b, c) strides (c, 1) -> ok
        y.view(b, 1, C): view
          (b, C) strides (C, 1) -> (b, 1, C) strides (C, C, 1)
        y.view(b, 1, C).expand(b, T, C): expand
          (b, 1, C) strides (C, C, 1) -> (b, T, C) strides (C, 0, 1)
        "#,
    );
}
