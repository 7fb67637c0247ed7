"""Re-run the 80 rows of the spec's conformance table (shared/spec/conformance.json) through
real torch and write tests/data/oracle/conformance.jsonl.

The spec table was produced once, by hand-run scripts; this re-derives every row from
torch so the table the tests read is reproducible, and reports any row where the spec
disagrees with torch (torch wins: the written row always carries torch's answer, plus the
spec's fields under "spec" and `"spec_agrees"`).

Row format: as view_reshape.jsonl ("kind": "conformance", "id" = the spec's row number),
with "src" and "note" copied from the spec.

Usage: .venv-oracle/bin/python scripts/oracle/gen_conformance.py [--spec PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import meta
from gen_view_reshape import attempt
from layouts import materialize

DEFAULT_SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "conformance.json"


def disagreements(spec: dict, view: dict, reshape: dict, contiguous: bool) -> list:
    """Fields where the spec row says something other than torch."""
    out = []
    if spec["contiguous"] != contiguous:
        out.append(f"contiguous: spec {spec['contiguous']}, torch {contiguous}")
    if (spec["view"] == "ok") != view["ok"]:
        out.append(f"view: spec {spec['view']}, torch {'ok' if view['ok'] else view['message']}")
    elif view["ok"]:
        if spec["view_shape"] != view["shape"] or spec["view_strides"] != view["strides"]:
            out.append(
                f"view result: spec {spec['view_shape']}/{spec['view_strides']}, "
                f"torch {view['shape']}/{view['strides']}"
            )
    elif "msg" in spec and spec["msg"] != view["message"]:
        out.append(f"view message: spec {spec['msg']!r}, torch {view['message']!r}")
    if spec.get("reshape") == "error":
        if reshape["ok"]:
            out.append("reshape: spec error, torch ok")
    elif not reshape["ok"]:
        out.append(f"reshape: spec ok, torch {reshape['message']}")
    else:
        if spec["reshape_copies"] != reshape["copies"]:
            out.append(f"reshape copies: spec {spec['reshape_copies']}, torch {reshape['copies']}")
        if spec["reshape_strides"] != reshape["strides"]:
            out.append(f"reshape strides: spec {spec['reshape_strides']}, torch {reshape['strides']}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    args = parser.parse_args()
    spec_rows = json.loads(args.spec.read_text())

    rows = []
    disagreeing = 0
    for number, spec in enumerate(spec_rows, start=1):
        # The spec records no storage offset: its inputs start at offset 0.
        x = materialize(spec["shape"], spec["strides"], 0)
        target = spec["target"]
        view = attempt(lambda: x.view(target), x, with_copy=False)
        reshape = attempt(lambda: x.reshape(target), x, with_copy=True)
        contiguous = x.is_contiguous()
        problems = disagreements(spec, view, reshape, contiguous)
        for p in problems:
            print(f"row {number}: {p}", file=sys.stderr)
        disagreeing += bool(problems)
        rows.append(
            {
                "kind": "conformance",
                "id": number,
                "src": spec["src"],
                "note": spec["note"],
                "shape": spec["shape"],
                "strides": spec["strides"],
                "offset": 0,
                "target": target,
                "numel": x.numel(),
                "contiguous": contiguous,
                "view": view,
                "reshape": reshape,
                "spec_agrees": not problems,
            }
        )
    print(f"{len(rows)} rows, {disagreeing} disagree with the spec", file=sys.stderr)
    meta.write_jsonl("conformance.jsonl", rows)
    meta.record(
        "conformance.jsonl",
        "scripts/oracle/gen_conformance.py",
        0,
        len(rows),
        {"source": "shared/spec/conformance.json", "spec_disagreements": disagreeing},
    )


if __name__ == "__main__":
    main()
