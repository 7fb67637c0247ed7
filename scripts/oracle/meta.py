"""`tests/data/oracle/META.json`: which torch produced each table, with which seed.

Each generator owns one entry (keyed by its output file) and rewrites only that entry, so
the generators can be re-run independently.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import torch

ORACLE_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "oracle"
META_PATH = ORACLE_DIR / "META.json"


def torch_identity() -> dict:
    return {
        "torch_version": torch.__version__,
        "torch_git": torch.version.git_version,
        "python": platform.python_version(),
        "device": "cpu",
    }


def record(output_name: str, generator: str, seed: int, rows: int, extra: dict | None = None) -> None:
    meta = json.loads(META_PATH.read_text()) if META_PATH.exists() else {}
    entry = {"generator": generator, "seed": seed, "rows": rows, **torch_identity()}
    if extra:
        entry.update(extra)
    meta[output_name] = entry
    META_PATH.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


def write_jsonl(name: str, rows: list) -> Path:
    """One JSON object per line, compact, keys in insertion order (stable diffs)."""
    ORACLE_DIR.mkdir(parents=True, exist_ok=True)
    path = ORACLE_DIR / name
    with path.open("w") as f:
        for row in rows:
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
    print(f"wrote {len(rows)} rows to {path}", file=sys.stderr)
    return path
