"""Runs one step of the block on random data."""

import torch

from model.block import Block


def main():
    block = Block(64, 4)
    x = torch.randn(2, 16, 64)
    y = block(x)
    y.sum().backward()


if __name__ == "__main__":
    main()
