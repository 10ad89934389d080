"""`gpuscope doctor`: can each tool work here, and what would make its numbers wrong?

Reports the GPUs, driver and runtime; for every tool, whether it can run (the same check
`gpuscope run` does before starting) and what it needs; environment variables that distort
profiles; and what the device supports (consumer RDNA such as gfx1151 has no hardware
counters for rocprofv3's counter presets).

    >>> report = diagnose(load_catalog())          # doctest: +SKIP
    >>> [t.name for t in report.tools if not t.ok]  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuscope.errors import GpuscopeError
from gpuscope.schemas import DOCTOR as SCHEMA
from gpuscope.tools.config import ToolConfig
from gpuscope.tools.host import HostInfo, detect_host
from gpuscope.tools.registry import Registry, default_registry
from gpuscope.tools.tool import RunContext

COUNTER_TOOLS = (
    "rocprofv3_compute", "rocprofv3_memory", "rocprofv3_communication", "rocprofv3_full",
    "rocprofv3_agent_counter", "rocprofv3_pc_sampling",
)  # fmt: skip
LIBRARIES = {
    "rocblas_trace": "rocblas", "hipblaslt_trace": "hipblaslt", "tensile_trace": "rocblas",
    "miopen_trace": "MIOpen", "rccl_trace": "rccl", "nccl_trace": "nccl",
    "cublas_trace": "cublas", "cublaslt_trace": "cublasLt", "cudnn_trace": "cudnn",
}  # fmt: skip
SAMPLER_BACKENDS = {"nvml": "pynvml", "amdsmi": "amdsmi"}
SAMPLER_CLIS = ("amd-smi", "rocm-smi")
NO_BACKEND = "install nvidia-ml-py (NVIDIA) or amdsmi (AMD), or put amd-smi/rocm-smi on PATH"


@dataclass(frozen=True)
class ToolStatus:
    name: str
    ok: bool
    detail: str  # what was found, or what is missing and how to fix it
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    id: str
    message: str
    action: str


@dataclass(frozen=True)
class DoctorReport:
    host: HostInfo
    tools: tuple[ToolStatus, ...]
    traps: tuple[Finding, ...]
    device: tuple[Finding, ...]
    sampler_backends: Mapping[str, bool] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **asdict(self)}


def diagnose(
    catalog: Mapping[str, ToolConfig],
    *,
    env: Mapping[str, str] | None = None,
    host: HostInfo | None = None,
    registry: Registry | None = None,
    root: Path = Path("/"),
) -> DoctorReport:
    env = dict(os.environ if env is None else env)
    host = host if host is not None else detect_host(root, env)
    ctx = RunContext(Path("."), "", ("true",), env, vendor=host.vendor)
    registry = registry or default_registry()
    backends = sampler_backends(ctx.which)
    statuses = [_status(c, ctx, registry, backends) for _, c in sorted(catalog.items())]
    return DoctorReport(
        host=host,
        tools=tuple(_limit(statuses, host)),
        traps=tuple(env_traps(env) + profiling_permission(root)),
        device=tuple(device_support(host)),
        sampler_backends=backends,
    )


def _status(
    config: ToolConfig, ctx: RunContext, registry: Registry, backends: Mapping[str, bool]
) -> ToolStatus:
    needs = _needs(config)
    if config.vendor and ctx.vendor and config.vendor != ctx.vendor:
        detail = f"for {config.vendor} GPUs; this is {ctx.vendor}"
        return ToolStatus(config.name, False, detail, needs)
    if config.kind == "sampler" and not any(backends.values()):
        return ToolStatus(config.name, False, "no sampler backend: " + NO_BACKEND, needs)
    try:
        registry.kind_of(config).factory([config]).check(ctx)
    except GpuscopeError as error:
        return ToolStatus(config.name, False, str(error), needs)
    return ToolStatus(config.name, True, _found(config, needs), needs)


def _needs(config: ToolConfig) -> tuple[str, ...]:
    needs = [f"{config.cmd[0]} on PATH"] if config.cmd else []
    if config.name in LIBRARIES:
        needs.append(f"lib{LIBRARIES[config.name]} loaded by the program")
    if config.kind == "sampler":
        needs.append("NVML (nvidia-ml-py), amdsmi, or amd-smi/rocm-smi on PATH")
    if config.kind == "torch_profiler":
        needs.append("a Python program that imports torch")
    return tuple(needs)


def _found(config: ToolConfig, needs: tuple[str, ...]) -> str:
    library = LIBRARIES.get(config.name)
    if library is None:
        return "ready" if needs else "ready (nothing to install)"
    where = ctypes.util.find_library(library)
    seen = f"lib{library} found ({where})" if where else f"lib{library} not in system paths"
    return f"ready; {seen} (frameworks such as PyTorch may bundle their own)"


def _limit(statuses: list[ToolStatus], host: HostInfo) -> list[ToolStatus]:
    if not any(not has_counters(g.arch) for g in host.gpus if g.vendor == "AMD"):
        return statuses
    note = "this GPU has no hardware counters for rocprofv3 (consumer RDNA)"
    return [replace(s, ok=False, detail=note) if s.name in COUNTER_TOOLS else s for s in statuses]


def has_counters(arch: str | None) -> bool:
    """CDNA/GCN data-centre GPUs (gfx9xx) expose the counters the presets use; RDNA doesn't."""
    return arch is None or not arch.startswith(("gfx10", "gfx11", "gfx12"))


