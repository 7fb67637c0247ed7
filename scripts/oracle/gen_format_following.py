"""Generate tests/data/oracle/format_following.jsonl: is the output of each op of kind
`format_following` (rules/torch.toml: convolution, pooling, interpolation, padding)
contiguous when its input is, and when its input is a contiguous tensor expanded along
some dims (batch, channels, the first spatial dim, all of them)?

For every function and module class of that kind, several calls (1-d, 2-d and 3-d spatial
inputs where the op takes them, a few argument choices) on contiguous random inputs
(float32, CPU, default module weights), one row per call: the op, the call, the input and
output shapes and whether the output is contiguous. `tests/it/format_following_oracle.rs`
checks that every name of the kind has rows and that all of them say "contiguous".

    python scripts/oracle/gen_format_following.py
"""

import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests/data/oracle/format_following.jsonl")


# The dims of every input that are broadcast (stride 0, as `expand` makes them), or none.
BROADCAST = ()


def x(rank, channels=6):
    spatial = {3: (16,), 4: (8, 10), 5: (4, 6, 8)}[rank]
    shape = (2, channels, *spatial)
    dims = [d % rank for d in BROADCAST]
    return torch.randn(*[1 if d in dims else s for d, s in enumerate(shape)]).expand(*shape)


def w(rank, out=4, cin=6, k=3):
    return torch.randn(out, cin, *([k] * (rank - 2)))


def wt(rank, cin=6, out=4, k=2):
    return torch.randn(cin, out, *([k] * (rank - 2)))


# name -> list of (description, function of nothing returning (input, output))
CALLS = {}


def case(name, desc, rank, fn):
    CALLS.setdefault(name, []).append((desc, rank, fn))


for r, d in ((3, "1d"), (4, "2d"), (5, "3d")):
    conv = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[r]
    convt = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[r]
    torch_conv = {3: torch.conv1d, 4: torch.conv2d, 5: torch.conv3d}[r]
    case(f"torch.nn.functional.conv{d}", "k3", r, lambda r=r, conv=conv: conv(x(r), w(r)))
    case(f"torch.nn.functional.conv{d}", "k3 stride 2 pad 1", r, lambda r=r, conv=conv: conv(x(r), w(r), stride=2, padding=1))
    case(f"torch.nn.functional.conv{d}", "k1", r, lambda r=r, conv=conv: conv(x(r), w(r, k=1)))
    case(f"torch.conv{d}", "k3", r, lambda r=r, c=torch_conv: c(x(r), w(r)))
    case(f"torch.nn.functional.conv_transpose{d}", "k2 stride 2", r, lambda r=r, c=convt: c(x(r), wt(r), stride=2))
    for pool in ("avg", "max"):
        f = getattr(F, f"{pool}_pool{d}")
        case(f"torch.nn.functional.{pool}_pool{d}", "2", r, lambda r=r, f=f: f(x(r), 2))
        a = getattr(F, f"adaptive_{pool}_pool{d}", None)
        if a is not None:
            case(f"torch.nn.functional.adaptive_{pool}_pool{d}", "3", r, lambda r=r, a=a: a(x(r), 3))
            case(f"torch.nn.functional.adaptive_{pool}_pool{d}", "1", r, lambda r=r, a=a: a(x(r), 1))
    case("torch.nn.functional.interpolate", f"{d} nearest x2", r, lambda r=r: F.interpolate(x(r), scale_factor=2))
    case("torch.nn.functional.upsample", f"{d} nearest x2", r, lambda r=r: F.upsample(x(r), scale_factor=2))
    case("torch.nn.functional.pad", f"{d} constant", r, lambda r=r: F.pad(x(r), (1, 2) * (r - 2)))
    case("torch.nn.functional.pad", f"{d} replicate", r, lambda r=r: F.pad(x(r), (1, 1) * (r - 2), mode="replicate"))
    if r < 5:
        case("torch.nn.functional.pad", f"{d} reflect", r, lambda r=r: F.pad(x(r), (1, 1) * (r - 2), mode="reflect"))
    case("torch.nn.functional.pad", f"{d} circular", r, lambda r=r: F.pad(x(r), (1, 1) * (r - 2), mode="circular"))
case("torch.nn.functional.interpolate", "2d bilinear", 4, lambda: F.interpolate(x(4), scale_factor=2, mode="bilinear"))
case("torch.nn.functional.interpolate", "2d bicubic size", 4, lambda: F.interpolate(x(4), size=(5, 7), mode="bicubic"))
case("torch.nn.functional.interpolate", "1d linear", 3, lambda: F.interpolate(x(3), scale_factor=2, mode="linear"))
case("torch.nn.functional.interpolate", "3d trilinear", 5, lambda: F.interpolate(x(5), scale_factor=2, mode="trilinear"))

