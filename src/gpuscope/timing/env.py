"""The environment a measurement was taken in: device, driver, runtime, versions, git sha."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuscope._version import __version__
from gpuscope.timing.measurement import Environment


def git_sha(where: Path | None = None) -> str | None:
    """HEAD of the git repository containing `where` (default: the working directory)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where or Path.cwd(),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and sha else None


def _base(where: Path | None) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": f"{sys.platform}-{platform.machine()}",
        "gpuscope": __version__,
        "git_sha": git_sha(where),
    }


def cpu_environment(where: Path | None = None) -> Environment:
    """Environment of a host wall-clock measurement."""
    cpu = platform.processor() or platform.machine() or "cpu"
    return Environment(vendor="cpu", device=cpu, **_base(where))


def nvidia_driver() -> str | None:
    """The NVIDIA kernel driver's version, from NVML or /proc."""
    try:
        with warnings.catch_warnings():  # some pynvml builds warn on import about packaging
            warnings.simplefilter("ignore")
            import pynvml

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # NVML absent or unusable: fall back to the kernel module's banner
        pass
    try:
        banner = Path("/proc/driver/nvidia/version").read_text().split()
    except OSError:
        return None
    numbers = [word for word in banner if word.count(".") >= 1 and word[0].isdigit()]
    return numbers[0] if numbers else None


def amd_driver() -> str | None:
    """The amdgpu driver's version where the kernel module exposes it."""
    try:
        return Path("/sys/module/amdgpu/version").read_text().strip() or None
    except OSError:
        return None


def gpu_environment(torch: ModuleType, index: int, where: Path | None = None) -> Environment:
    """Environment of a GPU measurement on device `index`."""
    props = torch.cuda.get_device_properties(index)
    hip = getattr(torch.version, "hip", None)
    return Environment(
        vendor="amd" if hip else "nvidia",
        device=str(props.name),
        device_index=index,
        driver=amd_driver() if hip else nvidia_driver(),
        runtime=f"hip {hip}" if hip else f"cuda {torch.version.cuda}",
        torch=str(torch.__version__),
        l2_bytes=int(getattr(props, "L2_cache_size", 0) or 0) or None,
        multiprocessors=int(props.multi_processor_count),
        **_base(where),
    )


def visible_index(index: int) -> int:
    """Physical index of visible device `index` when CUDA/HIP_VISIBLE_DEVICES lists integers."""
    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        listed = [p.strip() for p in os.environ.get(name, "").split(",") if p.strip()]
        if listed and all(p.isdigit() for p in listed) and index < len(listed):
            return int(listed[index])
    return index
