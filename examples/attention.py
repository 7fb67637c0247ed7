"""A causal self-attention block in the style of nanoGPT, with two layout bugs.

Run `stridelint examples/attention.py` to see them.
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att, dim=-1)
        y = att @ v
        # Bug: the transposed tensor is not contiguous; this view raises at run time.
        y = y.transpose(1, 2).view(B, T, C)
        return self.c_proj(y)


def merge_heads(y):
    """(B, H, T, D) -> (B, T, H*D); reshape silently copies the whole tensor."""
    B, H, T, D = y.shape
    return y.permute(0, 2, 1, 3).reshape(B, T, H * D)
