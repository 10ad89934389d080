"""Targets for a `gpuscope bench` CLI smoke test on a GPU (see benchmarks/timing/results/README.md).

cd benchmarks/timing && gpuscope bench cli_smoke.py:mm && gpuscope bench cli_smoke.py:small
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def mm() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A 2048³ bf16 matmul (≈ 24 µs on an H200: stays in hot mode)."""
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    return torch.matmul, (a, a)


def small() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A 1 K fp32 in-place add (≈ 0.8 µs: auto mode switches to the profiler's kernel time)."""
    x = torch.zeros(1024, device="cuda")
    return (lambda: x.add_(1)), ()
