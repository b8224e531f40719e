"""Export a tiny transformer block from PyTorch (CPU) as tests/data/transformer_block.onnx.

A real framework's export: multi-head self-attention (d_model 16, 2 heads, sequence 8) whose
head split and merge are Reshape + Transpose, a causal mask broadcast with Expand, and a
feed-forward layer. The batch dimension is dynamic ("batch"), so extracting its layout ops
needs ``--dim batch=N``.

Run with a PyTorch install (tests do not need one)::

    python3 -m venv /tmp/vt && /tmp/vt/bin/pip install torch onnx onnxscript numpy
    /tmp/vt/bin/python scripts/export_transformer_block.py [OUT.onnx]
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
import torch
from torch import nn

D_MODEL, HEADS, SEQ = 16, 2, 8
IR_VERSION = 10  # what onnxruntime >= 1.20 loads


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)
        self.ff = nn.Sequential(nn.Linear(D_MODEL, 2 * D_MODEL), nn.GELU(), nn.Linear(2 * D_MODEL, D_MODEL))
        self.register_buffer("causal", torch.tril(torch.ones(SEQ, SEQ)).bool())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.norm1(x)
        q, k, v = self.qkv(h).split(D_MODEL, dim=-1)
        q = q.reshape(b, s, HEADS, d // HEADS).transpose(1, 2)
        k = k.reshape(b, s, HEADS, d // HEADS).transpose(1, 2)
        v = v.reshape(b, s, HEADS, d // HEADS).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (d // HEADS) ** 0.5
        mask = self.causal[None, None].expand(b, HEADS, s, s)
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = scores.softmax(dim=-1) @ v
        attn = attn.transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(attn)
        return x + self.ff(self.norm2(x))


def main(out: str = "tests/data/transformer_block.onnx") -> None:
    torch.manual_seed(0)
    model = Block().eval()
    example = torch.randn(2, SEQ, D_MODEL)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.onnx.export(model, (example,), dynamo=True, input_names=["x"], output_names=["y"],
                                dynamic_shapes={"x": {0: batch}}, opset_version=18, optimize=True)
    proto = program.model_proto
    proto.ir_version = IR_VERSION
    proto.producer_name = "pytorch"
    proto.producer_version = torch.__version__
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, out)
    onnx.checker.check_model(out)
    print(f"wrote {out}: {sorted({n.op_type for n in proto.graph.node})}")


if __name__ == "__main__":
    main(*sys.argv[1:])
