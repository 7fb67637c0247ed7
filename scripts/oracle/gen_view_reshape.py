"""Generate tests/data/oracle/view_reshape.jsonl: real torch `view` / `reshape` / `flatten`
on random concrete layouts.

Each row builds one input layout with `as_strided` (see layouts.py for the kinds of
layouts drawn) and one target, then records what torch does:

    {"kind": "view_reshape", "id": 17, "style": "permuted+sliced", "tag": "regroup+infer",
     "shape": [...], "strides": [...], "offset": 3, "target": [6, -1],
     "numel": 24, "contiguous": false,
     "view":    {"ok": true, "shape": [...], "strides": [...], "offset": 3}
                | {"ok": false, "error": "view_incompatible", "exception": "RuntimeError",
                   "message": "<torch's exact first line>"},
     "reshape": {"ok": true, "copies": false, "shape": ..., "strides": ..., "offset": ...}
                | {"ok": false, ...}}

`flatten` rows have "kind": "flatten", "start_dim"/"end_dim" instead of "target", and a
"flatten" result shaped like "reshape".

"copies" is decided by comparing storage data pointers (layouts.shares_storage): the
physical meaning of "reshape made a copy". The generator also asserts that this agrees
with `_is_view()` for every successful reshape, as a guard against a torch change.

Usage: .venv-oracle/bin/python scripts/oracle/gen_view_reshape.py [--rows N] [--seed S]
"""

from __future__ import annotations

import argparse
import collections
import random
import sys

import torch

import meta
from layouts import error_record, materialize, random_layout, random_target, shares_storage
from layouts import target_values

SEED = 20250601
VIEW_ROWS = 24000
FLATTEN_ROWS = 3000


def result_record(x: torch.Tensor, r: torch.Tensor, with_copy: bool) -> dict:
    rec = {"ok": True}
    if with_copy:
        copies = not shares_storage(x, r)
        if copies == r._is_view():
            raise AssertionError(f"storage check and _is_view() disagree for {tuple(x.shape)}")
        rec["copies"] = copies
    rec.update({"shape": list(r.shape), "strides": list(r.stride()), "offset": r.storage_offset()})
    return rec


def attempt(fn, x: torch.Tensor, with_copy: bool) -> dict:
    try:
        r = fn()
    except (RuntimeError, IndexError, ValueError, TypeError) as exc:
        return error_record(exc)
    return result_record(x, r, with_copy)


def view_row(rng: random.Random, i: int) -> dict:
    layout = random_layout(rng, max_rank=6, max_numel=4096, allow_zero=True)
    target, tag = random_target(rng, layout.shape)
    target = target_values(target)
    x = materialize(layout.shape_values, layout.stride_values, layout.offset)
    return {
        "kind": "view_reshape",
        "id": i,
        "style": layout.style,
        "tag": tag,
        **layout.json(),
        "target": target,
        "numel": layout.numel,
        "contiguous": x.is_contiguous(),
        "view": attempt(lambda: x.view(target), x, with_copy=False),
        "reshape": attempt(lambda: x.reshape(target), x, with_copy=True),
    }


def flatten_row(rng: random.Random, i: int) -> dict:
    layout = random_layout(rng, max_rank=6, max_numel=4096, allow_zero=True)
    rank = len(layout.shape)
    span = max(rank, 1)  # flatten wraps dims of a 0-d tensor as if it had one dim
    start, end = sorted(rng.randint(0, span - 1) for _ in range(2))
    if rng.random() < 0.4:
        start -= span if rng.random() < 0.5 else 0
        end -= span if rng.random() < 0.5 else 0
    if rng.random() < 0.05:
        start, end = end, start  # start after end: an error unless equal
    if rng.random() < 0.03:
        end = span if rng.random() < 0.5 else -span - 1  # out of range
    x = materialize(layout.shape_values, layout.stride_values, layout.offset)
    return {
        "kind": "flatten",
        "id": i,
        "style": layout.style,
        **layout.json(),
        "start_dim": start,
        "end_dim": end,
        "numel": layout.numel,
        "contiguous": x.is_contiguous(),
        "flatten": attempt(lambda: x.flatten(start, end), x, with_copy=True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=VIEW_ROWS)
    parser.add_argument("--flatten-rows", type=int, default=FLATTEN_ROWS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    rows = [view_row(rng, i) for i in range(args.rows)]
    rows += [flatten_row(rng, args.rows + i) for i in range(args.flatten_rows)]

    tally = collections.Counter()
    for row in rows:
        result = row.get("view") or row["flatten"]
        outcome = "ok" if result["ok"] else result["error"]
        tally[f"{row['kind']}:{outcome}"] += 1
        if row["kind"] == "view_reshape" and row["reshape"].get("copies"):
            tally["view_reshape:reshape-copies"] += 1
        if row["kind"] == "flatten" and row["flatten"].get("copies"):
            tally["flatten:copies"] += 1
    for key, n in sorted(tally.items()):
        print(f"{key:40} {n}", file=sys.stderr)

    meta.write_jsonl("view_reshape.jsonl", rows)
    meta.record(
        "view_reshape.jsonl",
        "scripts/oracle/gen_view_reshape.py",
        args.seed,
        len(rows),
        {"tally": dict(sorted(tally.items())), "copy_check": "storage identity, untyped_storage()._cdata (cross-checked with _is_view())"},
    )


if __name__ == "__main__":
    main()
