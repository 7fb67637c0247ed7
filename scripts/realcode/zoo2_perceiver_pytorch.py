"""perceiver-pytorch 0.11.0: Perceiver (and its gated / mixed-latents variants), PerceiverIO,
PerceiverLM with tiny sizes on 2x3x8x8 images or 2x16 tokens; one cross-attention head (the
default) and two."""

import torch

from zoo2 import B, Config, constructed, randn

_SMALL = dict(num_freq_bands=4, depth=2, max_freq=10.0, input_channels=3, input_axis=2, num_latents=8,
              latent_dim=32, cross_heads=1, latent_heads=4, cross_dim_head=8, latent_dim_head=8, num_classes=10)


def _image(gen):
    return randn(B, 8, 8, 3, gen=gen)


# name -> (class, constructor kwargs, input maker)
SPECS = {
    "Perceiver": ("perceiver_pytorch.perceiver_pytorch.Perceiver", _SMALL, _image),
    "Perceiver-self2-residual": ("perceiver_pytorch.perceiver_pytorch.Perceiver",
                                 dict(_SMALL, self_per_cross_attn=2, attn_residual=True, attn_residual_rank=4),
                                 _image),
    "Perceiver-inverted": ("perceiver_pytorch.perceiver_pytorch.Perceiver",
                           dict(_SMALL, inverted_cross_attn=True), _image),
    "Perceiver-1d-nofourier": ("perceiver_pytorch.perceiver_pytorch.Perceiver",
                               dict(_SMALL, input_axis=1, fourier_encode_data=False),
                               lambda gen: randn(B, 12, 3, gen=gen)),
    "Perceiver-gated": ("perceiver_pytorch.gated.Perceiver",
                        {k: v for k, v in _SMALL.items()}, _image),
    "Perceiver-mixed-latents": ("perceiver_pytorch.mixed_latents.Perceiver", _SMALL, _image),
    "PerceiverIO": ("perceiver_pytorch.perceiver_io.PerceiverIO", dict(
        depth=2, dim=32, queries_dim=16, logits_dim=10, num_latents=8, latent_dim=32, cross_heads=1,
        latent_heads=4, cross_dim_head=8, latent_dim_head=8),
        lambda gen: (randn(B, 12, 32, gen=gen), None, randn(B, 6, 16, gen=gen))),
    "PerceiverIO-residual-inverted": ("perceiver_pytorch.perceiver_io.PerceiverIO", dict(
        depth=2, dim=32, queries_dim=16, logits_dim=10, num_latents=8, latent_dim=32, latent_heads=4,
        cross_dim_head=8, latent_dim_head=8, decoder_ff=True, attn_residual=True, attn_residual_rank=4,
        inverted_cross_attn=True),
        lambda gen: (randn(B, 12, 32, gen=gen), None, randn(B, 6, 16, gen=gen))),
    "PerceiverIO-cross2": ("perceiver_pytorch.perceiver_io.PerceiverIO", dict(
        depth=1, dim=32, queries_dim=16, logits_dim=10, num_latents=8, latent_dim=32, cross_heads=2,
        latent_heads=4, cross_dim_head=8, latent_dim_head=8),
        lambda gen: (randn(B, 12, 32, gen=gen), None, randn(B, 6, 16, gen=gen))),
    "Perceiver-cross2": ("perceiver_pytorch.perceiver_pytorch.Perceiver", dict(_SMALL, cross_heads=2), _image),
    "PerceiverLM": ("perceiver_pytorch.perceiver_io.PerceiverLM", dict(
        dim=32, num_tokens=100, max_seq_len=32, depth=2, num_latents=8, latent_dim=32, latent_heads=4,
        cross_dim_head=8, latent_dim_head=8),
        lambda gen: torch.randint(0, 100, (B, 16), generator=gen)),
}


def configs():
    return {name: Config(constructed(*spec)) for name, spec in SPECS.items()}
