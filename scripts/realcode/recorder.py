"""Call-site recorder for torch's layout entry points.

`install(tree)` wraps `Tensor.view`, `view_as`, `reshape`, `reshape_as`, `flatten`, `ravel`,
`contiguous`, `torch.reshape`, `torch.flatten`, `torch.ravel`, the einops functions
`rearrange`, `repeat`, `reduce`, `pack`, `unpack` and the `forward` of the einops layers
`Rearrange` / `Reduce`. It must run *before* the model packages are imported (they bind
`from einops import rearrange` at import time).

An einops layer runs inside `nn.Module.__call__`, so its site is the first frame above torch's
module machinery: the call expression `self.to_patches(x)` in the tree. When an
`nn.Sequential` (torch's container code) called the layer, the site is the call of that
Sequential in the tree and the site carries `via` = "nn.Sequential"; a layer called from no
tree file at all is counted in `OUTSIDE` (per layer name), not recorded as a site.

Each call is keyed by its direct caller's frame, and only when that frame's file lies inside
the tree: the file relative to the tree root and the position of the call expression, taken
from `co_positions()` at the caller's current instruction (`f_lasti`, the CALL or one of its
cache entries, which carry the CALL's position). Positions are converted to stridelint's JSON
convention: rows 1-based, columns 1-based in characters; the end column is exclusive (one past
the last character), as in Ruff's `end_location`.

Per site: executed, copied (the result's storage is not the input's: StorageImpl identity,
`untyped_storage()._cdata`, which is also right for numel-0 tensors where data pointers are
null), raised and the first error's first line, and one example (the first copying call if
there is one, else the first call). Exceptions pass through unchanged.
"""

import os
import sys

import torch

import trees

# op name -> (owner, attribute, kind); kind says how to find the input tensor.
_METHODS = {
    "view": "view",
    "view_as": "view_as",
    "reshape": "reshape",
    "reshape_as": "reshape_as",
    "flatten": "flatten",
    "ravel": "ravel",
    "contiguous": "contiguous",
}
_FUNCTIONS = {
    "torch.reshape": "reshape",
    "torch.flatten": "flatten",
    "torch.ravel": "ravel",
}

_EINOPS = {  # einops module -> {attribute: op}
    "einops.einops": {"rearrange": "rearrange", "repeat": "repeat", "reduce": "reduce"},
    "einops.packing": {"pack": "pack", "unpack": "unpack"},
}
_LAYERS = ("Rearrange", "Reduce")  # einops.layers.torch classes whose forward is recorded

# site key -> [executed, copied, raised, message, example, example_copied, via]
SITES = {}
OUTSIDE = {}  # einops layer name -> calls from no tree file
_TREE = None
_FILE_CACHE = {}  # co_filename -> relative path or None
_POS_CACHE = {}  # code object -> list of positions
_LINES = {}  # relative path -> list of bytes lines
_SEP = os.sep
_getframe = sys._getframe
_Tensor = torch.Tensor


def _rel(filename):
    if _TREE is None:
        return None
    r = _FILE_CACHE.get(filename)
    if r is None and filename not in _FILE_CACHE:
        a = os.path.abspath(filename)
        if a.startswith(_TREE + _SEP) and a.endswith(".py"):
            r = a[len(_TREE) + 1 :].replace(_SEP, "/")
        _FILE_CACHE[filename] = r
    return r


def _char_col(rel, line, col):
    """0-based UTF-8 byte offset in row `line` -> 1-based character column."""
    lines = _LINES.get(rel)
    if lines is None:
        try:
            with open(os.path.join(_TREE, rel), "rb") as f:
                lines = f.read().split(b"\n")
        except OSError:
            lines = []
        _LINES[rel] = lines
    if 0 < line <= len(lines):
        b = lines[line - 1]
        if b.isascii():
            return col + 1
        return len(b[:col].decode("utf-8", errors="replace")) + 1
    return col + 1


def _site(frame, op):
    code = frame.f_code
    rel = _rel(code.co_filename)
    if rel is None:
        return None
    pos = _POS_CACHE.get(code)
    if pos is None:
        pos = _POS_CACHE[code] = list(code.co_positions())
    i = frame.f_lasti // 2
    if not 0 <= i < len(pos):
        return None
    l0, l1, c0, c1 = pos[i]
    if l0 is None or c0 is None:
        return None
    return (rel, l0, _char_col(rel, l0, c0), l1, _char_col(rel, l1, c1), op)


def _desc(t):
    return [list(t.shape), list(t.stride()), t.storage_offset()]


def _short(v):
    if isinstance(v, torch.Tensor):
        return "Tensor%s" % (list(v.shape),)
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(_short(x) for x in v) + ")"
    if isinstance(v, torch.dtype):
        return str(v)
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _storage_id(t):
    try:
        return t.untyped_storage()._cdata
    except Exception:  # tensors without storage (e.g. subclasses): treat as unknown
        return None


def _first_tensor(v):
    """The tensor of an argument or result that may be a list of tensors (einops, pack)."""
    if isinstance(v, (list, tuple)):
        return next((t for t in v if isinstance(t, torch.Tensor)), None)
    return v


