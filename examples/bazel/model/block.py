"""A transformer block: attention, then the feed-forward layer."""

import torch
from torch import nn

from attention.attention import SelfAttention
from mlp.mlp import Mlp


class Block(nn.Module):
    def __init__(self, dim, n_head):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, n_head)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))
