"""encodec 0.1.1: EncodecModel built without weights (`_get_model`: SEANet encoder / decoder,
residual VQ) at the 24 kHz and 48 kHz settings and smaller ones, on 0.05 s of audio; eval and
train (the quantizer's k-means init and EMA updates, its commitment loss)."""

import torch

from zoo2 import B, Config, randn


def _codec(sample_rate, channels, causal, norm, normalize, segment, bandwidths):
    def build(gen, fused):
        from encodec import EncodecModel

        model = EncodecModel._get_model(bandwidths, sample_rate, channels, causal=causal, model_norm=norm,
                                        audio_normalize=normalize, segment=segment)
        model.set_target_bandwidth(bandwidths[0])
        return model, randn(B, channels, sample_rate // 20, gen=gen)

    return build


def _lm(gen, fused):
    from encodec.model import LMModel

    lm = LMModel(n_q=4, card=64, dim=32, num_layers=2, past_context=8)
    return lm, torch.randint(0, 65, (B, 4, 6), generator=gen)


def _rvq(gen, fused):
    from encodec.quantization import ResidualVectorQuantizer

    q = ResidualVectorQuantizer(dimension=32, n_q=4, bins=64)
    return q, lambda m: m(randn(B, 32, 10, gen=gen), sample_rate=75, bandwidth=1.5)


def configs():
    return {
        "EncodecModel-24khz": Config(_codec(24_000, 1, True, "weight_norm", False, None, [1.5, 3.0, 6.0]),
                                     train=True),
        "EncodecModel-48khz": Config(_codec(48_000, 2, False, "time_group_norm", True, 0.02, [3.0, 6.0]), train=True),
        "LMModel": Config(_lm),
        "ResidualVectorQuantizer": Config(_rvq, train=True),
    }
