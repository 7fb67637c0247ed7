//! Classes: `nn.Module` subclasses analysed method by method on the object `__init__`
//! builds; attributes, submodules (`nn.Linear`, `nn.Conv2d`, `nn.Sequential`), methods
//! calling methods.

use super::check;

#[test]
fn forward_of_a_module() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def forward(self, x):
                B, T, C = x.shape
                return x.transpose(1, 2).view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2).view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn attribute_set_in_init() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, heads):
                super().__init__()
                self.heads = heads

            def forward(self, x):
                B, T, C = x.shape
                return x.view(B, T, self.heads, C // self.heads)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, self.heads, C // self.heads): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, heads, C/heads) strides (C·T, C, C/heads, 1)
        "#,
    );
}

#[test]
fn constant_attribute_in_init() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = 8

            def forward(self, x):
                B, T, C = x.shape
                return x.view(B, T, self.heads, -1).transpose(1, 2)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, self.heads, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, 8, C/8) strides (C·T, C, C/8, 1)
        x.view(B, T, self.heads, -1).transpose(1, 2): transpose
          (B, T, 8, C/8) strides (C·T, C, C/8, 1) -> (B, 8, T, C/8) strides (C·T, C/8, C, 1)
        "#,
    );
}

#[test]
fn linear_output_is_contiguous() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.proj = nn.Linear(d, d)

            def forward(self, x):
                B, T, C = x.shape
                return self.proj(x.transpose(1, 2)).view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        self.proj(x.transpose(1, 2)).view(B, -1): view
          (B, C, d) strides (C·d, d, 1) -> (B, C·d) strides (C·d, 1)
        "#,
    );
}

#[test]
fn linear_fixes_the_last_size() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(64, 128)

            def forward(self, x):
                B, T, C = x.shape
                return self.proj(x).view(B, T, 2, 64)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        self.proj(x).view(B, T, 2, 64): view
          (B, T, 128) strides (128·T, 128, 1) -> (B, T, 2, 64) strides (128·T, 128, 64, 1)
        "#,
    );
}

#[test]
fn conv2d_output_is_sized_when_its_arguments_fix_the_sizes() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.point = nn.Conv2d(3, 8, 1)

            def forward(self, x):
                B, C, H, W = x.shape
                y = self.conv(x)
                z = self.point(x)
                return y.view(y.shape[0], -1), z.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, C, H, W) strides (C·H·W, H·W, W, 1) -> ok
        y.view(y.shape[0], -1): view
          contiguous, shape unknown -> (y.shape[0], y[1]) strides (y[1], 1)
        z.view(B, -1): view
          (B, 8, H, W) strides (8·H·W, H·W, W, 1) -> (B, 8·H·W) strides (8·H·W, 1)
        "#,
    );
}

