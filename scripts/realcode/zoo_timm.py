"""timm models for the record run: the two smallest-looking variants of each architecture
module (`timm.models._registry`), random weights, num_classes=10, 64x64 inputs where the
model accepts `img_size` (else the model's own input size)."""

import re

import torch

PER_FAMILY = 2
MAX_PARAMS = 100_000_000
SIZE = 64

# smaller first; a name's rank is the position of the first token it contains
_TOKENS = [
    "test_", "pico", "atto", "femto", "nano", "zepto", "xxxs", "xxs", "tiny", "xtiny", "xs", "mini",
    "_t0", "_t1", "_s0", "_b0", "_m0", "_a", "_m1", "_s1", "_b1", "small", "_s_", "_s", "18", "_t",
    "lite", "_050", "_075", "_100", "26", "34", "_m", "base", "_b",
]


def _rank(name):
    for i, t in enumerate(_TOKENS):
        if t in name:
            return (i, len(name), name)
    return (len(_TOKENS), len(name), name)


def jobs():
    import timm
    from timm.models import _registry

    fams = {}
    for n in timm.list_models():
        fams.setdefault(_registry._model_to_module[n], []).append(n)
    out = []
    for fam in sorted(fams):
        names = sorted(fams[fam], key=_rank)
        # skip names that only differ from an earlier pick by a resolution suffix
        picked = []
        for n in names:
            base = re.sub(r"_\d{3}$", "", n)
            if any(re.sub(r"_\d{3}$", "", p) == base for p in picked):
                continue
            picked.append(n)
            if len(picked) == PER_FAMILY + 2:
                break
        out.append((fam, picked))
    return out


def attempts(name):
    """Constructor kwargs and input sizes to try, in order."""
    return [(dict(img_size=SIZE), None), ({}, SIZE), ({}, "default")]


def create(name, fused, kw):
    """Build `name` with `kw` (fused attention on or off); returns the model."""
    import timm
    from timm.layers import config as tcfg

    tcfg.set_fused_attn(fused)
    with torch.device("meta"):
        m = timm.create_model(name, pretrained=False, num_classes=10, **kw)
    n = sum(p.numel() for p in m.parameters())
    if n > MAX_PARAMS:
        raise ValueError("too large: %d parameters" % n)
    del m
    model = timm.create_model(name, pretrained=False, num_classes=10, **kw)
    model.eval()
    return model


def input_size(model, size):
    inp = model.pretrained_cfg.get("input_size", (3, 224, 224))
    if size == "default":
        return tuple(inp)
    return (inp[0], SIZE, SIZE)
