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

With `--findings FILE.json` (stridelint's JSON output on a tree), every SL008's proposed
rewrite is run instead against the attention the code writes out: the scores' operands
and the operand the weights are applied to are read from the source (the note names the
scores' line, the finding is at the product), the rewrite's query, keys and values from
the help, and both are computed in float64 on random tensors, one per operand the two
share by their text (`q`, `self.iterative_inv(kernel_2)`), with the transposes and
permutes written on them applied. The roles are right when the outputs agree; `scale=scale`
and `attn_mask=mask` stand for the same factor and additive mask on both sides.
Exit status 0 when every rewrite agrees.
"""

from __future__ import annotations

import ast
import json
import math
import re
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


SHAPE = (2, 3, 5, 5)  # every permute and transpose of it multiplies with any other
APPLIED = {"transpose", "permute", "contiguous", "float", "double"}
PRODUCTS = {"matmul", "bmm"}


class Operands:
    """Values for the expressions the original and the rewrite share: a tensor per text."""

    def __init__(self):
        self.atoms: dict[str, torch.Tensor] = {}

    def atom(self, node: ast.AST) -> torch.Tensor:
        text = ast.unparse(node)
        if text not in self.atoms:
            self.atoms[text] = torch.randn(SHAPE, dtype=torch.float64)
        return self.atoms[text]

    def value(self, node: ast.AST):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.value(node.operand)
        if isinstance(node, ast.BinOp):
            ops = {ast.Mult: "__mul__", ast.Div: "__truediv__", ast.Add: "__add__",
                   ast.Sub: "__sub__", ast.MatMult: "__matmul__"}
            name = ops.get(type(node.op))
            left, right = self.value(node.left), self.value(node.right)
            if name and isinstance(left, torch.Tensor):
                return getattr(left, name)(right)
            return self.atom(node)
        if isinstance(node, ast.Attribute) and node.attr in ("mT", "T"):
            return self.value(node.value).mT
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in APPLIED:
            receiver = self.value(node.func.value)
            args = [self.value(a) for a in node.args]
            return getattr(receiver, node.func.attr)(*args).to(torch.float64)
        return self.atom(node)


def product_operands(node: ast.AST) -> list[ast.AST] | None:
    """`a` and `b` of `a @ b`, `torch.matmul(a, b)`, `a.matmul(b)`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return [node.left, node.right]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PRODUCTS:
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        return args if len(args) == 2 else [node.func.value, *args] if len(args) == 1 else None
    return None


def products_at(tree: ast.AST, line: int) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if getattr(n, "lineno", None) == line and product_operands(n)]


def rewrite_of(help_text: str) -> ast.Call | None:
    found = re.search(r"`(F\.scaled_dot_product_attention\([^`]*\))`", help_text)
    return ast.parse(found.group(1), mode="eval").body if found else None


def check_finding(finding: dict) -> str | None:
    """None when the rewrite computes what the code does, else why not."""
    source = open(finding["filename"], encoding="utf-8").read()
    tree = ast.parse(source)
    note = next((n for n in finding["notes"] if "score matrix is stored between" in n), "")
    said = re.search(r"between `(.*)` \(line (\d+)\)", note)
    rewrite = rewrite_of(finding.get("help") or "")
    if not said or rewrite is None or len(rewrite.args) != 3:
        return "no scores line or rewrite"
    compact = lambda t: re.sub(r"\s", "", t).rstrip("…")
    scores = [n for n in products_at(tree, int(said.group(2)))
              if compact(ast.unparse(n)).startswith(compact(said.group(1)))]
    row, column = finding["location"]["row"], finding["location"]["column"]
    output = [n for n in products_at(tree, row) if n.col_offset == column - 1]
    if not scores or not output:
        return "the scores or the product not found in the source"
    keywords = {k.arg: k.value for k in rewrite.keywords}
    values = Operands()
    query, keys = (values.value(o) for o in product_operands(scores[0]))
    applied_to = values.value(product_operands(output[0])[1])
    scale = 1.0 if ast.unparse(keywords.get("scale", ast.Constant(1.0))) == "1.0" else 0.3
    mask = values.atom(ast.Name("mask")) if "attn_mask" in keywords else None
    weights = (query @ keys) * scale + (mask if mask is not None else 0)
    written = weights.softmax(dim=-1) @ applied_to
    q, k, v = (values.value(a) for a in rewrite.args)
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    if written.shape != fused.shape or not torch.allclose(written, fused, atol=1e-10):
        return f"the outputs differ: {ast.unparse(rewrite)}"
    return None


def check_findings(path: str) -> int:
    findings = [f for f in json.load(open(path)) if f["code"] == "SL008"]
    failed = 0
    for f in findings:
        torch.manual_seed(0)
        why = check_finding(f)
        failed += why is not None
        print(f"{'ok ' if why is None else 'BAD'} {f['filename']}:{f['location']['row']}" + (f": {why}" if why else ""))
    print(f"{len(findings) - failed} of {len(findings)} SL008 rewrites compute what the code does")
    return 0 if findings and not failed else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--findings":
        sys.exit(check_findings(sys.argv[2]))
    sys.exit(main())
