"""Processes that hold GPU memory, as the driver reports them: NVML on NVIDIA
(`nvmlDeviceGetComputeRunningProcesses`), amdsmi on AMD (`amdsmi_get_gpu_process_list`).

    >>> query("NVIDIA")                                            # doctest: +SKIP
    [GpuProcess(gpu=0, pid=4242, used_bytes=3221225472)]

`gpuscope run` asks once, after the run's leftover processes were ended, to name any process of
the run that still holds GPU memory. The libraries are opened through the samplers' backends
(their init is shared and counted). A diagnosis, never a reason to fail a run: [] when the library
is absent or does not answer. Tests pass their own `Query` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuscope.samplers.backends.base import BackendUnavailable


@dataclass(frozen=True)
class GpuProcess:
    gpu: int  # the library's device index
    pid: int  # as the driver sees it (the host's pid namespace, in a container)
    used_bytes: int | None  # None: not reported (e.g. NVML under some virtualisation)


Query = Callable[[], list[GpuProcess]]


def query(vendor: str | None) -> list[GpuProcess]:
    """Every compute process on every GPU of `vendor` ("NVIDIA", "AMD"); [] if unknown."""
    reader = {"NVIDIA": _nvml, "AMD": _amdsmi}.get(vendor or "")
    if reader is None:
        return []
    try:
        return reader()
    except BackendUnavailable:
        return []


def _nvml() -> list[GpuProcess]:
    from gpuscope.samplers.backends.nvml import open_nvml

    backend = open_nvml()
    try:
        nvml = backend.library
        return [
            GpuProcess(index, int(p.pid), _bytes(p.usedGpuMemory))
            for index, handle in enumerate(backend.handles)
            for p in _nvml_list(nvml, handle)
        ]
    finally:
        backend.close()


def _nvml_list(nvml: Any, handle: Any) -> list[Any]:
    try:
        return list(nvml.nvmlDeviceGetComputeRunningProcesses(handle))
    except nvml.NVMLError:
        return []


def _amdsmi() -> list[GpuProcess]:
    from gpuscope.samplers.backends.amdsmi import open_amdsmi

    backend = open_amdsmi()
    try:
        lib = backend.library
        return [
            GpuProcess(index, int(info.get("pid", -1)), _amd_bytes(info))
            for index, handle in enumerate(backend.handles)
            for info in _amd_list(lib, handle)
        ]
    finally:
        backend.close()


def _amd_list(lib: Any, handle: Any) -> list[Mapping[str, Any]]:
    """Dicts in ROCm 6.1+; process handles to look up in ROCm 6.0."""
    from gpuscope.samplers.backends.amdsmi import errors_of

    try:
        items = lib.amdsmi_get_gpu_process_list(handle)
        return [i if isinstance(i, Mapping) else lib.amdsmi_get_gpu_process_info(handle, i)
                for i in items]  # fmt: skip
    except errors_of(lib):
        return []


def _amd_bytes(info: Mapping[str, Any]) -> int | None:
    usage = info.get("memory_usage")
    vram = usage.get("vram_mem") if isinstance(usage, Mapping) else None
    return _bytes(vram if vram is not None else info.get("mem"))


def _bytes(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
