//! Control flow: branches give a tensor one layout per path (each event outcome names its
//! path's condition), loops, early returns, `with`, `try`, conditional expressions.

use super::check;

#[test]
fn if_else_gives_two_layouts() {
    check(
        r#"
        def f(x, channels_first):
            B, T, C = x.shape
            if channels_first:
                y = x.transpose(1, 2)
            else:
                y = x
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.view(B, -1): view
          [if `channels_first` is true] (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
          [if `channels_first` is false] (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn if_without_else_joins_the_untouched_path() {
    check(
        r#"
        def f(x, flip):
            B, T, C = x.shape
            if flip:
                x = x.transpose(1, 2)
            return x.reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.reshape(B, -1): reshape
          [if `flip` is true] (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
          [if `flip` is false] (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn both_branches_the_same_layout() {
    check(
        r#"
        def f(x, flag):
            B, T, C = x.shape
            if flag:
                y = x.transpose(1, 2)
            else:
                y = x.permute(0, 2, 1)
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.permute(0, 2, 1): permute
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn conditional_expression() {
    check(
        r#"
        def f(x, flag):
            B, T, C = x.shape
            y = x.transpose(1, 2) if flag else x
            return y.reshape(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.reshape(B, -1): reshape
          [if `flag` is true] (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
          [if `flag` is false] (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn early_return_leaves_one_path() {
    check(
        r#"
        def f(x, flag):
            B, T, C = x.shape
            if flag:
                return x
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
fn loop_over_a_range_runs_each_iteration() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            for i in range(2):
                x = x.transpose(1, 2)
                x.view(B, -1)
            return x
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose [path `i` is 0 (iteration 1 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.view(B, -1): view [path `i` is 0 (iteration 1 of 2)]
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        x.transpose(1, 2): transpose [path `i` is 1 (iteration 2 of 2)]
          (B, C, T) strides (C·T, 1, C) -> (B, T, C) strides (C·T, C, 1)
        x.view(B, -1): view [path `i` is 1 (iteration 2 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

// Each iteration is a path of its own, with its own result: `(T, B, C)`, then `(C, T, B)`.
#[test]
fn loop_over_known_values() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            for d in (1, 2):
                x.transpose(0, d)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(0, d): transpose [path `d` is 1 (iteration 1 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (T, B, C) strides (C, C·T, 1)
        x.transpose(0, d): transpose [path `d` is 2 (iteration 2 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (C, T, B) strides (1, C, C·T)
        "#,
    );
}

#[test]
fn name_bound_only_in_a_while_loop_is_unknown_after_it() {
    check(
        r#"
        def f(x, n):
            B, T, C = x.shape
            while n > 0:
                y = x.transpose(1, 2)
                n -= 1
            return y.contiguous()
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.contiguous(): contiguous [unknown input: paths disagree on the input]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

#[test]
fn with_block_runs_its_body() {
    check(
        r#"
        import torch

        def f(x):
            B, T, C = x.shape
            with torch.no_grad():
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
fn try_body_runs() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            try:
                y = x.transpose(1, 2).contiguous()
            except RuntimeError:
                y = x
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).contiguous(): contiguous
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, T, 1), copies
        y.view(B, -1): view
          (B, C, T) strides (C·T, T, 1) -> (B, C·T) strides (C·T, 1)
          (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn is_contiguous_guard() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            y = x.transpose(1, 2)
            if not y.is_contiguous():
                y = y.contiguous()
            return y.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        y.is_contiguous(): is_contiguous
          (B, C, T) strides (C·T, 1, C) -> ok
        y.contiguous(): contiguous
          (B, C, T) strides (C·T, 1, C) -> (B, C, T) strides (C·T, T, 1), copies
        y.view(B, -1): view
          (B, C, T) strides (C·T, T, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn condition_on_a_none_argument() {
    check(
        r#"
        def f(x, mask=None):
            B, T, C = x.shape
            if mask is not None:
                x = x.transpose(1, 2)
            return x.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.view(B, -1): view
          [if `mask` is not None] (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
          [if `mask` is None] (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
        "#,
    );
}

#[test]
fn elif_chain() {
    check(
        r#"
        def f(x, mode):
            B, T, C = x.shape
            if mode == 'a':
                y = x.transpose(1, 2)
            elif mode == 'b':
                y = x.contiguous()
            else:
                y = x
            return y.view(B * T, C)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.contiguous(): contiguous
          (B, T, C) strides (C·T, C, 1) -> (B, T, C) strides (C·T, C, 1)
        y.view(B * T, C): view
          [if `mode == 'a'` is true] (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B·T, C)
          [if `mode == 'a'` is false] (B, T, C) strides (C·T, C, 1) -> (B·T, C) strides (C, 1)
        "#,
    );
}

// torch: `x.transpose(0, 3)` of a 3-d tensor raises `IndexError: Dimension out of range`.
#[test]
fn failing_iteration_of_a_loop_over_known_values() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            for d in (1, 3):
                x.transpose(0, d)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(0, d): transpose [path `d` is 1 (iteration 1 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (T, B, C) strides (C, C·T, 1)
        x.transpose(0, d): transpose [path `d` is 3 (iteration 2 of 2)]
          (B, T, C) strides (C·T, C, 1) -> fails DimOutOfRange
        "#,
    );
}

#[test]
fn loop_over_known_values_runs_each_value() {
    check(
        r#"
        def f(x):
            B, T, C = x.shape
            for d in [1, 2]:
                y = x.transpose(0, d)
                y.view(-1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(0, d): transpose [path `d` is 1 (iteration 1 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (T, B, C) strides (C, C·T, 1)
        y.view(-1): view [path `d` is 1 (iteration 1 of 2)]
          (T, B, C) strides (C, C·T, 1) -> fails ViewIncompatible, target (-1,)
        x.transpose(0, d): transpose [path `d` is 2 (iteration 2 of 2)]
          (B, T, C) strides (C·T, C, 1) -> (C, T, B) strides (1, C, C·T)
        y.view(-1): view [path `d` is 2 (iteration 2 of 2)]
          (C, T, B) strides (1, C, C·T) -> fails ViewIncompatible, target (-1,)
        "#,
    );
}

#[test]
fn loop_over_a_list_of_tensors() {
    check(
        r#"
        def f(x, y):
            B, T, C = x.shape
            for t in [x, y]:
                t.view(-1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.view(-1): view
          (B, T, C) strides (C·T, C, 1) -> (B·C·T,) strides (1,)
          contiguous, shape unknown -> (t[0],) strides (1,)
        "#,
    );
}

// `for b in range(B)`: `b` is one integer in every iteration, so `pred[b]` is a row of
// known layout (its offset `b`·N·C), and the loop body's ops are decided.
#[test]
fn loop_index_over_a_range_of_unknown_length() {
    check(
        r#"
        def f(pred):
            B, N, C = pred.shape
            for b in range(B):
                pred[b].transpose(0, 1).view(-1)
        "#,
        r#"
        pred.shape: size
          (B, N, C) strides (C·N, C, 1) -> ok
        pred[b]: getitem
          (B, N, C) strides (C·N, C, 1) -> (N, C) strides (C, 1)
        pred[b].transpose(0, 1): transpose
          (N, C) strides (C, 1) -> (C, N) strides (1, C)
        pred[b].transpose(0, 1).view(-1): view
          (C, N) strides (1, C) -> fails ViewIncompatible, target (-1,)
        "#,
    );
}

// Over `range(n)` with `n` unrelated to the indexed dim, `pred[i]` may be out of range:
// undecided, never assumed in range.
#[test]
fn loop_index_over_another_range_stays_undecided() {
    check(
        r#"
        def f(pred, n):
            B, N, C = pred.shape
            for i in range(n):
                pred[i].transpose(0, 1).view(-1)
        "#,
        r#"
        pred.shape: size
          (B, N, C) strides (C·N, C, 1) -> ok
        pred[i]: getitem
          (B, N, C) strides (C·N, C, 1) -> undecided, may copy
        pred[i].transpose(0, 1): transpose [unknown input: input from an op whose outcome is undecided]
          contiguous, shape unknown -> undecided, may copy
        pred[i].transpose(0, 1).view(-1): view [unknown input: input from an op whose outcome is undecided]
          contiguous, shape unknown -> undecided, may copy
        "#,
    );
}

// A comprehension's filter drops the items it decides false (`None` here), so the list
// unpacks; an item a filter cannot decide is still analysed, under that filter.
#[test]
fn comprehension_filters_keep_decided_items() {
    check(
        r#"
        def f(x, flag):
            B, T, C = x.shape
            y = x.transpose(1, 2)
            a, b = [t.flatten(1) for t in (x, None, y) if t is not None]
            b.view(-1)
            c = [t.view(-1) for t in (y,) if flag]
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        t.flatten(1): flatten
          [if `t` is item 1 of 3] (B, T, C) strides (C·T, C, 1) -> (B, C·T) strides (C·T, 1)
          [if `t` is item 3 of 3] (B, C, T) strides (C·T, 1, C) -> (B, C·T) strides (C·T, 1), copies
        b.view(-1): view
          (B, C·T) strides (C·T, 1) -> (B·C·T,) strides (1,)
        t.view(-1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (-1,)
        "#,
    );
}
