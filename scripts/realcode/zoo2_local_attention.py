"""local-attention 1.11.2: LocalAttention (causal / bidirectional, shared qk, autopad, xpos),
LocalMHA and LocalTransformer with tiny sizes; eval and train (dropout)."""

import torch

from zoo2 import B, Config, constructed, randn

H, N, D = 2, 32, 8


def _qkv(gen):
    return (randn(B, H, N, D, gen=gen), randn(B, H, N, D, gen=gen), randn(B, H, N, D, gen=gen))


def _tokens(gen):
    return torch.randint(0, 64, (B, N), generator=gen)


L = "local_attention."

# name -> (class, constructor kwargs, input maker)
SPECS = {
    "LocalAttention": (L + "LocalAttention", dict(window_size=8, dim=D), _qkv),
    "LocalAttention-causal": (L + "LocalAttention", dict(window_size=8, causal=True, dim=D, dropout=0.1), _qkv),
    "LocalAttention-autopad-exact": (L + "LocalAttention", dict(window_size=6, autopad=True, exact_windowsize=True,
                                                            causal=True, dim=D), _qkv),
    "LocalAttention-xpos": (L + "LocalAttention", dict(window_size=8, causal=True, dim=D, use_xpos=True), _qkv),
    "LocalAttention-look2": (L + "LocalAttention", dict(window_size=8, look_backward=2, look_forward=1, dim=D,
                                                    use_rotary_pos_emb=False), _qkv),
    "LocalMHA": (L + "LocalMHA", dict(dim=32, window_size=8, dim_head=8, heads=4, causal=True),
                 lambda gen: randn(B, N, 32, gen=gen)),
    "LocalMHA-prenorm-qknorm": (L + "LocalMHA", dict(dim=32, window_size=8, dim_head=8, heads=4, prenorm=True,
                                                 qk_rmsnorm=True), lambda gen: randn(B, N, 32, gen=gen)),
    "LocalTransformer": (L + "LocalTransformer", dict(num_tokens=64, max_seq_len=N, dim=32, depth=2,
                                                  local_attn_window_size=8, dim_head=8, heads=4), _tokens),
}


def configs():
    return {name: Config(constructed(*spec), train=True) for name, spec in SPECS.items()}
