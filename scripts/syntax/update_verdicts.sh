#!/usr/bin/env bash
# Regenerates the committed CPython verdicts on the syntax corpus,
# fixtures/python/syntax/verdicts/cpython-3.X.jsonl, that tests/it/syntax_corpus.rs compares
# stridelint's SL999 findings with (so `cargo test` needs no CPython). Run it after adding
# or changing a file under fixtures/python/syntax/.
#
# Usage: scripts/syntax/update_verdicts.sh
#
# For each of 3.12, 3.13 and 3.14 it uses the first CPython it finds: $STRIDELINT_PYTHON3_12
# (…3_13, …3_14; a command), `python3.X` on PATH, pyenv's $PYENV_ROOT/versions/3.X.*
# (default root ~/.pyenv), and for 3.14 Pyodide (CPython 3.14 compiled to WebAssembly) run by
# Node.js from $STRIDELINT_PYODIDE or .ci-tools/node_modules/pyodide
# (`npm install --prefix .ci-tools pyodide@314.0.7`; .ci-tools/ is not committed). A version
# with no interpreter keeps its table and is reported; the script then exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."

corpus=(fixtures/python/syntax/*.py fixtures/python/syntax/invalid/*.py)
mkdir -p fixtures/python/syntax/verdicts
status=0

runs_version() { # VERSION COMMAND...: whether COMMAND is that CPython
  local version=$1
  shift
  "$@" scripts/syntax/cpython_verdicts.py 2>/dev/null |
    head -n 1 | grep -q "\"version\": \[${version/./, }, "
}

for version in 3.12 3.13 3.14; do
  var="STRIDELINT_PYTHON${version/./_}"
  candidates=()
  [ -n "${!var:-}" ] && candidates+=("${!var}")
  candidates+=("python$version")
  while IFS= read -r install; do
    candidates+=("$install/bin/python$version")
  done < <(find "${PYENV_ROOT:-$HOME/.pyenv}/versions" -mindepth 1 -maxdepth 1 -name "$version.*" 2>/dev/null | sort -rV)
  found=()
  for candidate in "${candidates[@]}"; do
    if runs_version "$version" "$candidate"; then
      found=("$candidate")
      break
    fi
  done
  pyodide="${STRIDELINT_PYODIDE:-.ci-tools/node_modules/pyodide}"
  if [ ${#found[@]} -eq 0 ] && [ "$version" = 3.14 ] && [ -f "$pyodide/pyodide.mjs" ] &&
    runs_version "$version" node scripts/syntax/pyodide_python.mjs "$pyodide"; then
    found=(node scripts/syntax/pyodide_python.mjs "$pyodide")
  fi
  if [ ${#found[@]} -eq 0 ]; then
    echo "no CPython $version found; its table is unchanged (set $var to one)" >&2
    status=1
    continue
  fi
  out="fixtures/python/syntax/verdicts/cpython-$version.jsonl"
  "${found[@]}" scripts/syntax/cpython_verdicts.py "${corpus[@]}" >"$out.tmp"
  mv "$out.tmp" "$out"
  echo "$out: $(head -n 1 "$out") (${found[*]})"
done
exit $status
