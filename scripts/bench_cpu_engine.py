#!/usr/bin/env python3
"""The CPU verify engine against PyTorch's own CPU copy, on exactly the same views.

For every case that `bench_engine --list` prints (shape, strides, offset, dtype of a view of a
contiguous tensor), this script times in ONE run, case by case and side by side:

* the stridelint CPU engine (`bench_engine --engine cpu --json`): median of --runs timed copies
  into a preallocated buffer after --warmup untimed ones, plus the machine's memcpy ceiling
  (parallel copy of the same byte count);
* PyTorch with the same thread count (torch.set_num_threads): `out.copy_(view)` into a
  preallocated tensor (the same work as the engine), and `view.contiguous()` (which also
  allocates and page-faults a new tensor every time, as a model would).

Both sides use the same protocol (warm-up, then the median of timed runs, wall clock). On a
shared, noisy machine one block of runs can land in a quiet or a busy moment, so each case is
measured in --rounds alternating rounds (torch block, stridelint block, torch block, ...); the
table gives the median over rounds of each figure and of the per-round ratios. Ratios above 1
mean stridelint is faster. GB/s counts bytes read + bytes written (10^9 bytes/s).

Usage: python scripts/bench_cpu_engine.py [--threads N] [--runs R] [--warmup W] [--rounds K]
       [--bench-engine target/release/bench_engine] [--json out.json] [CASE ...]
Needs torch (e.g. .venv-oracle/bin/python) and a release build of the bench binary:
       cargo build --release --features bench --bin bench_engine
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8,
    "u8": torch.uint8, "bool": torch.bool,
}
CPU_CASES = ["bshd_transpose_bf16", "t8192_f32"]


def median_ms(action, warmup, runs):
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def torch_times(case, warmup, runs):
    dtype = DTYPES[case["dtype"]]
    base = torch.arange(case["footprint"], dtype=torch.int64).to(dtype)
    view = base.as_strided(case["shape"], case["strides"], case["offset"])
    out = torch.empty(case["shape"], dtype=dtype)
    copy_ms = median_ms(lambda: out.copy_(view), warmup, runs)
    assert torch.equal(out, view)
    contiguous_ms = median_ms(lambda: view.contiguous(), warmup, runs)
    # PyTorch's own memcpy of the same byte count (a contiguous copy_).
    dense = torch.empty(case["shape"], dtype=dtype)
    memcpy_ms = median_ms(lambda: dense.copy_(out), warmup, runs)
    return copy_ms, contiguous_ms, memcpy_ms


def engine_record(binary, name, threads, warmup, runs):
    command = [binary, "--engine", "cpu", "--json", "--threads", str(threads),
               "--warmup", str(warmup), "--runs", str(runs), name]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bench-engine", default="target/release/bench_engine")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("cases", nargs="*", default=CPU_CASES)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    listed = subprocess.run([args.bench_engine, "--list"], check=True, capture_output=True, text=True)
    cases = {c["case"]: c for c in map(json.loads, listed.stdout.splitlines())}
    print(f"torch {torch.__version__}, {args.threads} threads (torch.get_num_threads() = "
          f"{torch.get_num_threads()}), median of {args.runs} runs after {args.warmup} warm-up")
    rows = []
    for name in args.cases:
        case = cases[name]
        rounds = []
        for _ in range(args.rounds):
            copy_ms, contiguous_ms, torch_memcpy_ms = torch_times(case, args.warmup, args.runs)
            ours = engine_record(args.bench_engine, name, args.threads, args.warmup, args.runs)
            rounds.append((copy_ms, contiguous_ms, torch_memcpy_ms, ours))
        med = lambda values: statistics.median(list(values))
        ours = rounds[-1][3]
        moved = 2 * ours["bytes_copied"]
        copy_ms = med(r[0] for r in rounds)
        contiguous_ms = med(r[1] for r in rounds)
        row = {
            "case": name,
            "expression": case["expression"],
            "plan": ours["kernel"],
            "rounds": args.rounds,
            "stridelint_ms": med(r[3]["median_ms"] for r in rounds),
            "stridelint_gbps": med(r[3]["gbps"] for r in rounds),
            "stridelint_memcpy_gbps": med(r[3]["memcpy_gbps"] for r in rounds),
            "stridelint_fraction_of_memcpy": med(r[3]["gbps"] / r[3]["memcpy_gbps"] for r in rounds),
            "torch_copy_ms": copy_ms,
            "torch_contiguous_ms": contiguous_ms,
            "torch_memcpy_gbps": med(moved / (r[2] * 1e6) for r in rounds),
            "speedup_vs_torch_copy": med(r[0] / r[3]["median_ms"] for r in rounds),
            "speedup_vs_torch_contiguous": med(r[1] / r[3]["median_ms"] for r in rounds),
            "checked": all(r[3]["checked"] for r in rounds),
        }
        rows.append(row)
        print(f"\n{name}: {case['expression']}  [{ours['kernel']}]  ({args.rounds} rounds)")
        print(f"  stridelint  {row['stridelint_ms']:9.2f} ms  {row['stridelint_gbps']:7.1f} GB/s  "
              f"({100 * row['stridelint_fraction_of_memcpy']:.0f}% of memcpy {row['stridelint_memcpy_gbps']:.1f} GB/s)"
              f"  checked={row['checked']}")
        print(f"  torch copy_ {copy_ms:9.2f} ms  {moved / (copy_ms * 1e6):7.1f} GB/s   "
              f"-> stridelint is {row['speedup_vs_torch_copy']:.2f}x")
        print(f"  torch .contiguous() {contiguous_ms:9.2f} ms  -> stridelint is {row['speedup_vs_torch_contiguous']:.2f}x"
              f"   (torch memcpy {row['torch_memcpy_gbps']:.1f} GB/s)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
