"""Chain ops that compute: element-wise ops (the TensorIterator output-stride rule),
in-place ops, normalisations, reductions, products, concatenation, index ops, factories,
backend-dependent ops (layout unknown to the linter), einops, and the terminal queries
(`x.size()`, `x.is_contiguous()`, ...).

See chain_call.py for what a generator returns.
"""

from __future__ import annotations

import random

from chain_call import (
    THIS,
    Call,
    Expr,
    Operand,
    State,
    TorchConst,
    broadcast_shapes,
    grows_too_much,
    permuted,
    random_dim,
    replace_dim,
    same,
    size_at,
    small_operand,
    wrap,
)
from layouts import divisors
from symexpr import product

# --- element-wise --------------------------------------------------------------------------------

UNARY_METHODS = ["exp", "relu", "neg", "sigmoid", "tanh", "abs", "sin", "__neg__"]
UNARY_FUNCTIONS = ["torch.exp", "torch.relu", "torch.nn.functional.gelu", "torch.nn.functional.silu"]
SCALAR_METHODS = ["add", "sub", "mul", "div", "__add__", "__radd__", "__rsub__", "__mul__", "__truediv__", "pow"]
TENSOR_METHODS = ["add", "mul", "sub", "maximum", "__add__", "__mul__", "__radd__", "__rsub__"]
TENSOR_FUNCTIONS = ["torch.add", "torch.mul", "torch.sub", "torch.maximum"]


def gen_unary(rng, state):
    if rng.random() < 0.7:
        return Call(rng.choice(UNARY_METHODS), [], next_shape=same)
    return Call(rng.choice(UNARY_FUNCTIONS), [THIS], form="function", next_shape=same)


def gen_binary_scalar(rng, state):
    scalar = rng.choice([2, 3, 0.5, 1.5])
    return Call(rng.choice(SCALAR_METHODS), [scalar], next_shape=same)


def gen_rpow(rng, state):
    """`2 ** x`: not element-wise in layout terms, a fresh contiguous tensor."""
    return Call("__rpow__", [2.0], next_shape=same)


def gen_clamp(rng, state):
    r = rng.random()
    if r < 0.4:
        return Call("clamp", [-0.5, 0.5], next_shape=same)
    if r < 0.7:
        return Call("clamp", [], {"min": 0.0}, next_shape=same)
    return Call("clamp_min", [0.1], next_shape=same)


def broadcast_operand_shape(rng: random.Random, shape: list, grow: bool = True) -> list:
    """A shape that broadcasts with `shape`: leading dims dropped, some dims 1, sometimes
    extra leading dims; rarely an incompatible one."""
    out = list(shape)[rng.randint(0, len(shape)) :]
    out = [Expr.lit(1) if rng.random() < 0.3 else e for e in out]
    if grow and rng.random() < 0.2:
        out = [Expr.lit(rng.randint(1, 2))] + out
    if out and rng.random() < 0.02:
        i = rng.randrange(len(out))
        if out[i].value != 1:
            out[i] = out[i] + 1  # not broadcastable
    return out


def binary_call(rng: random.Random, other: Operand, state: State) -> Call:
    """`x.op(other)` or `torch.op(other, x)`: argument order decides ties in the output
    stride rule (stride-semantics.md §6), so both orders are drawn."""
    shape = broadcast_shapes(state.shape, other.shape)
    if rng.random() < 0.5:
        return Call(rng.choice(TENSOR_METHODS), [other], next_shape=lambda st, _r: list(shape))
    return Call(rng.choice(TENSOR_FUNCTIONS), [other, THIS], form="function", next_shape=lambda st, _r: list(shape))


def gen_binary_broadcast(rng, state):
    shape = broadcast_operand_shape(rng, state.shape)
    if grows_too_much(state, broadcast_shapes(state.shape, shape)):
        return None
    return binary_call(rng, small_operand(rng, shape), state)


def gen_binary_same_shape(rng, state):
    return binary_call(rng, small_operand(rng, list(state.shape)), state)


def bool_operand(rng: random.Random, shape: list) -> Operand:
    op = small_operand(rng, shape)
    op.dtype, op.modulo = "bool", 2
    return op


def gen_where(rng, state):
    cond = bool_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
    other = small_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False)) if rng.random() < 0.6 else 0.0
    shape = broadcast_shapes(broadcast_shapes(cond.shape, state.shape), other.shape if isinstance(other, Operand) else [])
    args = [cond, THIS, other] if rng.random() < 0.6 else [cond, other, THIS]
    return Call("torch.where", args, form="function", next_shape=lambda st, _r: list(shape))


