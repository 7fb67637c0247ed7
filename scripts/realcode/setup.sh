#!/usr/bin/env bash
# Make what the real-code harness needs on a fresh machine (only PyPI needs to be reachable).
#
#   scripts/realcode/setup.sh [TREE]
#
# 1. The tree: the sources of transformers 5.24.0, timm 1.0.31 and diffusers 0.42.1, unpacked
#    from their wheels (`pip download --no-deps`, `python -m zipfile -e`) into TREE (default
#    target/realcode/src). Reused if TREE/transformers exists. Nothing of it is committed.
# 2. A Python for the record and mutation runs, with torch, einops and the packages'
#    *dependencies* (not the packages themselves: the models run from the tree, PYTHONPATH =
#    TREE, so that the recorded file paths are exactly the linted files):
#    * default: a venv `.venv-realcode` (git-ignored) with torch from PyPI (CPU wheels when the
#      PyTorch CPU index is reachable, else the default wheel, which runs on CPU as well);
#    * REALCODE_BASE_VENV=/path/to/venv: `.venv-realcode` borrows torch/einops/numpy from that
#      venv (a .pth file pointing at its site-packages) and gets only the rest;
#    * REALCODE_PY=/path/to/python: use that interpreter as it is, installing what it lacks.
#
# Then: .venv-realcode/bin/python scripts/realcode/record.py   (see scripts/realcode/README.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
TREE=${1:-target/realcode/src}
VENV=.venv-realcode
HOST_PY=${HOST_PY:-python3}

TORCH=torch==2.15.0
TORCHVISION=torchvision==0.29.2   # the newest on PyPI; pure-Python parts are all timm needs
BASE_PINS=(einops==0.8.2 numpy==2.4.6)
TOOL_PINS=(ruff==0.17.6 jaxtyping==0.3.11)
DEP_PINS=(
  huggingface_hub==2.4.0 tokenizers==0.23.3 safetensors==0.8.0 regex==2026.11.19 PyYAML==6.0.4
  packaging==26.4 tqdm==4.70.1 typer==0.29.2 requests==2.34.2 importlib_metadata==10.2.0
  filelock==4.3.1 pillow==13.0.0 scipy==1.17.1
)

# --- the tree ---------------------------------------------------------------------------
if [ -d "$TREE/transformers" ] && [ -d "$TREE/timm" ] && [ -d "$TREE/diffusers" ]; then
  echo "tree: reusing $TREE"
else
  mkdir -p target/realcode/wheels "$TREE"
  "$HOST_PY" -m pip download --no-deps -q transformers==5.24.0 timm==1.0.31 diffusers==0.42.1 \
    -d target/realcode/wheels
  for w in target/realcode/wheels/transformers-5.24.0-*.whl target/realcode/wheels/timm-1.0.31-*.whl \
           target/realcode/wheels/diffusers-0.42.1-*.whl; do
    "$HOST_PY" -m zipfile -e "$w" "$TREE"
  done
  echo "tree: $TREE ($(find "$TREE" -name '*.py' | wc -l) Python files)"
fi

# --- the interpreter ----------------------------------------------------------------------
if [ -n "${REALCODE_PY:-}" ]; then
  PY=$REALCODE_PY
else
  if [ ! -x "$VENV/bin/python" ]; then
    "$HOST_PY" -m venv "$VENV"
  fi
  PY=$VENV/bin/python
  if [ -n "${REALCODE_BASE_VENV:-}" ]; then
    SP=$("$REALCODE_BASE_VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')
    "$PY" -c 'import site; print(site.getsitepackages()[0])' | {
      read -r own; echo "$SP" >"$own/zz_base_venv.pth"; }
  fi
fi
has() { "$PY" -c "import $1" 2>/dev/null; }
if ! has torch; then
  "$PY" -m pip install -q "$TORCH" --index-url https://download.pytorch.org/whl/cpu 2>/dev/null \
    || "$PY" -m pip install -q "$TORCH"
fi
has einops && has numpy || "$PY" -m pip install -q "${BASE_PINS[@]}"
"$PY" -m pip install -q "${DEP_PINS[@]}"
has torchvision || "$PY" -m pip install -q --no-deps "$TORCHVISION"
# What the benchmark (ruff, side by side) and the fixture judge (jaxtyping fixtures) need.
{ has jaxtyping && has ruff; } || "$PY" -m pip install -q "${TOOL_PINS[@]}"

# The packages must come from the tree, not from the interpreter's site-packages.
PYTHONPATH="$TREE" HF_HUB_OFFLINE=1 "$PY" - "$TREE" <<'PY'
import os, sys, warnings
warnings.filterwarnings("ignore")
tree = os.path.abspath(sys.argv[1])
import torch, einops
for name in ("transformers", "timm", "diffusers"):
    mod = __import__(name)
    f = os.path.abspath(mod.__file__)
    assert f.startswith(tree + os.sep), f"{name} imported from {f}, not from the tree {tree}"
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, einops {einops.__version__}; "
      f"transformers/timm/diffusers import from {tree}")
PY
echo "interpreter: $PY"