def _record(key, x, res, err, args, kwargs, via=None):
    x, res = _first_tensor(x), _first_tensor(res)
    rec = SITES.get(key)
    if rec is None:
        rec = SITES[key] = [0, 0, 0, None, None, False, via]
    rec[0] += 1
    copied = False
    if err is not None:
        rec[2] += 1
        if rec[3] is None:
            rec[3] = (type(err).__name__ + ": " + (str(err).split("\n")[0]))[:400]
    elif isinstance(res, torch.Tensor) and isinstance(x, torch.Tensor):
        a, b = _storage_id(x), _storage_id(res)
        copied = a is not None and b is not None and a != b
        if copied:
            rec[1] += 1
    if rec[4] is None or (copied and not rec[5]):
        ex = {"args": _short(tuple(args)) + (" " + _short(kwargs) if kwargs else "")}
        if isinstance(x, torch.Tensor):
            ex["input"] = _desc(x)
            ex["contiguous"] = x.is_contiguous()
        if isinstance(res, torch.Tensor):
            ex["result"] = _desc(res)
        if err is not None:
            ex["error"] = rec[3]
        rec[4] = ex
        rec[5] = copied


def _wrap_method(orig, op):
    def wrapper(self, *args, **kwargs):
        key = _site(_getframe(1), op)
        if key is None:
            return orig(self, *args, **kwargs)
        name = op
        if op == "view" and ((args and isinstance(args[0], torch.dtype)) or "dtype" in kwargs):
            name = "view_dtype"
            key = key[:5] + (name,)
        try:
            res = orig(self, *args, **kwargs)
        except Exception as e:
            _record(key, self, None, e, args, kwargs)
            raise
        _record(key, self, res, None, args, kwargs)
        return res

    wrapper.__name__ = getattr(orig, "__name__", op)
    wrapper.__qualname__ = getattr(orig, "__qualname__", op)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    wrapper._stridelint_orig = orig
    return wrapper


def _wrap_function(orig, op):
    def wrapper(*args, **kwargs):
        key = _site(_getframe(1), op)
        if key is None:
            return orig(*args, **kwargs)
        x = args[0] if args else kwargs.get("input", kwargs.get("tensor"))
        try:
            res = orig(*args, **kwargs)
        except Exception as e:
            _record(key, x, None, e, args[1:], kwargs)
            raise
        _record(key, x, res, None, args[1:], kwargs)
        return res

    wrapper.__name__ = getattr(orig, "__name__", op)
    wrapper.__qualname__ = getattr(orig, "__qualname__", op)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    wrapper.__module__ = getattr(orig, "__module__", None)
    wrapper._stridelint_orig = orig
    return wrapper


# torch's module machinery between a layer's forward and the tree frame that called it
_NN_DIR = os.sep + os.path.join("torch", "nn", "modules") + os.sep
_CONTAINER = _NN_DIR + "container.py"


def _layer_caller(frame):
    """The tree frame that called an einops layer, and "nn.Sequential" when torch's container
    code lies between (else None); (None, None) when no tree frame does."""
    via = None
    f = frame
    while f is not None and _NN_DIR in f.f_code.co_filename:
        if f.f_code.co_filename.endswith(_CONTAINER):
            via = "nn.Sequential"
        f = f.f_back
    if f is None or _rel(f.f_code.co_filename) is None:
        return None, None
    return f, via


def _wrap_layer_forward(orig, op):
    def forward(self, input):
        caller, via = _layer_caller(_getframe(1))
        key = _site(caller, op) if caller is not None else None
        if key is None:
            if _TREE is not None:
                OUTSIDE[op] = OUTSIDE.get(op, 0) + 1
            return orig(self, input)
        try:
            res = orig(self, input)
        except Exception as e:
            _record(key, input, None, e, (self.pattern,), {}, via)
            raise
        _record(key, input, res, None, (self.pattern,), {}, via)
        return res

    forward._stridelint_orig = orig
    return forward


def _install_einops():
    import importlib

    import einops
    import einops.layers.torch as layers

    for modname, attrs in _EINOPS.items():
        mod = importlib.import_module(modname)
        for attr, op in attrs.items():
            w = _wrap_function(getattr(mod, attr), op)
            setattr(mod, attr, w)
            setattr(einops, attr, w)
    for name in _LAYERS:
        cls = getattr(layers, name)
        cls.forward = _wrap_layer_forward(cls.forward, name)


def set_tree(tree):
    """Record calls from files under `tree` (clears the per-file caches)."""
    global _TREE
    _TREE = os.path.abspath(tree)
    _FILE_CACHE.clear()
    _POS_CACHE.clear()
    _LINES.clear()
    SITES.clear()
    OUTSIDE.clear()


_INSTALLED = False
# packages that bind the wrapped entry points at import time (all trees)
PACKAGES = trees.TREES[1]["packages"] + trees.TREES[2]["packages"] + trees.TREES[3]["packages"]


def install(tree=None):
    """Wrap the entry points; only calls from files under `tree` are recorded (see set_tree)."""
    global _INSTALLED
    if tree is not None:
        set_tree(tree)
    if _INSTALLED:
        return
    if any(p in sys.modules for p in PACKAGES):
        raise RuntimeError("recorder.install must run before the model packages are imported")
    _INSTALLED = True
    for attr, op in _METHODS.items():
        setattr(torch.Tensor, attr, _wrap_method(getattr(torch.Tensor, attr), op))
    for name, op in _FUNCTIONS.items():
        attr = name.split(".")[1]
        setattr(torch, attr, _wrap_function(getattr(torch, attr), op))
    _install_einops()


def take():
    """The sites recorded since the last call, as JSON-ready rows; resets the table. A row has
    a 12th element, `via`, only when an einops layer was called through nn.Sequential."""
    rows = []
    for (rel, l0, c0, l1, c1, op), (n, cp, rs, msg, ex, _, via) in SITES.items():
        rows.append([rel, l0, c0, l1, c1, op, n, cp, rs, msg, ex] + ([via] if via else []))
    SITES.clear()
    return rows


def take_outside():
    """Einops layer calls from no tree file since the last call (layer -> count); resets."""
    out = dict(OUTSIDE)
    OUTSIDE.clear()
    return out
