"""A small PyTorch model for `gpuscope run` on a real GPU: conv (cuDNN), linear layers
(cuBLASLt), a bmm (cuBLAS) and one NCCL all-reduce in a single-rank process group, trained for
a few steps. Unmodified by gpuscope: the profilers and tracers are injected from outside.

    python3 tests/gpu/small_model.py [--steps N]
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn


class Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(16 * 16 * 16, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv(x))
        x = nn.functional.max_pool2d(x, 2).flatten(1)
        return self.fc2(torch.relu(self.fc1(x)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    steps = parser.parse_args().steps
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1)
    model = Small().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    a, b = torch.randn(8, 64, 32, device="cuda"), torch.randn(8, 32, 16, device="cuda")
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y) + torch.bmm(a, b).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()
    torch.cuda.synchronize()
    print(f"small_model: {steps} steps, loss {loss.item():.4f}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
