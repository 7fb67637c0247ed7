#!/usr/bin/env bash
# Runs the fuzz targets in fuzz/ (cargo-fuzz, libFuzzer) for a while each, seeded with the
# fixtures and the regression corpus, and reports executions and executions per second.
#
#   scripts/fuzz.sh [DURATION] [TARGET...]
#
# DURATION per target: minutes (`20`) or seconds (`45s`); default 1 minute. TARGETs: python,
# rust, notebook, config, replay, pipeline (default: all). Environment: FUZZ_JOBS (parallel
# libFuzzer jobs per target, default 1), FUZZ_MAX_LEN (default 32768), FUZZ_INSTALL=1 (install
# cargo-fuzz when it is missing), FUZZ_NICE (default 10).
#
# A crash, a hang (one input over 5 s), a memory blow-up (over 2 GiB) or a leak stops the
# target; libFuzzer leaves the input in fuzz/artifacts/<target>/. Fix it, then add the input
# to tests/data/fuzz/<target>/ so that `cargo test` replays it (tests/it/fuzz_regressions.rs).
#
# Exit status: 0 when no target found anything; 1 when one did (or a target failed to
# build); 3 when the tooling is missing (no cargo-fuzz and FUZZ_INSTALL unset or failing, or
# no C++ compiler for libFuzzer) — callers such as .ci/run treat 3 as "skipped".
#
# cargo-fuzz wants a nightly toolchain for its sanitizer flags; on a stable one this script
# sets RUSTC_BOOTSTRAP=1 and builds without a sanitizer (`--sanitizer none`): safe Rust needs
# none (the crate has no C parts since the hand-written Python parser replaced tree-sitter).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

duration=${1:-1}
shift || true
case "$duration" in
  *s) seconds=${duration%s} ;;
  *) seconds=$((duration * 60)) ;;
esac
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(python rust notebook config replay pipeline)
jobs=${FUZZ_JOBS:-1}
max_len=${FUZZ_MAX_LEN:-32768}
niceness=${FUZZ_NICE:-10}

skip() { echo "fuzz: skipped: $*" >&2; exit 3; }

command -v c++ >/dev/null 2>&1 || skip "no C++ compiler to build libFuzzer"
if ! cargo fuzz --version >/dev/null 2>&1; then
  if [ "${FUZZ_INSTALL:-0}" = 1 ]; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked --quiet >&2 || skip "cargo-fuzz could not be installed"
  else
    skip "cargo-fuzz is not installed (cargo install cargo-fuzz, or FUZZ_INSTALL=1)"
  fi
fi

flags=(--release --debug-assertions)
if ! rustc --version | grep -q nightly; then
  export RUSTC_BOOTSTRAP=1
  flags+=(--sanitizer none)
fi

echo "fuzz: building ${targets[*]}" >&2
for target in "${targets[@]}"; do
  nice -n "$niceness" cargo fuzz build "${flags[@]}" "$target" >&2 || { echo "fuzz: $target does not build" >&2; exit 1; }
done

# Seeds: the fixtures, the examples, the regression corpus, per target.
seed() {
  local target=$1 corpus=fuzz/corpus/$1
  mkdir -p "$corpus"
  case $target in
    python) cp fixtures/python/*.py examples/*.py "$corpus"/ 2>/dev/null ;;
    rust) cp fixtures/rust/*.rs "$corpus"/ 2>/dev/null ;;
    pipeline)
      for f in fixtures/python/*.py examples/*.py; do { printf '\0'; cat "$f"; } > "$corpus/py-$(basename "$f")"; done
      for f in fixtures/rust/*.rs; do { printf '\1'; cat "$f"; } > "$corpus/rs-$(basename "$f")"; done ;;
    notebook)
      for f in fixtures/python/*.py; do
        python3 -c 'import json,sys; src=open(sys.argv[1]).read().splitlines(True); print(json.dumps({"cells":[{"cell_type":"code","source":src,"metadata":{},"outputs":[]}],"metadata":{},"nbformat":4,"nbformat_minor":5}, indent=1))' "$f" > "$corpus/$(basename "$f").ipynb" 2>/dev/null || true
      done ;;
    config)
      printf '\0select = ["SL001"]\nignore = ["SL002"]\nexclude = ["gen/**", "!keep.py"]\nmin-symbolic-size = 3\ncandle-backend = "cpu"\ndims = { B = 16, T = 4096 }\ndtype = "bf16"\nlayers = 32\n[per-file-ignores]\n"tests/*.py" = ["SL001"]\n' > "$corpus/stridelint.toml"
      printf '\1[project]\nname = "x"\n[tool.stridelint]\nextend = "../base.toml"\nextend-select = ["SL003"]\n' > "$corpus/pyproject.toml" ;;
    replay)
      printf '\0permute(0,2,1,3)\nreshape(2,4,-1)' > "$corpus/permute"
      printf '\1transpose(0, 1).contiguous().view(-1)' > "$corpus/transpose"
      printf '\2[:, 1::2]\nT\nflatten(start_dim=1)' > "$corpus/slice"
      printf '\3unsqueeze(0).expand(4, 1, 5, 1).contiguous(memory_format=torch.channels_last)' > "$corpus/expand" ;;
  esac
  if [ -d "tests/data/fuzz/$target" ]; then
    find "tests/data/fuzz/$target" -type f ! -name README.md -exec cp {} "$corpus"/ \;
  fi
}

status=0
for target in "${targets[@]}"; do
  seed "$target"
  mkdir -p "fuzz/artifacts/$target"
  log=fuzz/artifacts/$target/run.log
  echo "fuzz: $target for ${seconds}s" >&2
  parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  rm -f fuzz-*.log
  nice -n "$niceness" cargo fuzz run "${flags[@]}" "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$target/" "${parallel[@]}" > "$log" 2>&1
  rc=$?
  # With several jobs libFuzzer writes one fuzz-N.log per job in the current directory.
  for job_log in fuzz-*.log; do [ -f "$job_log" ] && cat "$job_log" >> "$log" && rm -f "$job_log"; done
  runs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  rate=$(grep -h 'stat::average_exec_per_sec' "$log" | awk '{s += $2} END {print s + 0}')
  if [ "$rc" -eq 0 ]; then
    echo "fuzz: $target: $runs executions, $rate exec/s, nothing found"
  else
    echo "fuzz: $target: FOUND something after $runs executions (exit $rc); see $log and fuzz/artifacts/$target/" >&2
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2
    status=1
  fi
done
exit $status
