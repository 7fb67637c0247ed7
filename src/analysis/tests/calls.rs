//! Calls into the analysed code: a helper runs with its caller's argument layouts (its
//! events say `[from caller …]`) as well as on its own; results, tuples, defaults, keywords,
//! nested functions, lambdas.

use super::check;

#[test]
fn helper_called_with_a_transposed_tensor() {
    check(
        r#"
        def merge(t):
            return t.view(t.shape[0], -1)

        def f(x):
            B, T, C = x.shape
            return merge(x.transpose(1, 2))
        "#,
        r#"
        t.view(t.shape[0], -1): view
          contiguous, shape unknown -> (t.shape[0], t[1]) strides (t[1], 1)
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        t.shape: size [from caller `merge(x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> ok
        t.view(t.shape[0], -1): view [from caller `merge(x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn helper_returns_a_transposed_tensor() {
    check(
        r#"
        def flip(t):
            return t.transpose(1, 2)

        def f(x):
            B, T, C = x.shape
            y = flip(x)
            return y.view(B, -1)
        "#,
        r#"
        t.transpose(1, 2): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(1, 2): transpose [from caller `flip(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn helper_called_twice_with_two_layouts() {
    check(
        r#"
        def flat(t):
            return t.reshape(-1)

        def f(x):
            B, T, C = x.shape
            a = flat(x)
            b = flat(x.transpose(1, 2))
            return a, b
        "#,
        r#"
        t.reshape(-1): reshape
          contiguous, shape unknown -> (t[0],) strides (1,)
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.reshape(-1): reshape [from caller `flat(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B·C·T,) strides (1,)
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        t.reshape(-1): reshape [from caller `flat(x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> (B·C·T,) strides (1,), copies
        "#,
    );
}

#[test]
fn keyword_argument_reaches_the_parameter() {
    check(
        r#"
        def split_heads(t, heads):
            B, T, C = t.shape
            return t.view(B, T, heads, -1)

        def f(x):
            B, T, C = x.shape
            return split_heads(heads=4, t=x.transpose(1, 2))
        "#,
        r#"
        t.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.view(B, T, heads, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, heads, C/heads) strides (C·T, C, C/heads, 1)
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        t.shape: size [from caller `split_heads(heads=4, t=x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> ok
        t.view(B, T, heads, -1): view [from caller `split_heads(heads=4, t=x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> (B, C, 4, T/4) strides (C·T, 1, C·T/4, C)
        "#,
    );
}

#[test]
fn default_argument_value() {
    check(
        r#"
        def swap(t, dim=1):
            return t.transpose(dim, 2)

        def f(x):
            B, T, C = x.shape
            return swap(x).view(B, -1)
        "#,
        r#"
        t.transpose(dim, 2): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(dim, 2): transpose [from caller `swap(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        swap(x).view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn helper_returning_a_tuple() {
    check(
        r#"
        def two(t):
            return t.transpose(1, 2), t

        def f(x):
            B, T, C = x.shape
            a, b = two(x)
            return a.view(B, -1), b.view(B, -1)
        "#,
        r#"
        t.transpose(1, 2): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(1, 2): transpose [from caller `two(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        a.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        b.view(B, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn nested_helpers() {
    check(
        r#"
        def inner(t):
            return t.view(-1)

        def outer(t):
            return inner(t)

        def f(x):
            B, T, C = x.shape
            return outer(x.transpose(1, 2))
        "#,
        r#"
        t.view(-1): view
          contiguous, shape unknown -> (t[0],) strides (1,)
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        t.view(-1): view [from caller `inner(t)`]
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (-1,)
        "#,
    );
}

#[test]
fn nested_function_definition() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            def g(t):
                return t.transpose(1, 2)
            return g(x).view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(1, 2): transpose [from caller `g(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        g(x).view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        t.transpose(1, 2): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn lambda_bound_to_a_name() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            swap = lambda t: t.transpose(1, 2)
            return swap(x).reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        swap(x).reshape(B, -1): reshape
          (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
        "#,
    );
}

#[test]
fn recursive_helper_terminates() {
    check(
        r#"
        def down(t, n):
            if n == 0:
                return t
            return down(t.transpose(1, 2), n - 1)

        def f(x):
            B, T, C = x.shape
            return down(x, 2).contiguous()
        "#,
        r#"
        t.transpose(1, 2): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(1, 2): transpose [from caller `down(x, 2)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        down(x, 2).contiguous(): contiguous [unknown input: input from a call the analysis cannot follow]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn helper_reading_sizes_of_its_argument() {
    check(
        r#"
        def last(t):
            return t.shape[-1]

        def f(x):
            B, T, C = x.shape
            return x.view(B * T, last(x))
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.shape: size [from caller `last(x)`]
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B * T, last(x)): view
          (B, T, C) strides (C·T, C, 1) -> (B·T, C) strides (C, 1)
        "#,
    );
}

#[test]
fn star_args_call() {
    check(
        r#"
        def g(a, b):
            return a.transpose(0, 1)

        def f(x, y):
            args = (x, y)
            return g(*args).view(-1)
        "#,
        r#"
        a.transpose(0, 1): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        g(*args).view(-1): view [unknown input: input from an op whose outcome is undecided]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn functools_partial() {
    check(
        r#"
        from functools import partial

        def swap(t, d0, d1):
            return t.transpose(d0, d1)

        def f(x):
            B, T, C = x.shape
            g = partial(swap, d0=1, d1=2)
            return g(x).view(B, -1)
        "#,
        r#"
        t.transpose(d0, d1): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(d0, d1): transpose [from caller `g(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        g(x).view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn top_level_code_runs_once() {
    check(
        r#"
        import torch

        x = torch.zeros(2, 3, 4)
        y = x.transpose(1, 2).view(2, -1)
        "#,
        r#"
        torch.zeros(2, 3, 4): factory
          contiguous, shape unknown -> (2, 3, 4) strides (12, 4, 1)
        x.transpose(1, 2): transpose
          (2, 3, 4) strides (12, 4, 1) -> (2, 4, 3) strides (12, 1, 4)
        x.transpose(1, 2).view(2, -1): view
          (2, 4, 3) strides (12, 1, 4) -> fails ViewIncompatible, target (2, -1)
        "#,
    );
}
