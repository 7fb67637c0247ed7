"""Causal self-attention with a value residual."""

import math

import torch
from torch import nn

from ops.heads import merge_heads, split_heads


class SelfAttention(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = split_heads(q, self.n_head)
        k = split_heads(k, self.n_head)
        v = split_heads(v, self.n_head)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        y = att.softmax(dim=-1) @ v
        # The values skip the attention; `v` is the transposed view `split_heads` returns.
        return self.proj(merge_heads(y) + v.view(B, T, C))
