"""Run SL008's example (rules/lints/SL008.md) written out and rewritten with
`F.scaled_dot_product_attention`, and compare: the outputs, and how many tensors of the
score matrix's shape (B, heads, T, T) each form allocates.

Both are run in eval mode (dropout draws differ between the two forms), without gradients,
as inference runs them. The allocations are counted with a dispatch mode that sees every
ATen op: an output with as many elements as the score matrix, whose storage is none of the
op's inputs', is a new matrix (`bmm` writes it as (B·heads, T, T)). On the CPU, SDPA then
runs its fused flash kernel, which allocates none. (While training with dropout the CPU
falls back to SDPA's math kernel, which does store the matrix; CUDA's flash and
memory-efficient kernels apply dropout without it.)

Then SL009's claim about the copies before SDPA: q, k, v as the `permute` leaves them
(strided, last dim of stride 1) against their `.contiguous()` copies. SDPA gives the same
output, and the profiler counts the same bytes allocated inside the call: it reads the
strided tensors without copying them.

Usage: .venv-realcode/bin/python scripts/oracle/check_sdpa_rewrite.py
Exit status 0 when the outputs agree, the rewrite allocates no score matrix and SDPA
allocates no more for strided inputs than for contiguous ones.
"""

from __future__ import annotations

import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode


class Attention(nn.Module):
    def __init__(self, dim, heads, block_size, fused):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)
        self.heads = heads
        self.fused = fused
        self.register_buffer("causal", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        if self.fused:
            y = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=self.drop.p if self.training else 0.0
            )
        else:
            att = q @ k.transpose(-2, -1) / math.sqrt(C // self.heads)
            att = att.masked_fill(self.causal[:T, :T] == 0, float("-inf"))
            att = att.softmax(dim=-1)
            att = self.drop(att)
            y = att @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class CountMatrices(TorchDispatchMode):
    """Counts op outputs of `numel` elements that own new storage."""

    def __init__(self, numel):
        super().__init__()
        self.numel = numel
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = [a for a in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
        ptrs = {a.untyped_storage().data_ptr() for a in inputs}
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel() == self.numel and t.untyped_storage().data_ptr() not in ptrs:
                self.ops.append(func.__name__)
        return out


def main() -> int:
    torch.manual_seed(0)
    B, T, C, heads = 2, 64, 64, 4
    written = Attention(C, heads, block_size=T, fused=False)
    fused = Attention(C, heads, block_size=T, fused=True)
    fused.load_state_dict(written.state_dict())
    x = torch.randn(B, T, C)
    with torch.no_grad():
        diff = (written.eval()(x) - fused.eval()(x)).abs().max().item()
    counts = {}
    for name, module in (("written out", written), ("sdpa", fused)):
        mode = CountMatrices(B * heads * T * T)
        with torch.no_grad(), mode:
            module(x)
        counts[name] = mode.ops
    print(f"torch {torch.__version__}; B={B}, T={T}, C={C}, heads={heads}")
    print(f"largest difference of the outputs (float32): {diff:.1e}")
    for name, ops in counts.items():
        print(f"{name}: {len(ops)} new score matrices in a forward pass: {', '.join(ops) or 'none'}")
    ok = diff < 1e-5 and not counts["sdpa"]
    ok &= strided_inputs_are_not_copied()
    print("match" if ok else "MISMATCH")
    return 0 if ok else 1


def sdpa_allocations(q, k, v) -> tuple[torch.Tensor, int]:
    """SDPA's output and the bytes allocated inside the call (CPU profiler)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = F.scaled_dot_product_attention(q, k, v)
    top = [e for e in prof.key_averages() if e.key == "aten::scaled_dot_product_attention"]
    return out, top[0].cpu_memory_usage if top else -1


def strided_inputs_are_not_copied() -> bool:
    B, T, heads, D = 4, 512, 8, 64
    qkv = torch.randn(B, T, 3, heads, D)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    strided, strided_bytes = sdpa_allocations(q, k, v)
    dense, dense_bytes = sdpa_allocations(q.contiguous(), k.contiguous(), v.contiguous())
    same = torch.allclose(strided, dense, atol=1e-6)
    print(f"SDPA on strided q, k, v (strides {q.stride()}): {strided_bytes} bytes allocated in the call; "
          f"on their contiguous copies: {dense_bytes}; one input is {q.numel() * 4} bytes; "
          f"outputs {'equal' if same else 'DIFFERENT'}")
    return same and 0 <= strided_bytes <= dense_bytes


if __name__ == "__main__":
    sys.exit(main())
