"""The third tree's zoo (held out): tiny models of four model packages, random weights, built
from their constructors and configs (no downloads). Same pattern as zoo2.py: a module
`zoo3_<package>.py` per package with `configs()`: name -> `zoo2.Config`; a job's variant says
the attention switch ("eager" / "fused") and the mode ("eval" / "train").
"""

import importlib
import importlib.machinery
import sys
import types

import trees
import zoo2
from zoo2 import B, Config, constructed, klass, randn  # noqa: F401  (re-exported for zoo3_*.py)

PACKAGES = trees.TREES[3]["packages"]


def zoo(package):
    return importlib.import_module("zoo3_" + package)


class _Stub(types.ModuleType):
    """A module whose every missing attribute is a further stand-in (a callable that raises
    when called): enough for module-level `import torchaudio…` and type annotations."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        sub = _Stub("%s.%s" % (self.__name__, name))
        setattr(self, name, sub)
        return sub

    def __call__(self, *a, **k):
        raise RuntimeError("%s is a stand-in (torchaudio is not installed)" % self.__name__)


def before_import(package):
    """torchaudio cannot be installed beside torch 2.15 (see zoo2.before_import); speechbrain
    imports it at module level in files the zoo runs (nnet/CNN.py: only its mel filter bank
    for one layer, lobes/downsampling.py) and checks its backend at import. The zoo builds
    nothing that calls it, and a call would raise, failing the job."""
    if package == "speechbrain" and "torchaudio" not in sys.modules:
        try:
            import torchaudio  # noqa: F401
        except Exception:
            for name in ("torchaudio", "torchaudio.transforms", "torchaudio.functional", "torchaudio.compliance",
                         "torchaudio.compliance.kaldi", "torchaudio.io", "torchaudio.backend"):
                sys.modules[name] = _Stub(name)
                # find_spec (transformers' availability checks) wants a spec; the missing
                # distribution metadata still tells them torchaudio is not installed
                sys.modules[name].__spec__ = importlib.machinery.ModuleSpec(name, None)
            sys.modules["torchaudio"].__version__ = "0.0.0"
            sys.modules["torchaudio"].list_audio_backends = lambda: []
            for name in ("transforms", "functional", "compliance", "io", "backend"):
                setattr(sys.modules["torchaudio"], name, sys.modules["torchaudio." + name])


def list_jobs(packages):
    out = []
    for pkg in packages:
        for name, cfg in zoo(pkg).configs().items():
            for v in cfg.variants:
                out.append(dict(key="%s/%s/%s" % (pkg, name, v), package=pkg, name=name, attn=v))
    return out


def run(job):
    """As zoo2.run, with this tree's configs."""
    import torch

    cfg = zoo(job["package"]).configs()[job["name"]]
    parts = job["attn"].split(".")
    fused = "fused" in parts if ("eager" in parts or "fused" in parts) else None
    train = "train" in parts
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model, inputs = cfg.build(gen, fused)
    model.train(train)
    with torch.set_grad_enabled(train):
        zoo2._call(model, inputs)
    return dict(fused=fused, train=train)
