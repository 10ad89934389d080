"""NVML through nvidia-ml-py (`import pynvml`).

Power: `nvmlDeviceGetPowerUsage` (mW → W; a 1-s moving average on Ampere and later except GA100).
Energy: `nvmlDeviceGetTotalEnergyConsumption` (mJ since the driver loaded → J; Volta and later).
It is the costly query: ~4 ms of busy CPU per call on H200 with driver 580, against ~2 µs for the
power (benchmarks/probe_nvml_costs.py), so the sampler asks for it once a second and on marks.
VRAM: `nvmlDeviceGetMemoryInfo(version=nvmlMemory_v2)`, whose `used` excludes the driver's
reserved memory (as `nvidia-smi memory.used`); v1 (`used` includes it) where v2 is unavailable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuscope.samplers.backends.base import BackendUnavailable, PowerReading, VramReading


class NvmlBackend:
    """Readings from NVML for every GPU it enumerates (nvidia-smi's indices)."""

    name = "nvml"

    def __init__(self, nvml: Any) -> None:
        self._nvml = nvml
        count = nvml.nvmlDeviceGetCount()
        self._handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        self._energy_ok = [True] * count
        self._memory_v2 = hasattr(nvml, "nvmlMemory_v2")

    @property
    def library(self) -> Any:
        """The initialized Python module, for queries beyond power and VRAM (gpu_processes.py)."""
        return self._nvml

    @property
    def handles(self) -> list[Any]:
        return list(self._handles)

    def device_count(self) -> int:
        return len(self._handles)

    def power(self, devices: Sequence[int], energy: bool = True) -> list[PowerReading]:
        return [
            PowerReading(
                self._nvml.nvmlDeviceGetPowerUsage(self._handles[d]) / 1000,
                self._energy(d) if energy else None,
            )
            for d in devices
        ]

    def vram(self, devices: Sequence[int]) -> list[VramReading]:
        return [self._memory(self._handles[d]) for d in devices]

    def close(self) -> None:
        self._nvml.nvmlShutdown()

    def _energy(self, device: int) -> float | None:
        if not self._energy_ok[device]:
            return None
        try:
            return (
                float(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handles[device])) / 1000
            )
        except self._nvml.NVMLError:  # not supported before Volta: stop asking
            self._energy_ok[device] = False
            return None

    def _memory(self, handle: object) -> VramReading:
        if self._memory_v2:
            try:
                info = self._nvml.nvmlDeviceGetMemoryInfo(handle, version=self._nvml.nvmlMemory_v2)
                return VramReading(int(info.used), int(info.total))
            except (self._nvml.NVMLError, TypeError):  # old driver or old nvidia-ml-py
                self._memory_v2 = False
        info = self._nvml.nvmlDeviceGetMemoryInfo(handle)
        return VramReading(int(info.used), int(info.total))


def open_nvml() -> NvmlBackend:
    """Initialize NVML; BackendUnavailable when the package, the driver or a GPU is missing."""
    try:
        import pynvml
    except ImportError as missing:
        raise BackendUnavailable("pynvml not importable (pip install nvidia-ml-py)") from missing
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        raise BackendUnavailable(f"NVML did not initialize ({error})") from error
    backend = NvmlBackend(pynvml)
    if backend.device_count() == 0:
        backend.close()
        raise BackendUnavailable("NVML sees no GPU")
    return backend
