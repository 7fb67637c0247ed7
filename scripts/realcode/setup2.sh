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
source scripts/realcode/tree_lib.sh
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
  unpack_wheels "$HOST_PY" "$D" "$TREE" "${WHEELS[@]}"
  for s in "${SDISTS[@]}"; do
    spec=${s%%:*}; pkg=${s##*:}
    "$HOST_PY" -m pip download --no-deps --no-binary :all: -q "$spec" -d "$D"
    unpack_sdist "$D" "$TREE" "$spec" "$pkg"
  done
  echo "tree: $TREE ($(find "$TREE" -name '*.py' | wc -l) Python files)"
fi
"$PY" -m pip install -q "${DEP_PINS[@]}"
check_imports "$PY" "$TREE" zoo2
