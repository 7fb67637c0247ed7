#!/usr/bin/env bash
# Writes the pre-commit hook repository for a stridelint version into DEST (a checkout of
# stridelint/stridelint-pre-commit, or any directory): the files of pre-commit-mirror/
# with `stridelint==VERSION` and the project version pinned.
#
#   scripts/release/update_mirror.sh 0.1.0 ../stridelint-pre-commit
set -euo pipefail
version=${1:?usage: update_mirror.sh VERSION DEST}
dest=${2:?usage: update_mirror.sh VERSION DEST}
root="$(cd "$(dirname "$0")/../.." && pwd)"
case "$version" in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) echo "error: '$version' is not a version (X.Y.Z)" >&2; exit 1 ;;
esac
mkdir -p "$dest"
for file in .pre-commit-hooks.yaml README.md pyproject.toml; do
    sed -e "s/stridelint==[0-9][0-9A-Za-z.+-]*/stridelint==$version/" \
        -e "s/^version = \"[^\"]*\"/version = \"$version\"/" \
        -e "s/rev: v[0-9][0-9A-Za-z.+-]*/rev: v$version/" \
        "$root/pre-commit-mirror/$file" >"$dest/$file"
done
