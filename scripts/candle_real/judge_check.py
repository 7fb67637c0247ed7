#!/usr/bin/env python3
"""Checks stridelint's findings on candle-transformers against the judged table.

    judge_check.py FINDINGS.json [tests/data/candle_real/judged.csv] [--root DIR] [--list]

FINDINGS.json is `stridelint check --output-format json` of the candle-transformers tree;
judged.csv has one row per finding (file, line, col, rule, verdict, evidence, reason), the
file relative to the candle-transformers directory (`src/models/llama.rs`). A finding and
a judgment match on (file, line, col, rule). Prints the findings judged true / false per
rule, the false ones with their reasons, the findings no row judges, and the rows that no
longer match a finding (a finding that moved, went away or changed its rule). Exit status
1 when a finding is unjudged or a row is stale, else 0.

Python 3 standard library only.
"""

import argparse
import collections
import csv
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TABLE = os.path.join(HERE, "..", "..", "tests", "data", "candle_real", "judged.csv")


def rel(path, root):
    """`path` relative to the candle-transformers directory."""
    if root:
        r = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
        if not r.startswith(".."):
            return r.replace(os.sep, "/")
    m = re.match(r".*/candle-transformers-[^/]+/(.*)$", path.replace(os.sep, "/"))
    return m.group(1) if m else path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("findings", help="stridelint JSON output (a list of findings)")
    ap.add_argument("table", nargs="?", default=DEFAULT_TABLE, help="judged.csv")
    ap.add_argument("--root", help="the candle-transformers directory (default: taken from "
                    "the `candle-transformers-<version>/` part of each path)")
    ap.add_argument("--list", action="store_true", help="also print every judged finding")
    a = ap.parse_args()

    with open(a.findings) as fh:
        findings = json.load(fh)
    if isinstance(findings, dict):  # tolerate {"findings": [...]} wrappers
        findings = findings.get("findings", [])
    with open(a.table, newline="") as fh:
        rows = list(csv.DictReader(fh))

    judged = {}
    for r in rows:
        key = (r["file"], int(r["line"]), int(r["col"]), r["rule"])
        if key in judged:
            print(f"duplicate judgment: {key[0]}:{key[1]}:{key[2]} {key[3]}", file=sys.stderr)
        judged[key] = r

    counts = collections.Counter()
    false_rows, unjudged, seen = [], [], set()
    for f in findings:
        key = (rel(f["filename"], a.root), f["location"]["row"], f["location"]["column"], f["code"])
        r = judged.get(key)
        if r is None:
            unjudged.append(key)
            continue
        seen.add(key)
        counts[(key[3], r["verdict"])] += 1
        if r["verdict"] != "true":
            false_rows.append(r)
        if a.list:
            print(f"{r['verdict']:5} {r['evidence']:7} {key[0]}:{key[1]}:{key[2]} {key[3]}  {r['reason']}")
    stale = [k for k in judged if k not in seen]

    rules = sorted({k[0] for k in counts} | {k[3] for k in unjudged})
    print(f"{len(findings)} findings, {len(rows)} judgments")
    for rule in rules:
        t, fl = counts[(rule, "true")], counts[(rule, "false")]
        other = sum(n for (ru, v), n in counts.items() if ru == rule and v not in ("true", "false"))
        extra = f", {other} other" if other else ""
        print(f"  {rule}: {t} true, {fl} false{extra}")
    t_all = sum(n for (_, v), n in counts.items() if v == "true")
    f_all = sum(n for (_, v), n in counts.items() if v == "false")
    print(f"  all: {t_all} true, {f_all} false")
    if false_rows:
        print(f"\nfalse ({len(false_rows)}):")
        for r in false_rows:
            print(f"  {r['file']}:{r['line']}:{r['col']} {r['rule']} [{r['evidence']}] {r['reason']}")
    print(f"\nunjudged findings ({len(unjudged)}):")
    for k in unjudged:
        print(f"  {k[0]}:{k[1]}:{k[2]} {k[3]}")
    print(f"\njudgments matching no finding ({len(stale)}):")
    for k in stale:
        r = judged[k]
        print(f"  {k[0]}:{k[1]}:{k[2]} {k[3]} (was {r['verdict']})")
    return 1 if unjudged or stale else 0


if __name__ == "__main__":
    sys.exit(main())
