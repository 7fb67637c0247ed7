"""Chain steps that construct an `nn.Module` (or einops layer) and call it on the chain's
tensor: `torch.nn.Linear(C, 4)(x)`, `Rearrange("a b -> b a")(x)`, ...

A module step is recorded with "form": "module", the class as `op`, the constructor's
arguments as `init_args`/`init_kwargs` and the call's as `args`. Modules are built fresh,
so they are in training mode (dropout active, batch norm using batch statistics).

See chain_call.py for what a generator returns.
"""

from __future__ import annotations

import random

from chain_call import THIS, Call, Expr, TorchConst, random_dim, same, size_at, wrap
from chain_compute import gen_einops
from chain_views import flatten_shape
from layouts import divisors
from symexpr import product


def module_call(cls: str, init_args: list, next_shape, init_kwargs: dict | None = None) -> Call:
    return Call(cls, [THIS], form="module", init_args=init_args, init_kwargs=init_kwargs or {}, next_shape=next_shape)


def param_dtype(state) -> dict:
    """Modules with parameters must match the input's dtype (`dtype=` at construction)."""
    name = str(state.x.dtype).removeprefix("torch.")
    return {} if name == "float32" else {"dtype": TorchConst(name)}


def gen_linear_module(rng: random.Random, state):
    if state.rank == 0:
        return None
    out_features = Expr.lit(rng.randint(1, 5))
    kwargs = {"bias": False} if rng.random() < 0.3 else {}
    kwargs.update(param_dtype(state))
    return module_call(
        "torch.nn.Linear", [state.shape[-1], out_features], lambda st, _r: st.shape[:-1] + [out_features], kwargs
    )


def gen_norm_module(rng: random.Random, state):
    """LayerNorm / RMSNorm over the trailing dims, GroupNorm / BatchNorm over channels."""
    n = state.rank
    if n == 0:
        return None
    r = rng.random()
    if r < 0.5:
        cls = rng.choice(["torch.nn.LayerNorm", "torch.nn.RMSNorm"])
        k = rng.randint(1, min(n, 3))
        return module_call(cls, [list(state.shape[-k:])], same, param_dtype(state))
    if n < 2 or state.shape[1].value == 0:
        return None
    c = state.shape[1]
    per_channel = state.numel // c.value
    if r < 0.75:
        cls = {2: "torch.nn.BatchNorm1d", 3: "torch.nn.BatchNorm1d", 4: "torch.nn.BatchNorm2d", 5: "torch.nn.BatchNorm3d"}.get(n)
        if cls is None or per_channel < 2:
            return None  # batch statistics need two values per channel
        return module_call(cls, [c], same, param_dtype(state))
    spatial = product(state.shape[2:]).value
    choices = [g for g in [Expr.lit(1), c] + [Expr.lit(f) for f in divisors(c.value)] if c.value // g.value * spatial > 1]
    if not choices:
        return None
    return module_call("torch.nn.GroupNorm", [rng.choice(choices), c], same, param_dtype(state))


def gen_activation_module(rng: random.Random, state):
    r = rng.random()
    if r < 0.4:
        return module_call(rng.choice(["torch.nn.ReLU", "torch.nn.GELU", "torch.nn.SiLU", "torch.nn.Tanh"]), [], same)
    if r < 0.6:
        return module_call("torch.nn.Softmax", [random_dim(rng, state.rank)], same)
    if r < 0.7:
        return module_call("torch.nn.LogSigmoid", [], same)
    if r < 0.85:
        return module_call("torch.nn.Dropout", [0.5], same)
    return module_call("torch.nn.Identity", [], same)


def gen_shape_module(rng: random.Random, state):
    """nn.Flatten (default start_dim=1) and nn.Unflatten."""
    n = state.rank
    if rng.random() < 0.6 or n == 0:
        if rng.random() < 0.4:
            return module_call("torch.nn.Flatten", [], lambda st, _r: flatten_shape(st.shape, 1, -1))
        a, b = sorted(rng.randrange(max(n, 1)) for _ in range(2))
        return module_call("torch.nn.Flatten", [a, b], lambda st, _r: flatten_shape(st.shape, a, b))
    d = random_dim(rng, n, bad_rate=0.0)
    dd = wrap(d, n)
    e = size_at(state, d)
    fs = divisors(e.value)
    sizes = [Expr.lit(fs[0]), e // fs[0]] if fs else [e, Expr.lit(1)]
    return module_call("torch.nn.Unflatten", [d, sizes], lambda st, _r: st.shape[:dd] + sizes + st.shape[dd + 1 :])


def gen_einops_layer(rng: random.Random, state):
    """einops.layers.torch.Rearrange / Reduce: the einops functions as modules."""
    call = gen_einops(rng, state)
    if call is None or call.op == "einops.repeat":
        return None
    pattern, *rest = call.args[1:]
    cls = "einops.layers.torch.Rearrange" if call.op == "einops.rearrange" else "einops.layers.torch.Reduce"
    return Call(cls, [THIS], form="module", init_args=[pattern, *rest], init_kwargs=call.kwargs, next_shape=call.next_shape)


GENERATORS = {
    "linear_module": gen_linear_module,
    "norm_module": gen_norm_module,
    "activation_module": gen_activation_module,
    "shape_module": gen_shape_module,
    "einops_layer": gen_einops_layer,
}
