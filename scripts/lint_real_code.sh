#!/usr/bin/env bash
# Lint real PyTorch model code and count the findings per rule and per package.
#
#   scripts/lint_real_code.sh [TREE] [FINDINGS_JSON]
#
# Without TREE it downloads the sources of transformers, timm and diffusers (~2 M lines of
# real model code, the same tree as scripts/bench_vs_ruff.sh) into target/realcode/; nothing
# is committed. The JSON report goes to FINDINGS_JSON (default target/realcode/findings.json),
# ready for scripts/oracle/confirm_findings.py, which replays a sample of it in real torch:
#
#   .venv-oracle/bin/python scripts/oracle/confirm_findings.py target/realcode/findings.json \
#       --root target/realcode/src
#
# A "package" is the first directory under TREE (transformers/, timm/, diffusers/).
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-}
FINDINGS=${2:-target/realcode/findings.json}
if [ -z "$TREE" ]; then
  TREE=target/realcode/src
  if [ ! -d "$TREE" ]; then
    mkdir -p target/realcode/wheels
    python3 -m pip download --no-deps -q transformers timm diffusers -d target/realcode/wheels
    for w in target/realcode/wheels/*.whl; do python3 -m zipfile -e "$w" "$TREE"; done
  fi
fi
mkdir -p "$(dirname "$FINDINGS")"
cargo build --release -q
BIN=target/release/stridelint
echo "tree: $TREE ($(find "$TREE" -name '*.py' | wc -l) Python files, $(find "$TREE" -name '*.py' -exec cat {} + | wc -l) lines)"
START=$(date +%s.%N)
"$BIN" check "$TREE" --output-format json --exit-zero >"$FINDINGS"
END=$(date +%s.%N)
echo "stridelint check: $(python3 -c "print(f'{$END - $START:.2f}')") s wall; report in $FINDINGS"
python3 - "$FINDINGS" "$TREE" <<'PY'
import collections, json, os, sys
findings, tree = json.load(open(sys.argv[1])), os.path.abspath(sys.argv[2])

def package(filename):
    rel = os.path.relpath(os.path.abspath(filename), tree)
    return rel.split(os.sep)[0]

by_rule = collections.Counter(f["code"] for f in findings)
by_package = collections.Counter((package(f["filename"]), f["code"]) for f in findings)
packages = sorted({p for p, _ in by_package} | {e for e in os.listdir(tree) if os.path.isdir(os.path.join(tree, e)) and not e.endswith(".dist-info")})
rules = sorted(by_rule)
print(f"{len(findings)} findings")
print("per rule:   " + (", ".join(f"{r} {by_rule[r]}" for r in rules) or "none"))
print("per package:")
for p in packages:
    counts = ", ".join(f"{r} {by_package[(p, r)]}" for r in rules if by_package[(p, r)])
    print(f"  {p:14s} {sum(by_package[(p, r)] for r in rules):5d}  {counts}")
PY
