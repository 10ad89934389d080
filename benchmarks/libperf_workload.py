"""A small transformer trained for a few steps in bf16 — the program `libperf_gpu_check.py`
records with `gpuscope run --tools cublaslt_trace,nccl_trace` and then replays with
`gpuscope libperf`. Two nn.TransformerEncoderLayer (d 512, 8 heads, FF 2048, batch-first), a
Linear head, a batched score GEMM (torch.bmm with a transposed operand), AdamW, and one NCCL
all-reduce of the gradients per step in a one-rank process group. Prints one line.

    python3 benchmarks/libperf_workload.py [--steps 3]
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn

D, HEADS, FF, SEQ, BATCH, LAYERS, VOCAB = 512, 8, 2048, 256, 8, 2, 1024


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.encoder(x)
        scores = torch.bmm(h[:, :, :64], h[:, :, 64:128].transpose(1, 2))  # (B, S, S)
        return self.head(h), scores


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    steps = parser.parse_args().steps
    torch.manual_seed(0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    model = Tiny().cuda().to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, SEQ, D, device="cuda", dtype=torch.bfloat16)
    target = torch.randint(0, VOCAB, (BATCH * SEQ,), device="cuda")
    flat = torch.zeros(sum(p.numel() for p in model.parameters()), device="cuda")
    for _ in range(steps):
        optimizer.zero_grad()
        logits, scores = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB).float(), target)
        (loss + scores.float().mean()).backward()
        dist.all_reduce(flat)  # one gradient-sized all-reduce per step, as DDP would
        optimizer.step()
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"libperf workload done: {steps} steps, loss {loss.item():.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
