#!/usr/bin/env bash
# Packs a release binary as the standalone archive attached to a GitHub release, with its
# checksum, as the Action (scripts/action/install.sh) downloads them:
#
#   scripts/release/archive.sh TARGET BINARY OUTDIR
#
# writes OUTDIR/stridelint-TARGET.tar.gz (`.zip` for Windows targets) holding
# stridelint-TARGET/{stridelint[.exe],README.md}, and OUTDIR/<archive>.sha256 holding
# `<sha256>  <archive>` (the format `sha256sum -c` reads).
set -euo pipefail

target=${1:?usage: archive.sh TARGET BINARY OUTDIR}
binary=${2:?usage: archive.sh TARGET BINARY OUTDIR}
outdir=${3:?usage: archive.sh TARGET BINARY OUTDIR}
root="$(cd "$(dirname "$0")/../.." && pwd)"

name="stridelint-$target"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir "$staging/$name"
case "$target" in
    *windows*) exe=stridelint.exe ext=zip ;;
    *) exe=stridelint ext=tar.gz ;;
esac
cp "$binary" "$staging/$name/$exe"
chmod +x "$staging/$name/$exe"
cp "$root/README.md" "$staging/$name/README.md"

archive="$name.$ext"
rm -f "$outdir/$archive" "$outdir/$archive.sha256"
if [ "$ext" = zip ]; then
    python=$(command -v python3 || command -v python)
    (cd "$staging" && "$python" -m zipfile -c "$outdir/$archive" "$name")
else
    # Stable metadata: the same binary gives the same archive.
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='1970-01-01 00:00:00' \
        -C "$staging" -czf "$outdir/$archive" "$name" 2>/dev/null ||
        tar -C "$staging" -czf "$outdir/$archive" "$name"
fi

if command -v sha256sum >/dev/null 2>&1; then
    hash=$(sha256sum "$outdir/$archive" | cut -d ' ' -f 1)
else
    hash=$(shasum -a 256 "$outdir/$archive" | cut -d ' ' -f 1)
fi
echo "$hash  $archive" >"$outdir/$archive.sha256"
echo "$outdir/$archive"
