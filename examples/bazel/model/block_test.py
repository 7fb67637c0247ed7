"""The block keeps the shape of its input."""

import torch

from model.block import Block


def test_shape():
    x = torch.randn(2, 16, 64)
    assert Block(64, 4)(x).shape == x.shape


if __name__ == "__main__":
    test_shape()
