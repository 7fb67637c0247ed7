#!/usr/bin/env bash
# The second real-code tree: ten model packages unpacked from PyPI (wheels; sdists where
# there is no wheel) into TREE (default target/realcode/src2), and their dependencies (not the
# packages themselves) in the interpreter that setup.sh made (run that first).
#
#   scripts/realcode/setup2.sh [TREE]
#
# An sdist's package directory is copied with its PKG-INFO as `<name>-<version>.dist-info/
# METADATA`, so that record.py reads every version the same way. torchaudio is left out: its
# wheels are built against another CUDA than torch 2.15's (zoo2.py stands in for encodec's
# module-level import of it). Nothing of the tree is committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
TREE=${1:-target/realcode/src2}
PY=${REALCODE_PY:-.venv-realcode/bin/python}
HOST_PY=${HOST_PY:-python3}
WHEELS=(vector-quantize-pytorch==1.32.0 denoising-diffusion-pytorch==2.3.4 perceiver-pytorch==0.11.0
        local-attention==1.11.2 segment-anything==1.0 demucs==4.1.0 kornia==0.9.0 ultralytics==8.4.190)
SDISTS=(openai-whisper==20250625:whisper encodec==0.1.1:encodec)
DEP_PINS=(
  einx==0.4.3 loguru==0.7.3 torch-einops-utils==0.2.0 hyper-connections==0.4.11 ema-pytorch==0.8.3
  accelerate==1.16.0 pytorch-fid==0.3.0 kornia_rs==0.2.0 julius==0.2.8 tiktoken==0.14.0
  more-itertools==11.2.1 numba==0.68.1 psutil==7.2.2 matplotlib==3.11.2 opencv-python-headless==5.1.0.95
  polars==2.1.0 ultralytics-thop==2.2.3
)
D=target/realcode/wheels2
if [ -d "$TREE/kornia" ] && [ -d "$TREE/whisper" ]; then
  echo "tree: reusing $TREE"
else
  mkdir -p "$D" "$TREE"
  "$HOST_PY" -m pip download --no-deps -q "${WHEELS[@]}" -d "$D"
  for spec in "${WHEELS[@]}"; do
    name=${spec%%==*}; ver=${spec##*==}
    "$HOST_PY" -m zipfile -e "$D/${name//-/_}-$ver"-*.whl "$TREE"
  done
  for s in "${SDISTS[@]}"; do
    spec=${s%%:*}; pkg=${s##*:}
    "$HOST_PY" -m pip download --no-deps --no-binary :all: -q "$spec" -d "$D"
    name=${spec%%==*}; ver=${spec##*==}
    tmp=$(mktemp -d)
    tar xzf "$D/${name//-/_}-$ver.tar.gz" -C "$tmp" 2>/dev/null || tar xzf "$D/$name-$ver.tar.gz" -C "$tmp"
    cp -r "$tmp"/*/"$pkg" "$TREE/"
    mkdir -p "$TREE/${name//-/_}-$ver.dist-info"
    cp "$tmp"/*/PKG-INFO "$TREE/${name//-/_}-$ver.dist-info/METADATA"
    rm -rf "$tmp"
  done
  echo "tree: $TREE ($(find "$TREE" -name '*.py' | wc -l) Python files)"
fi
"$PY" -m pip install -q "${DEP_PINS[@]}"
PYTHONPATH="$TREE" "$PY" - "$TREE" <<'PY'
import os, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.getcwd(), "scripts/realcode"))
import zoo2
tree = os.path.abspath(sys.argv[1])
for name in zoo2.PACKAGES:
    zoo2.before_import(name)
    f = os.path.abspath(__import__(name).__file__)
    assert f.startswith(tree + os.sep), f"{name} imported from {f}, not from the tree {tree}"
print("the ten packages import from", tree)
PY