MODULES = {
    "torch.nn.Conv1d": [(3, lambda: nn.Conv1d(6, 4, 3)), (3, lambda: nn.Conv1d(6, 6, 3, groups=6, padding=1))],
    "torch.nn.Conv2d": [(4, lambda: nn.Conv2d(6, 4, 3)), (4, lambda: nn.Conv2d(6, 4, 1)),
                        (4, lambda: nn.Conv2d(6, 6, 3, groups=6, padding=1)), (4, lambda: nn.Conv2d(6, 4, 2, stride=2))],
    "torch.nn.Conv3d": [(5, lambda: nn.Conv3d(6, 4, 3, padding=1))],
    "torch.nn.ConvTranspose1d": [(3, lambda: nn.ConvTranspose1d(6, 4, 2, stride=2))],
    "torch.nn.ConvTranspose2d": [(4, lambda: nn.ConvTranspose2d(6, 4, 2, stride=2))],
    "torch.nn.ConvTranspose3d": [(5, lambda: nn.ConvTranspose3d(6, 4, 2, stride=2))],
    "torch.nn.MaxPool1d": [(3, lambda: nn.MaxPool1d(2))],
    "torch.nn.MaxPool2d": [(4, lambda: nn.MaxPool2d(2)), (4, lambda: nn.MaxPool2d(3, stride=1, padding=1))],
    "torch.nn.MaxPool3d": [(5, lambda: nn.MaxPool3d(2))],
    "torch.nn.AvgPool1d": [(3, lambda: nn.AvgPool1d(2))],
    "torch.nn.AvgPool2d": [(4, lambda: nn.AvgPool2d(2)), (4, lambda: nn.AvgPool2d(3, stride=1, padding=1))],
    "torch.nn.AvgPool3d": [(5, lambda: nn.AvgPool3d(2))],
    "torch.nn.AdaptiveAvgPool1d": [(3, lambda: nn.AdaptiveAvgPool1d(3))],
    "torch.nn.AdaptiveAvgPool2d": [(4, lambda: nn.AdaptiveAvgPool2d(3)), (4, lambda: nn.AdaptiveAvgPool2d(1))],
    "torch.nn.AdaptiveAvgPool3d": [(5, lambda: nn.AdaptiveAvgPool3d(2))],
    "torch.nn.AdaptiveMaxPool1d": [(3, lambda: nn.AdaptiveMaxPool1d(3))],
    "torch.nn.AdaptiveMaxPool2d": [(4, lambda: nn.AdaptiveMaxPool2d(3))],
    "torch.nn.Upsample": [(4, lambda: nn.Upsample(scale_factor=2)), (4, lambda: nn.Upsample(scale_factor=2, mode="bilinear")),
                          (3, lambda: nn.Upsample(scale_factor=2))],
    "torch.nn.ZeroPad2d": [(4, lambda: nn.ZeroPad2d(1))],
    "torch.nn.ConstantPad1d": [(3, lambda: nn.ConstantPad1d(2, 0.5))],
    "torch.nn.ConstantPad2d": [(4, lambda: nn.ConstantPad2d((1, 0, 2, 1), 0.0))],
    "torch.nn.ReflectionPad2d": [(4, lambda: nn.ReflectionPad2d(1))],
    "torch.nn.ReplicationPad2d": [(4, lambda: nn.ReplicationPad2d(1))],
}


def main():
    global BROADCAST
    torch.manual_seed(0)
    rows = []
    for BROADCAST in ((), (0,), (1,), (2,), (0, 1, 2, -1)):
        rows += calls_rows(f"expanded along dims {BROADCAST}" if BROADCAST else None)
    with open(OUT, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    bad = [r for r in rows if not r["output_contiguous"]]
    print(f"{len(rows)} rows, torch {torch.__version__}, {len(bad)} not contiguous -> {OUT}")
    for r in bad:
        print("  not contiguous:", r)


def calls_rows(expanded):
    rows = []
    for name, calls in CALLS.items():
        for desc, rank, fn in calls:
            with torch.no_grad():
                out = fn()
            rows.append(row(name, desc, rank, out, expanded))
    for name, makers in MODULES.items():
        for rank, make in makers:
            m = make()
            with torch.no_grad():
                out = m(x(rank))
            rows.append(row(name, repr(m), rank, out, expanded))
    return rows


def row(name, call, rank, out, expanded):
    r = dict(name=name, call=call, input_rank=rank, output_shape=list(out.shape),
             output_contiguous=out.is_contiguous())
    if expanded:
        r["input"] = expanded
    return r


if __name__ == "__main__":
    main()
