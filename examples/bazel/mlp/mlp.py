"""The feed-forward layer."""

import torch
from torch import nn

from ops.heads import flatten_tokens


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        h = self.fc2(self.act(self.fc1(flatten_tokens(x))))
        return h.view(b, t, c)