def gen_lerp(rng, state):
    end = small_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
    shape = broadcast_shapes(state.shape, end.shape)
    return Call("lerp", [end, 0.5], next_shape=lambda st, _r: list(shape))


def gen_addcmul(rng, state):
    t1 = small_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
    t2 = small_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
    shape = broadcast_shapes(broadcast_shapes(state.shape, t1.shape), t2.shape)
    return Call(rng.choice(["addcmul", "addcdiv"]), [t1, t2], next_shape=lambda st, _r: list(shape))


def gen_in_place(rng, state):
    """In-place ops return their receiver; torch refuses to write into overlapping memory
    (an expanded tensor), which the chains hit after `expand`."""
    r = rng.random()
    if r < 0.3:
        return Call(rng.choice(["add_", "mul_", "__iadd__", "__imul__"]), [2.0], next_shape=same)
    if r < 0.5:
        return Call(rng.choice(["relu_", "zero_", "exp_", "neg_"]), [], next_shape=same)
    if r < 0.6:
        return Call("clamp_", [-1.0, 1.0], next_shape=same)
    if r < 0.8:
        other = small_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
        return Call(rng.choice(["add_", "mul_", "sub_"]), [other], next_shape=same)
    return Call("copy_", [small_operand(rng, list(state.shape))], next_shape=same)


def gen_alias(rng, state):
    r = rng.random()
    if r < 0.6:
        return Call("detach", [], next_shape=same)
    if r < 0.8:
        return Call("torch.detach", [THIS], form="function", next_shape=same)
    return Call("data", [], form="attribute", next_shape=same)


def gen_dropout(rng, state):
    training = rng.random() < 0.5
    if rng.random() < 0.7:
        return Call("torch.nn.functional.dropout", [THIS, 0.5], {"training": training}, form="function", next_shape=same)
    return Call("torch.dropout", [THIS, 0.5, training], form="function", next_shape=same)


# --- normalisation and other same-shape ops with a fixed output layout ------------------------------


def gen_softmax(rng, state):
    op = rng.choice(["softmax", "log_softmax"])
    d = random_dim(rng, state.rank)
    r = rng.random()
    if r < 0.3:
        return Call(op, [], {"dim": d}, next_shape=same)
    if r < 0.6:
        return Call(f"torch.nn.functional.{op}", [THIS], {"dim": d}, form="function", next_shape=same)
    return Call(op, [d], next_shape=same)


def gen_layer_norm(rng, state):
    if state.rank == 0:
        return None
    op = rng.choice(["layer_norm", "rms_norm"])
    k = rng.randint(1, min(state.rank, 3))
    normalized = list(state.shape[-k:])
    return Call(f"torch.nn.functional.{op}", [THIS, normalized], form="function", next_shape=same)


