#!/usr/bin/env bash
# Wall time of `stridelint check` against `ruff check --no-cache` on the same tree, measured
# side by side in one run (alternating, several rounds), printing the median ratio.
#
#   scripts/bench_vs_ruff.sh [TREE] [ROUNDS]
#
# Without TREE it downloads the sources of transformers, timm and diffusers (~2 M lines of
# real PyTorch model code) into target/realcode/ (nothing is committed).
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-}
ROUNDS=${2:-5}
if [ -z "$TREE" ]; then
  TREE=target/realcode/src
  if [ ! -d "$TREE" ]; then
    mkdir -p target/realcode/wheels
    python3 -m pip download --no-deps -q transformers timm diffusers -d target/realcode/wheels
    for w in target/realcode/wheels/*.whl; do python3 -m zipfile -e "$w" "$TREE"; done
  fi
fi
command -v ruff >/dev/null || python3 -m pip install -q ruff
# The binary the releases ship (see `[profile.dist]` in Cargo.toml); BIN= another to time it.
if [ -z "${BIN:-}" ]; then
  cargo build --profile dist -q
  BIN=target/dist/stridelint
fi
echo "tree: $TREE ($(find "$TREE" -name '*.py' | wc -l) Python files, $(find "$TREE" -name '*.py' -exec cat {} + | wc -l) lines)"
python3 - "$BIN" "$TREE" "$ROUNDS" <<'PY'
import statistics, subprocess, sys, time
binary, tree, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmds = {
    "stridelint": [binary, "check", tree, "--no-cache", "--output-format", "concise", "--exit-zero", "--quiet"],
    "ruff": ["ruff", "check", "--no-cache", "--exit-zero", "--quiet", "--isolated", tree],
}
times = {k: [] for k in cmds}
for _ in range(rounds):
    for name, cmd in cmds.items():
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[name].append(time.perf_counter() - t)
for name, ts in times.items():
    print(f"{name:11s} median {statistics.median(ts):.3f} s  (runs: {', '.join(f'{t:.3f}' for t in ts)})")
ratios = [s / r for s, r in zip(times["stridelint"], times["ruff"])]
print(f"stridelint / ruff: median ratio {statistics.median(ratios):.2f} (per-round: {', '.join(f'{r:.2f}' for r in ratios)})")
PY
