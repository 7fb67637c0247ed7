//! What the interpreter does not know, and says so: results of calls it cannot follow,
//! attributes of unknown objects, backend-dependent layouts, unreadable target shapes; and
//! ops whose results are new tensors (`cat`, `stack`, `matmul`, `softmax`).

use super::check;

#[test]
fn unresolved_call_gives_an_unknown_input() {
    check(
        r#"
        def f(x):
            y = mystery(x)
            return y.view(-1)
        "#,
        r#"
        y.view(-1): view [unknown input: input from a call the analysis cannot follow]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn attribute_of_an_unknown_object() {
    check(
        r#"
        def f(cfg):
            return cfg.table.view(-1)
        "#,
        r#"
        cfg.table.view(-1): view [unknown input: input read from an unknown object or name]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn parameter_of_unknown_shape_is_contiguous() {
    check(
        r#"
        def f(x):
            return x.view(-1)
        "#,
        r#"
        x.view(-1): view
          contiguous, shape unknown -> (x[0],) strides (1,)
        "#,
    );
}

#[test]
fn unknown_shape_transposed_then_viewed() {
    check(
        r#"
        def f(x):
            return x.transpose(0, 1).view(-1)
        "#,
        r#"
        x.transpose(0, 1): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.transpose(0, 1).view(-1): view [unknown input: input from an op whose outcome is undecided]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn view_of_an_opaque_star_shape_records_nothing() {
    check(
        r#"
        def f(x, shape):
            B, T, C = x.shape
            return x.transpose(1, 2).view(*shape)
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
fn star_of_a_known_tuple_is_read() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            shape = (B, -1)
            return x.transpose(1, 2).view(*shape)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).view(*shape): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn cat_makes_a_contiguous_tensor() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            y = torch.cat([x, x], dim=1)
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        torch.cat([x, x], dim=1): cat
          (B, T, C) strides (C·T, C, 1) -> (B, 2·T, C) strides (2·C·T, C, 1)
        y.view(B, -1): view
          (B, 2·T, C) strides (2·C·T, C, 1) -> (B, 2·C·T) strides (2·C·T, 1)
        "#,
    );
}

#[test]
fn stack_makes_a_contiguous_tensor() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            return torch.stack([x, x]).transpose(0, 1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        torch.stack([x, x]): stack
          (B, T, C) strides (C·T, C, 1) -> (2, B, T, C) strides (B·C·T, C·T, C, 1)
        torch.stack([x, x]).transpose(0, 1): transpose
          (2, B, T, C) strides (B·C·T, C·T, C, 1) -> (B, 2, T, C) strides (C·T, B·C·T, C, 1)
        "#,
    );
}

#[test]
fn matmul_result() {
    check(
        r#"
        def f(q, k):
            B, T, C = q.shape
            _, S, _ = k.shape
            return (q @ k.transpose(-2, -1)).view(B, -1)
        "#,
        r#"
        q.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        k.shape: size
          (k.shape[0], S, k.shape[2]) strides (S·k.shape[2], k.shape[2], 1) -> ok
        k.transpose(-2, -1): transpose
          (k.shape[0], S, k.shape[2]) strides (S·k.shape[2], k.shape[2], 1) -> (k.shape[0], k.shape[2], S) strides (S·k.shape[2], 1, k.shape[2])
        q @ k.transpose(-2, -1): matmul
          (B, T, C) strides (C·T, C, 1) -> (B, T, S) strides (S·T, S, 1), may copy
        (q @ k.transpose(-2, -1)).view(B, -1): view
          (B, T, S) strides (S·T, S, 1) -> (B, S·T) strides (S·T, 1)
        "#,
    );
}

#[test]
fn softmax_writes_a_contiguous_result() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            return torch.softmax(x.transpose(1, 2), dim=-1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        torch.softmax(x.transpose(1, 2), dim=-1): softmax
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, T, 1)
        "#,
    );
}

#[test]
fn elementwise_result_of_two_tensors() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2) + 1
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2) + 1: python additive operator
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C)
        y.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn interpolate_output_is_contiguous_of_unknown_shape() {
    check(
        r#"
        import torch.nn.functional as F

        def f(x):
            B, C, H, W = x.shape
            return F.interpolate(x, scale_factor=2).view(-1)
        "#,
        r#"
        x.shape: size
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        F.interpolate(x, scale_factor=2): convolution, pooling and resampling
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        F.interpolate(x, scale_factor=2).view(-1): view
          contiguous, shape unknown -> (t[0],) strides (1,)
        "#,
    );
}

