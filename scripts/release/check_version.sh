#!/usr/bin/env bash
# Release tags are `v` + Cargo.toml's version: `scripts/release/check_version.sh v0.1.0`
# prints `0.1.0` when the tag matches, and fails naming both otherwise. Without an
# argument it prints the tag to create for the current version.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
if [ -z "$version" ]; then
    echo "error: no version in $root/Cargo.toml" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    echo "v$version"
    exit 0
fi
tag=${1#refs/tags/}
if [ "$tag" != "v$version" ]; then
    echo "error: tag $tag does not match Cargo.toml's version $version (expected v$version)" >&2
    exit 1
fi
echo "$version"
