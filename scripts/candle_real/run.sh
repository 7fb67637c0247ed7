#!/usr/bin/env bash
# The whole harness after setup.sh: port selftest, the unmodified runs, the mutations, the
# score (tables into tests/data/candle_real/). Seconds on two cores once built.
# Usage: scripts/candle_real/run.sh [--misses]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$ROOT/target/candle_real"
RUN="$OUT/runner/target/debug/candle-real-runner"
CANDLE_METAL_KERNELS_SRC="$(ls -d "$HOME"/.cargo/registry/src/*/candle-metal-kernels-0.11.1/src | head -1)" \
  "$RUN" selftest "$OUT/vendor"
rm -rf "$OUT/log"
"$RUN" run "$OUT/log/base"
"$RUN" mutate "$OUT/log/base" "$OUT/log/mut" 2> "$OUT/log/mutate.txt"
python3 "$ROOT/scripts/candle_real/score.py" --log "$OUT/log" "$@"
