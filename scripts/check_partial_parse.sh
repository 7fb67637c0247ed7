#!/usr/bin/env bash
# The partial parse (only the pieces of a file that can matter, see
# src/frontend/python/relevant_ranges.rs) must give exactly the findings of a whole-file
# parse. This lints TREE both ways and diffs the findings; exit 1 when they differ.
#
#   scripts/check_partial_parse.sh [TREE]     (default: the bundled fixtures)
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-fixtures}
cargo build --release -q
BIN=target/release/stridelint
out=$(mktemp -d)
"$BIN" check "$TREE" --output-format concise --exit-zero --no-cache 2>/dev/null | sort > "$out/partial.txt"
STRIDELINT_FULL_PARSE=1 "$BIN" check "$TREE" --output-format concise --exit-zero --no-cache 2>/dev/null | sort > "$out/full.txt"
echo "whole-file parse: $(grep -c ': SL' "$out/full.txt" || true) findings; partial parse: $(grep -c ': SL' "$out/partial.txt" || true) findings"
if diff "$out/full.txt" "$out/partial.txt"; then
  echo "identical"
else
  echo "the partial parse changed the findings (diff above)" >&2
  exit 1
fi