def gen_batch_norm(rng, state):
    """batch_norm / group_norm: output in the input's suggest_memory_format()."""
    if state.rank < 2:
        return None
    c = state.shape[1]
    if c.value == 0:
        return None
    if rng.random() < 0.5:
        stats = [small_operand(rng, [c], contiguous=True) for _ in range(2)]
        return Call("torch.nn.functional.batch_norm", [THIS, *stats], form="function", next_shape=same)
    # torch refuses groups of a single value (training statistics): keep >= 2 per group.
    spatial = product(state.shape[2:]).value
    choices = [g for g in [Expr.lit(1), c] + [Expr.lit(f) for f in divisors(c.value)] if c.value // g.value * spatial > 1]
    if not choices:
        return None
    groups = rng.choice(choices)
    return Call("torch.nn.functional.group_norm", [THIS, groups], form="function", next_shape=same)


def gen_masked_fill(rng, state):
    mask = bool_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
    return Call("masked_fill", [mask, 0.0], next_shape=same)


def gen_cumsum(rng, state):
    d = random_dim(rng, state.rank)
    if rng.random() < 0.5:
        return Call("cumsum", [d], next_shape=same)
    return Call("torch.cumsum", [THIS], {"dim": d}, form="function", next_shape=same)


def gen_tril(rng, state):
    if state.rank < 2:
        return None
    return Call(rng.choice(["tril", "triu"]), [rng.randint(-1, 1)], next_shape=same)


def gen_roll(rng, state):
    if state.rank == 0:
        return None
    if rng.random() < 0.5:
        return Call("roll", [1, random_dim(rng, state.rank)], next_shape=same)
    dims = rng.sample(range(state.rank), rng.randint(1, state.rank))
    return Call("roll", [[1] * len(dims), dims], next_shape=same)


def gen_logsigmoid(rng, state):
    return Call("torch.nn.functional.logsigmoid", [THIS], form="function", next_shape=same)


# --- reductions -------------------------------------------------------------------------------------


def reduced_shape(shape: list, reduced: set, keepdim: bool) -> list:
    if keepdim:
        return [Expr.lit(1) if i in reduced else e for i, e in enumerate(shape)]
    return [e for i, e in enumerate(shape) if i not in reduced]


def gen_reduce(rng, state):
    n = state.rank
    op = rng.choice(["sum", "mean", "prod", "amax", "argmax", "all", "logsumexp", "var", "norm"])
    keepdim = rng.random() < 0.4
    kwargs = {"keepdim": True} if keepdim else {}
    multi = op in ("sum", "mean", "amax", "logsumexp", "var", "norm")
    if op != "logsumexp" and rng.random() < 0.15:
        # Reduce everything: a 0-d result (keepdim only applies with a dim).
        return Call(op, [], next_shape=lambda st, _r: [])
    if multi and n >= 2 and rng.random() < 0.3:
        dims = rng.sample(range(n), rng.randint(1, n))
        dim_arg = [x - n if rng.random() < 0.3 else x for x in dims]
        reduced = set(dims)
    else:
        dim_arg = random_dim(rng, n)
        reduced = {wrap(dim_arg, n)} if n > 0 else set()
    if op == "norm" and isinstance(dim_arg, list):
        return None  # norm over 3+ dims is a matrix-norm error, not a layout question
    ns = lambda st, _r: reduced_shape(st.shape, reduced, keepdim)  # noqa: E731
    if op == "norm" or rng.random() < 0.3:
        return Call(op, [], {"dim": dim_arg, **kwargs}, next_shape=ns)
    return Call(op, [dim_arg], kwargs, next_shape=ns)


def gen_max(rng, state):
    """max/min/median with a dim return (values, indices); without, a 0-d tensor; max with
    a tensor is element-wise."""
    op = rng.choice(["max", "min", "median"])
    n = state.rank
    r = rng.random()
    if r < 0.15 and state.numel > 0:  # x.max() of no elements is a value error
        return Call(op, [], next_shape=lambda st, _r: [])
    if r < 0.3 and op != "median":
        other = small_operand(rng, broadcast_operand_shape(rng, state.shape, grow=False))
        shape = broadcast_shapes(state.shape, other.shape)
        return Call(op, [other], next_shape=lambda st, _r: list(shape))
    if n > 0 and min(e.value for e in state.shape) == 0:
        return None  # max over a zero-size tensor has no values
    d = random_dim(rng, n)
    keepdim = rng.random() < 0.4
    reduced = {wrap(d, n)} if n > 0 else set()
    kwargs = {"keepdim": True} if keepdim else {}
    return Call(
        op, [d], kwargs, output_index=rng.randint(0, 1), next_shape=lambda st, _r: reduced_shape(st.shape, reduced, keepdim)
    )


# --- products -----------------------------------------------------------------------------------------


def gen_matmul(rng, state):
    n = state.rank
    if n == 0:
        return None
    inner = Expr.lit(rng.randint(1, 4))
    if rng.random() < 0.5:
        # x @ w
        kk = state.shape[-1]
        if rng.random() < 0.2:
            w_shape, out = [kk], state.shape[:-1]
        else:
            w_batch = []
            if n >= 3 and rng.random() < 0.4:
                w_batch = [Expr.lit(1) if rng.random() < 0.3 else e for e in state.shape[:-2]]
            w_shape = w_batch + [kk, inner]
            out = state.shape[:-1] + [inner]
        if rng.random() < 0.02:
            w_shape[-2 if len(w_shape) >= 2 else -1] = kk + 1  # inner dims differ
        op = rng.choice(["matmul", "matmul", "__matmul__"])
        return Call(op, [small_operand(rng, w_shape)], next_shape=lambda st, _r: list(out))
    # w @ x
    kk = state.shape[-2] if n >= 2 else state.shape[-1]
    w = small_operand(rng, [inner, kk])
    out = [inner] if n == 1 else state.shape[:-2] + [inner, state.shape[-1]]
    if rng.random() < 0.3:
        return Call("__rmatmul__", [w], next_shape=lambda st, _r: list(out))
    return Call("torch.matmul", [w, THIS], form="function", next_shape=lambda st, _r: list(out))


def gen_mm(rng, state):
    if state.rank != 2:
        return None
    p = Expr.lit(rng.randint(1, 4))
    return Call("mm", [small_operand(rng, [state.shape[1], p])], next_shape=lambda st, _r: [st.shape[0], p])


def gen_bmm(rng, state):
    if state.rank != 3:
        return None
    p = Expr.lit(rng.randint(1, 4))
    other = small_operand(rng, [state.shape[0], state.shape[2], p])
    return Call("bmm", [other], next_shape=lambda st, _r: [st.shape[0], st.shape[1], p])


def gen_addmm(rng, state):
    """addmm / baddbmm, with the chain tensor as a factor or as the added term."""
    if state.rank == 2:
        op, batch = "torch.addmm", []
    elif state.rank == 3:
        op, batch = "torch.baddbmm", [state.shape[0]]
    else:
        return None
    k = Expr.lit(rng.randint(1, 4))
    if rng.random() < 0.5:
        m, p = state.shape[-2], Expr.lit(rng.randint(1, 4))
        bias_shape = rng.choice([[p], [m, p], [Expr.lit(1), p]]) if not batch else batch + [m, p]
        args = [small_operand(rng, bias_shape), THIS, small_operand(rng, batch + [state.shape[-1], p])]
        out = batch + [m, p]
    else:
        m, p = state.shape[-2], state.shape[-1]
        args = [THIS, small_operand(rng, batch + [m, k]), small_operand(rng, batch + [k, p])]
        out = list(state.shape)
    return Call(op, args, form="function", next_shape=lambda st, _r: list(out))


def gen_linear(rng, state):
    if state.rank == 0:
        return None
    out_features = Expr.lit(rng.randint(1, 5))
    weight = small_operand(rng, [out_features, state.shape[-1]])
    args = [THIS, weight]
    if rng.random() < 0.5:
        args.append(small_operand(rng, [out_features], contiguous=True))
    return Call("torch.nn.functional.linear", args, form="function", next_shape=lambda st, _r: st.shape[:-1] + [out_features])


def gen_sdpa(rng, state):
    """scaled_dot_product_attention: backend-dependent output layout (spec §7)."""
    if state.rank < 2 or state.rank > 4:
        return None
    batch, e = state.shape[:-2], state.shape[-1]
    s, ev = Expr.lit(rng.randint(1, 4)), Expr.lit(rng.randint(1, 4))
    key = small_operand(rng, batch + [s, e])
    value = small_operand(rng, batch + [s, ev])
    return Call(
        "torch.nn.functional.scaled_dot_product_attention",
        [THIS, key, value],
        form="function",
        next_shape=lambda st, _r: st.shape[:-1] + [ev],
    )


def gen_unknown_layout(rng, state):
    """Ops whose output strides the linter does not model (flip, einsum)."""
    n = state.rank
    if n == 0:
        return None
    if rng.random() < 0.5:
        return Call("flip", [rng.sample(range(n), rng.randint(1, n))], next_shape=same)
    letters = "abcdef"[:n]
    perm = list(range(n))
    rng.shuffle(perm)
    pattern = f"{letters}->{''.join(letters[p] for p in perm)}"
    return Call("torch.einsum", [pattern, THIS], form="function", next_shape=lambda st, _r: permuted(st.shape, perm))


# --- concatenation and repetition ----------------------------------------------------------------------


def gen_cat(rng, state):
    n = state.rank
    if n == 0:
        return None
    d = random_dim(rng, n)
    dd = wrap(d, n)
    extra = Expr.lit(rng.randint(0, 3)) if rng.random() < 0.6 else size_at(state, d)
    other = small_operand(rng, replace_dim(state.shape, dd, extra))
    if grows_too_much(state, replace_dim(state.shape, dd, size_at(state, d) + extra)):
        return None
    tensors = [THIS, other] if rng.random() < 0.5 else [other, THIS]
    ns = lambda st, _r: replace_dim(st.shape, dd, st.shape[dd] + extra)  # noqa: E731
    if rng.random() < 0.3:
        return Call("torch.cat", [tensors], {"dim": d}, form="function", next_shape=ns)
    return Call("torch.cat", [tensors, d], form="function", next_shape=ns)


def gen_stack(rng, state):
    n = state.rank
    d = random_dim(rng, n, extra=1) if n > 0 else rng.choice([0, -1])
    dd = d + n + 1 if d < 0 else d
    other = small_operand(rng, list(state.shape))
    tensors = [THIS, other] if rng.random() < 0.5 else [other, THIS]
    return Call(
        "torch.stack", [tensors, d], form="function", next_shape=lambda st, _r: st.shape[:dd] + [Expr.lit(2)] + st.shape[dd:]
    )


def gen_hstack(rng, state):
    """hstack concatenates along dim 1 (dim 0 for 1-D); vstack makes 1-D inputs rows."""
    n = state.rank
    if n == 0:
        return None
    extra = Expr.lit(rng.randint(1, 3))
    if rng.random() < 0.5:
        d = 1 if n >= 2 else 0
        other = small_operand(rng, replace_dim(state.shape, d, extra))
        tensors = [THIS, other] if rng.random() < 0.5 else [other, THIS]
        return Call("torch.hstack", [tensors], form="function", next_shape=lambda st, _r: replace_dim(st.shape, d, st.shape[d] + extra))
    if n == 1:
        other = small_operand(rng, list(state.shape))
        tensors = [THIS, other] if rng.random() < 0.5 else [other, THIS]
        return Call("torch.vstack", [tensors], form="function", next_shape=lambda st, _r: [Expr.lit(2), st.shape[0]])
    other = small_operand(rng, replace_dim(state.shape, 0, extra))
    tensors = [THIS, other] if rng.random() < 0.5 else [other, THIS]
    return Call("torch.vstack", [tensors], form="function", next_shape=lambda st, _r: replace_dim(st.shape, 0, st.shape[0] + extra))


def gen_repeat(rng, state):
    n = state.rank
    lead = [rng.randint(1, 2) for _ in range(rng.choice([0, 0, 1]))]
    reps = lead + [rng.choice([1, 1, 2, 3]) for _ in range(n)] or [2]
    lead_n = len(reps) - n
    shape = [Expr.lit(r) for r in reps[:lead_n]] + [e * r for e, r in zip(state.shape, reps[lead_n:])]
    if grows_too_much(state, shape):
        return None
    return Call("repeat", reps if rng.random() < 0.5 else [reps], next_shape=lambda st, _r: list(shape))


def gen_tile(rng, state):
    """tile: like repeat, but fewer reps than dims are padded with leading 1s."""
    n = state.rank
    k = rng.randint(1, n + 1)
    reps = [rng.choice([1, 2, 3]) for _ in range(k)]
    full = [1] * max(n - k, 0) + reps
    lead_n = len(full) - n
    shape = [Expr.lit(r) for r in full[:lead_n]] + [e * r for e, r in zip(state.shape, full[lead_n:])]
    if grows_too_much(state, shape):
        return None
    if rng.random() < 0.5:
        return Call("tile", [reps], next_shape=lambda st, _r: list(shape))
    return Call("torch.tile", [THIS, reps], form="function", next_shape=lambda st, _r: list(shape))


def gen_repeat_interleave(rng, state):
    r = rng.randint(1, 3)
    if state.rank == 0 or rng.random() < 0.2:
        return Call("repeat_interleave", [r], next_shape=lambda st, _r: [product(st.shape) * r])
    d = random_dim(rng, state.rank)
    dd = wrap(d, state.rank)
    return Call("repeat_interleave", [r], {"dim": d}, next_shape=lambda st, _r: replace_dim(st.shape, dd, st.shape[dd] * r))


def index_operand(rng: random.Random, shape: list, bound: int) -> Operand:
    op = small_operand(rng, shape)
    op.dtype, op.modulo = "int64", max(bound, 1)
    return op


def gen_index_select(rng, state):
    if state.rank == 0:
        return None
    d = random_dim(rng, state.rank, bad_rate=0.0)
    dd = wrap(d, state.rank)
    bound = state.shape[dd].value
    if bound == 0:
        return None
    k = Expr.lit(rng.randint(1, 4))
    return Call("index_select", [d, index_operand(rng, [k], bound)], next_shape=lambda st, _r: replace_dim(st.shape, dd, k))


def gen_gather(rng, state):
    if state.rank == 0 or min(e.value for e in state.shape) == 0:
        return None
    d = random_dim(rng, state.rank, bad_rate=0.0)
    dd = wrap(d, state.rank)
    shape = [Expr.lit(rng.randint(1, e.value)) if rng.random() < 0.4 else e for e in state.shape]
    index = index_operand(rng, shape, state.shape[dd].value)
    return Call("gather", [d, index], next_shape=lambda st, _r: list(shape))


# --- factories ---------------------------------------------------------------------------------------------


def gen_create_like(rng, state):
    """zeros_like & co.: strides like clone(preserve_format), unless a format is given."""
    op = rng.choice(["torch.zeros_like", "torch.empty_like", "torch.ones_like", "torch.full_like"])
    args = [THIS, 2.0] if op == "torch.full_like" else [THIS]
    kwargs = {"memory_format": TorchConst("contiguous_format")} if rng.random() < 0.2 else {}
    return Call(op, args, kwargs, form="function", next_shape=same)


def gen_create(rng, state):
    """Fresh tensors sized from the chain's shape (`x.new_zeros(...)`, `torch.zeros(...)`)."""
    shape = list(state.shape)
    rng.shuffle(shape)
    r = rng.random()
    if r < 0.3:
        return Call(rng.choice(["new_zeros", "new_ones", "new_empty"]), [shape], next_shape=lambda st, _r: list(shape))
    if r < 0.5:
        return Call("new_full", [shape, 1.0], next_shape=lambda st, _r: list(shape))
    if r < 0.8 and shape:
        return Call(rng.choice(["torch.zeros", "torch.ones", "torch.empty"]), shape, form="function", next_shape=lambda st, _r: list(shape))
    return Call("torch.zeros", [shape], form="function", next_shape=lambda st, _r: list(shape))



def gen_embedding(rng, state):
    """F.embedding(indices, weight) with the chain tensor as the (2-D) weight."""
    if state.rank != 2 or state.shape[0].value == 0:
        return None
    idx_shape = [Expr.lit(rng.randint(1, 3)) for _ in range(rng.randint(1, 2))]
    indices = index_operand(rng, idx_shape, state.shape[0].value)
    return Call(
        "torch.nn.functional.embedding", [indices, THIS], form="function", next_shape=lambda st, _r: idx_shape + [st.shape[1]]
    )


def gen_factory(rng, state):
    """Tensors that do not depend on the chain's: arange, linspace, eye, torch.tensor."""
    r = rng.random()
    if r < 0.3:
        if rng.random() < 0.5:
            n = rng.randint(0, 6)
            return Call("torch.arange", [n], form="function", next_shape=lambda st, _r: [Expr.lit(n)])
        start, end, step = rng.randint(0, 3), rng.randint(3, 9), rng.randint(1, 3)
        count = len(range(start, end, step))
        return Call("torch.arange", [start, end, step], form="function", next_shape=lambda st, _r: [Expr.lit(count)])
    if r < 0.5:
        steps = rng.randint(0, 5)
        return Call("torch.linspace", [0.0, 1.0, steps], form="function", next_shape=lambda st, _r: [Expr.lit(steps)])
    if r < 0.75:
        n, m = rng.randint(1, 4), rng.randint(1, 4)
        if rng.random() < 0.5:
            return Call("torch.eye", [n], form="function", next_shape=lambda st, _r: [Expr.lit(n), Expr.lit(n)])
        return Call("torch.eye", [n, m], form="function", next_shape=lambda st, _r: [Expr.lit(n), Expr.lit(m)])
    rows, cols = rng.randint(1, 3), rng.randint(1, 3)
    data = [[float(i * cols + j) for j in range(cols)] for i in range(rows)]
    return Call("torch.tensor", [data], form="function", next_shape=lambda st, _r: [Expr.lit(rows), Expr.lit(cols)])


# --- queries (the chain ends with their non-tensor result) --------------------------------------------------


def gen_query(rng, state):
    n = state.rank
    r = rng.random()
    if r < 0.15:
        return Call("size", [])
    if r < 0.3 and n > 0:
        return Call("size", [random_dim(rng, n)])
    if r < 0.4:
        return Call("shape", [], form="attribute")
    if r < 0.5:
        return Call(rng.choice(["dim", "numel"]), [])
    if r < 0.55:
        return Call("ndim", [], form="attribute")
    if r < 0.7:
        return Call("stride", [random_dim(rng, n)] if n > 0 and rng.random() < 0.5 else [])
    if r < 0.9:
        return Call("is_contiguous", [])
    return Call("len", [THIS], form="function")


# --- einops -------------------------------------------------------------------------------------------------


def axes_text(groups: list) -> str:
    return " ".join(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)


def group_randomly(rng: random.Random, names: list) -> list:
    groups, i = [], 0
    while i < len(names):
        k = rng.choice([1, 1, 1, 2, 2, 3])
        groups.append(names[i : i + k])
        i += k
    return groups


def gen_einops(rng, state):
    """einops.rearrange / reduce / repeat with random splits, permutations and merges: the
    torch backend runs them as reshape → permute → (reduce | expand) → reshape."""
    n = state.rank
    if n == 0:
        return None
    op = rng.choice(["einops.rearrange", "einops.rearrange", "einops.reduce", "einops.repeat"])
    sizes = {}
    lengths = {}
    inputs = []
    for i, e in enumerate(state.shape):
        fs = divisors(e.value)
        if fs and rng.random() < 0.3:
            f = rng.choice(fs)
            x, y = f"a{i}x", f"a{i}y"
            sizes[x], sizes[y] = Expr.lit(f), e // f
            lengths[x] = sizes[x]  # einops infers the other half of a split
            inputs.append([x, y])
        else:
            sizes[f"a{i}"] = e
            inputs.append([f"a{i}"])
    elementary = [name for group in inputs for name in group]
    out_names = list(elementary)
    rng.shuffle(out_names)
    args_tail = []
    if op == "einops.reduce":
        keep = [name for name in out_names if rng.random() < 0.6]
        out_names = keep
        # max/min of no elements is a value error, not a layout question
        args_tail = [rng.choice(["sum", "mean", "max", "min"] if state.numel > 0 else ["sum", "mean"])]
    elif op == "einops.repeat":
        sizes["r"] = Expr.lit(rng.randint(1, 3))
        lengths["r"] = sizes["r"]
        out_names.insert(rng.randint(0, len(out_names)), "r")
    groups = group_randomly(rng, out_names)
    if rng.random() < 0.1:
        groups.insert(rng.randint(0, len(groups)), [])  # "()" adds a size-1 axis
    pattern = f"{axes_text(inputs)} -> {' '.join('()' if not g else axes_text([g]) for g in groups)}"
    shape = [product(sizes[name] for name in g) for g in groups]
    if grows_too_much(state, shape):
        return None
    return Call(op, [THIS, pattern, *args_tail], dict(lengths), form="function", next_shape=lambda st, _r: list(shape))


# --- the catalogue --------------------------------------------------------------------------------------------

# Generator name -> generator; names group spellings that share one generator (e.g.
# "binary_scalar" draws add/sub/mul/...); the per-op tallies are by the recorded op name.
GENERATORS = {
    "unary": gen_unary,
    "binary_scalar": gen_binary_scalar,
    "rpow": gen_rpow,
    "clamp": gen_clamp,
    "binary_broadcast": gen_binary_broadcast,
    "binary_same_shape": gen_binary_same_shape,
    "where": gen_where,
    "lerp": gen_lerp,
    "addcmul": gen_addcmul,
    "in_place": gen_in_place,
    "alias": gen_alias,
    "dropout": gen_dropout,
    "softmax": gen_softmax,
    "layer_norm": gen_layer_norm,
    "batch_norm": gen_batch_norm,
    "masked_fill": gen_masked_fill,
    "cumsum": gen_cumsum,
    "tril": gen_tril,
    "roll": gen_roll,
    "logsigmoid": gen_logsigmoid,
    "reduce": gen_reduce,
    "max": gen_max,
    "matmul": gen_matmul,
    "mm": gen_mm,
    "bmm": gen_bmm,
    "addmm": gen_addmm,
    "linear": gen_linear,
    "sdpa": gen_sdpa,
    "unknown_layout": gen_unknown_layout,
    "cat": gen_cat,
    "stack": gen_stack,
    "hstack": gen_hstack,
    "repeat": gen_repeat,
    "tile": gen_tile,
    "repeat_interleave": gen_repeat_interleave,
    "index_select": gen_index_select,
    "gather": gen_gather,
    "create_like": gen_create_like,
    "create": gen_create,
    "embedding": gen_embedding,
    "factory": gen_factory,
    "query": gen_query,
    "einops": gen_einops,
}
