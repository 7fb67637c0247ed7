"""Check the layout rule stridelint uses for `F.normalize` (rules/torch.toml, kind
`elementwise`, variant `norm_divisor`): its output is laid out as the one-operand
element-wise op (`x.neg()`) on the same input, whenever no dim of the input has size 1.

`F.normalize` divides the input by a norm taken over `dim` and broadcast back; TensorIterator
sees the input first, and the broadcast norm (stride 0 along `dim`) only breaks ties the
input leaves open, which only dims of size 1 do. The script runs both on every layout of a
few shapes (permutations, slices, expands, channels-last), every dim, p = 1 and 2, and
exits 1 if the rule fails on an input without a size-1 dim. It also checks that a
contiguous input, size-1 dims or not, gives a contiguous output (the rule for an input
known only to be contiguous).

Usage: .venv-realcode/bin/python scripts/oracle/check_normalize.py
Last run (torch 2.15.0): 1152 cases; 1056 equal; the 96 others all have a dim of size 1.
"""

import itertools
import sys

import torch
import torch.nn.functional as F


def layouts():
    for shape in [(2, 3, 4, 5), (3, 1, 4, 2), (2, 3), (4,), (2, 3, 4)]:
        x = torch.randn(*shape)
        yield x
        for perm in itertools.permutations(range(len(shape))):
            yield x.permute(*perm)
        if len(shape) >= 2:
            yield x.transpose(0, 1)[..., :1]
            yield x[:, ::2]
            yield x.unsqueeze(1).expand(shape[0], 3, *shape[1:])
        if len(shape) == 4:
            yield x.contiguous(memory_format=torch.channels_last)
            yield x.contiguous(memory_format=torch.channels_last).permute(0, 2, 3, 1)


def main():
    cases = equal = 0
    wrong = []
    for x in layouts():
        for dim in range(-x.dim(), x.dim()):
            for p in (1.0, 2.0):
                cases += 1
                got, rule = F.normalize(x, p=p, dim=dim).stride(), x.neg().stride()
                if got == rule:
                    equal += 1
                elif 1 not in x.shape:
                    wrong.append((tuple(x.shape), x.stride(), dim, got, rule))
    for shape in [(2, 1, 3), (1, 4), (3, 1), (1, 1, 2), (2, 3, 1, 1), (1, 2, 1, 3)]:
        x = torch.randn(*shape)
        for dim in range(-x.dim(), x.dim()):
            if not F.normalize(x, dim=dim).is_contiguous():
                wrong.append(("contiguous input", shape, dim))
    print(f"{cases} cases; {equal} equal; {cases - equal - len(wrong)} others with a size-1 dim")
    for w in wrong:
        print("rule fails:", w)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
