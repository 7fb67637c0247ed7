"""What a chain step is made of: the chain's state, the call to make, the argument values
that are not plain JSON (the current tensor, other tensor operands, slices, torch
constants), and the helpers every op generator shares.

Op generators (chain_views.py, chain_compute.py) take (rng, state) and return a `Call`,
or None when the op does not fit the current tensor (e.g. `mm` on a 3-D tensor).
Arguments are drawn so that most calls succeed (chains are only interesting when they get
long) and a few fail on purpose.

Every size-valued argument is an `Expr` derived from the chain's current shape, itself
derived from the start sizes `s0, s1, ...` (see symexpr.py). `Call.next_shape` gives the
result's shape as Exprs; the driver checks it against torch's actual result, so the
recorded derivations are exact for the recorded sizes.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

from layouts import contiguous_strides, random_strides
from symexpr import Expr, product


@dataclass
class State:
    x: torch.Tensor
    shape: list  # list[Expr], values == x.shape

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return self.x.numel()


# --- argument values that are not plain JSON ---------------------------------------------


class This:
    """The chain's current tensor, where a function-form call takes it as an argument."""


THIS = This()


@dataclass
class Operand:
    """Another tensor argument, built with as_strided like the chain's start. Its dtype is
    the chain tensor's unless `dtype` names another one ("bool" masks, "int64" indices);
    integer operands hold `arange % modulo` so they are valid indices."""

    shape: list  # list[Expr]
    strides: list  # list[Expr]
    offset: int = 0
    dtype: Optional[str] = None
    modulo: int = 1


@dataclass
class Slice:
    start: object = None  # Expr | int | None
    stop: object = None
    step: object = None


@dataclass
class TorchConst:
    """`torch.float16`, `torch.contiguous_format`, ... recorded by name."""

    name: str

    def value(self):
        return getattr(torch, self.name)


@dataclass
class Call:
    op: str
    args: list
    kwargs: dict = field(default_factory=dict)
    form: str = "method"  # "method" | "function" | "attribute" | "module"
    output_index: Optional[int] = None
    next_shape: Callable = None  # (state, result tensor) -> list[Expr]
    # form "module": `op` is the class, built with these, then called with `args`/`kwargs`.
    init_args: list = field(default_factory=list)
    init_kwargs: dict = field(default_factory=dict)


# --- helpers -------------------------------------------------------------------------------


def wrap(d: int, n: int) -> int:
    """Python-style dim wrapping (a 0-d tensor wraps like a 1-d one)."""
    m = max(n, 1)
    return d + m if d < 0 else d


def random_dim(rng: random.Random, n: int, extra: int = 0, bad_rate: float = 0.01) -> int:
    """A valid dim of a rank-`n` tensor (`extra` widens the range, as for unsqueeze), shown
    negative half the time; rarely an out-of-range dim."""
    m = max(n + extra, 1)
    if rng.random() < bad_rate:
        return rng.choice([m, -m - 1])
    d = rng.randrange(m)
    return d - m if rng.random() < 0.4 else d


def size_at(state: State, d: int) -> Expr:
    """Size of (possibly negative) dim `d`; 1 for an out-of-range dim drawn on purpose (the
    call will fail in torch, so the size only has to let the arguments be built)."""
    dd = wrap(d, state.rank)
    return state.shape[dd] if 0 <= dd < state.rank else Expr.lit(1)


def small_operand(rng: random.Random, shape: list, contiguous: bool = False) -> Operand:
    if contiguous:
        return Operand(list(shape), contiguous_strides(shape), 0)
    layout = random_strides(rng, list(shape), contiguous_bias=0.3)
    return Operand(layout.shape, layout.strides, layout.offset)


def same(state: State, _result) -> list:
    return list(state.shape)


def resolve_target(state: State, target: list) -> list:
    """Replace a single -1 by the inferred size, as an Expr."""
    known = product(t for t in target if isinstance(t, Expr))
    return [t if isinstance(t, Expr) else state_numel(state) // known for t in target]


def state_numel(state: State) -> Expr:
    return product(state.shape)


def split_pieces(size: int, split_size: int) -> int:
    return max(-(-size // split_size), 1) if split_size > 0 else 1


def replace_dim(shape: list, d: int, size: Expr) -> list:
    return shape[:d] + [size] + shape[d + 1 :]


def grows_too_much(state: State, shape: list, limit: int = 50_000) -> bool:
    return product(shape).value > limit


def broadcast_shapes(a: list, b: list) -> list:
    n = max(len(a), len(b))
    a = [None] * (n - len(a)) + list(a)
    b = [None] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x is None or (x.value == 1 and y is not None):
            out.append(y)
        else:
            out.append(x)
    return out


def permuted(shape: list, perm: list) -> list:
    return [shape[p] for p in perm]
