"""Random tensor layouts and view targets shared by the oracle generators.

A layout is (shape, strides, storage offset). The generators never trust a formula for
what torch does: they *build* each layout for real with `torch.as_strided` on a storage
big enough to hold it, then ask torch. The layouts are drawn to hit every corner of the
view algorithm (stride-semantics.md §3): size-1 dims with arbitrary strides, zero-size
dims, stride-0 (expanded) dims, sliced and stepped dims, permuted storage orders, storage
offsets, ranks 0-6, and "wild" overlapping strides.

Every size and stride is an `Expr` (see symexpr.py) so the chain generator can record
how each number was derived from the start sizes; `gen_view_reshape.py` only uses the
concrete values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from symexpr import Expr, product


@dataclass
class Layout:
    shape: list  # list[Expr]
    strides: list  # list[Expr]
    offset: int
    style: str  # how it was built, for the per-style tallies

    @property
    def shape_values(self) -> list:
        return [d.value for d in self.shape]

    @property
    def stride_values(self) -> list:
        return [t.value for t in self.strides]

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape_values:
            n *= d
        return n

    def json(self, symbolic: bool = False) -> dict:
        out = {"shape": self.shape_values, "strides": self.stride_values, "offset": self.offset}
        if symbolic:
            out["sym_shape"] = [d.json() for d in self.shape]
            out["sym_strides"] = [t.json() for t in self.strides]
        return out


def storage_extent(shape: list, strides: list, offset: int) -> int:
    """Number of storage elements `as_strided` needs (at least 1, so the storage has a real
    data pointer that copies can be told apart from)."""
    if any(s == 0 for s in shape):
        return offset + 1
    last = offset + sum((s - 1) * t for s, t in zip(shape, strides))
    return last + 1


def materialize(shape: list, strides: list, offset: int, dtype=torch.float32, modulo: int | None = None) -> torch.Tensor:
    """A real tensor with exactly this geometry, over distinct values (arange) so that a
    wrong copy would also be visible in the data. With `modulo`, the storage holds
    `arange % modulo` (valid indices, or a bool mask for modulo 2)."""
    base = torch.arange(storage_extent(shape, strides, offset), dtype=torch.int64 if modulo else dtype)
    if modulo:
        base = (base % modulo).to(dtype)
    return base.as_strided(shape, strides, offset)


def random_size(rng: random.Random, allow_zero: bool) -> int:
    r = rng.random()
    if allow_zero and r < 0.03:
        return 0
    if r < 0.22:
        return 1
    if r < 0.92:
        return rng.randint(2, 5)
    return rng.randint(6, 8)


def random_layout(
    rng: random.Random,
    max_rank: int = 6,
    max_numel: int = 4096,
    allow_zero: bool = True,
    symbolic: bool = False,
    contiguous_bias: float = 0.15,
) -> Layout:
    """Draw a random layout. With `symbolic`, every start size >= 2 is named `s<i>` (sizes
    0 and 1 stay literal: the analyzer treats a named size as >= 2)."""
    rank = min(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6]), max_rank)
    while True:
        values = [random_size(rng, allow_zero) for _ in range(rank)]
        n = 1
        for v in values:
            n *= v
        if n <= max_numel:
            break
    shape = [
        Expr.sym(f"s{i}", v) if symbolic and v >= 2 else Expr.lit(v) for i, v in enumerate(values)
    ]
    return random_strides(rng, shape, contiguous_bias)


def random_strides(rng: random.Random, shape: list, contiguous_bias: float = 0.15) -> Layout:
    """Random strides for `shape` (a list of Expr)."""
    rank = len(shape)
    offset = 0 if rng.random() < 0.6 else rng.randint(1, 20)
    if rank == 0 or rng.random() < contiguous_bias:
        return Layout(shape, contiguous_strides(shape), offset, "contiguous")
    if rng.random() < 0.1:
        # Wild strides: anything non-negative, overlaps included. ATen's view rule is defined
        # for every stride vector, so these probe coincidences the structured layouts miss.
        strides = [Expr.lit(rng.randint(0, 12)) for _ in range(rank)]
        return Layout(shape, strides, offset, "wild")

    # Structured layouts: redraw until at least one distortion applies, so that the
    # contiguous case keeps the share `contiguous_bias` gives it.
    while True:
        strides, styles = structured_strides(rng, shape)
        if styles:
            break
    return Layout(shape, strides, offset, "+".join(styles) or "contiguous")


def structured_strides(rng: random.Random, shape: list) -> tuple:
    """Strides of a permuted, sliced/stepped, partly expanded view of a dense storage, with
    odd strides on some size-1 dims. Returns (strides, names of the distortions applied)."""
    rank = len(shape)
    styles = []
    order = list(range(rank))  # storage order, outermost first
    if rng.random() < 0.5:
        rng.shuffle(order)
        if order != list(range(rank)):
            styles.append("permuted")
    steps = [1] * rank
    pads = [0] * rank
    if rng.random() < 0.5:
        for d in range(rank):
            if rng.random() < 0.35:
                steps[d] = rng.randint(1, 3)
                pads[d] = rng.randint(0, 2)
        if any(steps[d] > 1 or pads[d] > 0 for d in range(rank)):
            styles.append("sliced")

    # Dense strides of the padded storage, innermost storage dim first, scaled by the step.
    strides = [Expr.lit(0)] * rank
    acc = Expr.lit(1)
    for d in reversed(order):
        extent = shape[d] * steps[d] + pads[d]
        strides[d] = acc * steps[d]
        acc = acc * extent
    if rng.random() < 0.3:
        for d in range(rank):
            if rng.random() < 0.3:
                strides[d] = Expr.lit(0)
                if "expanded" not in styles:
                    styles.append("expanded")
    if rng.random() < 0.4:
        for d in range(rank):
            if shape[d].value == 1 and rng.random() < 0.6:
                strides[d] = Expr.lit(rng.randint(0, 40))
                if "odd-size1" not in styles:
                    styles.append("odd-size1")
    return strides, styles


def contiguous_strides(shape: list) -> list:
    """Row-major strides with zero-size dims counted as 1 (stride-semantics.md §1.5)."""
    strides = [Expr.lit(1)] * len(shape)
    acc = Expr.lit(1)
    for d in reversed(range(len(shape))):
        strides[d] = acc
        acc = acc * (shape[d] if shape[d].value != 0 else Expr.lit(1))
    return strides


# --- view / reshape targets ------------------------------------------------------------


def divisors(n: int) -> list:
    return [f for f in range(2, n) if n % f == 0]


def regrouped_target(rng: random.Random, shape: list) -> list:
    """Merge random runs of adjacent dims, split some dims into two factors, and sprinkle
    size-1 dims: the realistic `view` targets (flatten heads, split heads, ...)."""
    out = []
    d = 0
    while d < len(shape):
        run = rng.choice([1, 1, 1, 2, 2, 3])
        out.append(product(shape[d : d + run]))
        d += run
    split = []
    for e in out:
        fs = divisors(e.value)
        if fs and rng.random() < 0.3:
            f = rng.choice(fs)
            pieces = [Expr.lit(f), e // f]
            if rng.random() < 0.5:
                pieces.reverse()
            split.extend(pieces)
        else:
            split.append(e)
    while rng.random() < 0.2:
        split.insert(rng.randint(0, len(split)), Expr.lit(1))
    if rng.random() < 0.2:
        split = [e for e in split if e.value != 1] if rng.random() < 0.5 else split
    return split


def factorized_target(rng: random.Random, numel: int) -> list:
    """A random ordered factorization of `numel` (rank 0-6), not aligned to the input dims."""
    if numel == 0:
        k = rng.randint(1, 4)
        dims = [rng.randint(0, 4) for _ in range(k)]
        dims[rng.randrange(k)] = 0
        return [Expr.lit(v) for v in dims]
    factors = []
    rest = numel
    while rest > 1 and len(factors) < 6:
        fs = divisors(rest)
        f = rng.choice(fs) if fs and rng.random() < 0.7 else rest
        factors.append(f)
        rest //= f
    if rest > 1:
        factors[-1] *= rest
    rng.shuffle(factors)
    while rng.random() < 0.25 and len(factors) < 7:
        factors.insert(rng.randint(0, len(factors)), 1)
    return [Expr.lit(v) for v in factors]


def random_target(rng: random.Random, shape: list) -> tuple:
    """A view/reshape target for `shape`, as (list[Expr | -1 | negative int], tag).

    Valid targets keep the element count; about one in six is invalid on purpose (wrong
    element count, two -1, a -2, the 0-element -1 ambiguity)."""
    numel = product(shape)
    r = rng.random()
    if r < 0.45:
        target, tag = regrouped_target(rng, shape), "regroup"
    elif r < 0.75:
        target, tag = factorized_target(rng, numel.value), "factorize"
    elif r < 0.80:
        target, tag = list(shape), "identity"
    else:
        target, tag = [numel], "flat"
    if target and rng.random() < 0.3:
        target = list(target)
        target[rng.randrange(len(target))] = -1
        tag += "+infer"
    r = rng.random()
    if r < 0.05:
        target = list(target) or [Expr.lit(1)]
        i = rng.randrange(len(target))
        bad = target[i] if isinstance(target[i], Expr) else Expr.lit(1)
        target[i] = bad + 1 if rng.random() < 0.5 else bad * 2 + 1
        tag = "bad-numel"
    elif r < 0.08:
        target = list(target) + [-1, -1]
        rng.shuffle(target)
        tag = "two-infer"
    elif r < 0.11:
        target = list(target) or [Expr.lit(1)]
        target[rng.randrange(len(target))] = rng.choice([-2, -3, -7])
        tag = "negative"
    elif r < 0.14:
        target = [Expr.lit(rng.choice([0, 0, 2, 3])), -1] if rng.random() < 0.5 else [-1, Expr.lit(0)]
        tag = "zero-infer"
    return target, tag


def target_values(target: list) -> list:
    return [t.value if isinstance(t, Expr) else int(t) for t in target]


def target_forms(target: list) -> list:
    return [t.json() if isinstance(t, Expr) else int(t) for t in target]


# --- torch errors ----------------------------------------------------------------------

ERROR_KINDS = [
    ("view size is not compatible", "view_incompatible"),
    ("only one dimension can be inferred", "two_inferred"),
    ("invalid shape dimension", "invalid_shape_dim"),
    ("because the unspecified dimension size -1 can be any value", "ambiguous_zero"),
    ("is invalid for input of size", "element_count"),
    ("don't multiply up to the size of dim", "element_count"),
    ("Dimension out of range", "dim_out_of_range"),
    ("out of range", "index_out_of_range"),
    ("is out of bounds for dimension", "index_out_of_range"),
    ("must match the size of tensor", "broadcast"),
    ("must match the existing size", "broadcast"),
    ("exceeds dimension size", "index_out_of_range"),
    ("refers to a single memory location", "internal_overlap"),
    ("cannot be multiplied", "shape_mismatch"),
    ("inconsistent tensor size", "shape_mismatch"),
    ("Expected size for first two dimensions", "shape_mismatch"),
    ("split_sizes to sum exactly", "shape_mismatch"),
    ("Sizes of tensors must match", "shape_mismatch"),
    ("duplicate dims", "invalid_permutation"),
    ("number of dimensions in the tensor input does not match", "invalid_permutation"),
    ("movedim", "invalid_permutation"),
]


def error_kind(message: str) -> str:
    for needle, kind in ERROR_KINDS:
        if needle in message:
            return kind
    return "invalid_argument"


def error_record(exc: Exception) -> dict:
    # Only the first line: multi-line errors (TypeError overload lists) continue with
    # details that change between torch versions.
    message = str(exc).split("\n")[0]
    return {
        "ok": False,
        "error": error_kind(message),
        "exception": type(exc).__name__,
        "message": message,
    }


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `b` lives in the same storage as `a`: the physical meaning of "no copy
    happened". Storages are compared by identity (`_cdata`, the address of the C++
    StorageImpl), not by data pointer: two distinct zero-byte storages both have a null
    data pointer. `_base`/`_is_view()` only track autograd view relations and say nothing
    for ops that return `self` (contiguous(), to()), so they are not used."""
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata
