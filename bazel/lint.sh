#!/usr/bin/env bash
# One lint action of the stridelint aspect (defs.bzl). Usage:
#   lint.sh STRIDELINT OUT_TXT OUT_JSON OUT_SARIF [STRIDELINT_ARGS...] -- SRC... -- (INPUT PATH)...
# SRC: the target's own sources, linted; each INPUT (the transitive sources and the
# configuration files) is copied to its repository-relative PATH in a scratch tree so that
# imports resolve from its root as from the workspace's, whatever the sandbox (symlinked
# inputs, a remote worker's files). Paths in the reports are relative to that root: the
# scratch tree's absolute path is removed from them, so that the outputs are the same on
# every machine. Exit status: 0 whatever the findings; another status when stridelint fails.
set -euo pipefail

bin=$1 txt=$2 json=$3 sarif=$4
shift 4
args=()
while [ "$1" != "--" ]; do args+=("$1"); shift; done
shift
srcs=()
while [ "$1" != "--" ]; do srcs+=("$1"); shift; done
shift

exec_root=$PWD
bin=$exec_root/$bin
stage=$exec_root/$json.stage
rm -rf "$stage"
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
while [ $# -gt 0 ]; do
  mkdir -p "$stage/$(dirname "$2")"
  cp -L "$1" "$stage/$2"
  shift 2
done
# Without a configuration file at its root, the search for one would go on above the scratch
# tree (into the execution root, which outside a sandbox holds the whole workspace): an
# empty one, the defaults, ends it here.
if [ ! -e "$stage/stridelint.toml" ] && [ ! -e "$stage/.stridelint.toml" ] &&
  [ ! -e "$stage/pyproject.toml" ]; then
  : >"$stage/.stridelint.toml"
fi

# The first run fills a result cache in the scratch tree; the other formats are read from it.
run() { # FORMAT OUT
  local status=0
  (cd "$stage" && "$bin" check --no-respect-gitignore --cache-dir "$stage/.stridelint_cache" \
    --quiet --color never --output-format "$1" -o "$stage/.out" "${args[@]}" "${srcs[@]}") ||
    status=$?
  if [ "$status" -gt 1 ]; then
    echo "stridelint failed (exit $status) on ${srcs[*]}" >&2
    exit "$status"
  fi
  local text
  text=$(<"$stage/.out")
  text=${text//"\"uri\": \"file://$stage/\""/"\"description\": {\"text\": \"the workspace root\"}"}
  text=${text//"$stage/"/}
  text=${text//"$exec_root/"/}
  case $text in
    *"$exec_root"*)
      echo "an absolute path is left in the $1 report" >&2
      exit 3
      ;;
  esac
  printf '%s\n' "$text" >"$exec_root/$2"
}
run concise "$txt"
run json "$json"
run sarif "$sarif"
