"""Power and VRAM readers: NVML (nvidia-ml-py), amdsmi (Python bindings), rocm-smi (CLI), fake.

`open_backend("auto")` tries NVML, then amdsmi, then rocm-smi; `fake` is for tests and demos.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from gpuscope.errors import ConfigError, ToolError
from gpuscope.samplers.backends.base import Backend, BackendUnavailable


def _nvml() -> Backend:
    from gpuscope.samplers.backends.nvml import open_nvml

    return open_nvml()


def _amdsmi() -> Backend:
    from gpuscope.samplers.backends.amdsmi import open_amdsmi

    return open_amdsmi()


def _rocm_smi() -> Backend:
    from gpuscope.samplers.backends.rocm_smi import open_rocm_smi

    return open_rocm_smi()


def _fake() -> Backend:
    from gpuscope.samplers.backends.fake import FakeBackend

    return FakeBackend()


OPENERS: dict[str, Callable[[], Backend]] = {
    "nvml": _nvml,
    "amdsmi": _amdsmi,
    "rocm-smi": _rocm_smi,
    "fake": _fake,
}
AUTO_ORDER = ("nvml", "amdsmi", "rocm-smi")


Which = Callable[[str], "str | None"]


def _installed(name: str, which: Which) -> bool:
    if name in ("nvml", "amdsmi"):
        return importlib.util.find_spec("pynvml" if name == "nvml" else "amdsmi") is not None
    return name == "fake" or which("rocm-smi") is not None


def require_installed(name: str = "auto", which: Which | None = None) -> None:
    """Fail fast (ToolError, same advice as open_backend) when no candidate backend is even
    installed. Cheap: nothing is initialised, so `gpuscope run` can check before it starts.
    `which` finds a program on the PATH the command will get (default: ours)."""
    if which is None:
        import shutil

        which = shutil.which
    if name != "auto" and name not in OPENERS:
        raise ConfigError(f"unknown sampler backend {name!r}: expected auto, {', '.join(OPENERS)}")
    candidates = AUTO_ORDER if name == "auto" else (name,)
    if not any(_installed(c, which) for c in candidates):
        open_backend(name)  # raises with each candidate's reason


def open_backend(name: str = "auto") -> Backend:
    """The named backend, or the first that works (`auto`); ToolError says what to install."""
    if name != "auto" and name not in OPENERS:
        raise ConfigError(f"unknown sampler backend {name!r}: expected auto, {', '.join(OPENERS)}")
    reasons: list[str] = []
    for candidate in AUTO_ORDER if name == "auto" else (name,):
        try:
            return OPENERS[candidate]()
        except BackendUnavailable as why:
            reasons.append(f"{candidate}: {why}")
    raise ToolError(
        "no GPU power/VRAM backend works here ("
        + "; ".join(reasons)
        + "): install nvidia-ml-py on NVIDIA, or the amdsmi Python package or rocm-smi on AMD ROCm"
    )


__all__ = [
    "AUTO_ORDER",
    "OPENERS",
    "Backend",
    "BackendUnavailable",
    "open_backend",
    "require_installed",
]
