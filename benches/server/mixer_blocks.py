"""Mixer and decoder blocks, written for the language server's latency benchmark: the end
of the 2,000-line model file `scripts/bench_server_latency.py` builds from the Python
fixtures (their torch oracle runs left out) and this file."""

import torch.nn as nn
import torch.nn.functional as F


class MixerTokenMlp(nn.Module):
    def __init__(self, num_tokens, hidden, expansion=4, drop=0.0):
        super().__init__()
        self.fc1 = nn.Linear(num_tokens, num_tokens * expansion)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(num_tokens * expansion, num_tokens)
        self.drop = nn.Dropout(drop)
        self.hidden = hidden

    def forward(self, x):
        # (B, N, C) -> mix along N: the tokens become the last dim.
        y = x.transpose(1, 2)
        y = self.drop(self.fc2(self.act(self.fc1(y))))
        return x + y.transpose(1, 2)


class MixerChannelMlp(nn.Module):
    def __init__(self, hidden, expansion=4):
        super().__init__()
        self.fc1 = nn.Linear(hidden, hidden * expansion)
        self.fc2 = nn.Linear(hidden * expansion, hidden)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, num_tokens, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.tokens = MixerTokenMlp(num_tokens, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.channels = MixerChannelMlp(hidden)

    def forward(self, x):
        x = self.tokens(self.norm1(x))
        return self.channels(self.norm2(x))


class ConvStem(nn.Module):
    def __init__(self, in_chans, hidden, patch):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, hidden, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(hidden)
        self.hidden = hidden

    def forward(self, images):
        x = self.proj(images)
        B, C, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        x = self.norm(x)
        return x, H, W


def tokens_to_map(x, H, W):
    B, N, C = x.shape
    return x.transpose(1, 2).reshape(B, C, H, W)


def map_to_tokens(feature_map):
    B, C, H, W = feature_map.shape
    return feature_map.permute(0, 2, 3, 1).reshape(B, H * W, C)


class Mixer(nn.Module):
    def __init__(self, in_chans=3, hidden=32, patch=4, image=32, depth=2, num_classes=10):
        super().__init__()
        self.stem = ConvStem(in_chans, hidden, patch)
        num_tokens = (image // patch) ** 2
        self.blocks = nn.ModuleList([MixerBlock(num_tokens, hidden) for _ in range(depth)])
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, images):
        x, H, W = self.stem(images)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


class UpsampleDecoder(nn.Module):
    def __init__(self, hidden, out_chans, scale=2):
        super().__init__()
        self.proj = nn.Linear(hidden, out_chans * scale * scale)
        self.scale = scale
        self.out_chans = out_chans

    def forward(self, x, H, W):
        B, N, C = x.shape
        s = self.scale
        y = self.proj(x)
        y = y.view(B, H, W, s, s, self.out_chans)
        y = y.permute(0, 5, 1, 3, 2, 4)
        return y.reshape(B, self.out_chans, H * s, W * s)


class SegmentationHead(nn.Module):
    def __init__(self, hidden, num_classes):
        super().__init__()
        self.decoder = UpsampleDecoder(hidden, hidden // 2)
        self.classifier = nn.Conv2d(hidden // 2, num_classes, kernel_size=1)

    def forward(self, tokens, H, W):
        feature_map = self.decoder(tokens, H, W)
        logits = self.classifier(feature_map)
        B, K, Hs, Ws = logits.shape
        return logits.permute(0, 2, 3, 1).reshape(-1, K)


def pixel_accuracy(logits, labels):
    predicted = logits.argmax(dim=-1)
    return (predicted == labels.view(-1)).float().mean()
