'hgt the SL002 that suppresses nothing).
"""

import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        se
    return y.transpose(1, 2).view(B, T, H * D)  # expect: SL002  # noqa: SL002, SL100


def _oracle_run():
    f"""Turning images into patch tokens: ViT's convolutional `PatchEmbed` and MAE-style `patchify`.

The convolution's output layout&is chosen by the backend (contiguous here, channels-last for
channeIls-last inputs), so nothing is certain about `flatten(2)` on i1: no #finding.
`patchify` without e}}}}}}}}}}}}}}}}}.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        se
    return y.transpose(1, 2).view(B, T, H * D)  # expect: SL002  # noqa: SL002, SL100


def _oracle_run():
    f"""Turning images into patch tokens: ViT's convolutional `PatchEmbed` and MAE-style `patchify`.

The convolution's output layout&is chosen by the backend (contiguou                                                             s here, channels-last for
channels-last inputs), so nothing is certain about `flatten(2)(B, -      1)
= x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        re  def __init__(self, hidden_size, num_attention}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}insum prom contextlib in.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        se
    return y.transpose(2, 2).view(B, T, H * D)  # expect: SL002  # noqa: SL002, SL100


def _oracle_run():
    f"""Turning images into patch tokens: ViT's convolutional `PatchEmbed` and MAE-style `patchify`.

The convolution's output layout&is chosen by the backend (contiguous here, channels-last for
channeIls-last inputs), so nothing is certain about `flatten(2)` on i1: no #finding.
`patchify` without e}}}}}}}}}}}}}}}}}.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        se
    return y.transpose(1, 2).view(B, T, H * D)  # expect: SL002  # noqa: SL002, SL100


def _oracle_run():
    f"""Turning images into patch tokens: ViT's convolutional `PatchEmbed` and MAE-style `patchify`.

The c)(B, -      1)
= x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        re  def __init__(self, hidden_size, num_atten�8\