_TRAPS: tuple[tuple[str, Callable[[str], bool], str, str], ...] = (
    ("PYTORCH_TUNABLEOP_ENABLED", lambda v: v == "1",
     "TunableOp is on: GEMMs are tuned during the run, so profiles include tuning kernels",
     "unset it while profiling, or tune first and profile with PYTORCH_TUNABLEOP_TUNING=0"),
    ("CUDA_LAUNCH_BLOCKING", lambda v: v == "1",
     "every CUDA launch waits for the kernel: launch overhead and overlap are not real",
     "unset CUDA_LAUNCH_BLOCKING"),
    ("HIP_LAUNCH_BLOCKING", lambda v: v == "1",
     "every HIP launch waits for the kernel: launch overhead and overlap are not real",
     "unset HIP_LAUNCH_BLOCKING"),
    ("AMD_SERIALIZE_KERNEL", lambda v: v not in ("", "0"),
     "HIP serialises kernels: no overlap, extra waits in the timeline",
     "unset AMD_SERIALIZE_KERNEL"),
    ("AMD_SERIALIZE_COPY", lambda v: v not in ("", "0"),
     "HIP serialises copies: no copy/compute overlap", "unset AMD_SERIALIZE_COPY"),
    ("PYTORCH_NO_CUDA_MEMORY_CACHING", lambda v: v == "1",
     "PyTorch's caching allocator is off: every allocation is a driver call",
     "unset PYTORCH_NO_CUDA_MEMORY_CACHING"),
    ("CUDA_VISIBLE_DEVICES", lambda v: v.strip() in ("", "-1"),
     "CUDA_VISIBLE_DEVICES hides every GPU", "set it to the GPUs to use, or unset it"),
    ("HIP_VISIBLE_DEVICES", lambda v: v.strip() in ("", "-1"),
     "HIP_VISIBLE_DEVICES hides every GPU", "set it to the GPUs to use, or unset it"),
)  # fmt: skip


def env_traps(env: Mapping[str, str]) -> list[Finding]:
    """Environment variables that make profiles or timings unrepresentative."""
    return [
        Finding(name.lower(), f"{name}={env[name]!r}: {message}", action)
        for name, bad, message, action in _TRAPS
        if name in env and bad(env[name])
    ]


def profiling_permission(root: Path, euid: int | None = None) -> list[Finding]:
    """NVIDIA drivers can restrict performance counters (ncu) to administrators."""
    params = root / "proc/driver/nvidia/params"
    try:
        restricted = "RmProfilingAdminOnly: 1" in params.read_text()
    except OSError:
        return []
    if not restricted or (os.geteuid() if euid is None else euid) == 0:
        return []
    return [
        Finding(
            "nvidia_counters_admin_only",
            "the NVIDIA driver allows performance counters to administrators only: "
            "ncu will fail with ERR_NVGPUCTRPERM",
            "run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0",
        )
    ]


def device_support(host: HostInfo) -> list[Finding]:
    findings = []
    for gpu in host.gpus:
        if gpu.vendor == "AMD" and not has_counters(gpu.arch):
            findings.append(_rdna(gpu.index, gpu.arch))
    if host.vendor is None:
        findings.append(
            Finding(
                "no_gpu",
                "no NVIDIA or AMD GPU found (no NVML, no /proc/driver/nvidia, no KFD GPU node)",
                "tools that need a GPU will fail; check the driver and device permissions",
            )
        )
    return findings


def _rdna(index: int, arch: str | None) -> Finding:
    return Finding(
        "no_hardware_counters",
        f"GPU {index} ({arch}) is consumer RDNA: no hardware counter collection for the "
        "rocprofv3 counter presets",
        "use timing (gpuscope bench), torch_profiler and API/kernel tracing "
        "(rocprof, rocprofv3_lightweight, rocprofv3_api_overhead)",
    )


def sampler_backends(which: Callable[[str], str | None]) -> dict[str, bool]:
    found = {name: importlib.util.find_spec(module) is not None
             for name, module in SAMPLER_BACKENDS.items()}  # fmt: skip
    found.update({cli: which(cli) is not None for cli in SAMPLER_CLIS})
    return found
