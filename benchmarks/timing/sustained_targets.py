"""GEMMs of ≥ 1 ms for `benchmarks/timing/bench_sustained.py` (and its CLI runs): all of them
power-capped on an H100/H200 in a sustained loop. Random data, never zeros (zeros draw less
power and run faster).

    gpuscope bench benchmarks/timing/sustained_targets.py:mm_bf16_8192
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

Target = tuple[Callable[..., Any], tuple[Any, ...]]


def mm_bf16_8192() -> Target:
    """8192³ bf16 matmul (≈ 1.4 ms at boost on an H100)."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    return torch.matmul, (a, b)


def linear_x4() -> Target:
    """Four F.linear 2048×8192 · (8192×8192)ᵀ bf16 in a row (≈ 1.4 ms)."""
    x = torch.randn(2048, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def four(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for _ in range(4):
            out = F.linear(x, w)
        return out

    return four, (x, w)


def mm_fp16_16384() -> Target:
    """16384×8192 · 8192×8192 fp16 matmul (≈ 2.9 ms)."""
    a = torch.randn(16384, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    return torch.matmul, (a, b)


def linear_x1() -> Target:
    """One F.linear 2048×8192×8192 bf16 (≈ 0.35 ms): the case of issue 11, under 1 ms."""
    x = torch.randn(2048, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    return F.linear, (x, w)


TARGETS: dict[str, Callable[[], Target]] = {
    "mm_bf16_8192": mm_bf16_8192,
    "linear_x4": linear_x4,
    "mm_fp16_16384": mm_fp16_16384,
    "linear_x1": linear_x1,
}
