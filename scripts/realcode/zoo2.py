"""The second tree's zoo: tiny models of ten model packages, random weights, built from their
constructors (no downloads). Each package has a module `zoo2_<package>.py` with `configs()`:
name -> Config. A job's variant ("attn" in the job dict, as for the first tree) says the
attention switch ("eager" / "fused", where the package has one) and the mode ("eval" /
"train", where the paths differ), e.g. "fused.train" or "eval".

Eval runs under `torch.no_grad()`; train runs with `model.train()` and gradients on (no
backward: the layout calls are all in the forward).
"""

import importlib
import sys
import types

import torch

import trees

PACKAGES = trees.TREES[2]["packages"]
B = 2


class Config:
    """`build(gen, fused)` -> (model, inputs); inputs: a tensor, a tuple (positional), a dict
    (keywords) or a callable `f(model)` that runs the forward itself."""

    def __init__(self, build, attn=False, train=False):
        self.build = build
        attns = ("eager", "fused") if attn else ("",)
        modes = ("eval", "train") if train else ("eval",)
        self.variants = [".".join(p for p in (a, m) if p) for a in attns for m in modes]


def klass(dotted):
    """`package.module.Class` -> the class."""
    mod, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(mod), name)


def constructed(dotted, kw, make):
    """A `build` that constructs `dotted(**kw)` and makes its inputs with `make(gen)`."""
    def build(gen, fused):
        return klass(dotted)(**kw), make(gen)

    return build


def zoo(package):
    return importlib.import_module("zoo2_" + package)


def randn(*shape, gen):
    return torch.randn(*shape, generator=gen)


def before_import(package):
    """Stand-ins for optional imports that cannot be installed beside torch 2.15: torchaudio's
    wheels are built against another CUDA version. encodec imports it at module level and
    calls it only for file I/O and the discriminator, which the zoo does not run."""
    if package == "encodec" and "torchaudio" not in sys.modules:
        try:
            import torchaudio  # noqa: F401
        except Exception:
            stub = types.ModuleType("torchaudio")
            stub.transforms = types.ModuleType("torchaudio.transforms")
            sys.modules["torchaudio"] = stub
            sys.modules["torchaudio.transforms"] = stub.transforms


def list_jobs(packages):
    out = []
    for pkg in packages:
        for name, cfg in zoo(pkg).configs().items():
            for v in cfg.variants:
                out.append(dict(key="%s/%s/%s" % (pkg, name, v), package=pkg, name=name, attn=v))
    return out


def _call(model, inputs):
    if callable(inputs) and not isinstance(inputs, torch.Tensor):
        return inputs(model)
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, tuple):
        return model(*inputs)
    return model(inputs)


def run(job):
    """Build the job's model and run its forward once; returns the variant's settings."""
    cfg = zoo(job["package"]).configs()[job["name"]]
    parts = job["attn"].split(".")
    fused = "fused" in parts if ("eager" in parts or "fused" in parts) else None
    train = "train" in parts
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model, inputs = cfg.build(gen, fused)
    model.train(train)
    with torch.set_grad_enabled(train):
        _call(model, inputs)
    return dict(fused=fused, train=train)
