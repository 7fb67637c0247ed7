"""Generate tests/data/oracle/einsum.jsonl: the layouts torch gives `torch.einsum` results.

Random equations of one operand (reorderings) and two operands (kept, contracted and
one-sided letters, some summed within one operand, outer products), operands contiguous
or laid out in reverse memory order, sizes 2-4. Each row: the equation, every operand's
shape and strides, and the result's shape, strides and whether it shares the first
operand's storage. `tests/it/einsum_oracle.rs` checks `layout::einsum` against every row it
decides and holds the number it decides to a floor.

    python scripts/oracle/gen_einsum.py [--rows N] [--seed S]
"""

import argparse
import json
import os
import random

import torch

LETTERS = "abcdefgh"


def operand(shape, reverse):
    if reverse and len(shape) >= 2:
        return torch.randn(*reversed(shape)).permute(*reversed(range(len(shape))))
    return torch.randn(*shape)


def random_equation(rng):
    if rng.random() < 0.25:
        letters = rng.sample(LETTERS, rng.randint(1, 6))
        return ["".join(letters)], "".join(rng.sample(letters, len(letters)))
    letters = rng.sample(LETTERS, rng.randint(2, 6))
    a = rng.sample(letters, rng.randint(1, len(letters)))
    rest = [c for c in letters if c not in a]
    b = rest + rng.sample(a, rng.randint(0, len(a)))
    rng.shuffle(b)
    if not b:
        return None
    used = sorted(set(a) | set(b))
    out = rng.sample(used, rng.randint(1, len(used)))
    return ["".join(a), "".join(b)], "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(__file__), "../../tests/data/oracle/einsum.jsonl")))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = []
    while len(rows) < args.rows:
        eq = random_equation(rng)
        if eq is None:
            continue
        terms, out = eq
        size = {c: rng.randint(2, 4) for c in LETTERS}
        tensors = [operand([size[c] for c in t], rng.random() < 0.5) for t in terms]
        equation = ",".join(terms) + "->" + out
        result = torch.einsum(equation, *tensors)
        rows.append({
            "equation": equation,
            "operands": [{"shape": list(t.shape), "strides": list(t.stride())} for t in tensors],
            "shape": list(result.shape),
            "strides": list(result.stride()),
            "shares_storage": result.data_ptr() == tensors[0].data_ptr(),
        })
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"{len(rows)} rows -> {args.out} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
