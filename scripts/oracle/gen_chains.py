"""Generate tests/data/oracle/chains.jsonl: random chains of 1-6 layout ops run by real torch.

Each chain starts from a contiguous or randomly strided tensor (built with `as_strided`)
and applies ops drawn from chain_ops.GENERATORS. After every step it records the result's
geometry; a failing step records torch's error and ends the chain.

    {"kind": "chain", "id": 7,
     "start": {"shape": [4, 6], "strides": [6, 1], "offset": 0, "dtype": "float32",
               "sym_shape": ["s0", "s1"], "sym_strides": ["s1", 1]},
     "steps": [
       {"op": "transpose", "args": [0, 1],
        "result": {"ok": true, "shape": [6, 4], "strides": [1, 6], "offset": 0,
                   "contiguous": false, "dtype": "float32",
                   "shares_storage": true, "same_object": false}},
       {"op": "view", "args": [24], "sym_args": [["*", "s1", "s0"]],
        "result": {"ok": false, "error": "view_incompatible", "exception": "RuntimeError",
                   "message": "view size is not compatible ..."}}]}

Step fields:
  op            method name (`x.op(...)`), dotted function name when "form" is "function"
                (or class name when "form" is "module")
                (`torch.cat`, `torch.add`, `torch.nn.functional.layer_norm`), or property
                name when "form" is "attribute" (`T`, `mT`). Indexing is op `__getitem__`
                with one argument, the index tuple as a list.
  args/kwargs   JSON values; special objects:
                  {"this": true}                 the chain's current tensor (function forms)
                  {"tensor": {"shape", "strides", "offset"}}  another operand (as_strided,
                                                 same dtype as the chain's tensor)
                  {"slice": [start, stop, step]} a slice in an index (null = omitted)
                  "..."                          Ellipsis in an index
                  "torch.float16", "torch.contiguous_format"  torch constants by name
  init_args/init_kwargs  for "form": "module": the constructor's arguments (`op` is the
                class, e.g. `torch.nn.Linear`); args/kwargs are then the call's.
  sym_args/sym_kwargs   present when some number was derived from the start sizes: the
                same structure with symexpr.py forms in place of numbers (operands carry
                symbolic "shape"/"strides" there too).
  output_index  for ops returning several tensors (split, chunk, unbind, ...): which one
                the chain continues with; "outputs" then lists every output's geometry.
  result        the continuing tensor. "shares_storage": its storage is the input's (no
                copy happened; for copy-capable ops this is the copy verdict);
                "same_object": torch returned the input object itself.

Usage: .venv-oracle/bin/python scripts/oracle/gen_chains.py [--chains N] [--seed S]
"""

from __future__ import annotations

import argparse
import builtins
import collections
import functools
import importlib
import random
import sys
import warnings

import torch

import meta
import chain_compute
import chain_modules
import chain_views
from chain_call import Call, Operand, Slice, State, This, TorchConst
from layouts import error_record, materialize, random_layout, shares_storage
from symexpr import Expr, evaluate

GENERATORS = {**chain_views.GENERATORS, **chain_compute.GENERATORS, **chain_modules.GENERATORS}
# Ops whose result is a value, not a tensor (an empty tuple from `stride()` on a 0-d
# tensor would otherwise look like an empty list of tensors).
QUERIES = {"size", "shape", "dim", "ndim", "numel", "stride", "is_contiguous", "len"}
SEED = 20250602
CHAINS = 6000
MAX_LENGTH = 6


