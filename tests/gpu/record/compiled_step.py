"""A torch.compile'd transformer-ish block, one profiled step window (issue 20's torch.compile
recording): Inductor's triton_* kernels, CUDA graphs off (mode=default) and on
(mode="reduce-overhead") in two traces.

    python tests/gpu/record/compiled_step.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int = 1024) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))


def record(mode: str, out: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(*(Block() for _ in range(4))).cuda().to(torch.bfloat16)
    step = torch.compile(model, mode=mode)
    x = torch.randn(16, 256, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        for _ in range(5):
            step(x)
        torch.cuda.synchronize()
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
            for _ in range(5):
                step(x)
            torch.cuda.synchronize()
    prof.export_chrome_trace(str(out / f"compiled_{mode.replace('-', '_')}_h100.json"))


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for mode in ("default", "reduce-overhead"):
        record(mode, folder)
