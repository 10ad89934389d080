"""Lazy access to PyTorch: gpuscope imports torch only when a GPU mode is asked for."""

from __future__ import annotations

from types import ModuleType

from gpuscope.errors import ToolError


def gpu_torch() -> ModuleType | None:
    """torch when it is installed and sees a CUDA or ROCm device, else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def require_gpu_torch(mode: str) -> ModuleType:
    """torch with a usable device, or a ToolError saying why `mode` cannot run here."""
    torch = gpu_torch()
    if torch is None:
        raise ToolError(
            f"mode {mode!r} needs PyTorch with a CUDA or ROCm GPU, and none is usable here; "
            "install torch with GPU support or use mode 'cpu' (host wall clock)"
        )
    return torch
