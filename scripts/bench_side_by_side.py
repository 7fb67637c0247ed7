#!/usr/bin/env python3
"""Wall time of several stridelint builds (or settings) and Ruff on one tree, alternating in
one loop so that a loaded machine slows them alike; prints medians and per-round ratios.

    scripts/bench_side_by_side.py TREE ROUNDS NAME=BINARY[:FLAG,FLAG] ...

e.g. `scripts/bench_side_by_side.py /work/realcode/src 8 base=/tmp/sl-base
head=target/dist/stridelint head+follow=target/dist/stridelint:--follow-imports`.
The first stridelint entry is the base of the `/base` ratios; Ruff (`ruff` on PATH) runs as
`ruff check --no-cache --exit-zero --quiet --isolated TREE`.
"""
import statistics
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tree, rounds = sys.argv[1], int(sys.argv[2])
    cmds = {}
    for spec in sys.argv[3:]:
        name, _, rest = spec.partition("=")
        binary, _, flags = rest.partition(":")
        extra = [f for f in flags.split(",") if f]
        cmds[name] = [binary, "check", tree, "--no-cache", "--output-format", "concise",
                      "--exit-zero", "--quiet", *extra]
    cmds["ruff"] = ["ruff", "check", "--no-cache", "--exit-zero", "--quiet", "--isolated", tree]
    times = {k: [] for k in cmds}
    for _ in range(rounds):
        for name, cmd in cmds.items():
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[name].append(time.perf_counter() - start)
    base = next(iter(cmds))
    for name, ts in times.items():
        print(f"{name:14} median {statistics.median(ts):.2f} s  ({', '.join(f'{t:.2f}' for t in ts)})")
    for name in cmds:
        if name == "ruff":
            continue
        vs_ruff = statistics.median(a / b for a, b in zip(times[name], times["ruff"]))
        vs_base = statistics.median(a / b for a, b in zip(times[name], times[base]))
        print(f"{name:14} / ruff {vs_ruff:.2f}   / {base} {vs_base:.3f}")


if __name__ == "__main__":
    main()
