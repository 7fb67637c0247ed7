"""Chain ops that change geometry: the view / reshape family, copies and conversions,
permutations, slicing and indexing, splits, size-1 dims, expand and repeat.

See chain_call.py for what a generator returns.
"""

from __future__ import annotations

import random

from chain_call import (
    THIS,
    Call,
    Expr,
    Slice,
    State,
    TorchConst,
    grows_too_much,
    permuted,
    random_dim,
    replace_dim,
    resolve_target,
    same,
    size_at,
    small_operand,
    split_pieces,
    state_numel,
    wrap,
)
from layouts import divisors, random_target
from symexpr import product


# --- view / reshape family ---------------------------------------------------------------


def chain_target(rng: random.Random, state: State) -> list:
    """A view target for the current shape; invalid targets are rarer than in the
    view/reshape table since a failing step ends the chain."""
    while True:
        target, tag = random_target(rng, state.shape)
        invalid = tag in ("bad-numel", "two-infer", "negative", "zero-infer")
        if not invalid or rng.random() < 0.25:
            return target


def shape_call(rng: random.Random, op: str, target: list, next_shape) -> Call:
    r = rng.random()
    if r < 0.45 and target:  # `x.view()` with no size at all is a TypeError
        return Call(op, list(target), next_shape=next_shape)
    if r < 0.9 or op != "view":
        return Call(op, [list(target)], next_shape=next_shape)
    return Call(op, [], {"size": list(target)}, next_shape=next_shape)


def gen_view(rng, state):
    target = chain_target(rng, state)
    return shape_call(rng, "view", target, lambda st, _r: resolve_target(st, target))


def gen_reshape(rng, state):
    target = chain_target(rng, state)
    if rng.random() < 0.15:
        return Call("reshape", [], {"shape": list(target)}, next_shape=lambda st, _r: resolve_target(st, target))
    return shape_call(rng, "reshape", target, lambda st, _r: resolve_target(st, target))


def gen_view_as(rng, state, op="view_as"):
    target = chain_target(rng, state)
    exprs = [t for t in target if isinstance(t, Expr)]
    known = product(exprs)
    if len(exprs) == len(target) - 1 and known.value > 0 and state.numel % known.value == 0:
        shape = resolve_target(state, target)
    else:
        shape = exprs  # any -1 or negative entry dropped: usually a wrong element count
    other = small_operand(rng, shape, contiguous=True)
    return Call(op, [other], next_shape=lambda st, _r: list(shape))


def gen_reshape_as(rng, state):
    return gen_view_as(rng, state, "reshape_as")


def flatten_shape(shape: list, start: int, end: int) -> list:
    if not shape:
        return [Expr.lit(1)]
    s, e = wrap(start, len(shape)), wrap(end, len(shape))
    return shape[:s] + [product(shape[s : e + 1])] + shape[e + 1 :]


def gen_flatten(rng, state):
    n = state.rank
    if rng.random() < 0.2:
        return Call("flatten", [], next_shape=lambda st, _r: flatten_shape(st.shape, 0, -1))
    a, b = sorted(random_dim(rng, n) % max(n, 1) for _ in range(2))
    if rng.random() < 0.02:
        a, b = b + 1, a  # start after end
    start = a - max(n, 1) if rng.random() < 0.3 else a
    end = b - max(n, 1) if rng.random() < 0.3 else b
    ns = lambda st, _r: flatten_shape(st.shape, start, end)  # noqa: E731
    if rng.random() < 0.2:
        return Call("flatten", [], {"start_dim": start, "end_dim": end}, next_shape=ns)
    return Call("flatten", [start, end], next_shape=ns)