#[test]
fn reveal_layout_records_what_the_path_holds() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            reveal_layout(x.permute(2, 0, 1))
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.permute(2, 0, 1): permute
          (B, T, C) strides (C·T, C, 1) -> (C, B, T) strides (1, C·T, C)
        reveal_layout(x.permute(2, 0, 1)): reveal_layout
          (C, B, T) strides (1, C·T, C) -> (C, B, T) strides (1, C·T, C)
        "#,
    );
}

// `layer(x) + x` with `layer` unknown: its result may be a tensor, which TensorIterator asks
// first about the output's memory order; the sum's layout is then not `x`'s.
#[test]
fn an_unknown_left_operand_may_decide_the_layout() {
    check(
        r#"
        from elsewhere import layer

        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2)
            return (layer(y) + y).view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        layer(y) + y: python additive operator
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, 1, C)
        (layer(y) + y).view(B, -1): view [unknown input: another operand of unknown layout]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

// A size read from a tensor of unknown rank (`batch_size = x.size(0)`, inside a branch)
// names that dim once a later op fixes the rank; a second read gives the same size.
#[test]
fn a_size_read_before_the_rank_is_known_names_that_dim() {
    check(
        r#"
        def f(x, flag):
            if flag:
                batch_size = x.size(0)
                again = x.size(0)
                y = x.permute(0, 2, 1, 3, 4).flatten(0, 1)
                return y.unflatten(0, (batch_size, -1)), again
            return x
        "#,
        r#"
        x.size(0): size
          contiguous, shape unknown -> ok
        x.size(0): size
          contiguous, shape unknown -> ok
        x.permute(0, 2, 1, 3, 4): permute
          (batch_size, x.shape[1], x.shape[2], x.shape[3], x.shape[4]) strides (x.shape[1]·x.shape[2]·x.shape[3]·x.shape[4], x.shape[2]·x.shape[3]·x.shape[4], x.shape[3]·x.shape[4], x.shape[4], 1) -> (batch_size, x.shape[2], x.shape[1], x.shape[3], x.shape[4]) strides (x.shape[1]·x.shape[2]·x.shape[3]·x.shape[4], x.shape[3]·x.shape[4], x.shape[2]·x.shape[3]·x.shape[4], x.shape[4], 1)
        x.permute(0, 2, 1, 3, 4).flatten(0, 1): flatten
          (batch_size, x.shape[2], x.shape[1], x.shape[3], x.shape[4]) strides (x.shape[1]·x.shape[2]·x.shape[3]·x.shape[4], x.shape[3]·x.shape[4], x.shape[2]·x.shape[3]·x.shape[4], x.shape[4], 1) -> (batch_size·x.shape[2], x.shape[1], x.shape[3], x.shape[4]) strides (x.shape[1]·x.shape[3]·x.shape[4], x.shape[3]·x.shape[4], x.shape[4], 1), copies
        y.unflatten(0, (batch_size, -1)): unflatten
          (batch_size·x.shape[2], x.shape[1], x.shape[3], x.shape[4]) strides (x.shape[1]·x.shape[3]·x.shape[4], x.shape[3]·x.shape[4], x.shape[4], 1) -> (batch_size, x.shape[2], x.shape[1], x.shape[3], x.shape[4]) strides (x.shape[1]·x.shape[2]·x.shape[3]·x.shape[4], x.shape[1]·x.shape[3]·x.shape[4], x.shape[3]·x.shape[4], x.shape[4], 1)
        "#,
    );
}
