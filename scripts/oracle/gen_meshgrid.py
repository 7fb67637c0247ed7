"""Generate tests/data/oracle/meshgrid.jsonl: the grids `torch.meshgrid` returns.

Random calls with 1-4 inputs, each 0-d or 1-d (contiguous, strided by a step or a
non-zero storage offset, or an expanded 1-d of stride 0), with `indexing="ij"`, `"xy"` or
none (torch's default, "ij"). One row per call: the inputs' geometry, the indexing and
every grid's shape, strides and storage offset, and whether each grid shares its input's
storage. `tests/it/meshgrid_oracle.rs` replays the rows through `layout::meshgrid`.

    .venv-realcode/bin/python scripts/oracle/gen_meshgrid.py
"""

import json
import os
import random
import warnings

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests/data/oracle/meshgrid.jsonl")


def make_input(rng):
    kind = rng.choice(["scalar", "contiguous", "step", "offset", "expanded"])
    n = rng.randint(1, 5)
    if kind == "scalar":
        return torch.tensor(3.0)
    if kind == "contiguous":
        return torch.arange(float(n))
    if kind == "step":
        step = rng.randint(2, 3)
        return torch.arange(float(n * step))[::step]
    if kind == "offset":
        start = rng.randint(1, 3)
        return torch.arange(float(n + start))[start:]
    return torch.tensor([1.0]).expand(n)


def geometry(t):
    return {"shape": list(t.shape), "strides": list(t.stride()), "offset": t.storage_offset()}


def main():
    rng = random.Random(20261202)
    rows = []
    for _ in range(600):
        inputs = [make_input(rng) for _ in range(rng.randint(1, 4))]
        indexing = rng.choice(["ij", "xy", None])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grids = torch.meshgrid(*inputs) if indexing is None else torch.meshgrid(*inputs, indexing=indexing)
        order = list(range(len(inputs)))
        if indexing == "xy" and len(inputs) >= 2:
            order[0], order[1] = 1, 0
        rows.append({
            "inputs": [geometry(t) for t in inputs],
            "indexing": indexing,
            "grids": [dict(geometry(g), shares_storage=g.untyped_storage().data_ptr()
                           == inputs[i].untyped_storage().data_ptr()) for i, g in enumerate(grids)],
        })
    with open(OUT, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"{len(rows)} rows -> {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