def gen_unflatten(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank)
    e = size_at(state, d)
    fs = divisors(e.value)
    if fs and rng.random() < 0.7:
        f = rng.choice(fs)
        sizes = [Expr.lit(f), e // f]
        if rng.random() < 0.5:
            sizes.reverse()
        if rng.random() < 0.3:
            sizes[rng.randrange(2)] = -1
    else:
        sizes = rng.choice([[Expr.lit(1), e], [e, Expr.lit(1)], [e], [-1, Expr.lit(1)]])
    if rng.random() < 0.03:
        sizes = [e + 1]  # does not multiply up

    def next_shape(st, _r):
        dd = wrap(d, st.rank)
        known = product(s for s in sizes if isinstance(s, Expr))
        resolved = [s if isinstance(s, Expr) else st.shape[dd] // known for s in sizes]
        return st.shape[:dd] + resolved + st.shape[dd + 1 :]

    return Call("unflatten", [d, sizes], next_shape=next_shape)


def gen_ravel(rng, state):
    return Call("ravel", [], next_shape=lambda st, _r: [state_numel(st)])


def gen_contiguous(rng, state):
    if state.rank == 4 and rng.random() < 0.3:
        return Call("contiguous", [], {"memory_format": TorchConst("channels_last")}, next_shape=same)
    return Call("contiguous", [], next_shape=same)


def gen_clone(rng, state):
    if rng.random() < 0.3:
        return Call("clone", [], {"memory_format": TorchConst("contiguous_format")}, next_shape=same)
    if rng.random() < 0.15:
        return Call("clone", [], {"memory_format": TorchConst("preserve_format")}, next_shape=same)
    if state.rank == 4 and rng.random() < 0.3:
        return Call("clone", [], {"memory_format": TorchConst("channels_last")}, next_shape=same)
    return Call("clone", [], next_shape=same)


DTYPES = ["float32", "float16", "float64"]


def gen_to(rng, state):
    if state.rank == 4 and rng.random() < 0.2:
        return Call("to", [], {"memory_format": TorchConst("channels_last")}, next_shape=same)
    dtype = TorchConst(rng.choice(DTYPES))
    if rng.random() < 0.3:
        return Call("to", [], {"dtype": dtype}, next_shape=same)
    return Call("to", [dtype], next_shape=same)


def gen_float(rng, state):
    return Call("float", [], next_shape=same)


def gen_half(rng, state):
    return Call("half", [], next_shape=same)


def gen_double(rng, state):
    return Call("double", [], next_shape=same)


# --- permutations ---------------------------------------------------------------------------


def gen_transpose(rng, state, op="transpose"):
    n = state.rank
    a, b = random_dim(rng, n), random_dim(rng, n)

    def next_shape(st, _r):
        out = list(st.shape)
        if out:
            i, j = wrap(a, n), wrap(b, n)
            out[i], out[j] = out[j], out[i]
        return out

    return Call(op, [a, b], next_shape=next_shape)


def gen_swapaxes(rng, state):
    return gen_transpose(rng, state, "swapaxes")


def gen_swapdims(rng, state):
    return gen_transpose(rng, state, "swapdims")


def gen_t(rng, state):
    if state.rank > 2 and rng.random() < 0.9:
        return None
    return Call("t", [], next_shape=lambda st, _r: list(reversed(st.shape)))


def gen_T(rng, state):
    return Call("T", [], form="attribute", next_shape=lambda st, _r: list(reversed(st.shape)))


def gen_mT(rng, state):
    if state.rank < 2 and rng.random() < 0.9:
        return None
    return Call("mT", [], form="attribute", next_shape=lambda st, _r: st.shape[:-2] + st.shape[-2:][::-1])


def gen_permute(rng, state):
    n = state.rank
    perm = list(range(n))
    rng.shuffle(perm)
    dims = [p - n if rng.random() < 0.3 else p for p in perm]
    if n >= 2 and rng.random() < 0.02:
        dims[0] = dims[1]  # duplicate dim
    ns = lambda st, _r: permuted(st.shape, perm)  # noqa: E731
    if n > 0 and rng.random() < 0.5:
        return Call("permute", dims, next_shape=ns)
    return Call("permute", [dims], next_shape=ns)


def movedim_perm(n: int, src: list, dst: list) -> list:
    """torch.movedim: listed dims go to their destinations, the others keep their order."""
    out = [None] * n
    for s, d in zip(src, dst):
        out[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return [o if o is not None else next(rest) for o in out]


def gen_movedim(rng, state, op="movedim"):
    n = state.rank
    if n == 0:
        return None
    k = rng.randint(1, n)
    src = rng.sample(range(n), k)
    dst = rng.sample(range(n), k)
    perm = movedim_perm(n, src, dst)
    src_arg = [s - n if rng.random() < 0.3 else s for s in src]
    dst_arg = [d - n if rng.random() < 0.3 else d for d in dst]
    if k == 1 and rng.random() < 0.6:
        src_arg, dst_arg = src_arg[0], dst_arg[0]
    return Call(op, [src_arg, dst_arg], next_shape=lambda st, _r: permuted(st.shape, perm))


def gen_moveaxis(rng, state):
    return gen_movedim(rng, state, "moveaxis")


# --- slicing --------------------------------------------------------------------------------


def gen_narrow(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank)
    e = size_at(state, d)
    v = e.value
    start = rng.randint(0, v)
    if rng.random() < 0.5:
        length = rng.randint(0, v - start)
        length_e = Expr.lit(length)
    else:
        length_e = e - start  # to the end
    start_arg = start - v if (rng.random() < 0.25 and start < v) else start
    if start_arg < 0:
        # A negative start counts from the end, so only a literal length stays in range.
        length_e = Expr.lit(min(length_e.value, -start_arg))
    if rng.random() < 0.02:
        length_e = e + 1  # exceeds the dim
    return Call(
        "narrow",
        [d, start_arg, length_e],
        next_shape=lambda st, _r: st.shape[: wrap(d, st.rank)] + [length_e] + st.shape[wrap(d, st.rank) + 1 :],
    )


BIG = 10_000  # a slice bound past any size: clamped by torch at every size the tests use


def slice_for(rng: random.Random, e: Expr):
    """A basic-indexing slice on a dim of size `e` and the size of its result (Expr)."""
    v = e.value
    step = rng.choice([None, None, 1, 2, 3])
    kind = rng.random()
    if kind < 0.25:
        start, stop = None, None
    elif kind < 0.5:
        start, stop = rng.randint(0, v), None
    elif kind < 0.7:
        start = rng.choice([None, rng.randint(0, v)])
        stop = rng.randint(-v, -1) if v > 0 else None
    elif kind < 0.9:
        start = rng.randint(0, v)
        stop = rng.randint(start, v)
    else:
        start, stop = rng.choice([(-BIG, None), (None, BIG), (rng.randint(0, v), BIG), (-BIG, BIG)])
    lo = Expr.lit(0) if start is None or start == -BIG else Expr.lit(start)
    if stop is None or stop == BIG:
        hi = e
    elif stop < 0:
        hi = e + stop
    else:
        hi = Expr.lit(stop)
    st = step or 1
    size = (hi - lo + (st - 1)) // st if hi.value > lo.value else Expr.lit(0)
    return Slice(start, stop, step), size


def gen_getitem(rng, state):
    """A basic-indexing tuple: slices (steps, negative and clamped bounds), ints (negative
    too), None and at most one Ellipsis. After an Ellipsis every remaining dim gets an
    entry, so entries bind to the dims the sizes were drawn for."""
    n = state.rank
    index = []
    out = []
    d = 0
    after_ellipsis = False
    stopped_early = False
    while d < n:
        r = rng.random()
        if r < 0.45:
            sl, size = slice_for(rng, state.shape[d])
            index.append(sl)
            out.append(size)
            d += 1
        elif r < 0.6 and state.shape[d].value > 0:
            v = state.shape[d].value
            i = rng.randrange(v)
            index.append(i - v if rng.random() < 0.4 else i)
            d += 1
        elif r < 0.7:
            index.append(None)
            out.append(Expr.lit(1))
        elif r < 0.8 and not after_ellipsis:
            after_ellipsis = True
            k = rng.randint(0, n - d)
            index.append(...)
            out.extend(state.shape[d : d + k])
            d += k
        elif not after_ellipsis:
            out.extend(state.shape[d:])  # stop early: trailing dims are kept whole
            d = n
            stopped_early = True
    if not stopped_early and (rng.random() < 0.15 or n == 0 and rng.random() < 0.5):
        index.append(None)
        out.append(Expr.lit(1))
    if rng.random() < 0.02 and n > 0:
        index = [state.shape[0].value + rng.randint(0, 2)]  # index out of range
    return Call("__getitem__", [index], next_shape=lambda st, _r: list(out))


def gen_select(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank)
    v = size_at(state, d).value
    if v == 0 and rng.random() < 0.8:
        return None
    i = rng.randrange(v) if v > 0 else 0
    if rng.random() < 0.4:
        i -= v
    if rng.random() < 0.02:
        i = v  # out of range
    return Call("select", [d, i], next_shape=lambda st, _r: st.shape[: wrap(d, st.rank)] + st.shape[wrap(d, st.rank) + 1 :])


def gen_split(rng, state):
    if state.rank == 0:
        return None
    explicit_dim = rng.random() < 0.7
    d = random_dim(rng, state.rank) if explicit_dim else 0
    dd = wrap(d, state.rank)
    e = size_at(state, d)
    v = e.value
    if rng.random() < 0.5:
        ss = rng.randint(1, max(v, 1))
        count = split_pieces(v, ss)
        k = rng.randrange(count)
        size = Expr.lit(ss) if k < count - 1 else e - ss * k
        args = [ss, d] if explicit_dim else [ss]
        return Call("split", args, output_index=k, next_shape=lambda st, _r: replace_dim(st.shape, dd, size))
    sizes = list_partition(rng, e)
    k = rng.randrange(len(sizes))
    if not explicit_dim:
        args, kwargs = [sizes], {}
    elif rng.random() < 0.3:
        args, kwargs = [sizes], {"dim": d}
    else:
        args, kwargs = [sizes, d], {}
    return Call("split", args, kwargs, output_index=k, next_shape=lambda st, _r: replace_dim(st.shape, dd, sizes[k]))


def list_partition(rng: random.Random, e: Expr) -> list:
    """Sizes that sum to `e`: literal pieces then the remainder as an Expr."""
    v = e.value
    pieces = []
    rest = v
    while rest > 0 and rng.random() < 0.6 and len(pieces) < 3:
        p = rng.randint(0, rest)
        pieces.append(p)
        rest -= p
    sizes = [Expr.lit(p) for p in pieces] + [e - sum(pieces)]
    rng.shuffle(sizes)
    if rng.random() < 0.03:
        sizes.append(Expr.lit(1))  # sum too large
    return sizes


def gen_split_with_sizes(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank)
    dd = wrap(d, state.rank)
    sizes = list_partition(rng, size_at(state, d))
    k = rng.randrange(len(sizes))
    return Call(
        "split_with_sizes", [sizes, d], output_index=k, next_shape=lambda st, _r: replace_dim(st.shape, dd, sizes[k])
    )


def gen_chunk(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank)
    dd = wrap(d, state.rank)
    e = size_at(state, d)
    v = e.value
    c = rng.randint(1, 5)
    if v == 0:
        count, size_of = c, (lambda k: Expr.lit(0))
    else:
        ss = -(-v // c)
        count = split_pieces(v, ss)
        ss_e = (e + (c - 1)) // c
        size_of = lambda k: ss_e if k < count - 1 else e - ss_e * k  # noqa: E731
    k = rng.randrange(count)
    if rng.random() < 0.02:
        c = 0  # chunks must be > 0
    return Call("chunk", [c, d], output_index=k, next_shape=lambda st, _r: replace_dim(st.shape, dd, size_of(k)))


def gen_unbind(rng, state):
    if state.rank == 0:
        return None
    explicit_dim = rng.random() < 0.8
    d = random_dim(rng, state.rank, bad_rate=0.0) if explicit_dim else 0
    dd = wrap(d, state.rank)
    v = state.shape[dd].value
    if v == 0 or v > 8:
        return None
    k = rng.randrange(v)
    args = [d] if explicit_dim else []
    return Call("unbind", args, output_index=k, next_shape=lambda st, _r: st.shape[:dd] + st.shape[dd + 1 :])


def gen_tensor_split(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank, bad_rate=0.0)
    dd = wrap(d, state.rank)
    e = size_at(state, d)
    v = e.value
    if rng.random() < 0.5:
        sections = rng.randint(1, 4)
        k = rng.randrange(sections)
        base = e // sections
        size = base + 1 if k < v % sections else base
        return Call("tensor_split", [sections, d], output_index=k, next_shape=lambda st, _r: replace_dim(st.shape, dd, size))
    indices = sorted(rng.randint(0, v) for _ in range(rng.randint(1, 3)))
    bounds = [0] + indices + [None]
    k = rng.randrange(len(bounds) - 1)
    lo, hi = bounds[k], bounds[k + 1]
    if hi is None:
        size = e - lo if v >= lo else Expr.lit(0)
    else:
        size = Expr.lit(max(min(hi, v) - min(lo, v), 0))
    return Call("tensor_split", [indices, d], output_index=k, next_shape=lambda st, _r: replace_dim(st.shape, dd, size))


# --- size-1 dims and broadcasting --------------------------------------------------------------


def gen_unsqueeze(rng, state):
    n = state.rank
    d = random_dim(rng, n, extra=1) if n > 0 else rng.choice([0, -1])
    return Call(
        "unsqueeze",
        [d],
        next_shape=lambda st, _r: st.shape[: (d + n + 1 if d < 0 else d)] + [Expr.lit(1)] + st.shape[(d + n + 1 if d < 0 else d) :],
    )


def gen_squeeze(rng, state):
    n = state.rank
    r = rng.random()
    if r < 0.3 or n == 0:
        return Call("squeeze", [], next_shape=lambda st, _r: [e for e in st.shape if e.value != 1])
    if r < 0.75:
        d = random_dim(rng, n)
        dd = wrap(d, n)
        return Call(
            "squeeze",
            [d],
            next_shape=lambda st, _r: st.shape if st.shape[dd].value != 1 else st.shape[:dd] + st.shape[dd + 1 :],
        )
    dims = rng.sample(range(n), rng.randint(1, n))
    dims = [x - n if rng.random() < 0.3 else x for x in dims]
    drop = {wrap(x, n) for x in dims}
    return Call(
        "squeeze",
        [dims],
        next_shape=lambda st, _r: [e for i, e in enumerate(st.shape) if not (i in drop and e.value == 1)],
    )


def expand_sizes(rng: random.Random, shape: list, allow_minus_one: bool) -> list:
    """Target sizes for expand/broadcast_to: new leading dims, size-1 dims grown."""
    lead = [Expr.lit(rng.randint(1, 3)) for _ in range(rng.choice([0, 0, 1, 2]))]
    sizes = []
    for e in shape:
        if e.value == 1 and rng.random() < 0.7:
            sizes.append(Expr.lit(rng.randint(1, 4)))
        elif allow_minus_one and rng.random() < 0.5:
            sizes.append(-1)
        else:
            sizes.append(e)
    if sizes and rng.random() < 0.02:
        i = rng.randrange(len(sizes))
        sizes[i] = shape[i] + 1  # a non-singleton dim cannot grow
    return lead + sizes


def expanded_shape(state: State, sizes: list) -> list:
    lead = len(sizes) - state.rank
    return [s if isinstance(s, Expr) else state.shape[i - lead] for i, s in enumerate(sizes)]


def gen_expand(rng, state):
    sizes = expand_sizes(rng, state.shape, allow_minus_one=True)
    if grows_too_much(state, [s for s in sizes if isinstance(s, Expr)]):
        return None
    ns = lambda st, _r: expanded_shape(st, sizes)  # noqa: E731
    if sizes and rng.random() < 0.5:
        return Call("expand", list(sizes), next_shape=ns)
    return Call("expand", [list(sizes)], next_shape=ns)


def gen_expand_as(rng, state):
    sizes = [s for s in expand_sizes(rng, state.shape, allow_minus_one=False)]
    if grows_too_much(state, sizes):
        return None
    other = small_operand(rng, sizes, contiguous=True)
    return Call("expand_as", [other], next_shape=lambda st, _r: list(sizes))


def gen_broadcast_to(rng, state):
    sizes = expand_sizes(rng, state.shape, allow_minus_one=False)
    if grows_too_much(state, sizes):
        return None
    return Call("broadcast_to", [sizes], next_shape=lambda st, _r: list(sizes))



# --- other views: diagonal, sliding windows, explicit strides ------------------------------------


def gen_diagonal(rng, state):
    n = state.rank
    if n < 2:
        return None
    d1, d2 = rng.sample(range(n), 2)
    if rng.random() < 0.02:
        d2 = d1  # "diagonal dimensions cannot be identical"
    offset = rng.randint(-2, 2)
    a, b = state.shape[d1].value, state.shape[d2].value
    size = max(min(a, b - offset), 0) if offset >= 0 else max(min(a + offset, b), 0)
    size_e = Expr.lit(size)
    if offset == 0 and a == b and state.shape[d1].form == state.shape[d2].form:
        size_e = state.shape[d1]

    def next_shape(st, _r):
        kept = [e for i, e in enumerate(st.shape) if i not in (d1, d2)]
        return kept + [size_e]

    if rng.random() < 0.5:
        return Call("diagonal", [offset, d1, d2], next_shape=next_shape)
    return Call("torch.diagonal", [THIS], {"offset": offset, "dim1": d1, "dim2": d2}, form="function", next_shape=next_shape)


def gen_unfold(rng, state):
    """Tensor.unfold: a sliding-window view (overlapping when step < size)."""
    n = state.rank
    if n == 0:
        return None
    d = random_dim(rng, n)
    dd = wrap(d, n)
    e = size_at(state, d)
    size = rng.randint(0, max(e.value, 0))
    step = rng.randint(1, 3)
    windows = (e - size) // step + 1

    def next_shape(st, _r):
        return replace_dim(st.shape, dd, windows) + [Expr.lit(size)]

    return Call("unfold", [d, size, step], next_shape=next_shape)


def gen_as_strided(rng, state):
    """as_strided inside the tensor's own footprint: its dims (permuted, maybe shortened)
    with their strides, at its offset, so storage bounds always hold."""
    n = state.rank
    perm = list(range(n))
    rng.shuffle(perm)
    shape = [state.shape[p] if rng.random() < 0.7 else Expr.lit(min(1, state.shape[p].value)) for p in perm]
    strides = [state.x.stride(p) for p in perm]
    args = [shape, strides]
    if rng.random() < 0.5:
        args.append(state.x.storage_offset())
    return Call("as_strided", args, next_shape=lambda st, _r: list(shape))


# --- the catalogue ------------------------------------------------------------------------------

# Generator name -> generator (the per-op tallies are by the recorded op name).
GENERATORS = {
    "view": gen_view,
    "view_as": gen_view_as,
    "reshape": gen_reshape,
    "reshape_as": gen_reshape_as,
    "flatten": gen_flatten,
    "unflatten": gen_unflatten,
    "ravel": gen_ravel,
    "contiguous": gen_contiguous,
    "clone": gen_clone,
    "to": gen_to,
    "float": gen_float,
    "half": gen_half,
    "double": gen_double,
    "transpose": gen_transpose,
    "swapaxes": gen_swapaxes,
    "swapdims": gen_swapdims,
    "t": gen_t,
    "T": gen_T,
    "mT": gen_mT,
    "permute": gen_permute,
    "movedim": gen_movedim,
    "moveaxis": gen_moveaxis,
    "narrow": gen_narrow,
    "getitem": gen_getitem,
    "select": gen_select,
    "split": gen_split,
    "split_with_sizes": gen_split_with_sizes,
    "chunk": gen_chunk,
    "unbind": gen_unbind,
    "tensor_split": gen_tensor_split,
    "unsqueeze": gen_unsqueeze,
    "squeeze": gen_squeeze,
    "expand": gen_expand,
    "expand_as": gen_expand_as,
    "broadcast_to": gen_broadcast_to,
    "diagonal": gen_diagonal,
    "unfold": gen_unfold,
    "as_strided": gen_as_strided,
}
