#!/usr/bin/env bash
# The third real-code tree, held out: six model packages unpacked from PyPI (wheels; the sdist
# for sam2, which has no wheel) into TREE (default target/realcode/src3), and their
# dependencies (not the packages themselves) in the interpreter that setup.sh made (run that
# first). The analysis was never tuned on this tree; its tables measure it, nothing more.
#
#   scripts/realcode/setup3.sh [TREE]
#
# sam2's sdist is copied as its package directory with PKG-INFO as `sam2-1.1.0.dist-info/
# METADATA` (setup2.sh does the same for its sdists); its optional CUDA extension is not built
# (the zoo runs on CPU, where sam2 does without it). torchaudio is left out as for the second
# tree (no wheel for torch 2.15's CUDA): zoo3.before_import gives speechbrain a stand-in
# module. nnunetv2 2.8.1 is not in the tree: its networks live in dynamic-network-architectures
# (not one of the tree's packages) and its dependencies would put a second timm (1.0.22) and
# some forty other packages into the shared interpreter. transformers 5.24.0 (the first tree's
# version) is installed because chronos and transformer_lens import it; the first tree keeps
# importing its own copy (record.py checks where every package comes from). e3nn's wheel also
# ships `docs/` and `examples/` at its top level: removed, they are not the package.
# Nothing of the tree is committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/realcode/tree_lib.sh
TREE=${1:-target/realcode/src3}
PY=${REALCODE_PY:-.venv-realcode/bin/python}
HOST_PY=${HOST_PY:-python3}
WHEELS=(speechbrain==1.1.2 chronos-forecasting==2.3.2 transformer-lens==4.3.0 e3nn==0.6.0 torch-geometric==2.8.1)
SDISTS=(sam2==1.1.0:sam2)
DEP_PINS=(
  hydra-core==1.3.8 omegaconf==2.3.1 antlr4-python3-runtime==4.9.3 iopath==0.1.10 portalocker==4.4.2
  HyperPyYAML==1.2.3 ruamel.yaml==0.18.17 joblib==1.6.0 sentencepiece==0.2.3 soundfile==0.14.0
  pandas==3.1.1 transformers==5.24.0 beartype==0.23.1 fancy-einsum==0.0.3 typeguard==4.6.1
  transformers-stream-generator==0.0.5 protobuf==7.36.2 datasets==5.2.0
  opt-einsum==3.4.0 opt-einsum-fx==0.1.4 aiohttp==3.14.5 xxhash==4.1.0
  aiohappyeyeballs==2.7.1 aiosignal==1.4.0 attrs==26.1.0 cffi==2.1.1 cloudpickle==3.1.3 dill==0.4.1
  frozenlist==1.8.0 multidict==7.2.1 multiprocess==0.70.19 propcache==0.5.4 pyarrow==26.0.1
  pycparser==3.12 ruamel.yaml.clib==0.2.15 yarl==1.25.1
)
D=target/realcode/wheels3
if [ -d "$TREE/sam2" ] && [ -d "$TREE/speechbrain" ] && [ -d "$TREE/torch_geometric" ]; then
  echo "tree: reusing $TREE"
else
  mkdir -p "$D" "$TREE"
  unpack_wheels "$HOST_PY" "$D" "$TREE" "${WHEELS[@]}"
  rm -rf "$TREE/docs" "$TREE/examples"
  for s in "${SDISTS[@]}"; do
    spec=${s%%:*}; pkg=${s##*:}
    # pip prepares an sdist's metadata by running its setup.py, which imports torch: use the
    # interpreter that has it, without build isolation, and without sam2's CUDA extension
    SAM2_BUILD_CUDA=0 "$PY" -m pip download --no-deps --no-binary :all: --no-build-isolation -q "$spec" -d "$D"
    unpack_sdist "$D" "$TREE" "$spec" "$pkg"
  done
  echo "tree: $TREE ($(find "$TREE" -name '*.py' | wc -l) Python files)"
fi
"$PY" -m pip install -q "${DEP_PINS[@]}"
check_imports "$PY" "$TREE" zoo3