def encode(value, symbolic: bool):
    """A call argument as JSON (concrete numbers, or their derivations)."""
    if isinstance(value, Expr):
        return value.json() if symbolic else value.value
    if isinstance(value, This):
        return {"this": True}
    if isinstance(value, Operand):
        if symbolic:
            shape, strides = [e.json() for e in value.shape], [e.json() for e in value.strides]
        else:
            shape, strides = [e.value for e in value.shape], [e.value for e in value.strides]
        tensor = {"shape": shape, "strides": strides, "offset": value.offset}
        if value.dtype:
            tensor["dtype"] = value.dtype
        return {"tensor": tensor}
    if isinstance(value, Slice):
        return {"slice": [encode(value.start, symbolic), encode(value.stop, symbolic), encode(value.step, symbolic)]}
    if value is Ellipsis:
        return "..."
    if isinstance(value, TorchConst):
        return f"torch.{value.name}"
    if isinstance(value, (list, tuple)):
        return [encode(v, symbolic) for v in value]
    if isinstance(value, dict):
        return {k: encode(v, symbolic) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot encode {value!r}")


def to_torch(value, state: State):
    """A call argument as the Python value torch is called with."""
    if isinstance(value, Expr):
        return value.value
    if isinstance(value, This):
        return state.x
    if isinstance(value, Operand):
        shape, strides = [e.value for e in value.shape], [e.value for e in value.strides]
        if value.dtype is None:
            return materialize(shape, strides, value.offset, dtype=state.x.dtype)
        return materialize(shape, strides, value.offset, dtype=getattr(torch, value.dtype), modulo=value.modulo)
    if isinstance(value, Slice):
        return slice(to_torch(value.start, state), to_torch(value.stop, state), to_torch(value.step, state))
    if isinstance(value, TorchConst):
        return value.value()
    if isinstance(value, (list, tuple)):
        return [to_torch(v, state) for v in value]
    if isinstance(value, dict):
        return {k: to_torch(v, state) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=None)
def resolve_function(dotted: str):
    """`torch.nn.functional.gelu` → the function; `len` → the builtin."""
    if "." not in dotted:
        return getattr(builtins, dotted)
    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError:  # `torch.nn.functional.gelu`: a module, then attributes
        root, *path = dotted.split(".")
        obj = importlib.import_module(root)
        for part in path:
            obj = getattr(obj, part)
        return obj


def geometry(t: torch.Tensor) -> dict:
    return {"shape": list(t.shape), "strides": list(t.stride()), "offset": t.storage_offset()}


def run_call(call: Call, state: State):
    args = to_torch(call.args, state)
    kwargs = to_torch(call.kwargs, state)
    x = state.x
    if call.form == "attribute":
        return getattr(x, call.op)
    if call.form == "function":
        return resolve_function(call.op)(*args, **kwargs)
    if call.form == "module":
        module = resolve_function(call.op)(*to_torch(call.init_args, state), **to_torch(call.init_kwargs, state))
        return module(*args, **kwargs)
    if call.op == "__getitem__":
        return x[tuple(args[0])]
    return getattr(x, call.op)(*args, **kwargs)


def check_forms(concrete, symbolic, env: dict, where: str) -> None:
    """Every recorded derivation must evaluate to the number torch was called with."""
    if isinstance(concrete, list):
        for c, s in zip(concrete, symbolic):
            check_forms(c, s, env, where)
    elif isinstance(concrete, dict):
        for k in concrete:
            check_forms(concrete[k], symbolic[k], env, where)
    elif isinstance(concrete, int) and not isinstance(concrete, bool):
        if evaluate(symbolic, env) != concrete:
            raise AssertionError(f"{where}: form {symbolic!r} != {concrete}")


def step_record(call: Call, state: State, env: dict) -> tuple:
    """Run one call; returns (record, next state or None when the chain stops)."""
    rec = {"op": call.op}
    if call.form != "method":
        rec["form"] = call.form
    fields = [("args", call.args), ("kwargs", call.kwargs)]
    if call.form == "module":
        fields += [("init_args", call.init_args), ("init_kwargs", call.init_kwargs)]
    for name, value in fields:
        plain, derived = encode(value, False), encode(value, True)
        check_forms(plain, derived, env, call.op)
        if name == "args" or value:
            rec[name] = plain
            if derived != plain:
                rec[f"sym_{name}"] = derived
    if call.output_index is not None:
        rec["output_index"] = call.output_index

    try:
        out = run_call(call, state)
    except (RuntimeError, IndexError, ValueError, TypeError) as exc:
        rec["result"] = error_record(exc)
        return rec, None
    tensors = isinstance(out, torch.Tensor) or (
        isinstance(out, (tuple, list)) and not isinstance(out, torch.Size) and all(isinstance(t, torch.Tensor) for t in out)
    )
    if not tensors or call.op in QUERIES:
        # A query (size, stride, is_contiguous, len, ...): its value ends the chain.
        rec["result"] = {"ok": True, "value": list(out) if isinstance(out, (torch.Size, tuple)) else out}
        return rec, None
    if isinstance(out, (tuple, list)):
        rec["outputs"] = [geometry(t) for t in out]
        if call.output_index is None or call.output_index >= len(out):
            raise AssertionError(f"{call.op}: output {call.output_index} of {len(out)}")
        r = out[call.output_index]
    else:
        r = out
    rec["result"] = {
        "ok": True,
        **geometry(r),
        "contiguous": r.is_contiguous(),
        "dtype": str(r.dtype).removeprefix("torch."),
        "shares_storage": shares_storage(state.x, r),
        "same_object": r is state.x,
    }
    shape = call.next_shape(state, r)
    if [e.value for e in shape] != list(r.shape):
        raise AssertionError(f"{call.op} {rec['args']}: tracked shape {shape} != torch {list(r.shape)}")
    return rec, State(r, shape)


def draw_call(rng: random.Random, state: State) -> tuple:
    kinds = list(GENERATORS)
    while True:
        kind = rng.choice(kinds)
        call = GENERATORS[kind](rng, state)
        if call is not None:
            return kind, call


def chain_row(rng: random.Random, i: int, tally: collections.Counter) -> dict:
    layout = random_layout(
        rng, max_rank=5, max_numel=1024, allow_zero=rng.random() < 0.15, symbolic=True, contiguous_bias=0.4
    )
    x = materialize(layout.shape_values, layout.stride_values, layout.offset)
    env = {e.form: e.value for e in layout.shape if isinstance(e.form, str)}
    state = State(x, list(layout.shape))
    steps = []
    for _ in range(rng.randint(1, MAX_LENGTH)):
        kind, call = draw_call(rng, state)
        rec, state = step_record(call, state, env)
        steps.append(rec)
        tally[f"op:{rec['op']}"] += 1
        tally[f"kind:{kind}"] += 1
        if state is None:
            if not rec["result"]["ok"]:
                tally[f"error:{rec['op']}:{rec['result']['error']}"] += 1
            break
        if not state.x.is_floating_point():
            # argmax / all / max indices: most ops refuse integer or bool inputs for reasons
            # unrelated to layout, so the chain ends here.
            break
    start = {**layout.json(symbolic=True), "dtype": "float32", "style": layout.style}
    return {"kind": "chain", "id": i, "start": start, "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chains", type=int, default=CHAINS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # x.T on non-2-D tensors warns (deprecation), still runs

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    tally = collections.Counter()
    rows = [chain_row(rng, i, tally) for i in range(args.chains)]

    ops = {k[3:]: v for k, v in sorted(tally.items()) if k.startswith("op:")}
    errors = {k[6:]: v for k, v in sorted(tally.items()) if k.startswith("error:")}
    kinds = {k[5:]: v for k, v in sorted(tally.items()) if k.startswith("kind:")}
    print(f"{'op':40} steps", file=sys.stderr)
    for op, n in ops.items():
        print(f"{op:40} {n}", file=sys.stderr)
    print("errors (op:kind):", file=sys.stderr)
    for key, n in errors.items():
        print(f"  {key:50} {n}", file=sys.stderr)
    lengths = collections.Counter(len(r["steps"]) for r in rows)
    print(f"chains by length: {dict(sorted(lengths.items()))}", file=sys.stderr)

    meta.write_jsonl("chains.jsonl", rows)
    meta.record(
        "chains.jsonl",
        "scripts/oracle/gen_chains.py",
        args.seed,
        len(rows),
        {
            "steps": sum(ops.values()),
            "steps_per_op": ops,
            "steps_per_generator": kinds,
            "errors_per_op": errors,
            "copy_check": "storage identity (untyped_storage()._cdata) of result vs input (shares_storage)",
        },
    )


if __name__ == "__main__":
    main()
