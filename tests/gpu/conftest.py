"""Shared fixture for GPU tests: torch with a usable CUDA or ROCm device, else skip."""

from __future__ import annotations

from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def torch_gpu() -> ModuleType:
    torch = pytest.importorskip("torch", reason="GPU tests need PyTorch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA or ROCm GPU visible to PyTorch")
    return torch
