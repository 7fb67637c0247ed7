"""SL008's torch judge: is a tensor attention weights, as autograd recorded it?

`is_attention_weights(t)`: dropout, copies or dtype conversions after a softmax over the
last dim, whose input is a product (`bmm`, `mm`, `baddbmm`, a batched `matmul`) seen
through scales by a number, additive masks or biases, `masked_fill`, copies and
conversions. The tensor must have been computed with gradients on (every step leaves a
node). Used by `scripts/oracle/check_fixtures.py` and `scripts/realcode/check_attention.py`.
"""

from __future__ import annotations

import torch


def saved_other_is_number(node) -> bool:
    """A `Mul`/`Div` node whose other operand was a Python number (a 0-d wrapped tensor)."""
    other = getattr(node, "_saved_other", None)
    return isinstance(other, torch.Tensor) and other.dim() == 0


def is_dropout_mask(node) -> bool:
    """Training-mode dropout: a `Mul` by a mask whose values are 0 and one scale 1/(1-p)."""
    other = getattr(node, "_saved_other", None)
    if node.name() != "MulBackward0" or not isinstance(other, torch.Tensor) or other.dim() == 0:
        return False
    values = torch.unique(other.detach())
    return len(values) <= 2 and bool((values[0] == 0) or len(values) == 1)


def inputs_of(node) -> list:
    return [n for n, _ in node.next_functions if n is not None]


def is_product(node) -> bool:
    name = node.name()
    if name in ("BmmBackward0", "MmBackward0", "BaddbmmBackward0"):
        return True
    # A batched matmul folds to `bmm` and views the result back.
    return name == "UnsafeViewBackward0" and any(n.name() in ("BmmBackward0", "MmBackward0") for n in inputs_of(node))


def scores_behind(node, budget: int = 8) -> bool:
    """Is `node` a product `q @ kᵀ`, seen through scales by numbers, masks, biases and conversions?"""
    if node is None or budget == 0:
        return False
    if is_product(node):
        return True
    name = node.name()
    nxt = inputs_of(node)
    if name in ("ToCopyBackward0", "CloneBackward0") or (
        name in ("MulBackward0", "DivBackward0") and saved_other_is_number(node)
    ):
        return bool(nxt) and scores_behind(nxt[0], budget - 1)
    if name in ("AddBackward0", "SubBackward0", "MaskedFillBackward0"):
        return any(scores_behind(n, budget - 1) for n in nxt)
    return False


def is_attention_weights(t: torch.Tensor) -> bool:
    node = t.grad_fn
    # `.contiguous()` leaves no node, or a `CloneBackward0` where it copies.
    while node is not None and (node.name() in ("ToCopyBackward0", "CloneBackward0") or is_dropout_mask(node)):
        node = inputs_of(node)[0] if inputs_of(node) else None
    if node is None or node.name() != "SoftmaxBackward0":
        return False
    dim = node._saved_dim
    dim = dim - 2**64 if dim >= 2**63 else dim
    if dim not in (-1, node._saved_result.dim() - 1):
        return False
    nxt = inputs_of(node)
    return bool(nxt) and scores_behind(nxt[0])
