#!/usr/bin/env python3
"""Do the bytes per forward pass stridelint states with `--model-config` match what torch
allocates for the same copies?

    .venv-realcode/bin/python scripts/oracle/check_model_config_bytes.py \
        [--model examples/llama/model.py] [--config examples/llama/model.config.json] \
        [--dim bsz=1] [--dim q_len=256] [--binary target/release/stridelint]

1. stridelint: `check MODEL --model-config CONFIG --dim … --output-format json
   --hidden-copy-min-bytes 0`; the sum of `copy.bytes_per_forward_pass` of its SL002
   findings (the config's `num_hidden_layers` and `torch_dtype` give layers and dtype).
2. torch (CPU): the model file's attention class, built from the config (random weights),
   runs one layer's forward pass on a `(bsz, q_len, hidden_size)` input in the config's
   dtype. Every `reshape`/`flatten`/`view` call is watched: when its result does not share
   its input's storage, the bytes of the new storage are counted — the allocation the
   hidden copy makes. The layer's bytes × `num_hidden_layers` is the forward pass.
3. Both totals and each copy site, side by side; exit 1 when they differ.
4. The same for the score matrices hand-written attention stores (SL008, stated at the
   `weights @ v` product): torch's side is the storage of each `@`/`matmul` operand that
   a softmax returned.

`--table FILE` appends torch's figures (the dims, each site's bytes per forward pass) to a
JSON table that `tests/it/model_config.rs` checks stridelint against without torch:
`tests/data/model_config/llama_bytes.json` was made with the two runs of that test.

No hub access is needed: the config is a local file and the weights are random.
"""

import argparse
import importlib.util
import inspect
import json
import pathlib
import subprocess
import sys
import types

import torch
import torch.nn as nn


def load_class(model_path):
    spec = importlib.util.spec_from_file_location("model_under_check", model_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, nn.Module) and c.__module__ == module.__name__]
    if len(classes) != 1:
        sys.exit(f"{model_path}: expected one nn.Module class, found {[c.__name__ for c in classes]}")
    return classes[0]


def torch_copies(cls, config, dims):
    """(site line → bytes) of the copies one forward pass of one layer makes."""
    dtype = getattr(torch, config.get("torch_dtype") or config.get("dtype") or "float32")
    torch.manual_seed(0)
    layer = cls(types.SimpleNamespace(**config)).to(dtype)
    x = torch.randn(dims["bsz"], dims["q_len"], config["hidden_size"], dtype=dtype)
    copies = {}
    weights = {}
    softmax_results = set()
    originals = {name: getattr(torch.Tensor, name) for name in ("reshape", "flatten")}
    original_softmax = torch.softmax
    original_matmul = torch.Tensor.__matmul__

    def softmax(*args, **kwargs):
        out = original_softmax(*args, **kwargs)
        softmax_results.add(out.untyped_storage().data_ptr())
        return out

    def matmul(self, other):
        if self.untyped_storage().data_ptr() in softmax_results:
            line = sys._getframe(1).f_lineno
            weights[line] = weights.get(line, 0) + self.untyped_storage().nbytes()
        return original_matmul(self, other)

    def watch(name):
        original = originals[name]

        def wrapped(self, *args, **kwargs):
            out = original(self, *args, **kwargs)
            if out.untyped_storage().data_ptr() != self.untyped_storage().data_ptr():
                caller = sys._getframe(1)
                line = caller.f_lineno
                copies[line] = copies.get(line, 0) + out.untyped_storage().nbytes()
            return out
        return wrapped

    for name in originals:
        setattr(torch.Tensor, name, watch(name))
    torch.softmax = softmax
    torch.Tensor.__matmul__ = matmul
    try:
        with torch.no_grad():
            layer(x)
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)
        torch.softmax = original_softmax
        torch.Tensor.__matmul__ = original_matmul
    return copies, weights


def stridelint_copies(binary, model, config_path, dims):
    args = [binary, "check", str(model), "--no-cache", "--output-format", "json",
            "--hidden-copy-min-bytes", "0", "--model-config", str(config_path)]
    for name, value in dims.items():
        args += ["--dim", f"{name}={value}"]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"stridelint failed ({run.returncode}): {run.stderr}")
    findings = json.loads(run.stdout)
    sites = {"SL002": {}, "SL008": {}}
    for f in findings:
        if f["code"] in sites:
            size = f.get("copy") or {}
            sites[f["code"]][f["location"]["row"]] = size.get("bytes_per_forward_pass")
    return sites


def compare(what, static, measured, layers):
    """Print the sites side by side; True when every site and the total agree."""
    print(f"{what}\n{'line':>5}  {'stridelint':>16}  {'torch':>16}")
    ok = True
    for line in sorted(set(static) | set(measured)):
        s = static.get(line)
        t = measured.get(line, 0) * layers
        same = s == t
        ok &= same
        print(f"{line:>5}  {s if s is not None else 'unsized':>16}  {t:>16}  {'ok' if same else 'DIFFERENT'}")
    total_static = sum(v for v in static.values() if v)
    total_torch = sum(measured.values()) * layers
    print(f"total  {total_static:>16}  {total_torch:>16}  bytes per forward pass "
          f"({total_static / 2**30:.2f} GiB vs {total_torch / 2**30:.2f} GiB)")
    return ok and total_static == total_torch


def main():
    repo = pathlib.Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(repo / "examples/llama/model.py"))
    ap.add_argument("--config", default=str(repo / "examples/llama/model.config.json"))
    ap.add_argument("--dim", action="append", default=[], help="NAME=SIZE (bsz, q_len)")
    ap.add_argument("--binary", default=str(repo / "target/release/stridelint"))
    ap.add_argument("--table", help="append torch's figures to this JSON table")
    args = ap.parse_args()
    dims = {"bsz": 1, "q_len": 256}
    for d in args.dim:
        name, _, value = d.partition("=")
        dims[name] = int(value)
    config = json.loads(pathlib.Path(args.config).read_text())
    layers = config.get("num_hidden_layers", 1)

    static = stridelint_copies(args.binary, args.model, args.config, dims)
    measured, weights = torch_copies(load_class(args.model), config, dims)
    print(f"{pathlib.Path(args.model).name} with {pathlib.Path(args.config).name} at "
          + ", ".join(f"{k} = {v}" for k, v in dims.items())
          + f"; {layers} layers, {config.get('torch_dtype', 'float32')}")
    ok = compare("copies (SL002)", static["SL002"], measured, layers)
    ok &= compare("score matrices (SL008)", static["SL008"], weights, layers)
    print("match" if ok else "MISMATCH")
    if args.table:
        table_path = pathlib.Path(args.table)
        rows = json.loads(table_path.read_text()) if table_path.exists() else []
        rows.append({
            "model": str(pathlib.Path(args.model).resolve().relative_to(repo)),
            "config": str(pathlib.Path(args.config).resolve().relative_to(repo)),
            "dims": dims,
            "torch": torch.__version__,
            "bytes_per_forward_pass": {str(line): b * layers for line, b in sorted(measured.items())},
            "score_matrix_bytes_per_forward_pass": {
                str(line): b * layers for line, b in sorted(weights.items())
            },
        })
        table_path.parent.mkdir(parents=True, exist_ok=True)
        table_path.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
