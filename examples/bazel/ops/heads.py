"""Helpers shared by the model's layers."""

import torch


def split_heads(x, n_head):
    """(B, T, C) -> (B, n_head, T, C // n_head): a transposed view, not a copy."""
    b, t, c = x.shape
    return x.view(b, t, n_head, c // n_head).transpose(1, 2)


def merge_heads(x):
    """(B, n_head, T, D) -> (B, T, n_head * D), copying only when it must."""
    b, t = x.shape[0], x.shape[2]
    return x.transpose(1, 2).reshape(b, t, -1)


def flatten_tokens(x):
    """(B, T, C) -> (B * T, C)."""
    return x.reshape(-1, x.shape[-1])