#[test]
fn method_calling_a_method() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def split(self, t):
                B, T, C = t.shape
                return t.view(B, T, 4, -1)

            def forward(self, x):
                B, T, C = x.shape
                return self.split(x.transpose(1, 2))
        "#,
        r#"
        t.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.view(B, T, 4, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, 4, C/4) strides (C·T, C, C/4, 1)
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        t.shape: size [from caller `self.split(x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> ok
        t.view(B, T, 4, -1): view [from caller `self.split(x.transpose(1, 2))`]
          (B, C, T) strides (C·T, 1, C) -> (B, C, 4, T/4) strides (C·T, 1, C·T/4, C)
        "#,
    );
}

#[test]
fn sequential_of_known_layers() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU())

            def forward(self, x):
                n, m = x.shape
                return self.net(x.t()).view(-1)
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x.t(): t
          (n, m) strides (m, 1) -> (m, n) strides (1, m)
        self.net(x.t()).view(-1): view
          (m, 8) strides (8, 1) -> (8·m,) strides (1,)
        "#,
    );
}

#[test]
fn module_list_of_a_literal_range_is_unrolled() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x.view(-1)
        "#,
        r#"
        x.view(-1): view
          contiguous, shape unknown -> (x[0],) strides (1,)
        "#,
    );
}

#[test]
fn instance_of_a_user_class_called() {
    check(
        r#"
        import torch.nn as nn

        class Flip(nn.Module):
            def forward(self, t):
                return t.transpose(1, 2)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.flip = Flip()

            def forward(self, x):
                B, T, C = x.shape
                return self.flip(x).view(B, -1)
        "#,
        r#"
        t.transpose(1, 2): transpose [unknown input: input of unknown rank]
          contiguous, shape unknown -> undecided, may copy
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        t.transpose(1, 2): transpose [from caller `self.flip(x)`]
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        self.flip(x).view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

#[test]
fn tensor_attribute_stored_in_a_method() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def forward(self, x):
                B, T, C = x.shape
                self.cache = x.transpose(1, 2)
                return self.cache.view(B, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        self.cache.view(B, -1): view
          (B, C, T) strides (C·T, 1, C) -> fails ViewIncompatible, target (B, -1)
        "#,
    );
}

// A class-level constant is read as its value (`heads = 4`).
#[test]
fn class_attribute() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            heads = 4

            def forward(self, x):
                B, T, C = x.shape
                return x.view(B, T, self.heads, -1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.view(B, T, self.heads, -1): view
          (B, T, C) strides (C·T, C, 1) -> (B, T, 4, C/4) strides (C·T, C, C/4, 1)
        "#,
    );
}

#[test]
fn layer_norm_keeps_a_contiguous_input() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.norm = nn.LayerNorm(d)

            def forward(self, x):
                B, T, C = x.shape
                return self.norm(x).view(B * T, C)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        self.norm(x).view(B * T, C): view
          (B, T, d) strides (T·d, d, 1) -> (B·T, d) strides (d, 1)
        "#,
    );
}

#[test]
fn plain_class_method() {
    check(
        r#"
        class Helper:
            def run(self, x):
                n, m = x.shape
                return x.t().reshape(-1)
        "#,
        r#"
        x.shape: size
          (n, m) strides (m, 1) -> ok
        x.t(): t
          (n, m) strides (m, 1) -> (m, n) strides (1, m)
        x.t().reshape(-1): reshape
          (m, n) strides (1, m) -> (m·n,) strides (1,), copies
        "#,
    );
}

// Filled by `append` over `range(depth)`, the list holds any number of blocks: the loop over
// it gives one layout where it is empty and one where it is not. Over `range(2)`, it holds
// two, and the loop over it runs each.
#[test]
fn module_list_filled_by_append() {
    check(
        r#"
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, dim, depth):
                super().__init__()
                self.two = nn.ModuleList([])
                for _ in range(2):
                    self.two.append(nn.Linear(dim, dim))
                self.some = nn.ModuleList([])
                for _ in range(depth):
                    self.some.append(nn.Linear(dim, dim))

            def forward(self, x):
                B, T, C = x.shape
                y = x.transpose(1, 2)
                for layer in self.two:
                    y = layer(y)
                z = x.transpose(1, 2)
                for layer in self.some:
                    z = layer(z)
                return y.view(-1), z.view(-1)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        x.transpose(1, 2): transpose
          (B, T, C) strides (C·T, C, 1) -> (B, C, T) strides (C·T, 1, C)
        x.transpose(1, 2): transpose
          (B, dim, C) strides (C·dim, C, 1) -> (B, C, dim) strides (C·dim, 1, C)
        y.view(-1): view
          (B, C, dim) strides (C·dim, dim, 1) -> (B·C·dim,) strides (1,)
        z.view(-1): view
          [if `self.some` is empty] (B, C, dim) strides (C·dim, 1, C) -> fails ViewIncompatible, target (-1,)
          [if `self.some` is not empty] (B, C, dim) strides (C·dim, dim, 1) -> (B·C·dim,) strides (1,)
        "#,
    );
}

// A layer class read from a class attribute (`rnn_class = nn.GRU`, overridden by a
// subclass) or named by a string (`getattr(nn, cell.upper())` with the caller's "lstm").
#[test]
fn layer_class_from_a_class_attribute_or_a_string() {
    check(
        r#"
        import torch.nn as nn

        class Base(nn.Module):
            rnn_class = nn.GRU

            def __init__(self, dim):
                super().__init__()
                self.rnn = self.rnn_class(dim, dim, batch_first=True)

            def forward(self, x):
                B, T, C = x.shape
                return self.rnn(x)[0].view(B * T, C)

        class ByName(nn.Module):
            def __init__(self, dim, cell="gru"):
                super().__init__()
                self.rnn = getattr(nn, cell.upper())(dim, dim, batch_first=True)

            def forward(self, x):
                B, T, C = x.shape
                return self.rnn(x)[0].view(B * T, C)

        class Model(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.enc = ByName(dim, cell="lstm")

            def forward(self, x):
                return self.enc(x)
        "#,
        r#"
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        self.rnn(x)[0].view(B * T, C): view
          (B, T, dim) strides (dim, B·dim, 1) -> fails ViewIncompatible, target (B·T, dim)
        x.shape: size
          (B, T, C) strides (C·T, C, 1) -> ok
        self.rnn(x)[0].view(B * T, C): view [unknown input: input from a construct the analysis does not model]
          contiguous, shape unknown -> undecided, may copy
        self.rnn(x)[0].view(B * T, C): view [from caller `self.enc(x)`]
          (B, T, dim) strides (dim, B·dim, 1) -> fails ViewIncompatible, target (B·T, dim)
        "#,
    );
}
