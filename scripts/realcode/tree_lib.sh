# Shared steps of setup2.sh and setup3.sh (sourced, not run): unpacking the packages of a
# real-code tree and checking that they import from it.

# unpack_wheels HOST_PY DIR TREE SPEC...: download the wheels of SPECs (name==version) into
# DIR and unpack each into TREE.
unpack_wheels() {
  local host_py=$1 dir=$2 tree=$3; shift 3
  "$host_py" -m pip download --no-deps -q "$@" -d "$dir"
  local spec name ver
  for spec in "$@"; do
    name=${spec%%==*}; ver=${spec##*==}
    "$host_py" -m zipfile -e "$dir/${name//-/_}-$ver"-*.whl "$tree"
  done
}

# unpack_sdist DIR TREE SPEC PKG: copy package directory PKG of the downloaded sdist of SPEC
# (name==version, in DIR) into TREE, its PKG-INFO as `<name>-<version>.dist-info/METADATA`,
# so that record.py reads every version the same way.
unpack_sdist() {
  local dir=$1 tree=$2 spec=$3 pkg=$4
  local name=${spec%%==*} ver=${spec##*==} tmp
  tmp=$(mktemp -d)
  tar xzf "$dir/${name//-/_}-$ver.tar.gz" -C "$tmp" 2>/dev/null || tar xzf "$dir/$name-$ver.tar.gz" -C "$tmp"
  cp -r "$tmp"/*/"$pkg" "$tree/"
  mkdir -p "$tree/${name//-/_}-$ver.dist-info"
  cp "$tmp"/*/PKG-INFO "$tree/${name//-/_}-$ver.dist-info/METADATA"
  rm -rf "$tmp"
}

# check_imports PY TREE ZOO: every package of scripts/realcode/ZOO.py imports from TREE.
check_imports() {
  PYTHONPATH="$2" "$1" - "$2" "$3" <<'PY'
import importlib, os, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.getcwd(), "scripts/realcode"))
zoo = importlib.import_module(sys.argv[2])
tree = os.path.abspath(sys.argv[1])
for name in zoo.PACKAGES:
    zoo.before_import(name)
    f = os.path.abspath(__import__(name).__file__)
    assert f.startswith(tree + os.sep), f"{name} imported from {f}, not from the tree {tree}"
print("the %d packages import from" % len(zoo.PACKAGES), tree)
PY
}
