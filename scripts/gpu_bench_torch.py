#!/usr/bin/env python3
"""PyTorch's CUDA `.contiguous()` on the verify engine's GPU benchmark views, next to the
engine's own results.

Reads the engine's results (`bench_engine --engine cuda --json`, one object per case) and, for
each case, rebuilds exactly the same view with `torch.as_strided` and times with the same
protocol as the engine (../docs/verify.md): 5 warm-up runs, then the median of --runs runs,
each between two CUDA events, with L2 flushed by zeroing a buffer of twice the L2 size
outside the event pair. It times `out.copy_(view)` into a preallocated tensor (the engine's
work), `view.contiguous()` (what a model runs; the caching allocator makes the allocation
cheap) and a same-size contiguous `copy_` (PyTorch's memcpy), then prints both side by side.
GB/s count bytes read + bytes written, in 10^9 bytes per second.

Usage: python3 scripts/gpu_bench_torch.py --engine-json engine.jsonl [--runs 50] [--json out.json]
"""
import argparse
import json
import statistics
import sys

import torch

DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8,
    "u8": torch.uint8, "bool": torch.bool,
}


def timed_ms(action, flush, warmup, runs):
    for _ in range(warmup):
        action()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(runs):
        flush.zero_()
        start.record()
        action()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine-json", required=True)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()

    device = torch.device("cuda")
    properties = torch.cuda.get_device_properties(device)
    l2_bytes = getattr(properties, "L2_cache_size", 64 << 20)
    flush = torch.empty(2 * l2_bytes, dtype=torch.uint8, device=device)
    print(f"torch {torch.__version__} on {properties.name}, {properties.multi_processor_count} SMs, "
          f"L2 {l2_bytes >> 20} MiB; median of {args.runs} runs after {args.warmup} warm-up, L2 flushed")
    with open(args.engine_json) as handle:
        engine_rows = [json.loads(line) for line in handle if line.strip()]

    rows = []
    for ours in engine_rows:
        dtype = DTYPES[ours["dtype"]]
        base = torch.arange(ours["footprint"], device=device, dtype=torch.int64).to(dtype)
        view = base.as_strided(ours["shape"], ours["strides"], ours["offset"])
        out = torch.empty(ours["shape"], dtype=dtype, device=device)
        copy_ms = timed_ms(lambda: out.copy_(view), flush, args.warmup, args.runs)
        assert torch.equal(out, view), "torch copy_ disagrees with the view"
        contiguous_ms = timed_ms(lambda: view.contiguous(), flush, args.warmup, args.runs)
        dense = torch.empty_like(out)
        memcpy_ms = timed_ms(lambda: dense.copy_(out), flush, args.warmup, args.runs)
        moved = 2 * ours["bytes_copied"]
        row = {
            "case": ours["case"],
            "expression": ours["expression"],
            "plan": ours["kernel"],
            "checked": ours["checked"],
            "stridelint_ms": ours["median_ms"],
            "stridelint_gbps": ours["gbps"],
            "stridelint_memcpy_gbps": ours["memcpy_gbps"],
            "stridelint_own_copy_kernel_gbps": ours["kernel_copy_gbps"],
            "stridelint_fraction_of_ceiling": ours["ceiling_ratio"],
            "torch_copy_ms": copy_ms,
            "torch_contiguous_ms": contiguous_ms,
            "torch_memcpy_gbps": moved / (memcpy_ms * 1e6),
            "speedup_vs_torch_copy": copy_ms / ours["median_ms"],
            "speedup_vs_torch_contiguous": contiguous_ms / ours["median_ms"],
        }
        rows.append(row)
        del base, view, out, dense
        torch.cuda.empty_cache()
        print(f"\n{row['case']}: {row['expression']}  [{row['plan']}]  checked={row['checked']}")
        print(f"  stridelint          {row['stridelint_ms']:8.3f} ms  {row['stridelint_gbps']:7.0f} GB/s  "
              f"= {100 * row['stridelint_fraction_of_ceiling']:.0f}% of ceiling (memcpy {row['stridelint_memcpy_gbps']:.0f}, "
              f"own copy kernel {row['stridelint_own_copy_kernel_gbps'] or 0:.0f} GB/s)")
        print(f"  torch copy_         {copy_ms:8.3f} ms  {moved / (copy_ms * 1e6):7.0f} GB/s  "
              f"-> stridelint is {row['speedup_vs_torch_copy']:.2f}x")
        print(f"  torch .contiguous() {contiguous_ms:8.3f} ms  {moved / (contiguous_ms * 1e6):7.0f} GB/s  "
              f"-> stridelint is {row['speedup_vs_torch_contiguous']:.2f}x   (torch memcpy {row['torch_memcpy_gbps']:.0f} GB/s)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
