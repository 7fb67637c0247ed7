#!/usr/bin/env bash
# Builds the candle truth harness under target/candle_real/ (nothing there is committed):
#   patches/  the logging patches, written by make_patches.py from the registry sources
#   vendor/   pristine candle-core, candle-nn and candle-transformers 0.11.1 from the cargo
#             registry, with patches/<crate>-logging.patch applied (patch -p1 per crate)
#   runner/   a scratch cargo workspace: [patch.crates-io] points the three crates at
#             vendor/, its binary is scripts/candle_real/runner/main.rs (committed).
# Usage: scripts/candle_real/setup.sh [--no-build]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/candle_real"
OUT="$ROOT/target/candle_real"
REG="$(ls -d "$HOME"/.cargo/registry/src/*/candle-core-0.11.1 | head -1)"
REG="$(dirname "$REG")"
mkdir -p "$OUT/vendor"
python3 "$HERE/make_patches.py" "$OUT/patches"
for crate in candle-core candle-nn candle-transformers; do
  src="$REG/$crate-0.11.1"
  dst="$OUT/vendor/$crate"
  rm -rf "$dst"
  cp -r "$src" "$dst"
  chmod -R u+w "$dst"
  for p in "$OUT"/patches/"$crate"-*.patch; do
    [ -e "$p" ] || continue
    (cd "$dst" && patch -p1 --quiet --forward < "$p")
    echo "applied $(basename "$p")"
  done
done
# The logger module is our code, kept whole rather than as a patch.
cp "$HERE/candle_real_log.rs" "$OUT/vendor/candle-core/src/candle_real_log.rs"
# The matmul ports it includes are generated from candle's sources (never committed).
python3 "$HERE/make_patches.py" --ports "$OUT/vendor/candle-core/src/candle_real_ports.rs"
mkdir -p "$OUT/runner"
cp "$ROOT/Cargo.lock" "$OUT/runner/Cargo.lock" 2>/dev/null || true
cat > "$OUT/runner/Cargo.toml" <<TOML
[package]
name = "candle-real-runner"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "candle-real-runner"
path = "$HERE/runner/main.rs"

[dependencies]
candle = { package = "candle-core", version = "0.11.1", default-features = false }
candle-nn = { version = "0.11.1", default-features = false }
candle-transformers = { version = "0.11.1", default-features = false }
serde_json = "1"
serde = "1"

[patch.crates-io]
candle-core = { path = "../vendor/candle-core" }
candle-nn = { path = "../vendor/candle-nn" }
candle-transformers = { path = "../vendor/candle-transformers" }

[workspace]

# Measured on 2 cores: deps at opt-level 1, the three candle crates at 0 (candle-transformers
# is the bulk of the build; the models are tiny, so the run is seconds either way).
[profile.dev]
opt-level = 1
debug = false
incremental = false
[profile.dev.package.candle-transformers]
opt-level = 0
TOML
if [ "${1:-}" != "--no-build" ]; then
  (cd "$OUT/runner" && nice -n 5 cargo build --offline)
fi
