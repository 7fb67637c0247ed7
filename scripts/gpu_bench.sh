#!/usr/bin/env bash
# GPU check of the verify engine, for a machine with an NVIDIA GPU (written for an H200).
#
#   1. which engine `auto` picks there, and why (driver, NVRTC, CUBIN or PTX);
#   2. correctness: a sweep of random views (every kernel, every element size) compared with
#      the CPU reference gather;
#   3. speed: the GPU cases of `bench_engine` (a (16,4096,32,128) bf16 permute(0,2,1,3), a
#      16384x16384 f32 and bf16 transpose, a stride-2 slice) against this device's memcpy
#      and own-copy-kernel ceilings, then PyTorch's .contiguous() on the same views.
#
# Needs a release build of bench_engine: built here when cargo exists, else pass one built
# elsewhere (x86-64 Linux) with BENCH_ENGINE=path. NVRTC comes from the CUDA toolkit or pip's
# nvidia-cuda-nvrtc (found through python3's sys.path; STRIDELINT_NVRTC=dir overrides).
# Results go to $OUT (or ./gpu-bench-out): probe.txt, sweep.txt, engine.jsonl, side_by_side.txt.
# Expected run time on an H200: about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-bench-out}
runs=${RUNS:-50}
mkdir -p "$out"
bin=${BENCH_ENGINE:-target/release/bench_engine}
if [ ! -x "$bin" ]; then
    cargo build --release --features bench --bin bench_engine
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | tee "$out/nvidia_smi.txt" || true
"$bin" --probe 2>&1 | tee "$out/probe.txt"
"$bin" --engine cuda --sweep "${SWEEP:-1000}" 2>&1 | tee "$out/sweep.txt"
"$bin" --engine cuda --json --runs "$runs" > "$out/engine.jsonl"
python3 scripts/gpu_bench_torch.py --engine-json "$out/engine.jsonl" --runs "$runs" --json "$out/side_by_side.json" 2>&1 | tee "$out/side_by_side.txt"
